package incremental

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/solver"
)

// TestReusedInstanceCores holds the kept guarded instance (reuseGuarded,
// docs/SEMANTICS.md §3 "C4") and the windows by session rank
// (windowBySession, "C5") to what a core is, on the histories of
// TestShrinkSmallAsFresh: the verdict is the fresh search's, and every
// core it reports violates the level by its projection alone, loses the
// violation without any one member (subset-minimal), and shares no
// member with an earlier core. It logs how many checks report exactly
// the fresh search's anomalies: the kept instance may start a shrink from
// another violating set, which is why it is off.
func TestReusedInstanceCores(t *testing.T) {
	defer func(r, w bool) { reuseGuarded, windowBySession = r, w }(reuseGuarded, windowBySession)
	for _, v := range []struct {
		name       string
		reuse, win bool
	}{{"kept instance", true, false}, {"windows by session rank", false, true}} {
		t.Run(v.name, func(t *testing.T) { otherCores(t, v.reuse, v.win) })
	}
}

// otherCores is TestReusedInstanceCores for one setting of the switches.
func otherCores(t *testing.T, reuse, win bool) {
	defer func(w int) { firstWindow = w }(firstWindow)
	ctx := context.Background()
	checks, same, cores := 0, 0, 0
	for seed := uint64(1); seed <= coreSeeds(); seed++ {
		h := coreHistory(t, seed)
		for _, c := range timedAndUntimed(h) {
			opts := history.DefaultOptions()
			opts.Level = c.lv
			cfg := Config{MaxAnomalies: 10}
			reuseGuarded, windowBySession = false, false
			want, err1 := Check(ctx, c.h, opts, cfg)
			reuseGuarded, windowBySession = reuse, win
			got, err2 := Check(ctx, c.h, opts, cfg)
			if err1 != nil || err2 != nil {
				t.Fatalf("seed %d %s: %v / %v", seed, c.lv, err1, err2)
			}
			if got.Verdict != want.Verdict {
				t.Fatalf("seed %d %s: fresh %v, kept instance %v", seed, c.lv, want.Verdict, got.Verdict)
			}
			checks++
			if reflect.DeepEqual(got.Anomalies, want.Anomalies) {
				same++
			}
			cores += checkCores(t, c.h, opts, got.Anomalies)
		}
	}
	// Random small histories (internal/oracle's generator, every feature),
	// where the failed sets are often larger than the cores: the shrink
	// on the kept instance's failed sets is exercised.
	firstWindow = 4
	rng := rand.New(rand.NewPCG(27, 4))
	tc := oracle.DefaultTinyConfig()
	tc.MinTxns, tc.MaxTxns, tc.Anomalous, tc.Staleness = 8, 16, 1, 200
	for i := 0; i < 40*int(coreSeeds()); i++ {
		h := oracle.RandomTiny(rng, tc)
		if h.Validate() != nil {
			continue
		}
		for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable, history.StrongSessionSnapshotIsolation} {
			opts := history.DefaultOptions()
			opts.Level = lv
			reuseGuarded, windowBySession = reuse, win
			got, err := Check(ctx, h, opts, Config{MaxAnomalies: 3})
			if err != nil {
				t.Fatal(err)
			}
			cores += checkCores(t, h, opts, got.Anomalies)
		}
	}
	t.Logf("%d checks, %d cores checked, %d with the fresh search's anomalies exactly", checks, cores, same)
	if cores < 5*int(coreSeeds()) {
		t.Fatalf("%d cores: the test checks too little", cores)
	}
}

// checkCores fails t unless every anomaly's core violates by its own
// projection, is subset-minimal and is disjoint from the earlier ones;
// it returns their number.
func checkCores(t *testing.T, h *history.History, opts history.Options, as []Anomaly) int {
	t.Helper()
	ctx := context.Background()
	p := prepare(h, opts)
	pos := map[string]int32{}
	for i := range h.Txns {
		pos[h.Txns[i].ID] = int32(i)
	}
	used := make([]bool, len(h.Txns))
	for ai, a := range as {
		in := make([]bool, len(h.Txns))
		for _, id := range a.Core {
			ti := pos[id]
			if used[ti] {
				t.Fatalf("%s anomaly %d: %s is in an earlier core", opts.Level, ai, id)
			}
			used[ti], in[ti] = true, true
		}
		if st := plainStatus(ctx, p, in); st != solver.Unsat {
			t.Fatalf("%s anomaly %d: core %v does not violate (%v)", opts.Level, ai, a.Core, st)
		}
		for _, id := range a.Core {
			in[pos[id]] = false
			if st := plainStatus(ctx, p, in); st != solver.Sat {
				t.Fatalf("%s anomaly %d: core %v still %v without %s", opts.Level, ai, a.Core, st, id)
			}
			in[pos[id]] = true
		}
	}
	return len(as)
}

// plainStatus decides H|in with the plain encoding, pruning off.
func plainStatus(ctx context.Context, p *prepared, in []bool) solver.Status {
	e := newEncoder(prepare(p.project(in), p.opts), encodeConfig{noPrune: true})
	e.encode()
	return e.solve(ctx)
}
