package closure

import (
	"math/rand/v2"
	"testing"
)

// TestStaticAgainstBruteForce holds Static to reachability by search on
// random DAGs: every true answer is a path (soundness, what pruning
// relies on), every pair within the band is answered exactly, and a
// graph with a cycle gives nil. Narrow bands and few landmarks put most
// queries on the landmark path; local edges (as in histories, where a
// transaction's known edges reach a few hundred positions ahead) and a
// few long ones make both answers occur.
func TestStaticAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	var viaLandmark, missed int
	for iter := 0; iter < 60; iter++ {
		n := 2 + rng.IntN(400)
		if iter%10 == 0 {
			n = 1500
		}
		// A hidden order; edges go forward in it, nodes are numbered
		// by a shuffle of it so Kahn's order is not the numbering.
		perm := rng.Perm(n)
		var edges [][2]int32
		for i := 0; i < n; i++ {
			for d := 0; d < 1+rng.IntN(3); d++ {
				j := i + 1 + rng.IntN(40)
				if rng.IntN(20) == 0 {
					j = i + 1 + rng.IntN(n)
				}
				if j < n {
					edges = append(edges, [2]int32{int32(perm[i]), int32(perm[j])})
				}
			}
		}
		band := 1 + rng.IntN(3)
		lms := 64 * (1 + rng.IntN(2))
		s := newStatic(n, edges, band, lms)
		if s == nil {
			t.Fatalf("graph %d: acyclic graph reported cyclic", iter)
		}
		adj := make([][]int32, n)
		for _, e := range edges {
			adj[e[0]] = append(adj[e[0]], e[1])
		}
		seen := make([]int, n)
		for u := 0; u < n; u++ {
			// Mark everything u reaches (u itself excluded unless on a
			// cycle, which cannot happen here).
			stamp := u + 1
			stack := append([]int32(nil), adj[u]...)
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if seen[v] == stamp {
					continue
				}
				seen[v] = stamp
				stack = append(stack, adj[v]...)
			}
			for v := 0; v < n; v++ {
				if v == u {
					continue
				}
				truth := seen[v] == stamp
				got := s.Reaches(int32(u), int32(v))
				if got && !truth {
					t.Fatalf("graph %d (n=%d band=%d): Reaches(%d,%d) true without a path", iter, n, band, u, v)
				}
				pu, pv := int(s.Pos(int32(u))), int(s.Pos(int32(v)))
				inBand := pv > pu && pv/64-pu/64 < band
				if inBand && got != truth {
					t.Fatalf("graph %d: Reaches(%d,%d) = %v within the band, path %v", iter, u, v, got, truth)
				}
				if truth && !inBand {
					if got {
						viaLandmark++
					} else {
						missed++
					}
				}
			}
		}
		// One back edge along a path makes a cycle.
		if len(edges) > 0 {
			e := edges[rng.IntN(len(edges))]
			if newStatic(n, append(edges, [2]int32{e[1], e[0]}), band, lms) != nil {
				t.Fatalf("graph %d: cycle %d<->%d not detected", iter, e[0], e[1])
			}
		}
	}
	t.Logf("beyond the band: %d paths proven through landmarks, %d missed", viaLandmark, missed)
	if viaLandmark == 0 {
		t.Fatal("the sweep never answers through a landmark")
	}
}
