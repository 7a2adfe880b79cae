package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// recycleScenario drives one incremental scenario (seeded by seed) on s
// and returns everything the solver answered, in order: statuses,
// statistics, orders, failed assumptions, fixed values, fixed edges.
// rm turns on node removal and variable retirement, which leave free
// lists and removed flags behind for a later Recycle.
func recycleScenario(s *Solver, seed uint64, rm bool) []string {
	g := &gen{rand.New(rand.NewPCG(seed, 99))}
	r := &ref{}
	var out []string
	for step := range 6 {
		for range 1 + g.rng.IntN(4) {
			s.NewVar()
			r.nVars++
		}
		for range 1 + g.rng.IntN(3) {
			s.NewNode()
			r.nNodes++
		}
		for range g.rng.IntN(2*r.nVars + 1) {
			c := g.clause(r.nVars)
			s.AddClause(c...)
		}
		for range g.rng.IntN(3 * r.nNodes) {
			e := g.edge(r.nVars, r.nNodes)
			if e.a == litUndef && !r.baseAcyclicWith(e) {
				continue
			}
			r.edges = append(r.edges, e)
			r.addEdgeTo(s, e)
		}
		as := g.assumptions(r.nVars)
		st := s.Solve(context.Background(), as...)
		line := fmt.Sprintf("step %d: %v %+v order %v failed %v", step, st, s.Stats(), s.Order(), s.FailedAssumptions())
		for v := range s.NumVars() {
			val, ok := s.Fixed(PosLit(Var(v)))
			line += fmt.Sprintf(" %v/%v", val, ok)
		}
		for n := range s.NumNodes() {
			line += fmt.Sprint(" ", s.FixedEdges(Node(n), true, nil))
		}
		out = append(out, line)
		if rm && step == 3 && r.nNodes > 2 {
			// Dirty the arrays a later Recycle takes over.
			s.RemoveNode(Node(g.rng.IntN(r.nNodes)))
			_ = s.Retire(Var(g.rng.IntN(r.nVars))) // an assigned one refuses: fine
			s.Compact()
			s.NewVar()
			s.NewNode()
			return out
		}
	}
	return out
}

// TestRecycleMatchesFresh holds R1 (recycle.go): a solver built by
// Recycle on the arrays of solvers that ran earlier scenarios (grown,
// with removed nodes and free lists) answers every call of a scenario
// exactly as a fresh solver does.
func TestRecycleMatchesFresh(t *testing.T) {
	var old *Solver
	for i := range 300 {
		opts := Options{Seed: uint64(i), Reanchor: i%2 == 1, RestartBase: 1 + i%3, TheoryPropagationLimit: 1 + i%40}
		want := recycleScenario(New(opts), uint64(i), false)
		s := Recycle(old, opts)
		got := recycleScenario(s, uint64(i), false)
		if !slices.Equal(got, want) {
			for j := range min(len(got), len(want)) {
				if got[j] != want[j] {
					t.Fatalf("scenario %d, recycled:\n%s\nfresh:\n%s", i, got[j], want[j])
				}
			}
			t.Fatalf("scenario %d: %d answers recycled, %d fresh", i, len(got), len(want))
		}
		// The next one recycles this solver, dirtied by removals and
		// retirements half of the time.
		if i%2 == 0 {
			recycleScenario(s, uint64(i)+1000, true)
		}
		old = s
	}
}

// TestRecycleZeroesOld: the recycled solver is unusable, so that a stale
// use fails at once.
func TestRecycleZeroesOld(t *testing.T) {
	old := New(Options{})
	old.NewVar()
	old.NewNode()
	s := Recycle(old, Options{})
	if old.NumVars() != 0 || old.NumNodes() != 0 || s.NumVars() != 0 || s.NumNodes() != 0 {
		t.Fatalf("old %d vars %d nodes, new %d vars %d nodes", old.NumVars(), old.NumNodes(), s.NumVars(), s.NumNodes())
	}
}
