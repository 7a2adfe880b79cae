package solver

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// group is a window entry: clauses and edges guarded by one selector, over
// variables that only the group uses.
type group struct {
	sel     Lit
	vars    []Var
	clauses [][]Lit   // without the selector
	edges   []refEdge // single-literal edges (attached as AddEdge2(p, sel))
}

// TestSelectorsRetire slides a window of groups: each step adds a group
// under a fresh selector, solves under the live selectors, then removes
// the oldest group with RemoveSelector and retires its variables, which
// later NewVar calls recycle. Every answer is compared with brute force
// over the live groups and the global clauses (Compact runs now and then
// so that indices really are reused).
func TestSelectorsRetire(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(9, 10))}
	for round := range 12 {
		s := New(Options{Seed: uint64(round)})
		const nGlobal, nNodes = 3, 5
		var global []Var
		for range nGlobal {
			global = append(global, s.NewVar())
		}
		for range nNodes {
			s.NewNode()
		}
		var globalClauses [][]Lit
		for range 2 {
			c := g.clause(nGlobal)
			globalClauses = append(globalClauses, c)
			s.AddClause(c...)
		}
		var live []group
		reused := 0
		for step := range 40 {
			gr := group{sel: s.NewSelector()}
			for range 2 + g.rng.IntN(3) {
				v := s.NewVar()
				if int(v) < nGlobal || v == gr.sel.Var() {
					t.Fatalf("NewVar returned live variable %d", v)
				}
				if int(v) < s.NumVars()-1 {
					reused++
				}
				gr.vars = append(gr.vars, v)
			}
			pool := append(slices.Clone(global), gr.vars...)
			lit := func() Lit {
				v := pool[g.rng.IntN(len(pool))]
				if g.rng.IntN(2) == 0 {
					return PosLit(v)
				}
				return NegLit(v)
			}
			for range 1 + g.rng.IntN(4) {
				c := make([]Lit, 1+g.rng.IntN(3))
				for i := range c {
					c[i] = lit()
				}
				gr.clauses = append(gr.clauses, c)
				s.AddClause(append(slices.Clone(c), gr.sel.Not())...)
			}
			for range g.rng.IntN(4) {
				u, w := Node(g.rng.IntN(nNodes)), Node(g.rng.IntN(nNodes))
				p := PosLit(gr.vars[g.rng.IntN(len(gr.vars))])
				if g.rng.IntN(2) == 0 {
					p = p.Not()
				}
				gr.edges = append(gr.edges, refEdge{from: u, to: w, a: p, b: litUndef})
				s.AddEdge2(p, gr.sel, u, w)
			}
			live = append(live, gr)
			if len(live) > 3 {
				old := live[0]
				live = live[1:]
				s.RemoveSelector(old.sel)
				for _, v := range old.vars {
					if err := s.Retire(v); err != nil {
						t.Fatalf("step %d: Retire(%d): %v", step, v, err)
					}
				}
				if err := s.Retire(old.sel.Var()); err != nil {
					t.Fatalf("step %d: Retire(selector): %v", step, err)
				}
				if err := s.Retire(old.sel.Var()); err == nil {
					t.Fatalf("retiring twice succeeded")
				}
			}
			if g.rng.IntN(3) == 0 {
				s.Compact()
			}
			// Reference: live groups' variables renumbered densely.
			r := &ref{nNodes: nNodes}
			m := map[Var]Var{}
			mapLit := func(p Lit) Lit {
				v, ok := m[p.Var()]
				if !ok {
					v = Var(r.nVars)
					m[p.Var()] = v
					r.nVars++
				}
				if p.IsNeg() {
					return NegLit(v)
				}
				return PosLit(v)
			}
			for _, v := range global {
				mapLit(PosLit(v))
			}
			mapAll := func(c []Lit) []Lit {
				out := make([]Lit, len(c))
				for i, p := range c {
					out[i] = mapLit(p)
				}
				return out
			}
			for _, c := range globalClauses {
				r.clauses = append(r.clauses, mapAll(c))
			}
			var as []Lit
			for _, gr := range live {
				for _, v := range gr.vars {
					mapLit(PosLit(v))
				}
				for _, c := range gr.clauses {
					r.clauses = append(r.clauses, mapAll(c))
				}
				for _, e := range gr.edges {
					e.a = mapLit(e.a)
					r.edges = append(r.edges, e)
				}
				as = append(as, gr.sel)
			}
			// Occasionally assume a global literal too.
			var extra []Lit
			if g.rng.IntN(2) == 0 {
				p := g.lit(nGlobal)
				extra = append(extra, mapLit(p))
				as = append(as, p)
			}
			st := s.Solve(context.Background(), as...)
			want := r.solve(extra)
			switch {
			case st == Sat && want:
				// Check the model through the mapping.
				for sv, rv := range m {
					_ = rv
					if s.Value(PosLit(sv)) == s.Value(NegLit(sv)) {
						t.Fatal("inconsistent model")
					}
				}
				checkMapped(t, s, r, m)
			case st == Unsat && !want:
				for _, p := range s.FailedAssumptions() {
					if !slices.Contains(as, p) {
						t.Fatalf("failed assumption %v not assumed", p)
					}
				}
			default:
				t.Fatalf("round %d step %d: solver %v, brute force sat=%v", round, step, st, want)
			}
		}
		if reused == 0 {
			t.Fatalf("round %d: no variable index was recycled", round)
		}
	}
}

