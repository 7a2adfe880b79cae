package online

import (
	"context"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/solver"
)

// unknownRMW is a read-modify-write stream with unknown outcomes, the
// shape whose window the probe budget pinned (issue 22).
func unknownRMW(tb testing.TB, n, keys int, seed uint64) *history.History {
	tb.Helper()
	cfg, err := gen.Preset("mixed")
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.OpsPerTxn, cfg.Keys, cfg.Seed = n, 32, 8, keys, seed
	cfg.ListRatio, cfg.UnknownRatio = 0, 0.03
	h, _, err := gen.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// TestReachesAroundSound: every order reachesAround claims between a
// member the closure does not hold (an unknown outcome in doubt for the
// whole stream) and another is one every completion of the step's
// instance has: given the opposite edge the solver finds no model. A rule
// that also walked edges not fixed at level 0 claims orders some
// completion lacks, and fails here.
func TestReachesAroundSound(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		h := unknownRMW(t, 2000, 150, seed)
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.InDoubt = 60_000_000_000 // the unknowns stay in doubt
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(seed, 9))
		checked := 0
		feedInStartOrder(o, opts, byStart(h), func(i int) {
			if (i+1)%50 != 0 {
				return
			}
			if r, sc := stepClosureOf(t, o, ctx); sc != nil {
				var unheld, nodes []solver.Node
				for tx := range r.h.Txns {
					n := r.e.Node()[tx]
					if n < 0 {
						continue
					}
					nodes = append(nodes, n)
					if int(n) >= len(sc.id) || sc.id[n] < 0 {
						unheld = append(unheld, n)
					}
				}
				s := r.e.Solver()
				for k := 0; k < 300 && len(unheld) > 0 && len(nodes) > 1; k++ {
					a, b := unheld[rng.IntN(len(unheld))], nodes[rng.IntN(len(nodes))]
					if rng.IntN(2) == 0 {
						a, b = b, a
					}
					if a == b || !sc.reachesAround(s, a, b) {
						continue
					}
					if st := solveOpposite(ctx, s, a, b); st != solver.Unsat {
						t.Fatalf("seed %d at %d: reachesAround orders node %d before %d, but a completion has the other order (%v)", seed, i+1, a, b, st)
					}
					checked++
				}
			}
			if _, err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if checked == 0 {
			t.Fatalf("seed %d: no order checked", seed)
		}
		t.Logf("seed %d: %d orders around an unknown checked", seed, checked)
	}
}

// TestBackoffSurvivesRestore: an engine restored from its snapshot before
// every step evicts exactly as one that never stopped, back-offs included
// (a restored engine that forgot them would probe members the other one
// does not, and their windows would part). The stream must back members
// off for the test to mean anything.
func TestBackoffSurvivesRestore(t *testing.T) {
	h := unknownRMW(t, 3000, 150, 4)
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 60_000_000_000
	ctx := context.Background()
	a := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	b := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	backedOff, step := 0, 0
	txns := byStart(h)
	// Both are fed the same releases and closes; b is restored from its
	// snapshot before each step.
	feedInStartOrder(a, opts, txns, func(i int) {
		b.Release(txns[i])
		for id := range a.closedIDs(b) {
			b.Close(id)
		}
		if (i+1)%100 != 0 {
			return
		}
		step++
		snap, err := b.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if b, err = RestoreOnline(opts, snap); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Step(ctx); err != nil {
			t.Fatal(err)
		}
		backedOff += len(a.ev.Backoff)
		if !slices.Equal(a.ev.memberList(), b.ev.memberList()) {
			t.Fatalf("step %d (%d released): restored window %d members, uninterrupted %d", step, i+1, len(b.ev.memberList()), len(a.ev.memberList()))
		}
		if !maps.Equal(a.ev.Backoff, b.ev.Backoff) {
			t.Fatalf("step %d (%d released): back-offs differ: %d restored, %d uninterrupted", step, i+1, len(b.ev.Backoff), len(a.ev.Backoff))
		}
	})
	if backedOff == 0 {
		t.Fatal("no member was backed off: the stream does not exercise the back-off")
	}
	// A version 5 snapshot (before the back-off) is still read: its engine
	// has no back-offs and goes on.
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(snap, &m); err != nil {
		t.Fatal(err)
	}
	m["Version"] = snapshotVersionNoBackoff
	delete(m["EvictState"].(map[string]any), "Backoff")
	if snap, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	old, err := RestoreOnline(opts, snap)
	if err != nil {
		t.Fatalf("version 5 snapshot: %v", err)
	}
	if len(old.ev.Backoff) != 0 {
		t.Fatalf("version 5 snapshot restored with %d back-offs", len(old.ev.Backoff))
	}
	old.CloseAll()
	if _, err := old.Step(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d steps, %d member-steps backed off", step, backedOff)
}

// closedIDs are the transactions a has closed that b has not, in a's
// released order.
func (o *Online) closedIDs(b *Online) map[string]bool {
	out := map[string]bool{}
	for i := range o.log.len() {
		if o.closed.get(i) && !b.closed.get(i) {
			out[o.log.at(i).ID] = true
		}
	}
	return out
}

// TestAnchoredBeforeSound: every edge x -> u that the irrelevance rule's
// graph leaves out because u is an unknown in doubt whose session anchor
// precedes x (anchoredBefore) is absent from every model that commits u:
// the solver, assuming u's commit and the edge's literals, finds none.
// Generated streams whose unknowns stay in doubt, checked at every 50th
// release. Leaving out edges into such an unknown from what its anchor
// does not precede fails it.
func TestAnchoredBeforeSound(t *testing.T) {
	checked := 0
	eachSatInstanceInDoubt(t, func(ctx context.Context, o *Online, r *reduced, seed uint64, i int) {
		e, s := r.e, r.e.Solver()
		for n := range s.NumNodes() {
			from := e.NodeTxn()[n]
			if from < 0 {
				continue
			}
			s.IncidentEdges(solver.Node(n), func(other solver.Node, out bool, a, b solver.Lit, two bool) {
				to := e.NodeTxn()[other]
				if !out || to < 0 || !o.anchoredBefore(r, to, from) {
					return
				}
				as := []solver.Lit{solver.Lit(e.Act()[to]), a}
				if two {
					as = append(as, b)
				}
				if st := s.Solve(ctx, as...); st != solver.Unsat {
					t.Fatalf("seed %d at %d: the edge %s -> %s (an unknown in doubt) holds in a model that commits it (%v)", seed, i+1, r.h.Txns[from].ID, r.h.Txns[to].ID, st)
				}
				checked++
			})
		}
	})
	if checked == 0 {
		t.Fatal("no edge into an unknown in doubt was left out: the streams do not exercise the rule")
	}
	t.Logf("%d edges checked", checked)
}

// eachSatInstanceInDoubt builds the instance at every 50th release of
// generated read-modify-write streams whose unknowns stay in doubt (three
// seeds, strict serializable, in-doubt 1 min, eviction on) and hands each
// satisfiable one to f before the engine steps: the soundness tests of the
// rules around unknowns in doubt ask their questions of it.
func eachSatInstanceInDoubt(t *testing.T, f func(ctx context.Context, o *Online, r *reduced, seed uint64, i int)) {
	t.Helper()
	for _, seed := range []uint64{1, 2, 3} {
		h := unknownRMW(t, 1500, 150, seed)
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.InDoubt = 60_000_000_000
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		ctx := context.Background()
		feedInStartOrder(o, opts, byStart(h), func(i int) {
			if (i+1)%50 != 0 {
				return
			}
			if r := o.build(); len(r.h.Txns) > 0 && r.solve(ctx) == solver.Sat {
				f(ctx, o, r, seed, i)
			}
			if _, err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
