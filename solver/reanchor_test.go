package solver

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReanchorOrder: after reanchor the order is a topological order of
// the present edges, and the smallest one by node id (a naive Kahn that
// scans for the smallest ready node), whatever insertion reordered before.
func TestReanchorOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 300 {
		n := 2 + rng.IntN(30)
		s := New(Options{})
		for range n {
			s.NewNode()
		}
		// Random DAG over a hidden permutation, inserted in random order so
		// that the dynamic order moves nodes around.
		perm := rng.Perm(n)
		for range rng.IntN(3 * n) {
			a, b := rng.IntN(n), rng.IntN(n)
			if perm[a] < perm[b] {
				s.AddBaseEdge(Node(a), Node(b))
			}
		}
		if s.Solve(context.Background()) != Sat {
			t.Fatal("a DAG is satisfiable")
		}
		s.th.reanchor()
		got := slices.Clone(s.th.pos)
		want := naiveSmallestTopo(s, n)
		if !slices.Equal(got, want) {
			t.Fatalf("reanchor order %v, want %v", got, want)
		}
		for u := range n {
			if s.th.pos[s.th.ord[u]] != Node(u) {
				t.Fatalf("ord and pos disagree at %d", u)
			}
		}
	}
}

func naiveSmallestTopo(s *Solver, n int) []Node {
	placed := make([]bool, n)
	var out []Node
	for len(out) < n {
		for u := range n {
			if placed[u] {
				continue
			}
			ready := true
			for _, e := range s.th.in[u] {
				if !placed[s.th.edges[e].from] {
					ready = false
				}
			}
			if ready {
				placed[u] = true
				out = append(out, Node(u))
				break
			}
		}
	}
	return out
}