// checkMapped verifies a model of s against reference r whose variables
// are renamed by m (solver var -> reference var).
func checkMapped(t *testing.T, s *Solver, r *ref, m map[Var]Var) {
	t.Helper()
	var bits uint64
	for sv, rv := range m {
		if s.Value(PosLit(sv)) {
			bits |= 1 << uint(rv)
		}
	}
	for _, c := range r.clauses {
		ok := false
		for _, p := range c {
			ok = ok || litTrue(bits, p)
		}
		if !ok {
			t.Fatalf("model falsifies clause %v", c)
		}
	}
	order := s.Order()
	pos := make([]int, len(order))
	for i, u := range order {
		pos[u] = i
	}
	for _, e := range r.edges {
		if r.edgeOn(bits, e) && pos[e.from] >= pos[e.to] {
			t.Fatalf("Order violates edge %+v", e)
		}
	}
}

func TestRetireErrors(t *testing.T) {
	s := New(Options{})
	a, b, c := s.NewVar(), s.NewVar(), s.NewVar()
	s.AddClause(PosLit(a), PosLit(b))
	if err := s.Retire(a); !errors.Is(err, ErrRetire) {
		t.Fatalf("retiring a var of a live clause: %v", err)
	}
	u, w := s.NewNode(), s.NewNode()
	s.AddEdge(PosLit(c), u, w)
	if err := s.Retire(c); !errors.Is(err, ErrRetire) {
		t.Fatalf("retiring a var carrying an edge: %v", err)
	}
	s.AddClause(NegLit(c)) // now fixed: retiring drops the edge
	if err := s.Retire(c); err != nil {
		t.Fatal(err)
	}
	s.AddClause(PosLit(b))
	if err := s.Retire(a); err != nil { // clause satisfied by b
		t.Fatal(err)
	}
	if err := s.Retire(Var(99)); err == nil {
		t.Fatal("retiring an unknown var succeeded")
	}
	s.Compact()
	if v := s.NewVar(); v != a && v != c {
		t.Fatalf("NewVar after Compact = %d, want a recycled index", v)
	}
	if st := s.Solve(context.Background()); st != Sat {
		t.Fatal(st)
	}
}

