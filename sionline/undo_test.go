package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// twin is one engine of a step-by-step comparison, with its window,
// driver and body file.
type twin struct {
	eng   *Engine
	d     *driver.Driver
	file  *online.MemBodyFile
	fired []string
}

// TestGhostDeltasMatchWhole is the step-by-step twin of docs/SEMANTICS.md
// §5 "The ghost costs what changes, not the stream": the engine with
// undo records and the ghost taken on the keys a step touches, against
// the engine with whole ghosts (e.whole, the path before), fed the same
// events in lock step. After every step of the driver both hold the same
// transactions (names, flags, release numbers), the same ghost (every
// entry, the time and the companions), the same segments and counts, and
// have raised the same alerts; the first verdict is check's. Generated
// read-modify-write streams with lists, unknown outcomes (companions),
// duplicates, aborts, either initial state (pins), with and without an
// injected anomaly, segments of 2, 8 and 256 transactions, a restart
// midway from a snapshot that carries the archive or from a durable body
// file. STREAMCHECK_SIONLINE_DELTA=N runs N streams (default 12).
func TestGhostDeltasMatchWhole(t *testing.T) {
	count := 12
	if testing.Short() {
		count = 4
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIONLINE_DELTA")); err == nil && n > 0 {
		count = n
	}
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	readmits, undone := 0, 0
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 2830))
		h, cfg := mixedStream(t, i, rng, 200, 300, []float64{0.02, 0.1, 0.2})
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		if i%4 == 3 {
			opts.InitialState = history.InitialUnknown
		}
		segTxns = []int{2, 8, 256}[i%3]
		WaitWindow = []int{0, 128}[(i/3)%2]
		restart, durable := -1, i%2 == 0
		if rng.IntN(3) > 0 {
			restart = len(h.Txns)/3 + rng.IntN(len(h.Txns)/3)
		}
		tick, batch := 100_000+rng.Int64N(2_000_000), 1+rng.IntN(8)
		name := fmt.Sprintf("%d/lists=%.1f/unknown=%.2f/init=%s/inject=%v/seg=%d/wait=%d/restart=%d/durable=%t",
			i, cfg.ListRatio, cfg.UnknownRatio, opts.InitialState, cfg.Inject, segTxns, WaitWindow, restart, durable)
		t.Run(name, func(t *testing.T) {
			delta, whole := lockStep(t, h, opts, rand.New(rand.NewPCG(uint64(i), 7)), tick, batch, restart, durable)
			want, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
			if err != nil {
				t.Fatal(err)
			}
			if (len(delta.fired) > 0) != (want.Verdict == incremental.Invalid) {
				t.Fatalf("%d alerts, check says %s", len(delta.fired), want.Verdict)
			}
			readmits += delta.eng.readmits + delta.eng.diagnosed
			undone += delta.eng.arch.undone
			t.Logf("evicted %d, re-admissions %d, resets %d, ghosts found by undo %d, probe fails %d, alerts %d (whole: evicted %d)",
				delta.eng.evicted, delta.eng.readmits, delta.eng.resets, delta.eng.arch.undone, delta.eng.probeFails, len(delta.fired), whole.eng.evicted)
		})
	}
	if count >= 8 && undone == 0 {
		t.Errorf("no ghost found by undo records in %d streams (%d re-admissions): the path is not exercised", count, readmits)
	}
}

