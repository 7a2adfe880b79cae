package solver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// refEdge is an edge of the reference instance: a == litUndef for a base
// edge, b == litUndef for a single-literal edge.
type refEdge struct {
	from, to Node
	a, b     Lit
}

// ref is a dumb reference: the instance as plain lists, decided by
// enumerating every assignment (nVars <= 22).
type ref struct {
	nVars, nNodes int
	clauses       [][]Lit
	edges         []refEdge
	oracle        *matrixOracle
}

func (r *ref) clone() *ref {
	c := *r
	c.clauses = slices.Clone(r.clauses)
	c.edges = slices.Clone(r.edges)
	return &c
}

// litTrue evaluates p under assignment bits.
func litTrue(bits uint64, p Lit) bool {
	b := bits>>uint(p.Var())&1 == 1
	return b != p.IsNeg()
}

func (r *ref) edgeOn(bits uint64, e refEdge) bool {
	if e.a != litUndef && !litTrue(bits, e.a) {
		return false
	}
	if e.b != litUndef && !litTrue(bits, e.b) {
		return false
	}
	return true
}

// acyclic is Kahn's algorithm over the present edges and oracle pairs.
func (r *ref) acyclic(bits uint64) bool {
	n := r.nNodes
	indeg := make([]int, n)
	adj := make([][]int, n)
	for _, e := range r.edges {
		if r.edgeOn(bits, e) {
			adj[e.from] = append(adj[e.from], int(e.to))
			indeg[e.to]++
		}
	}
	if r.oracle != nil {
		for x := range n {
			for y := range n {
				if x != y && r.oracle.Reaches(Node(x), Node(y)) {
					adj[x] = append(adj[x], y)
					indeg[y]++
				}
			}
		}
	}
	var q []int
	for x := range n {
		if indeg[x] == 0 {
			q = append(q, x)
		}
	}
	seen := 0
	for len(q) > 0 {
		x := q[len(q)-1]
		q = q[:len(q)-1]
		seen++
		for _, y := range adj[x] {
			indeg[y]--
			if indeg[y] == 0 {
				q = append(q, y)
			}
		}
	}
	return seen == n
}

// solve reports whether some assignment satisfies clauses, assumptions and
// acyclicity.
func (r *ref) solve(assumptions []Lit) bool {
	if r.nVars > 22 {
		panic("ref: too many variables")
	}
	type mask struct{ pos, neg uint64 }
	ms := make([]mask, 0, len(r.clauses)+len(assumptions))
	add := func(c []Lit) {
		var m mask
		for _, p := range c {
			if p.IsNeg() {
				m.neg |= 1 << uint(p.Var())
			} else {
				m.pos |= 1 << uint(p.Var())
			}
		}
		ms = append(ms, m)
	}
	for _, c := range r.clauses {
		add(c)
	}
	for _, p := range assumptions {
		add([]Lit{p})
	}
	full := uint64(1)<<uint(r.nVars) - 1
next:
	for bits := uint64(0); bits <= full; bits++ {
		for _, m := range ms {
			if bits&m.pos == 0 && ^bits&m.neg == 0 {
				continue next
			}
		}
		if r.acyclic(bits) {
			return true
		}
	}
	return false
}

// load adds the whole reference instance to s (creating vars and nodes as
// needed) and returns AddClause's verdict.
func (r *ref) load(s *Solver) {
	for s.NumVars() < r.nVars {
		s.NewVar()
	}
	for s.NumNodes() < r.nNodes {
		s.NewNode()
	}
	if r.oracle != nil {
		s.SetBaseOracle(r.oracle)
	}
	for _, c := range r.clauses {
		s.AddClause(c...)
	}
	for _, e := range r.edges {
		r.addEdgeTo(s, e)
	}
}

func (r *ref) addEdgeTo(s *Solver, e refEdge) {
	switch {
	case e.a == litUndef:
		s.AddBaseEdge(e.from, e.to)
	case e.b == litUndef:
		s.AddEdge(e.a, e.from, e.to)
	default:
		s.AddEdge2(e.a, e.b, e.from, e.to)
	}
}