// TestRemoveNode removes random nodes between solves and compares with a
// reference that applies the documented semantics: level-0 facts become
// unit clauses, permanent paths through the node become base edges, every
// other edge touching it disappears.
func TestRemoveNode(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(11, 12))}
	for i := range 150 {
		n := 4 + g.rng.IntN(8)
		r := g.polygraph(n, 4+g.rng.IntN(6))
		// Some base chains so that bridging matters.
		for range 3 {
			e := g.edge(1, r.nNodes)
			e.a, e.b = litUndef, litUndef
			if e.from != e.to && r.baseAcyclicWith(e) {
				r.edges = append(r.edges, e)
			}
		}
		s := New(Options{Seed: uint64(i)})
		r.load(s)
		removed := map[Node]bool{}
		for step := range 4 {
			as := g.assumptions(n)
			r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
			if !r.solve(nil) {
				break // removal semantics only matter while satisfiable
			}
			x := Node(g.rng.IntN(r.nNodes))
			if removed[x] {
				continue
			}
			// Settle x first, as the checker does (every edge touching it
			// decided at level 0): clauses learned from cycles through x
			// then stay implied after the removal.
			for _, e := range r.edges {
				if (e.from != x && e.to != x) || e.a == litUndef {
					continue
				}
				decided := true
				for _, p := range []Lit{e.a, e.b} {
					if p == litUndef {
						continue
					}
					if v, ok := s.Fixed(p); !ok {
						decided = false
					} else if !v {
						decided = true
						break
					}
				}
				if !decided {
					p := e.a
					if _, ok := s.Fixed(p); ok {
						p = e.b
					}
					c := []Lit{p.Not()}
					if g.rng.IntN(2) == 0 && e.b == litUndef {
						c[0] = p // present instead of absent
					}
					r.clauses = append(r.clauses, c)
					s.AddClause(c...)
				}
			}
			if !r.solve(nil) {
				break
			}
			r = r.removeNode(s, x)
			s.RemoveNode(x)
			removed[x] = true
			if step%2 == 1 {
				y := s.NewNode()
				delete(removed, y)
				if int(y) == r.nNodes {
					r.nNodes++
				} else if y != x && int(y) > r.nNodes {
					t.Fatalf("NewNode = %d", y)
				}
				for range 2 {
					e := g.edge(n, r.nNodes)
					e.from = y
					if e.to == y || removed[e.to] || (e.a == litUndef && !r.baseAcyclicWith(e)) {
						continue
					}
					r.edges = append(r.edges, e)
					r.addEdgeTo(s, e)
				}
			}
			if g.rng.IntN(2) == 0 {
				s.Compact()
			}
		}
	}
}

// removeNode is the reference semantics of Solver.RemoveNode.
func (r *ref) removeNode(s *Solver, x Node) *ref {
	c := r.clone()
	fixedTrue := func(p Lit) bool {
		v, ok := s.Fixed(p)
		return ok && v
	}
	for v := range r.nVars {
		if val, ok := s.Fixed(PosLit(Var(v))); ok {
			p := PosLit(Var(v))
			if !val {
				p = p.Not()
			}
			c.clauses = append(c.clauses, []Lit{p})
		}
	}
	perm := func(e refEdge) bool {
		return (e.a == litUndef || fixedTrue(e.a)) && (e.b == litUndef || fixedTrue(e.b))
	}
	c.edges = c.edges[:0]
	var ins, outs []Node
	for _, e := range r.edges {
		switch {
		case e.to == x && e.from != x:
			if perm(e) {
				ins = append(ins, e.from)
			}
		case e.from == x && e.to != x:
			if perm(e) {
				outs = append(outs, e.to)
			}
		case e.from != x && e.to != x:
			c.edges = append(c.edges, e)
		}
	}
	for _, p := range ins {
		for _, q := range outs {
			if p != q {
				c.edges = append(c.edges, refEdge{from: p, to: q, a: litUndef, b: litUndef})
			}
		}
	}
	return c
}

