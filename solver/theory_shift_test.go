package solver

import (
	"context"
	"math/rand/v2"
	"testing"
)

// withShift runs f with shiftForward taken at every reorder (or never,
// with off), restoring the thresholds after.
func withShift(off bool, f func()) {
	defer ForceShiftForTesting(!off)()
	f()
}

// checkOrder fails unless ord and pos are inverse permutations and every
// present edge points forward in ord (T1).
func checkOrder(t *testing.T, s *Solver) {
	t.Helper()
	th := &s.th
	for i, x := range th.pos {
		if th.ord[x] != int32(i) {
			t.Fatalf("pos[%d] = %d but ord[%d] = %d", i, x, x, th.ord[x])
		}
	}
	for e := range th.edges {
		ed := &th.edges[e]
		if ed.present && !ed.dead && th.ord[ed.from] >= th.ord[ed.to] {
			t.Fatalf("present edge %d->%d against the order (%d >= %d)", ed.from, ed.to, th.ord[ed.from], th.ord[ed.to])
		}
	}
}

// TestShiftKeepsTopologicalOrder inserts base edges into a graph shaped
// like a burst (a time chain every node hangs on, so that the ancestors
// of a node fill the interval below it, and edges back to nodes with no
// edge out, as a reader's edge to an unknown outcome), with the default
// thresholds: T1 after every insertion, the same acyclicity answers as
// brute force, and shiftForward taken (T6).
func TestShiftKeepsTopologicalOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 7))
	before := shifts
	for round := range 3 {
		const n = 1200
		s := New(Options{})
		r := &ref{nNodes: n}
		for range n {
			s.NewNode()
		}
		add := func(from, to Node) {
			e := refEdge{from: from, to: to, a: litUndef, b: litUndef}
			want := r.baseAcyclicWith(e)
			if !want {
				return // the solver would be unsat for good; checked at the end
			}
			if !s.AddBaseEdge(from, to) {
				t.Fatalf("round %d: %d->%d refused, brute force says acyclic", round, from, to)
			}
			r.edges = append(r.edges, e)
			checkOrder(t, s)
		}
		// A chain through every third node; the next one hangs between
		// two chain nodes, the one after is a sink (an edge in only).
		for x := 3; x < n; x += 3 {
			add(Node(x-3), Node(x))
		}
		for x := 0; x+3 < n; x += 3 {
			add(Node(x), Node(x+1))
			add(Node(x+1), Node(x+3))
			add(Node(x), Node(x+2))
		}
		// Edges into sinks from far later nodes.
		for range 40 {
			x := 3*rng.IntN(n/3-1) + 2
			add(Node(min(n-1, x+300+rng.IntN(n/2))), Node(x))
		}
		// Random edges both ways.
		for range 300 {
			a, b := Node(rng.IntN(r.nNodes)), Node(rng.IntN(r.nNodes))
			if a != b {
				add(a, b)
			}
		}
		// One edge that closes a cycle is refused.
		if s.AddBaseEdge(Node(n-3), 0) {
			t.Fatalf("round %d: the edge back to the chain's start was accepted", round)
		}
	}
	if shifts == before {
		t.Fatal("shiftForward was never taken: the test does not test it")
	}
}

// TestShiftSameAnswers runs the brute-force comparisons of ref_test.go
// with shiftForward taken at every reorder, and the configurations'
// cross-check with it on and off: the theory's answers and models do not
// depend on which topological order it keeps.
func TestShiftSameAnswers(t *testing.T) {
	before := shifts
	withShift(false, func() {
		t.Run("theory", TestRandomTheory)
		t.Run("polygraph", TestRandomPolygraph)
		t.Run("incremental", TestIncremental)
		t.Run("configurations", TestConfigurations)
	})
	if shifts == before {
		t.Fatal("shiftForward was never taken")
	}
	g := &gen{rand.New(rand.NewPCG(21, 22))}
	for i := range 60 {
		n := 40 + g.rng.IntN(60)
		r := g.polygraph(n, 20+g.rng.IntN(60))
		as := g.assumptions(r.nVars)
		var sts [2]Status
		for k, off := range []bool{true, false} {
			withShift(off, func() {
				s := New(Options{Seed: uint64(i)})
				r.load(s)
				sts[k] = s.Solve(context.Background(), as...)
				if sts[k] == Sat {
					r.checkModel(t, s, as)
					checkOrder(t, s)
				}
			})
		}
		if sts[0] != sts[1] {
			t.Fatalf("instance %d: Pearce–Kelly says %v, with the shift %v", i, sts[0], sts[1])
		}
	}
}
