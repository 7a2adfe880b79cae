package solver

import (
	"context"
	"math/rand/v2"
	"testing"
)

// permReach is the brute-force reachability over permanent edges of the
// reference instance: base edges and edges whose literals are all fixed
// true at level 0 in s.
func (r *ref) permReach(s *Solver) [][]bool {
	n := r.nNodes
	reach := make([][]bool, n)
	for i := range reach {
		reach[i] = make([]bool, n)
	}
	fixedTrue := func(p Lit) bool {
		v, ok := s.Fixed(p)
		return ok && v
	}
	for _, e := range r.edges {
		if (e.a == litUndef || fixedTrue(e.a)) && (e.b == litUndef || fixedTrue(e.b)) {
			reach[e.from][e.to] = true
		}
	}
	for k := range n {
		for i := range n {
			if !reach[i][k] {
				continue
			}
			for j := range n {
				if reach[k][j] {
					reach[i][j] = true
				}
			}
		}
	}
	return reach
}

// TestPruneIndexSound: every path the snapshot index proves is a path of
// permanent edges (brute force), while base edges, level-0 facts and
// nodes keep arriving after snapshots; and the index proves most of the
// paths there are, so a test that relies on it does exercise it.
// Reference: docs/SEMANTICS.md §3, "P1: the solver's pruning index over permanent edges".
func TestPruneIndexSound(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(41, 42))}
	proved, paths := 0, 0
	for i := range 60 {
		s := New(Options{Seed: uint64(i)})
		s.th.rix.eager = true
		r := &ref{}
		for range 6 {
			for range 1 + g.rng.IntN(6) {
				s.NewNode()
				r.nNodes++
			}
			for range 1 + g.rng.IntN(4) {
				s.NewVar()
				r.nVars++
			}
			if r.nNodes < 2 {
				continue
			}
			for range 2 * r.nNodes {
				e := g.edge(r.nVars, r.nNodes)
				if e.from == e.to || (e.a == litUndef && !r.baseAcyclicWith(e)) {
					continue
				}
				r.edges = append(r.edges, e)
				r.addEdgeTo(s, e)
			}
			// Fix a literal true at level 0 now and then: its edges become
			// permanent, unless that closes a cycle (then the instance is
			// unsatisfiable and we stop here).
			if g.rng.IntN(2) == 0 {
				p := g.lit(r.nVars)
				r.clauses = append(r.clauses, []Lit{p})
				if !s.AddClause(p) {
					break
				}
			}
			if !s.ok {
				break
			}
			s.cancelUntil(0)
			want := r.permReach(s)
			for x := range r.nNodes {
				for y := range r.nNodes {
					if x == y {
						continue
					}
					got := s.th.permanentReaches(Node(x), Node(y))
					if got && !want[x][y] {
						t.Fatalf("instance %d: index proves %d ~> %d, no permanent path", i, x, y)
					}
					if want[x][y] {
						paths++
						if got {
							proved++
						}
					}
				}
			}
		}
	}
	if paths == 0 || proved*2 < paths {
		t.Fatalf("index proved %d of %d permanent paths", proved, paths)
	}
}

// TestPruneIndexAgainstBruteForce: with the index built from the first
// permanent edge, the solver's verdicts still match brute force on
// polygraph-like instances (the lemmas it adds are consequences), both
// loaded at once and built up incrementally with solves in between
// (Solve drops the snapshot, later edges rebuild it).
func TestPruneIndexAgainstBruteForce(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(43, 44))}
	var hits int64
	for i := range 300 {
		n := testSize(g.rng, 14)
		r := g.polygraph(n, 3+g.rng.IntN(2*n))
		// Unit clauses so that literal edges become permanent, and extra
		// base edges so that long permanent paths exist.
		for range g.rng.IntN(4) {
			r.clauses = append(r.clauses, []Lit{g.lit(n)})
		}
		for range r.nNodes {
			e := g.edge(1, r.nNodes)
			e.a, e.b = litUndef, litUndef
			if e.from != e.to && r.baseAcyclicWith(e) {
				r.edges = append(r.edges, e)
			}
		}
		// Units and base edges first, as a checker adds its known edges
		// before its choices.
		order := make([]refEdge, 0, len(r.edges))
		for _, e := range r.edges {
			if e.a == litUndef {
				order = append(order, e)
			}
		}
		for _, e := range r.edges {
			if e.a != litUndef {
				order = append(order, e)
			}
		}
		s := New(Options{Seed: uint64(i), TheoryPropagationLimit: []int{-1, 0, 3}[i%3]})
		s.th.rix.eager = true
		for s.NumVars() < r.nVars {
			s.NewVar()
		}
		for s.NumNodes() < r.nNodes {
			s.NewNode()
		}
		for _, c := range r.clauses {
			s.AddClause(c...)
		}
		sofar := &ref{nVars: r.nVars, nNodes: r.nNodes, clauses: r.clauses}
		for k, e := range order {
			sofar.edges = append(sofar.edges, e)
			sofar.addEdgeTo(s, e)
			if i%2 == 1 && k%7 == 6 {
				as := g.assumptions(n)
				sofar.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
			}
		}
		as := g.assumptions(n)
		r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
		hits += s.Stats().PruneIndexHits
	}
	if hits == 0 {
		t.Fatal("the index proved no pruning path: the test does not exercise it")
	}
}