// TestOracle hides part of the base graph behind a ReachOracle.
func TestOracle(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(13, 14))}
	for i := range 200 {
		n := testSize(g.rng, 14)
		nodes := 3 + g.rng.IntN(6)
		r := g.polygraph(n, nodes)
		var hidden [][2]Node
		for range g.rng.IntN(nodes) {
			u, w := Node(g.rng.IntN(nodes)), Node(g.rng.IntN(nodes))
			if u < w { // u < w keeps the hidden graph acyclic
				hidden = append(hidden, [2]Node{u, w})
			}
		}
		r.oracle = newMatrixOracle(nodes, hidden)
		s := New(Options{Seed: uint64(i)})
		r.load(s)
		for range 3 {
			as := g.assumptions(n)
			r.checkAnswer(t, s, s.Solve(context.Background(), as...), as)
			e := g.edge(n, nodes)
			if e.a == litUndef && !r.baseAcyclicWith(e) {
				continue
			}
			r.edges = append(r.edges, e)
			r.addEdgeTo(s, e)
		}
	}
}

// pigeonhole adds PHP(p, h): p pigeons in h holes, unsatisfiable for p > h.
func pigeonhole(s *Solver, p, h int) {
	x := make([][]Var, p)
	for i := range x {
		for range h {
			x[i] = append(x[i], s.NewVar())
		}
		c := make([]Lit, h)
		for j := range h {
			c[j] = PosLit(x[i][j])
		}
		s.AddClause(c...)
	}
	for j := range h {
		for i := range p {
			for k := i + 1; k < p; k++ {
				s.AddClause(NegLit(x[i][j]), NegLit(x[k][j]))
			}
		}
	}
}

func TestBudgetAndCancel(t *testing.T) {
	s := New(Options{ConflictBudget: 50})
	pigeonhole(s, 9, 8)
	if st := s.Solve(context.Background()); st != Unknown {
		t.Fatalf("budget 50 on PHP(9,8): %v", st)
	}
	if c := s.Stats().Conflicts; c > 60 {
		t.Fatalf("budget 50 spent %d conflicts", c)
	}
	s2 := New(Options{})
	pigeonhole(s2, 9, 8)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if st := s2.Solve(ctx); st != Unknown {
		t.Fatalf("cancelled context: %v", st)
	}
	s3 := New(Options{})
	pigeonhole(s3, 7, 6)
	if st := s3.Solve(context.Background()); st != Unsat {
		t.Fatalf("PHP(7,6): %v", st)
	}
	if len(s3.FailedAssumptions()) != 0 {
		t.Fatal("failed assumptions without assumptions")
	}
}

func TestDeterministic(t *testing.T) {
	g := &gen{rand.New(rand.NewPCG(15, 16))}
	r := g.polygraph(40, 30)
	r.nVars = 40
	run := func(seed uint64) (Stats, []Node) {
		s := New(Options{Seed: seed})
		r.load(s)
		s.Solve(context.Background())
		return s.Stats(), s.Order()
	}
	a, oa := run(7)
	b, ob := run(7)
	if a != b || !slices.Equal(oa, ob) {
		t.Fatalf("same seed, different runs: %+v vs %+v", a, b)
	}
}

// TestPhase checks the order-guided phase: with no clauses at all, every
// edge variable whose edges point forward in the order ends up true.
func TestPhase(t *testing.T) {
	s := New(Options{})
	var ns []Node
	for range 5 {
		ns = append(ns, s.NewNode())
	}
	s.AddBaseEdge(ns[0], ns[1])
	fwd, bwd := s.NewVar(), s.NewVar()
	s.AddEdge(PosLit(fwd), ns[1], ns[3])
	s.AddEdge(PosLit(bwd), ns[3], ns[0])
	user := s.NewVar()
	s.AddEdge(PosLit(user), ns[2], ns[4])
	s.SetPhase(user, false)
	if s.Solve(context.Background()) != Sat {
		t.Fatal("unsat")
	}
	if !s.Value(PosLit(fwd)) || s.Value(PosLit(bwd)) || s.Value(PosLit(user)) {
		t.Fatalf("phases: fwd=%v bwd=%v user=%v", s.Value(PosLit(fwd)), s.Value(PosLit(bwd)), s.Value(PosLit(user)))
	}
}
