package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestReadNamesItsSegment (docs/SEMANTICS.md §5 "Re-admitting the
// segment a read names"): the history of TestInDoubtChoiceContradicted,
// with u's segment not the newest (more fillers after it). When v's read
// of x1, which only the archived u wrote, reaches the screen, the step
// re-admits from u's segment before any check: no screen fails, one
// suffix is re-admitted, nothing resets, no alert. Without the
// diagnosis (diagnose returning -1) the screen fails first; with the
// newest segment named instead of u's (segmentOf), the first re-admitted
// screen fails.
func TestReadNamesItsSegment(t *testing.T) {
	// The contradiction this test needs is what companions avoid
	// (TestInDoubtWriterLeavesAsCompanion): without them, it tests the
	// re-admission that still serves the choices companions do not cover.
	defer func(c bool) { NoCompanions = c }(NoCompanions)
	NoCompanions = true
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	h, opts := contradictedHistory(t, 5)
	wantSegmentNamed(t, h, opts)
}

// wantSegmentNamed runs h live (one transaction a batch) and fails the
// test unless v's read of the archived u's version named u's segment
// before any check: a step diagnosed, no screen failed, one suffix
// re-admitted, no reset, no alert.
func wantSegmentNamed(t *testing.T, h *history.History, opts history.Options) {
	t.Helper()
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(28, 28)), 2000, 1, -1)
	if len(fired) > 0 {
		t.Fatalf("false alarm: %v", fired[0].Core)
	}
	t.Logf("diagnosed %d, failed screens %d, readmits %d, resets %d, checks %d", eng.diagnosed, eng.failedScreens, eng.readmits, eng.resets, eng.checks)
	switch {
	case eng.diagnosed == 0:
		t.Fatal("no step named a segment: v's read of the archived u's version went unnoticed")
	case eng.failedScreens > 0:
		t.Fatalf("%d screens failed: the step should have re-admitted u's segment before checking", eng.failedScreens)
	case eng.readmits != 1 || eng.resets > 0:
		t.Fatalf("%d suffixes re-admitted, %d full resets: want one suffix", eng.readmits, eng.resets)
	}
}

// TestSummarizeNewestKeys: with members forced (force > 0), summarize
// looks only at the keys the newest members touch; the first open
// member it finds is the one it finds looking at every key (the
// reference, summarizeEveryKey), on engines midway through generated
// read-modify-write streams (ghost, archive, unknown outcomes, lists,
// both initial states), for about 20 prefix lengths and several forces.
// Taking the keys of the members before force instead fails it.
func TestSummarizeNewestKeys(t *testing.T) {
	defer func(w int) { WaitWindow = w }(WaitWindow)
	WaitWindow = 0
	compared, opened := 0, 0
	for i := range 6 {
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(100 + i)
		cfg.Txns, cfg.Keys, cfg.UnknownRatio, cfg.ListRatio = 240, 30, 0.1, 0.2
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 1e9, InitialState: history.InitialEmpty}
		if i%2 == 1 {
			opts.InitialState = history.InitialUnknown
		}
		half := &history.History{Txns: h.Txns[:len(h.Txns)/2]}
		_, eng := live(t, half, opts, rand.New(rand.NewPCG(uint64(i), 5)), 1e6, 4, -1)
		eng.Release(h.Txns[len(h.Txns)/2:]...)
		scr := eng.instance(true)
		byName := map[string]*history.Txn{}
		for k := range scr.Txns {
			byName[scr.Txns[k].ID] = &scr.Txns[k]
		}
		var mem []int
		for k := range eng.txs {
			if eng.txs[k].Fl&(fUnchecked|fQuarantined) == 0 {
				if _, in := byName[eng.txs[k].Name]; in {
					mem = append(mem, k)
				}
			}
		}
		for limit := 1; limit <= len(mem); limit += 1 + len(mem)/20 {
			for _, force := range []int{1, limit / 3, limit / 2, limit - 1} {
				if force <= 0 || force >= limit {
					continue
				}
				_, got, err := eng.summarize(mem[:limit], byName, force)
				if err != nil {
					t.Fatal(err)
				}
				summarizeEveryKey = true
				_, want, err := eng.summarize(mem[:limit], byName, force)
				summarizeEveryKey = false
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("stream %d, %d members, force %d: first open %d, every key gives %d", i, limit, force, got, want)
				}
				compared++
				if want >= 0 {
					opened++
				}
			}
		}
	}
	t.Logf("%d prefixes compared, %d with an open member", compared, opened)
	if opened == 0 {
		t.Fatal("no prefix had an open member: the test compares nothing")
	}
}