// checkModel verifies a Sat answer independently of the solver's
// internals: clauses, assumptions, acyclicity and the Order witness.
func (r *ref) checkModel(t *testing.T, s *Solver, assumptions []Lit) {
	t.Helper()
	// Evaluate through Value, not a bit mask: instances here may have
	// more than 64 variables.
	for v := range r.nVars {
		if s.Value(PosLit(Var(v))) == s.Value(NegLit(Var(v))) {
			t.Fatalf("var %d: Value(p) == Value(¬p)", v)
		}
	}
	for _, c := range r.clauses {
		ok := false
		for _, p := range c {
			ok = ok || s.Value(p)
		}
		if !ok {
			t.Fatalf("model falsifies clause %v", c)
		}
	}
	for _, p := range assumptions {
		if !s.Value(p) {
			t.Fatalf("model falsifies assumption %v", p)
		}
	}
	on := func(e refEdge) bool {
		return (e.a == litUndef || s.Value(e.a)) && (e.b == litUndef || s.Value(e.b))
	}
	order := s.Order()
	if len(order) != s.NumNodes() {
		t.Fatalf("Order has %d nodes, want %d", len(order), s.NumNodes())
	}
	pos := make([]int, len(order))
	for i := range pos {
		pos[i] = -1
	}
	for i, u := range order {
		if u < 0 || int(u) >= len(pos) || pos[u] >= 0 {
			t.Fatalf("Order is not a permutation: %v", order)
		}
		pos[u] = i
	}
	for _, e := range r.edges {
		if on(e) && pos[e.from] >= pos[e.to] {
			t.Fatalf("Order violates present edge %+v (order %v)", e, order)
		}
	}
	if r.oracle != nil {
		for x := range r.nNodes {
			for y := range r.nNodes {
				if x != y && r.oracle.Reaches(Node(x), Node(y)) && pos[x] >= pos[y] {
					t.Fatalf("Order violates oracle pair %d->%d", x, y)
				}
			}
		}
	}
}

// checkAnswer compares s's answer with brute force and validates models
// and failed assumptions.
func (r *ref) checkAnswer(t *testing.T, s *Solver, st Status, assumptions []Lit) {
	t.Helper()
	want := r.solve(assumptions)
	switch st {
	case Sat:
		if !want {
			t.Fatalf("solver says SAT, brute force UNSAT (assumptions %v)", assumptions)
		}
		r.checkModel(t, s, assumptions)
	case Unsat:
		if want {
			t.Fatalf("solver says UNSAT, brute force SAT (assumptions %v)", assumptions)
		}
		failed := s.FailedAssumptions()
		for _, p := range failed {
			if !slices.Contains(assumptions, p) {
				t.Fatalf("failed assumption %v not among %v", p, assumptions)
			}
		}
		if r.solve(failed) {
			t.Fatalf("failed assumptions %v are satisfiable", failed)
		}
		// Re-solve on a fresh solver under the failed subset only.
		f := New(Options{})
		r.load(f)
		if got := f.Solve(context.Background(), failed...); got != Unsat {
			t.Fatalf("fresh solver under failed assumptions %v: %v", failed, got)
		}
	default:
		t.Fatalf("solver says %v", st)
	}
}

type gen struct {
	rng *rand.Rand
}

func (g *gen) lit(nVars int) Lit {
	v := Var(g.rng.IntN(nVars))
	if g.rng.IntN(2) == 0 {
		return PosLit(v)
	}
	return NegLit(v)
}

func (g *gen) clause(nVars int) []Lit {
	n := 3
	switch g.rng.IntN(10) {
	case 0:
		n = 1
	case 1, 2:
		n = 2
	case 3:
		n = 4
	}
	c := make([]Lit, n)
	for i := range c {
		c[i] = g.lit(nVars)
	}
	return c
}

