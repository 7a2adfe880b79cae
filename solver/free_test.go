package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// freeScenario drives one incremental scenario (seeded by seed) the way
// the online engine's prober does: random clauses and edges, solves under
// assumptions, probes by a selector's edge then the clause that turns it
// off, selectors retired, Compact now and then (purged indices then
// recycled by NewVar). It returns every answer: statuses, statistics
// (decisions and conflicts included), models, orders and failed
// assumptions.
func freeScenario(seed uint64) []string {
	g := &gen{rand.New(rand.NewPCG(seed, 17))}
	s := New(Options{Seed: seed, Reanchor: seed%2 == 1, RestartBase: 1 + int(seed%3)})
	r := &ref{}
	var out []string
	var sels []Lit
	var user []Var // the scenario's variables (not selectors), by gen's index
	m := func(p Lit) Lit {
		if p == litUndef {
			return p
		}
		if p.IsNeg() {
			return NegLit(user[p.Var()])
		}
		return PosLit(user[p.Var()])
	}
	ms := func(ls []Lit) []Lit {
		for i := range ls {
			ls[i] = m(ls[i])
		}
		return ls
	}
	answer := func(tag string, st Status) {
		line := fmt.Sprintf("%s: %v %+v order %v failed %v model", tag, st, s.Stats(), s.Order(), s.FailedAssumptions())
		for v := range s.NumVars() {
			line += fmt.Sprint(" ", s.Value(PosLit(Var(v))))
		}
		out = append(out, line)
	}
	for step := range 10 {
		for range 1 + g.rng.IntN(5) {
			user = append(user, s.NewVar())
			r.nVars++
		}
		for range 1 + g.rng.IntN(3) {
			s.NewNode()
			r.nNodes++
		}
		for range g.rng.IntN(r.nVars + 1) {
			s.AddClause(ms(g.clause(r.nVars))...)
		}
		for range g.rng.IntN(3 * r.nNodes) {
			e := g.edge(r.nVars, r.nNodes)
			if e.a == litUndef && !r.baseAcyclicWith(e) {
				continue
			}
			r.edges = append(r.edges, e)
			e.a, e.b = m(e.a), m(e.b)
			r.addEdgeTo(s, e)
		}
		answer(fmt.Sprint("step ", step), s.Solve(context.Background(), ms(g.assumptions(r.nVars))...))
		// Probes: an edge under a fresh selector, then off.
		for range g.rng.IntN(4) {
			sel := s.NewSelector()
			s.AddEdge(sel, Node(g.rng.IntN(r.nNodes)), Node(g.rng.IntN(r.nNodes)))
			answer(fmt.Sprint("probe ", step), s.Solve(context.Background(), sel))
			s.AddClause(sel.Not())
			sels = append(sels, sel)
		}
		if step%3 == 2 {
			for _, sel := range sels {
				_ = s.Retire(sel.Var()) // fixed false at level 0: retired
			}
			sels = sels[:0]
			// An unused variable, unassigned when retired.
			if err := s.Retire(s.NewVar()); err != nil {
				panic(err)
			}
			if step%2 == 0 {
				s.Compact()
			}
		}
	}
	return out
}

// TestFreeCountKeepsTheSearch: allAssigned by the count of unassigned
// live variables (nFree) makes the search decide exactly as the test that
// popped the heap did, answer for answer, and the count is right at every
// call (verifyFree panics otherwise).
func TestFreeCountKeepsTheSearch(t *testing.T) {
	defer func() { verifyFree, allAssignedByHeap = false, false }()
	for i := range uint64(300) {
		verifyFree, allAssignedByHeap = false, true
		want := freeScenario(i)
		verifyFree, allAssignedByHeap = true, false
		got := freeScenario(i)
		if !slices.Equal(got, want) {
			for j := range min(len(got), len(want)) {
				if got[j] != want[j] {
					t.Fatalf("scenario %d, by count:\n%s\nby heap:\n%s", i, got[j], want[j])
				}
			}
			t.Fatalf("scenario %d: %d answers by count, %d by heap", i, len(got), len(want))
		}
	}
}

// TestFreeCountOnTheSuites runs the brute-force suites with the count
// checked at every allAssigned.
func TestFreeCountOnTheSuites(t *testing.T) {
	verifyFree = true
	defer func() { verifyFree = false }()
	t.Run("incremental", TestIncremental)
	t.Run("selectors", TestSelectorsRetire)
	t.Run("removenode", TestRemoveNode)
	t.Run("recycle", TestRecycleMatchesFresh)
	t.Run("polygraph", TestRandomPolygraph)
	t.Run("oracle", TestOracle)
}