// TestEverySuffixReadmitsValid: after a valid stream has been evicted in
// chunks, re-admitting any suffix of the archive gives a valid screen.
// That is the gluing argument of docs/SEMANTICS.md §5 "Re-admitting a
// suffix of the archive" run backwards: the screen after the evictions
// is valid, so {g_j} ∪ Y_j is for every j. It holds only if segment j's
// ghost is the ghost before its first chunk. Writing the ghost after the
// chunk's replay instead (archiveChunks replaying before it archives)
// fails it, and no other test sees that (it costs only precision: the
// screens it breaks are stronger ones).
func TestEverySuffixReadmitsValid(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 8
	ctx := context.Background()
	tried := 0
	for i := range 4 {
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(300 + i)
		cfg.Txns, cfg.Keys, cfg.Sessions, cfg.Concurrency = 150, 25, 8, 5
		cfg.UnknownRatio, cfg.ListRatio = 0.02, []float64{0, 0.2}[i%2]
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		if i >= 2 {
			opts.InitialState = history.InitialUnknown
		}
		if res, err := incremental.Check(ctx, h, opts, incremental.Config{MaxAnomalies: 1}); err != nil || res.Verdict != incremental.Valid {
			t.Fatalf("stream %d should be valid: %v %v", i, res.Verdict, err)
		}
		fired, eng := live(t, h, opts, rand.New(rand.NewPCG(uint64(i), 9)), 200_000, 3, -1)
		if len(fired) > 0 {
			t.Fatalf("stream %d: false alarm %v", i, fired[0].Core)
		}
		for j := len(eng.arch.segs) - 1; j >= 1; j-- {
			if err := eng.readmit(j); err != nil {
				t.Fatal(err)
			}
			res, err := incremental.Check(ctx, eng.instance(true), eng.opts, screenCheck)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != incremental.Valid {
				t.Fatalf("stream %d: the screen with segments %d.. re-admitted is %s", i, j, res.Verdict)
			}
			tried++
		}
	}
	t.Logf("%d re-admitted screens checked", tried)
	if tried == 0 {
		t.Fatal("no segment to re-admit: the test checks nothing")
	}
}

// TestDiagnoseAfterSweep (docs/SEMANTICS.md §5 "A read names its
// segment after the sweep"): the step asks diagnose only when the serial
// sweep cannot order the screen; on generated read-modify-write streams
// with unknown outcomes, lists and an injected anomaly in every other
// one, the engine gives the same alerts (ids, in order) as with the
// detour asked first (DiagnoseFirst, the order before), and its first
// verdict is check's. STREAMCHECK_SIONLINE_DIAG=N runs N streams
// (default 8). TestReadNamesItsSegment holds the detour itself: never
// asking it fails there.
func TestDiagnoseAfterSweep(t *testing.T) {
	count := 8
	if testing.Short() {
		count = 3
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIONLINE_DIAG")); err == nil && n > 0 {
		count = n
	}
	defer func(w, s int, d bool) { WaitWindow, segTxns, DiagnoseFirst = w, s, d }(WaitWindow, segTxns, DiagnoseFirst)
	WaitWindow = 0
	detours := 0
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 2830))
		h, cfg := mixedStream(t, i, rng, 200, 300, []float64{0.05, 0.1, 0.2})
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		segTxns = []int{2, 8, 256}[i%3]
		tick, batch := 100_000+rng.Int64N(2_000_000), 1+rng.IntN(8)
		seed := rng.Uint64()
		t.Run(fmt.Sprintf("%d/unknown=%.2f/inject=%v/seg=%d", i, cfg.UnknownRatio, cfg.Inject, segTxns), func(t *testing.T) {
			_, eng := sameAlertsSwitched(t, h, opts, seed, tick, batch, func(first bool) { DiagnoseFirst = first },
				"alerts %v with the detour after the sweep, %v before it")
			detours += eng.diagnosed
		})
	}
	t.Logf("%d streams: %d steps sent to a segment", count, detours)
}