func (g *gen) edge(nVars, nNodes int) refEdge {
	from := Node(g.rng.IntN(nNodes))
	to := Node(g.rng.IntN(nNodes))
	if from == to && g.rng.IntN(8) != 0 {
		to = (to + 1) % Node(nNodes)
	}
	e := refEdge{from: from, to: to, a: litUndef, b: litUndef}
	switch k := g.rng.IntN(10); {
	case k < 1:
		if from == to {
			e.to = (to + 1) % Node(nNodes)
		}
	case k < 6:
		e.a = g.lit(nVars)
	default:
		e.a, e.b = g.lit(nVars), g.lit(nVars)
	}
	return e
}

func (g *gen) assumptions(nVars int) []Lit {
	var as []Lit
	for range g.rng.IntN(5) {
		as = append(as, g.lit(nVars))
	}
	return as
}

// randomRef builds a random instance; nodes == 0 means plain CNF.
func (g *gen) randomRef(nVars, nClauses, nNodes, nEdges int) *ref {
	r := &ref{nVars: nVars, nNodes: nNodes}
	for range nClauses {
		r.clauses = append(r.clauses, g.clause(nVars))
	}
	for range nEdges {
		e := g.edge(nVars, nNodes)
		if e.a == litUndef && !r.baseAcyclicWith(e) {
			continue // keep base edges acyclic so instances are interesting
		}
		r.edges = append(r.edges, e)
	}
	return r
}

func (r *ref) baseAcyclicWith(e refEdge) bool {
	c := &ref{nNodes: r.nNodes}
	for _, f := range r.edges {
		if f.a == litUndef {
			c.edges = append(c.edges, f)
		}
	}
	c.edges = append(c.edges, e)
	return c.acyclic(0)
}

func testSize(rng *rand.Rand, maxVars int) int {
	if rng.IntN(8) == 0 {
		return maxVars
	}
	return 2 + rng.IntN(maxVars/2)
}

func TestRandomCNF(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(1, 2))}
	for i := range 400 {
		n := testSize(g.rng, 20)
		if n > 16 && i%4 != 0 {
			n = 16
		}
		r := g.randomRef(n, int(float64(n)*(3.5+g.rng.Float64())), 0, 0)
		s := New(Options{Seed: uint64(i), ChronoThreshold: []int{0, 1, 3}[i%3]})
		r.load(s)
		as := g.assumptions(n)
		r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
	}
}

func TestRandomTheory(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(3, 4))}
	for i := range 400 {
		n := testSize(g.rng, 16)
		nodes := 2 + g.rng.IntN(7)
		r := g.randomRef(n, g.rng.IntN(2*n+1), nodes, g.rng.IntN(3*nodes+1))
		// Half reanchor at restarts that come every conflict or two.
		s := New(Options{Seed: uint64(i), TheoryPropagationLimit: []int{-1, 0, 3}[i%3], Reanchor: i%2 == 1, RestartBase: 1 + i%2})
		r.load(s)
		as := g.assumptions(n)
		r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
	}
}

// TestIncremental interleaves adding clauses, edges, nodes and variables
// with Solve calls under assumptions, and compares each answer with brute
// force on the cumulative instance.
func TestIncremental(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(5, 6))}
	for i := range 150 {
		s := New(Options{Seed: uint64(i), Reanchor: i%2 == 1, RestartBase: 1 + i%3})
		r := &ref{}
		for step := range 8 {
			if r.nVars < 16 {
				for range 1 + g.rng.IntN(3) {
					s.NewVar()
					r.nVars++
				}
			}
			if r.nNodes < 8 {
				s.NewNode()
				r.nNodes++
			}
			for range g.rng.IntN(r.nVars + 1) {
				c := g.clause(r.nVars)
				r.clauses = append(r.clauses, c)
				s.AddClause(c...)
			}
			for range g.rng.IntN(4) {
				e := g.edge(r.nVars, r.nNodes)
				if e.a == litUndef && !r.baseAcyclicWith(e) {
					continue
				}
				r.edges = append(r.edges, e)
				r.addEdgeTo(s, e)
			}
			as := g.assumptions(r.nVars)
			st := s.Solve(context.Background(), as...)
			r.checkAnswer(t, s, st, as)
			// A fresh solver on the cumulative instance must agree.
			f := New(Options{Seed: uint64(step)})
			r.load(f)
			if got := f.Solve(context.Background(), as...); got != st {
				t.Fatalf("incremental %v, fresh %v", st, got)
			}
		}
	}
}