// lockStep feeds h to two engines, one with whole ghosts, in the arrival
// live draws, comparing them after every step.
func lockStep(t *testing.T, h *history.History, opts history.Options, rng *rand.Rand, tick int64, batch, restart int, durable bool) (delta, whole *twin) {
	t.Helper()
	ctx := context.Background()
	wcfg, order := liveOrder(h, opts, rng)
	dcfg := driver.Config{Tick: tick, Skew: opts.Skew, Lateness: wcfg.Lateness}
	start := func(w bool) *twin {
		win, err := window.New(wcfg)
		if err != nil {
			t.Fatal(err)
		}
		tw := &twin{file: online.NewMemBodyFile(durable)}
		if tw.eng, err = New(opts, Config{Stream: "s", Bodies: tw.file}); err != nil {
			t.Fatal(err)
		}
		tw.eng.whole = w
		tw.d = driver.New(dcfg, win, tw.eng, driver.NewState(1))
		return tw
	}
	delta, whole = start(false), start(true)
	steps := 0
	drain := func() {
		for {
			if delta.d.HasReady() != whole.d.HasReady() {
				t.Fatalf("step %d: one driver has a step ready, the other not", steps)
			}
			if !delta.d.HasReady() {
				return
			}
			for _, tw := range []*twin{delta, whole} {
				rd, err := tw.d.Ready(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range rd.Alerts {
					tw.fired = append(tw.fired, a.ID)
				}
			}
			steps++
			sameEngines(t, steps, delta, whole)
		}
	}
	for n, i := range order {
		for _, tw := range []*twin{delta, whole} {
			if rej := tw.d.Accept(0, int64(n), h.Txns[i], 0); rej != nil {
				t.Fatalf("%s set aside: %+v", h.Txns[i].ID, rej)
			}
		}
		if n%batch == batch-1 {
			drain()
		}
		if n == restart {
			drain()
			for _, tw := range []*twin{delta, whole} {
				var snap []byte
				var err error
				if durable {
					var sync func() error
					if snap, sync, err = tw.eng.SnapshotDurable(); err == nil {
						err = sync()
					}
				} else {
					snap, err = tw.eng.Snapshot()
				}
				if err != nil {
					t.Fatal(err)
				}
				st := *tw.d.State()
				w := tw.eng.whole
				cfg := Config{Stream: "s", Bodies: tw.file}
				if !durable {
					tw.file = online.NewMemBodyFile(false)
					cfg.Bodies = tw.file
				}
				if tw.eng, err = Restore(opts, cfg, snap); err != nil {
					t.Fatal(err)
				}
				tw.eng.whole = w
				win, err := window.Restore(wcfg, tw.d.Window().Snapshot())
				if err != nil {
					t.Fatal(err)
				}
				tw.d = driver.New(dcfg, win, tw.eng, st)
			}
			sameEngines(t, steps, delta, whole)
		}
	}
	for _, tw := range []*twin{delta, whole} {
		tw.d.EndInput()
	}
	drain()
	for _, tw := range []*twin{delta, whole} {
		rd, err := tw.d.Final(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range rd.Alerts {
			tw.fired = append(tw.fired, a.ID)
		}
	}
	sameEngines(t, steps+1, delta, whole)
	return delta, whole
}

// sameEngines fails unless the two engines hold the same state.
func sameEngines(t *testing.T, step int, a, b *twin) {
	t.Helper()
	x, y := a.eng, b.eng
	if !slices.Equal(a.fired, b.fired) {
		t.Fatalf("step %d: alerts %v with undo records, %v with whole ghosts", step, a.fired, b.fired)
	}
	if len(x.txs) != len(y.txs) {
		t.Fatalf("step %d: %d transactions held, %d with whole ghosts", step, len(x.txs), len(y.txs))
	}
	for i := range x.txs {
		if p, q := &x.txs[i], &y.txs[i]; p.Name != q.Name || p.Fl != q.Fl || p.Seq != q.Seq {
			t.Fatalf("step %d: transaction %d is %s/%d/%d, %s/%d/%d with whole ghosts", step, i, p.Name, p.Fl, p.Seq, q.Name, q.Fl, q.Seq)
		}
	}
	if msg := ghostDiff(x.ghost, y.ghost); msg != "" {
		t.Fatalf("step %d: ghosts differ: %s", step, msg)
	}
	if len(x.arch.segs) != len(y.arch.segs) {
		t.Fatalf("step %d: %d segments, %d with whole ghosts", step, len(x.arch.segs), len(y.arch.segs))
	}
	for j := range x.arch.segs {
		if p, q := x.arch.segs[j], y.arch.segs[j]; p.Txns != q.Txns || p.First != q.First {
			t.Fatalf("step %d: segment %d holds %d from %d, %d from %d with whole ghosts", step, j, p.Txns, p.First, q.Txns, q.First)
		}
	}
	cx := []int{x.checks, x.evicted, x.readmits, x.resets, x.diagnosed, x.failedScreens, x.serialScreens, x.companions, x.probeFails, len(x.pendingClose)}
	cy := []int{y.checks, y.evicted, y.readmits, y.resets, y.diagnosed, y.failedScreens, y.serialScreens, y.companions, y.probeFails, len(y.pendingClose)}
	if !slices.Equal(cx, cy) {
		t.Fatalf("step %d: counts %v, %v with whole ghosts", step, cx, cy)
	}
}

// ghostDiff says how two ghosts differ, entry by entry ("" when they do
// not): presence and contents of each register, list and pin, the time
// and the companions.
func ghostDiff(a, b *ghost) string {
	if (a == nil) != (b == nil) {
		return fmt.Sprintf("one is nil: %v, %v", a == nil, b == nil)
	}
	if a == nil {
		return ""
	}
	if a.Time != b.Time {
		return fmt.Sprintf("time %d, %d", a.Time, b.Time)
	}
	keys := map[history.Key]bool{}
	for _, g := range []*ghost{a, b} {
		for k := range g.Reg {
			keys[k] = true
		}
		for k := range g.List {
			keys[k] = true
		}
		for k := range g.Pin {
			keys[k] = true
		}
	}
	for k := range keys {
		p, q := a.entry(k), b.entry(k)
		if p.has != q.has || p.reg != q.reg || !slices.Equal(p.list, q.list) || !samePin(p.pin, q.pin) {
			return fmt.Sprintf("key %s: %+v, %+v", k, p, q)
		}
	}
	if len(a.Comp) != len(b.Comp) {
		return fmt.Sprintf("%d companions, %d", len(a.Comp), len(b.Comp))
	}
	for i := range a.Comp {
		c, d := a.Comp[i], b.Comp[i]
		if c.Name != d.Name || !slices.Equal(c.Keys, d.Keys) || !slices.EqualFunc(c.Writes, d.Writes, samePin) {
			return fmt.Sprintf("companion %d: %+v, %+v", i, c, d)
		}
	}
	return ""
}

func samePin(p, q history.Op) bool {
	return p.Kind == q.Kind && p.IsList == q.IsList && p.Key == q.Key && p.Value == q.Value && slices.Equal(p.List, q.List)
}

// TestAgreeOnCompanionKeys: the comparison of the liveness rules' ghost
// with the witness's replay (agrees) answers on the ghost restricted to
// agreeKeys as on the whole ghost when the witness commits a companion
// on a key the evicted members do not touch: the replay absorbs it, the
// rules' ghost does not, so both paths say they disagree (no eviction).
// Leaving the companions' keys out of agreeKeys fails it.
func TestAgreeOnCompanionKeys(t *testing.T) {
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 5}
	answers := map[bool]bool{}
	for _, whole := range []bool{true, false} {
		e, err := New(opts, Config{Stream: "s"})
		if err != nil {
			t.Fatal(err)
		}
		e.whole = whole
		e.ghost = newGhost()
		e.ghost.Time = 0
		e.ghost.Reg["y"], e.ghost.Reg["z"] = "0", "7"
		e.ghost.Comp = []companion{{Name: compPrefix + "u", Writes: []history.Op{w("y", "5")}, Keys: []history.Key{"y"}}}
		a := txn("a", "s", 100, 110, r("x", "null"), w("x", "1"))
		e.txs = []tx{{T: a, Name: "a", Fl: fClosed, Seq: 1}}
		byName := map[string]*history.Txn{"a": &e.txs[0].T}
		witness := []string{"begin " + ghostName, "commit " + ghostName, "begin " + compPrefix + "u", "commit " + compPrefix + "u", "begin a", "commit a"}
		d, open, err := e.summarize([]int{0}, byName, 0)
		if err != nil || open >= 0 {
			t.Fatalf("summarize: open %d, %v", open, err)
		}
		answers[whole] = agrees(d, e.replayOn(e.ghost, []int{0}, byName, witness, e.agreeKeys([]int{0}, byName)))
	}
	if answers[true] || answers[false] {
		t.Fatalf("agrees: %v with the whole ghost, %v on agreeKeys; want false for both (the replay commits the companion's y5)", answers[true], answers[false])
	}
}

// TestUncheckedLeaveTheScreen holds screenOut (docs/SEMANTICS.md §5 "An
// unchecked writer no member can meet leaves the screen") to the path
// that keeps every unchecked writer in the screen (KeepUnchecked):
// generated read-modify-write streams, a few of whose transactions are
// set aside as the window sets aside a late event (their writes known,
// unchecked), streamed both ways in the same arrival: the same alert ids
// in the same order, and screens that left a writer out.
// STREAMCHECK_SIONLINE_UNCHECKED=N runs N streams (default 8).
func TestUncheckedLeaveTheScreen(t *testing.T) {
	count := 8
	if testing.Short() {
		count = 3
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIONLINE_UNCHECKED")); err == nil && n > 0 {
		count = n
	}
	defer func(w, s int, k bool) { WaitWindow, segTxns, KeepUnchecked = w, s, k }(WaitWindow, segTxns, KeepUnchecked)
	left := 0
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 2831))
		h, cfg := mixedStream(t, i, rng, 200, 300, []float64{0.02, 0.1, 0.2})
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		segTxns = []int{2, 8, 256}[i%3]
		WaitWindow = []int{0, 128}[(i/3)%2]
		aside := map[int]bool{}
		for range 1 + rng.IntN(4) {
			aside[rng.IntN(len(h.Txns))] = true
		}
		tick, batch, seed := 100_000+rng.Int64N(2_000_000), 1+rng.IntN(8), rng.Uint64()
		name := fmt.Sprintf("%d/lists=%.1f/unknown=%.2f/inject=%v/seg=%d/wait=%d/aside=%d", i, cfg.ListRatio, cfg.UnknownRatio, cfg.Inject, segTxns, WaitWindow, len(aside))
		t.Run(name, func(t *testing.T) {
			run := func(keep bool) ([]string, *Engine) {
				KeepUnchecked = keep
				fired, eng := feedAside(t, h, opts, rand.New(rand.NewPCG(seed, 1)), tick, batch, aside)
				return alertIDs(fired), eng
			}
			want, _ := run(true)
			got, eng := run(false)
			if !slices.Equal(got, want) {
				t.Fatalf("alerts %v with unchecked writers left out of screens, %v with all kept", got, want)
			}
			left += eng.leftOut
			t.Logf("screens that left a writer out: %d of %d checks; alerts %d", eng.leftOut, eng.checks, len(got))
		})
	}
	if count >= 4 && left == 0 {
		t.Error("no screen left an unchecked writer out: the rule is not exercised")
	}
}

// feedAside is live with the transactions aside set aside (SetAside, as
// the window does with a late event) instead of accepted.
func feedAside(t *testing.T, h *history.History, opts history.Options, rng *rand.Rand, tick int64, batch int, aside map[int]bool) ([]*online.Alert, *Engine) {
	t.Helper()
	ctx := context.Background()
	wcfg, order := liveOrder(h, opts, rng)
	win, err := window.New(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(opts, Config{Stream: "s"})
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(driver.Config{Tick: tick, Skew: opts.Skew, Lateness: wcfg.Lateness}, win, eng, driver.NewState(1))
	var fired []*online.Alert
	drain := func() {
		for d.HasReady() {
			rd, err := d.Ready(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fired = append(fired, rd.Alerts...)
		}
	}
	for n, i := range order {
		if aside[i] {
			x := h.Txns[i]
			d.SetAside(0, int64(n), &x)
		} else if rej := d.Accept(0, int64(n), h.Txns[i], 0); rej != nil {
			t.Fatalf("%s set aside: %+v", h.Txns[i].ID, rej)
		}
		if n%batch == batch-1 {
			drain()
		}
	}
	d.EndInput()
	drain()
	rd, err := d.Final(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return append(fired, rd.Alerts...), eng
}
