package online

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// Tests of the list rule (evict_list.go, docs/SEMANTICS.md §5 "Lists").
// The scripts testdata/evict/list_prefix.txt and list_fold.txt show the
// rule step by step; these run it on generated streams against check.

// listCase is generated list stream i: gen's mixed preset with many list
// keys retired after a few appends (so that prefixes pass from holder to
// holder and keys keep being new), injected anomalies in odd ones.
func listCase(t *testing.T, i int, salt uint64, minTxns, spanTxns int) (*history.History, history.Options, gen.Config, *rand.Rand) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(i), salt))
	cfg, _ := gen.Preset("mixed")
	cfg.Seed = uint64(i + 1)
	cfg.Txns = minTxns + rng.IntN(spanTxns)
	cfg.Keys = 8 + rng.IntN(30)
	cfg.Sessions, cfg.Concurrency = 6, 4
	cfg.ListRatio = 0.2 + 0.5*rng.Float64()
	cfg.MaxListLen = 2 + rng.IntN(8)
	cfg.UnknownRatio, cfg.DupValueRatio = 0.02*rng.Float64(), 0.1*rng.Float64()
	if i%2 == 1 {
		types := gen.InjectTypes()
		for range 1 + rng.IntN(3) {
			cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
		}
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 4_000_000
	return h, opts, cfg, rng
}

// TestListStreamsMatchCheck: list streams through the evicting engine
// give check's verdict, every alert a core (checkAlertCores), the reduced
// instance never disagrees with the bodies (sweep fails on a
// disagreement), and list transactions leave: a naive rule that keeps a
// wrong prefix shows as a disagreement or a missed alert, one that never
// folds as a window that holds most of the stream.
func TestListStreamsMatchCheck(t *testing.T) {
	sweepEvicted = 0
	released := 0
	for i := range tinyCount(40) {
		h, opts, cfg, _ := listCase(t, i, 71, 60, 240)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := sweep(t, h, opts)
		if (len(got) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d (%v): alerts %v, check %s\n%s", i, cfg.Inject, got, res.Verdict, dump(h))
		}
		checkAlertCores(t, h, opts, got)
		released += len(h.Txns)
	}
	if sweepEvicted < released/2 {
		t.Errorf("only %d of %d transactions evicted", sweepEvicted, released)
	}
}

// TestListSnapshotRoundTrip: with list prefixes held by ghosts and by
// members (Folded), an engine restored from its snapshot before every
// step raises the same alerts as one that never stopped, and replays from
// rewind points taken every few transactions raise them at the same
// watermarks as replays from the start.
func TestListSnapshotRoundTrip(t *testing.T) {
	defer func(n int) { rewindEvery = n }(rewindEvery)
	defer func(b bool) { inPlaceEnabled = b }(inPlaceEnabled)
	inPlaceEnabled = false
	held := 0
	for i := range tinyCount(16) {
		h, opts, cfg, rng := listCase(t, i, 83, 80, 160)
		rewindEvery = 1 << 30
		want, o := sweep(t, h, opts)
		held += len(o.ev.ListPrefix)
		got, _ := sweepRoundTrip(t, h, opts, true)
		same := func(a, b firing) bool {
			return a.w == b.w && slices.Equal(a.core, b.core) && a.updated == b.updated && a.typ == b.typ
		}
		if !slices.EqualFunc(want, got, same) {
			t.Fatalf("history %d (%v): uninterrupted %v, restored %v\n%s", i, cfg.Inject, want, got, dump(h))
		}
		rewindEvery = 3 + rng.IntN(20)
		pts, _ := sweep(t, h, opts)
		var ww, wp []int64
		for _, f := range want {
			if !f.updated {
				ww = append(ww, f.w)
			}
		}
		for _, f := range pts {
			if !f.updated {
				wp = append(wp, f.w)
			}
		}
		if !slices.Equal(ww, wp) {
			t.Fatalf("history %d (%v), points every %d: alerts at %v from the start, %v from points", i, cfg.Inject, rewindEvery, ww, wp)
		}
		checkAlertCores(t, h, opts, pts)
	}
	if held == 0 {
		t.Error("no list prefix was ever held: the test does not exercise the rule")
	}
}

// TestListWindowBounded: on a valid mixed stream with list keys the window
// stays near the number of open transactions instead of keeping every
// transaction that touches a list (before the rule: most of the stream).
func TestListWindowBounded(t *testing.T) {
	cfg, _ := gen.Preset("mixed")
	cfg.Txns, cfg.ListRatio, cfg.UnknownRatio = tinyCount(6000), 0.1, 0
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 5_000_000
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	maxWindow := 0
	feedInStartOrder(o, opts, byStart(h), func(i int) {
		if (i+1)%256 == 0 {
			if _, err := o.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
			maxWindow = max(maxWindow, o.Stats().Window)
		}
	})
	st := o.Stats()
	t.Logf("%d txns: max window %d, ghosts %d, pinned by %v", len(h.Txns), maxWindow, st.Ghosts, st.PinnedBy)
	if st.Alerts != 0 || st.Disagreements != 0 {
		t.Fatalf("%d alerts, %d disagreements on a valid stream", st.Alerts, st.Disagreements)
	}
	// 32 sessions: at most 32 open; 4x is the bound.
	if maxWindow > 4*32 {
		t.Errorf("window reached %d (> 4 x 32 sessions)", maxWindow)
	}
}