// FuzzIncremental runs one random incremental scenario per input: the
// input seeds the generator. Run with -fuzz=FuzzIncremental -fuzztime=20s.
func FuzzIncremental(f *testing.F) {
	for i := range uint64(8) {
		f.Add(i, uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, shape uint8) {
		g := &gen{rand.New(rand.NewPCG(seed, uint64(shape)))}
		s := New(Options{Seed: seed, TheoryPropagationLimit: int(shape%5) - 1})
		r := &ref{}
		for range 1 + int(shape%6) {
			for range 1 + g.rng.IntN(3) {
				if r.nVars < 12 {
					s.NewVar()
					r.nVars++
				}
			}
			if r.nNodes < 7 {
				s.NewNode()
				r.nNodes++
			}
			for range g.rng.IntN(r.nVars + 1) {
				c := g.clause(r.nVars)
				r.clauses = append(r.clauses, c)
				s.AddClause(c...)
			}
			for range g.rng.IntN(5) {
				e := g.edge(r.nVars, r.nNodes)
				if e.a == litUndef && !r.baseAcyclicWith(e) {
					continue
				}
				r.edges = append(r.edges, e)
				r.addEdgeTo(s, e)
			}
			as := g.assumptions(r.nVars)
			r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
		}
	})
}

func TestLitEncoding(t *testing.T) {
	for v := Var(0); v < 100; v++ {
		p, n := PosLit(v), NegLit(v)
		if p.Var() != v || n.Var() != v || p.IsNeg() || !n.IsNeg() || p.Not() != n || n.Not() != p {
			t.Fatalf("var %d: bad literal encoding", v)
		}
		if LitFromDIMACS(p.DIMACS()) != p || LitFromDIMACS(n.DIMACS()) != n || p.DIMACS() != int(v)+1 || n.DIMACS() != -int(v)-1 {
			t.Fatalf("var %d: bad DIMACS conversion", v)
		}
	}
	if fmt.Sprint(Sat, Unsat, Unknown) != "SAT UNSAT UNKNOWN" || int(Sat) != 10 || int(Unsat) != 20 {
		t.Fatal("status values")
	}
}

// matrixOracle is the transitive closure of a hidden DAG, as a matrix.
type matrixOracle struct {
	reach [][]bool
	next  [][]Node // an edge of the hidden DAG, for Path
}

func newMatrixOracle(n int, edges [][2]Node) *matrixOracle {
	o := &matrixOracle{reach: make([][]bool, n)}
	for i := range o.reach {
		o.reach[i] = make([]bool, n)
	}
	for _, e := range edges {
		o.reach[e[0]][e[1]] = true
	}
	for k := range n {
		for i := range n {
			if o.reach[i][k] {
				for j := range n {
					if o.reach[k][j] {
						o.reach[i][j] = true
					}
				}
			}
		}
	}
	return o
}

func (o *matrixOracle) Reaches(from, to Node) bool {
	return int(from) < len(o.reach) && int(to) < len(o.reach) && o.reach[from][to]
}

func (o *matrixOracle) Path(from, to Node) []Node {
	if !o.Reaches(from, to) {
		return nil
	}
	return []Node{from, to} // not a real edge path; the solver never needs one
}

