package incremental

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/solver"
)

// TestShrinkSmallAsFresh holds C3 (docs/SEMANTICS.md §3) to the shrink it
// replaces, kept as the naive model (freshShrink: every check on the
// guarded instance of the whole window; noSizeHint: that instance built
// without the size of the last one, core_hint.go): on generated histories with many
// injected anomalies (lists, repeated values, unknown and aborted
// transactions among them), without timestamps at serializable, strong
// session serializable and strong session SI, and with them at strict
// serializable, Check with up to 10 anomalies gives the same verdict, the
// same anomalies in the same order (cores, classes, explanations) and the
// same deadline flag either way. Small first windows make the window
// search, and a window's own projection, do the work.
func TestShrinkSmallAsFresh(t *testing.T) {
	defer func(w int) { firstWindow = w }(firstWindow)
	defer func(f, n bool) { freshShrink, noSizeHint = f, n }(freshShrink, noSizeHint)
	compared, anomalies, shrunk := 0, 0, 0
	for seed := uint64(1); seed <= coreSeeds(); seed++ {
		h := coreHistory(t, seed)
		n, _ := reportsAsBefore(t, seed, timedAndUntimed(h), func(old bool) { freshShrink, noSizeHint = old, old })
		compared += 4
		anomalies += n
		shrunk += shrinksThatRemove(t, seed)
	}
	t.Logf("%d checks compared, %d anomalies, %d shrinks that removed members", compared, anomalies, shrunk)
	if anomalies < 5*int(coreSeeds()) || shrunk == 0 {
		t.Fatalf("%d anomalies, %d shrinks that removed members: the test compares too little", anomalies, shrunk)
	}
}

// shrinksThatRemove compares find's two shrinks on random small histories
// (internal/oracle's generator with every feature, more transactions than
// its brute force takes), at the levels of TestShrinkSmallAsFresh, and
// counts the finds whose failed set was larger than the core: on the
// generated histories above the failed set is nearly always the core
// already, and without such finds the shrink is not exercised.
func shrinksThatRemove(t *testing.T, seed uint64) int {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 2727))
	cfg := oracle.DefaultTinyConfig()
	cfg.MinTxns, cfg.MaxTxns, cfg.Anomalous, cfg.Staleness = 8, 16, 1, 200
	n := 0
	for i := 0; i < 60; i++ {
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable, history.StrongSessionSnapshotIsolation} {
			opts := history.DefaultOptions()
			opts.Level = lv
			p := prepare(h, opts)
			all := make([]bool, len(h.Txns))
			for i := range all {
				all[i] = true
			}
			fresh := newCoreFinder(p)
			if fresh.check(ctx, all) != solver.Unsat {
				continue
			}
			f1 := fresh.failed()
			want, err1 := fresh.shrink(ctx, f1)
			got, err2 := newCoreFinder(p).find(ctx, all)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d history %d %s: fresh %v (%v), small %v (%v)", seed, i, lv, want, err1, got, err2)
			}
			if len(f1) > len(want) {
				n++
			}
		}
	}
	return n
}

// TestProjectionComposes is the fact C3 rests on (docs/SEMANTICS.md §3
// "C3"): for S ⊆ X, (H|X)|S is H|S, read for read. Random histories with
// repeated values, lists, aborted and unknown transactions; random X and
// S at the levels whose possible writers differ (session order, real
// time).
func TestProjectionComposes(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		g := gen.Config{Txns: 60, Keys: 5, Seed: seed, Sessions: 4, OpsPerTxn: 3, AbortRatio: 0.1, UnknownRatio: 0.1,
			ListRatio: 0.3, DupValueRatio: 0.3, Concurrency: 2, InjectRate: 0.05}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 27))
		for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable, history.StrongSessionSnapshotIsolation} {
			opts := history.DefaultOptions()
			opts.Level = lv
			p := prepare(h, opts)
			for trial := 0; trial < 20; trial++ {
				x := make([]bool, len(h.Txns))
				s := make([]bool, len(h.Txns))
				var xs []int
				for i := range x {
					if rng.IntN(4) != 0 {
						x[i] = true
						xs = append(xs, i)
					}
				}
				sub := make([]bool, len(xs)) // S in H|X's positions
				for j, i := range xs {
					if rng.IntN(3) != 0 {
						s[i], sub[j] = true, true
					}
				}
				px := prepare(p.project(x), opts)
				if a, b := px.project(sub), p.project(s); !reflect.DeepEqual(a, b) {
					t.Fatalf("seed %d %s trial %d: (H|X)|S differs from H|S", seed, lv, trial)
				}
			}
		}
	}
}
