package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// keptTranscript runs one random incremental scenario of F2's probes
// (flip_prop.go) on a solver and writes down everything the caller can
// see: every status, whether F2 answered it, the flipped literals
// ProbeKeepsModel gives, and after each the saved model and order. The
// instance grows between probes by clauses (units among them), edges,
// variables and nodes; units from unsatisfiable probes, as the prober
// adds; retirements and Compact now and then. Larger than the brute-force
// scenarios, so that level 0 holds many variables across many probes of
// one model, the case burst31_keptcache.go caches.
func keptTranscript(t *testing.T, seed uint64) []string {
	t.Helper()
	g := &gen{rand.New(rand.NewPCG(seed, 31))}
	s := New(Options{Seed: seed % 3, Reanchor: seed%2 == 1})
	s.SetProbeFromModel(true)
	r := &ref{}
	var out []string
	note := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	state := func() {
		var m []byte
		for v := range r.nVars {
			if s.Value(PosLit(Var(v))) {
				m = append(m, '1')
			} else {
				m = append(m, '0')
			}
		}
		note("model %s order %v gen %d kept %d", m, s.AppendOrder(nil), s.modelGen, s.stats.KeptModelSolves)
	}
	retired := map[Var]bool{}
	live := func(c []Lit) bool {
		return !slices.ContainsFunc(c, func(p Lit) bool { return retired[p.Var()] })
	}
	edgeLive := func(e refEdge) bool {
		return (e.a == litUndef || !retired[e.a.Var()]) && (e.b == litUndef || !retired[e.b.Var()]) &&
			(e.a != litUndef || r.baseAcyclicWith(e))
	}
	for round := range 8 {
		if round < 5 {
			for range 4 + g.rng.IntN(8) {
				s.NewVar()
				r.nVars++
			}
			for range 1 + g.rng.IntN(3) {
				s.NewNode()
				r.nNodes++
			}
		}
		for range g.rng.IntN(r.nVars/3 + 2) {
			if c := g.clause(r.nVars); live(c) {
				r.clauses = append(r.clauses, c)
				s.AddClause(c...)
			}
		}
		for range g.rng.IntN(r.nNodes + 1) {
			if e := g.edge(r.nVars, r.nNodes); edgeLive(e) {
				r.edges = append(r.edges, e)
				r.addEdgeTo(s, e)
			}
		}
		if round >= 5 {
			for v := range r.nVars {
				if _, ok := s.Fixed(PosLit(Var(v))); ok && !retired[Var(v)] && g.rng.IntN(3) == 0 {
					if err := s.Retire(Var(v)); err != nil {
						t.Fatalf("scenario %d: retire %d: %v", seed, v, err)
					}
					retired[Var(v)] = true
				}
			}
			if g.rng.IntN(3) == 0 {
				s.Compact()
				note("compact")
			}
		}
		st := s.Solve(context.Background())
		note("solve %v", st)
		state()
		if st != Sat {
			return out
		}
		for v := range r.nVars {
			if retired[Var(v)] {
				continue
			}
			if g.rng.IntN(6) == 0 {
				// Something the saved model need not satisfy.
				if c := g.clause(r.nVars); live(c) && g.rng.IntN(2) == 0 {
					r.clauses = append(r.clauses, c)
					s.AddClause(c...)
				} else if e := g.edge(r.nVars, r.nNodes); edgeLive(e) {
					r.edges = append(r.edges, e)
					r.addEdgeTo(s, e)
				}
			}
			p := PosLit(Var(v))
			if s.Value(p) {
				p = p.Not()
			}
			if g.rng.IntN(2) == 0 {
				ok, fl := s.ProbeKeepsModel(p, false, nil)
				note("keeps %v %v %v", p, ok, fl)
				continue
			}
			st := s.Solve(context.Background(), p)
			note("probe %v %v", p, st)
			state()
			if st == Unsat {
				r.clauses = append(r.clauses, []Lit{p.Not()})
				s.AddClause(p.Not())
			}
		}
	}
	return out
}

// TestKeptCacheIsTheScan holds F2's test with its per-model cache
// (burst31_keptcache.go) to the test without it (noKeptCache: the trail
// scanned and the order's inverse rebuilt at every call): on hundreds of
// random scenarios both give the same statuses, the same F2 answers and
// flipped literals, and the same saved models and orders, call by call.
// It also requires F2 to have answered, and some answers to have reused a
// cached level-0 scan, so that the comparison exercises the cache.
func TestKeptCacheIsTheScan(t *testing.T) {
	keptAnswers, reused := 0, 0
	for seed := range uint64(300) {
		noKeptCache = true
		want := keptTranscript(t, seed)
		noKeptCache = false
		keptCacheReuse = 0
		got := keptTranscript(t, seed)
		reused += keptCacheReuse
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("scenario %d, step %d:\n cached   %s\n scanned  %s", seed, i, got[i], want[i])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("scenario %d: %d steps cached, %d scanned", seed, len(got), len(want))
		}
		for _, l := range got {
			if len(l) > 5 && l[:5] == "keeps" && l[len(l)-len("false []"):] != "false []" {
				keptAnswers++
			}
		}
	}
	t.Logf("F2 answered %d ProbeKeepsModel calls; %d tests reused a cached level-0 scan", keptAnswers, reused)
	if keptAnswers == 0 || reused == 0 {
		t.Fatalf("the scenarios did not exercise the cache (%d answers, %d reuses)", keptAnswers, reused)
	}
}