// polygraph builds a polygraph-like instance: every variable chooses
// between two edge sets (one per polarity), some edges need two literals
// (derived anti-dependencies), a few clauses tie choices together, and a
// sparse base DAG orders some nodes.
func (g *gen) polygraph(nVars, nNodes int) *ref {
	r := &ref{nVars: nVars, nNodes: nNodes}
	for range nNodes / 2 {
		e := g.edge(1, nNodes)
		e.a, e.b = litUndef, litUndef
		if e.from != e.to && r.baseAcyclicWith(e) {
			r.edges = append(r.edges, e)
		}
	}
	pair := func() (Node, Node) {
		u := Node(g.rng.IntN(nNodes))
		v := Node(g.rng.IntN(nNodes - 1))
		if v >= u {
			v++
		}
		return u, v
	}
	for v := range nVars {
		for _, p := range []Lit{PosLit(Var(v)), NegLit(Var(v))} {
			for range 1 + g.rng.IntN(2) {
				u, w := pair()
				r.edges = append(r.edges, refEdge{from: u, to: w, a: p, b: litUndef})
			}
		}
	}
	for range nVars / 2 {
		u, w := pair()
		r.edges = append(r.edges, refEdge{from: u, to: w, a: g.lit(nVars), b: g.lit(nVars)})
	}
	for range g.rng.IntN(nVars/2 + 1) {
		r.clauses = append(r.clauses, g.clause(nVars))
	}
	return r
}

func TestRandomPolygraph(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(7, 8))}
	for i := range 300 {
		n := testSize(g.rng, 14)
		r := g.polygraph(n, 3+g.rng.IntN(2*n))
		s := New(Options{Seed: uint64(i), TheoryPropagationLimit: []int{-1, 0, 3}[i%3], ChronoThreshold: []int{0, 1}[i%2]})
		r.load(s)
		as := g.assumptions(n)
		r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
	}
}

// TestConfigurations cross-checks solver configurations on instances too
// big for brute force: aggressive reduction, restarts and arena GC, no
// theory propagation, different seeds. All must agree, and every model is
// checked independently.
func TestConfigurations(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(17, 18))}
	configs := []Options{
		{},
		{Seed: 3, RestartBase: 5, ReduceBase: 30, ReduceInc: 5},
		{Seed: 4, TheoryPropagationLimit: -1, ReduceBase: 50, ReduceInc: 1},
		{Seed: 5, TheoryPropagationLimit: 1000},
		{Seed: 6, ChronoThreshold: 1, AlwaysOrderPhase: true},
		{Seed: 7, PruneLimit: -1},
	}
	var gcs, deleted int64
	for i := range 40 {
		var r *ref
		if i%2 == 0 {
			n := 60 + g.rng.IntN(30)
			r = &ref{nVars: n}
			for range int(4.26 * float64(n)) {
				c := make([]Lit, 3)
				for j := range c {
					c[j] = g.lit(n)
				}
				r.clauses = append(r.clauses, c)
			}
		} else {
			n := 40 + g.rng.IntN(40)
			r = g.polygraph(n, 10+g.rng.IntN(30))
			for range n {
				r.clauses = append(r.clauses, g.clause(n))
			}
		}
		as := g.assumptions(r.nVars)
		var first Status
		for k, o := range configs {
			s := New(o)
			r.load(s)
			st := s.Solve(context.Background(), as...)
			if k == 0 {
				first = st
			} else if st != first {
				t.Fatalf("instance %d: config %d says %v, config 0 says %v", i, k, st, first)
			}
			switch st {
			case Sat:
				r.checkModel(t, s, as)
			case Unsat:
				failed := s.FailedAssumptions()
				f := New(Options{})
				r.load(f)
				if f.Solve(context.Background(), failed...) != Unsat {
					t.Fatalf("instance %d: failed assumptions %v are satisfiable", i, failed)
				}
			}
			gcs += s.Stats().GCs
			deleted += s.Stats().Deleted
		}
	}
	if gcs == 0 || deleted == 0 {
		t.Fatalf("reduction/GC not exercised: %d GCs, %d deleted", gcs, deleted)
	}
}
