package solver

import (
	"context"
	"math/rand/v2"
	"testing"
)

// flipBits is s's saved model as reference bits over r's variables.
func flipBits(s *Solver, nVars int) uint64 {
	var bits uint64
	for v := range nVars {
		if s.Value(PosLit(Var(v))) {
			bits |= 1 << uint(v)
		}
	}
	return bits
}

// refHolds: every clause of r holds under bits and its present edges are
// acyclic.
func (r *ref) holds(bits uint64) bool {
	for _, c := range r.clauses {
		ok := false
		for _, p := range c {
			if litTrue(bits, p) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return r.acyclic(bits)
}

// TestFlipIsAModel holds F1 (flip.go) against the definition: whenever
// FlipKeepsModel says yes, the saved model with that variable flipped
// satisfies every clause of the instance and its present edges are
// acyclic. The instance grows after each solve by clauses and edges the
// model satisfies (so the saved model stays one, as the prober's does),
// which the index must take in from the arena; Compact now and then
// makes it rebuild. It also checks that the test says yes often enough to
// matter.
func TestFlipIsAModel(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(41, 42))}
	yes, asked := 0, 0
	for i := range 400 {
		s := New(Options{Seed: uint64(i)})
		nv, nn := 4+g.rng.IntN(14), 2+g.rng.IntN(7)
		r := g.randomRef(nv, g.rng.IntN(2*nv), nn, g.rng.IntN(3*nn))
		r.load(s)
		for round := range 4 {
			if s.Solve(context.Background()) != Sat {
				break
			}
			order := s.Order()
			rank := make([]int32, s.NumNodes())
			for j, n := range order {
				rank[n] = int32(j)
			}
			bits := flipBits(s, r.nVars)
			for step := range 3 {
				for v := range r.nVars {
					asked++
					if !s.FlipKeepsModel(Var(v), rank) {
						continue
					}
					yes++
					if _, fixed := s.Fixed(PosLit(Var(v))); fixed {
						t.Fatalf("instance %d round %d: flip of %d fixed at level 0", i, round, v)
					}
					if !r.holds(bits ^ 1<<uint(v)) {
						t.Fatalf("instance %d round %d step %d: the flip of %d is no model", i, round, step, v)
					}
				}
				// Grow the instance by what the model satisfies.
				for range 1 + g.rng.IntN(4) {
					c := g.clause(r.nVars)
					if !r.holds(bits) {
						t.Fatal("the saved model is no model")
					}
					sat := false
					for _, p := range c {
						sat = sat || litTrue(bits, p)
					}
					if sat {
						r.clauses = append(r.clauses, c)
						s.AddClause(c...)
					}
				}
				for range g.rng.IntN(3) {
					e := g.edge(r.nVars, r.nNodes)
					if (!r.edgeOn(bits, e) || rank[e.from] < rank[e.to]) && (e.a != litUndef || r.baseAcyclicWith(e)) {
						r.edges = append(r.edges, e)
						r.addEdgeTo(s, e)
					}
				}
				if g.rng.IntN(4) == 0 {
					s.Compact()
				}
			}
		}
	}
	if yes*10 < asked {
		t.Fatalf("flip said yes %d times of %d", yes, asked)
	}
	t.Logf("flip said yes %d times of %d", yes, asked)
}