// TestPruneIndexRemoveNode: RemoveNode and Compact (node ids recycled)
// drop the snapshot; verdicts stay those of brute force.
func TestPruneIndexRemoveNode(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(45, 46))}
	for i := range 100 {
		n := 4 + g.rng.IntN(8)
		r := g.polygraph(n, 4+g.rng.IntN(6))
		for range 4 {
			e := g.edge(1, r.nNodes)
			e.a, e.b = litUndef, litUndef
			if e.from != e.to && r.baseAcyclicWith(e) {
				r.edges = append(r.edges, e)
			}
		}
		s := New(Options{Seed: uint64(i)})
		s.th.rix.eager = true
		r.load(s)
		if !r.solve(nil) {
			continue
		}
		// Settle a node that has only base edges and decided ones: fix
		// every literal edge touching it false, then remove it.
		x := Node(g.rng.IntN(r.nNodes))
		for _, e := range r.edges {
			if (e.from == x || e.to == x) && e.a != litUndef {
				c := []Lit{e.a.Not()}
				if e.b != litUndef {
					c = append(c, e.b.Not())
				}
				r.clauses = append(r.clauses, c)
				s.AddClause(c...)
			}
		}
		if !r.solve(nil) {
			continue
		}
		r = r.removeNode(s, x)
		s.RemoveNode(x)
		s.Compact()
		y := s.NewNode()
		if int(y) >= r.nNodes {
			r.nNodes = int(y) + 1
		}
		for range 6 {
			e := g.edge(n, r.nNodes)
			if e.from == e.to || e.from == x && y != x || e.to == x && y != x || (e.a == litUndef && !r.baseAcyclicWith(e)) {
				continue
			}
			r.edges = append(r.edges, e)
			r.addEdgeTo(s, e)
		}
		as := g.assumptions(n)
		r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
	}
}

// TestPruneIndexRecycledNode: a node id recycled by Compact must not
// inherit the removed node's paths from a stale snapshot. a -> x is a
// base edge and the snapshot proves a ~> x; x is removed, Compact hands
// its id out again as y, and the edge y -> a on a fresh literal p closes
// no cycle: p must stay satisfiable.
func TestPruneIndexRecycledNode(t *testing.T) {
	s := New(Options{})
	s.th.rix.eager = true
	a, x := s.NewNode(), s.NewNode()
	if !s.AddBaseEdge(a, x) {
		t.Fatal("base edge refused")
	}
	q := PosLit(s.NewVar())
	s.AddEdge(q, x, a) // pruned through the snapshot: ¬q at level 0
	if v, ok := s.Fixed(q); !ok || v {
		t.Fatalf("x -> a not pruned: fixed %v %v", v, ok)
	}
	if s.Stats().PruneIndexHits != 1 {
		t.Fatalf("index hits %d, want 1", s.Stats().PruneIndexHits)
	}
	// From here on no search pays for a new build: a snapshot left in
	// place would be the stale one.
	s.th.rix.eager = false
	s.RemoveNode(x)
	s.Compact()
	y := s.NewNode()
	if y != x {
		t.Skipf("id %d not recycled (got %d): the case does not arise", x, y)
	}
	p := PosLit(s.NewVar())
	s.AddEdge(p, y, a)
	if st := s.Solve(context.Background(), p); st != Sat {
		t.Fatalf("y -> a alone: %v, want SAT", st)
	}
}

// TestPruneIndexPaysForItself: the snapshot is built where the bounded
// searches are costly and not where they are cheap (a cost rule, checked
// by counts, not by time). A base chain 0 -> 1 -> ... -> n-1 and literal
// edges i+span -> i: each one closes a cycle with the chain, which the
// bounded search proves by walking span edges. With span 1 the searches
// never pay for a build; with span 200 they do, after which the index
// proves the rest.
func TestPruneIndexPaysForItself(t *testing.T) {
	for _, tc := range []struct {
		span      int
		wantBuild bool
	}{{1, false}, {200, true}} {
		s := New(Options{})
		const n = 3000
		for range n {
			s.NewNode()
		}
		for i := range n - 1 {
			s.AddBaseEdge(Node(i), Node(i+1))
		}
		for i := 0; i+tc.span < n; i++ {
			s.AddEdge(PosLit(s.NewVar()), Node(i+tc.span), Node(i))
		}
		st := s.Stats()
		if st.PruneLemmas != int64(n-tc.span) {
			t.Fatalf("span %d: %d lemmas, want %d", tc.span, st.PruneLemmas, n-tc.span)
		}
		if built := st.PruneIndexBuilds > 0; built != tc.wantBuild {
			t.Fatalf("span %d: %d builds, want a build: %v", tc.span, st.PruneIndexBuilds, tc.wantBuild)
		}
		if tc.wantBuild && st.PruneIndexHits < int64(n-tc.span)/2 {
			t.Fatalf("span %d: index proved %d of %d", tc.span, st.PruneIndexHits, n-tc.span)
		}
	}
}
