package solver

import (
	"context"
	"math/rand/v2"
	"testing"
)

// probeScenario runs one random incremental scenario with F2 on
// (flip_prop.go): the instance grows between solves by clauses and edges
// drawn at random, some satisfied by the saved model and some not, new
// variables and nodes, units, variables fixed at level 0 retired, and
// Compact; after each solve every variable is probed the way the model
// does not set it, one assumption a solve. Each answer is held to brute
// force (checkAnswer: the model, its order, the failed assumptions) and
// to a fresh solver on the same instance. It returns the single-
// assumption solves that came back Sat and how many of them F2 answered.
func probeScenario(t *testing.T, seed uint64) (sat, kept int) {
	t.Helper()
	g := &gen{rand.New(rand.NewPCG(seed, 77))}
	s := New(Options{Seed: seed % 3, Reanchor: seed%2 == 1, RestartBase: 1 + int(seed%3)})
	s.SetProbeFromModel(true)
	r := &ref{}
	retired := map[Var]bool{}
	live := func(c []Lit) bool {
		for _, p := range c {
			if retired[p.Var()] {
				return false
			}
		}
		return true
	}
	// model is the saved model as a bit mask over r's variables.
	model := func() uint64 { return flipBits(s, r.nVars) }
	for round := range 10 {
		if round < 6 && r.nVars < 14 {
			for range 1 + g.rng.IntN(3) {
				s.NewVar()
				r.nVars++
			}
		}
		if round < 6 && r.nNodes < 7 {
			s.NewNode()
			r.nNodes++
		}
		if r.nNodes < 2 {
			s.NewNode()
			r.nNodes++
		}
		hasModel := s.modelGen > 0
		bits := model()
		for range g.rng.IntN(r.nVars/2 + 2) {
			c := g.clause(r.nVars)
			if !live(c) {
				continue
			}
			if hasModel && g.rng.IntN(3) != 0 {
				// Mostly clauses the saved model satisfies, as the
				// prober adds; a third that it need not.
				sat := false
				for _, p := range c {
					sat = sat || litTrue(bits, p)
				}
				if !sat {
					continue
				}
			}
			r.clauses = append(r.clauses, c)
			s.AddClause(c...)
		}
		for range g.rng.IntN(4) {
			e := g.edge(r.nVars, r.nNodes)
			if (e.a != litUndef && retired[e.a.Var()]) || (e.b != litUndef && retired[e.b.Var()]) {
				continue
			}
			if e.a == litUndef && !r.baseAcyclicWith(e) {
				continue
			}
			r.edges = append(r.edges, e)
			r.addEdgeTo(s, e)
		}
		if round >= 6 {
			// Retire what level 0 fixed (no NewVar follows, so no index
			// is handed out again), and Compact now and then.
			for v := range r.nVars {
				if val, ok := s.Fixed(PosLit(Var(v))); ok && !retired[Var(v)] && g.rng.IntN(2) == 0 {
					if err := s.Retire(Var(v)); err != nil {
						t.Fatalf("scenario %d: retire %d: %v", seed, v, err)
					}
					retired[Var(v)] = true
					q := PosLit(Var(v))
					if !val {
						q = q.Not()
					}
					r.fix(q)
				}
			}
			if g.rng.IntN(2) == 0 {
				s.Compact()
			}
		}
		if !hasModel || g.rng.IntN(2) == 0 {
			// Else the round's additions meet the model of the last
			// round's probes, which need not satisfy them.
			st := s.Solve(context.Background())
			r.checkAnswer(t, s, st, nil)
			if st != Sat {
				return sat, kept
			}
		}
		for v := range r.nVars {
			if retired[Var(v)] {
				continue
			}
			if g.rng.IntN(4) == 0 {
				// A clause or an edge between two probes, drawn at
				// random: the saved model need not satisfy it.
				if c := g.clause(r.nVars); live(c) && g.rng.IntN(2) == 0 {
					r.clauses = append(r.clauses, c)
					s.AddClause(c...)
				} else if e := g.edge(r.nVars, r.nNodes); (e.a == litUndef || !retired[e.a.Var()]) &&
					(e.b == litUndef || !retired[e.b.Var()]) && (e.a != litUndef || r.baseAcyclicWith(e)) {
					r.edges = append(r.edges, e)
					r.addEdgeTo(s, e)
				}
			}
			p := PosLit(Var(v))
			if s.Value(p) {
				p = p.Not()
			}
			before := s.stats.KeptModelSolves
			as := []Lit{p}
			st := s.Solve(context.Background(), as...)
			r.checkAnswer(t, s, st, as)
			f := New(Options{})
			r.load(f)
			if got := f.Solve(context.Background(), as...); got != st {
				t.Fatalf("scenario %d: with F2 %v, fresh %v", seed, st, got)
			}
			if st == Sat {
				sat++
				if s.stats.KeptModelSolves > before {
					kept++
				}
			}
			if g.rng.IntN(3) == 0 && st == Unsat {
				// As the prober: the probe's negation becomes a unit.
				r.clauses = append(r.clauses, []Lit{p.Not()})
				s.AddClause(p.Not())
			}
		}
	}
	return sat, kept
}

// probeScenarios is how many scenarios TestProbeFromModelAgrees runs.
const probeScenarios = 400

// TestProbeFromModelAgrees holds F2 to brute force and to a fresh
// solver: same Sat/Unsat answer on every probe of hundreds of random
// incremental scenarios, every Sat model a model with an order of its
// present edges. It also requires F2 to answer a fair share of the
// satisfiable probes, so that the comparison exercises it.
func TestProbeFromModelAgrees(t *testing.T) {
	sat, kept := 0, 0
	for i := range uint64(probeScenarios) {
		a, b := probeScenario(t, i)
		sat += a
		kept += b
	}
	t.Logf("F2 answered %d of %d satisfiable probes", kept, sat)
	if kept*5 < sat {
		t.Fatalf("F2 answered only %d of %d satisfiable probes", kept, sat)
	}
}

// TestProbeFromModelOnTheSuites runs the brute-force suites with F2 on
// in every solver they make.
func TestProbeFromModelOnTheSuites(t *testing.T) {
	probeAlways = true
	defer func() { probeAlways = false }()
	t.Run("incremental", TestIncremental)
	t.Run("selectors", TestSelectorsRetire)
	t.Run("removenode", TestRemoveNode)
	t.Run("recycle", TestRecycleMatchesFresh)
	t.Run("polygraph", TestRandomPolygraph)
	t.Run("theory", TestRandomTheory)
}

// fix rewrites r for q fixed true and its variable retired (a retired
// variable has no value in later models): clauses with q go, ¬q leaves
// the others; an edge loses q (a base edge if nothing is left) or goes
// with ¬q.
func (r *ref) fix(q Lit) {
	var cs [][]Lit
	for _, c := range r.clauses {
		var d []Lit
		sat := false
		for _, p := range c {
			switch p {
			case q:
				sat = true
			case q.Not():
			default:
				d = append(d, p)
			}
		}
		if !sat {
			cs = append(cs, d)
		}
	}
	r.clauses = cs
	var es []refEdge
	for _, e := range r.edges {
		if e.a == q.Not() || e.b == q.Not() {
			continue
		}
		if e.b == q {
			e.b = litUndef
		}
		if e.a == q {
			e.a, e.b = e.b, litUndef
		}
		es = append(es, e)
	}
	r.edges = es
}
