package solver

import (
	"math"
	"slices"
)

// edge is a theory edge from -> to. It is present when all of its
// literals are true: a base edge has none (a == litUndef), a single edge
// one (b == litUndef), a conjunction edge two (doc.go, "Theory").
type edge struct {
	from, to Node
	a, b     Lit
	// at is the trail index of the literal whose processing made the edge
	// present, -1 for base edges; meaningful only while present.
	at      int32
	present bool
	dead    bool // removed with a node or a retired variable
}

func (e *edge) isBase() bool { return e.a == litUndef }

// candRef names a non-base edge from one endpoint's list: the other
// endpoint inline, so that propagation can filter without touching the
// edge table.
type candRef struct {
	other Node
	e     int32
}

// theory is the acyclicity theory: the edges, the subgraph of present
// edges with a Pearce–Kelly topological order over it, and the trail
// cursor that feeds it.
type theory struct {
	edges   []edge
	edgesOf [][]int32   // per literal: edges that literal helps make present
	out, in [][]int32   // per node: present edges, in activation order
	cand    [][]candRef // per node: non-base edges leaving it, present or not
	candIn  [][]candRef // per node: non-base edges entering it
	ord     []int32     // ord[u]: u's position in the topological order
	pos     []Node      // pos[i]: the node at position i (inverse of ord)
	removed []bool      // removed node ids (pending or free)
	free    []Node      // removed and purged: NewNode may reuse them
	// pendingNodes are removed but their dead edges may still sit in the
	// edge table; they become free at the next Compact.
	pendingNodes []Node
	dead         int // dead edges in the table

	active []int32 // present literal edges in activation order (a stack)
	head   int     // next trail index to feed to the theory
	nCand  int     // live non-base edges; 0 skips theory propagation
	nBase  int     // base edges linked (a rebuild trigger for rix)

	// rix is the pruning index over a snapshot of the permanent edges
	// (reachindex.go); rixHits counts the paths it proved, rixBuilds
	// the snapshots.
	rix       reachIndex
	rixHits   int64
	rixBuilds int64

	oracle      ReachOracle
	oracleOrder []Node

	// Search scratch, stamped so that no clearing is needed.
	fmark, bmark []uint32
	fgen, bgen   uint32
	stack        []Node
	deltaF       []Node
	deltaB       []Node
	ords         []int32
	parent       []int32 // parent edge during path searches
	dist         []int32
	q0, q1       []Node
	confl        []Lit
	expl         []Lit
	propagated   bool

	// New nodes' edge lists start in arrays carved from shared chunks:
	// most nodes have one or two edges of each kind, and growing four
	// lists from nil per node was a fifth of an instance's allocations.
	edgeSlab []int32
	candSlab []candRef
}

// slabChunk is how many list entries one chunk of a slab holds.
const slabChunk = 2048

// carve returns an empty list with room for n entries, from *slab.
func carve[T any](slab *[]T, n int) []T {
	if len(*slab) < n {
		*slab = make([]T, slabChunk)
	}
	l := (*slab)[:0:n]
	*slab = (*slab)[n:]
	return l
}

func (t *theory) growLits(n int) {
	for len(t.edgesOf) < n {
		t.edgesOf = appendList(t.edgesOf) // recycle.go
	}
}

// NewNode adds a node to the theory, recycling a removed id when one is
// free. A new node goes last in the topological order.
func (s *Solver) NewNode() Node {
	t := &s.th
	if len(t.free) == 0 && len(t.pendingNodes) >= 64 && len(t.pendingNodes)*8 >= len(t.ord) {
		s.Compact()
	}
	if n := len(t.free); n > 0 {
		u := t.free[n-1]
		t.free = t.free[:n-1]
		t.removed[u] = false
		return u
	}
	u := Node(len(t.ord))
	t.ord = append(t.ord, int32(len(t.pos)))
	t.pos = append(t.pos, u)
	// A recycled solver's lists first (recycle.go).
	t.out = appendCarved(t.out, &t.edgeSlab)
	t.in = appendCarved(t.in, &t.edgeSlab)
	t.cand = appendCarved(t.cand, &t.candSlab)
	t.candIn = appendCarved(t.candIn, &t.candSlab)
	t.removed = append(t.removed, false)
	t.fmark = append(t.fmark, 0)
	t.bmark = append(t.bmark, 0)
	t.parent = append(t.parent, -1)
	t.dist = append(t.dist, 0)
	return u
}

// NumNodes returns the number of node ids in use, removed ones included.
func (s *Solver) NumNodes() int { return len(s.th.ord) }

// NumEdges is the number of edges added (base and literal-attached).
func (s *Solver) NumEdges() int { return len(s.th.edges) }

// SetBaseOracle adds reachability that holds in every model without
// explicit edges. The solver consults it when an edge is inserted and
// checks the complete graph against it before answering Sat.
func (s *Solver) SetBaseOracle(o ReachOracle) {
	s.cancelUntil(0)
	s.th.oracle = o
}

// AddBaseEdge adds an edge present in every model. It returns false if the
// edge closes a cycle with base edges and edges true at level 0.
func (s *Solver) AddBaseEdge(from, to Node) bool {
	if !s.ok {
		return false
	}
	s.cancelUntil(0)
	s.hasModel = false
	if s.propagate() != nil {
		s.ok = false
		return false
	}
	t := &s.th
	if t.removed[from] || t.removed[to] {
		panic("solver: edge on a removed node")
	}
	if from == to || (t.oracle != nil && t.oracle.Reaches(to, from)) {
		s.ok = false
		return false
	}
	if t.hasBaseEdge(from, to) {
		return true
	}
	t.edges = append(t.edges, edge{from: from, to: to, a: litUndef, b: litUndef, at: -1})
	e := int32(len(t.edges) - 1)
	if !t.insert(s, e) {
		s.ok = false
		return false
	}
	t.edges[e].present = true
	t.link(e)
	t.nBase++
	t.propagateFrom(s, e)
	if s.propagate() != nil {
		s.ok = false
	}
	return s.ok
}

// hasBaseEdge reports whether from -> to is already a base edge, looking
// at the last dupScan edges that left from (at level 0 they are base or
// level-0 edges, and duplicates come from the same caller in a row). A
// map of all base edges cost a tenth of the checker's encoding time and
// memory at 100K transactions; a duplicate that slips past is only a
// redundant present edge.
func (t *theory) hasBaseEdge(from, to Node) bool {
	const dupScan = 16
	out := t.out[from]
	for i := len(out) - 1; i >= 0 && i >= len(out)-dupScan; i-- {
		if ed := &t.edges[out[i]]; ed.to == to && ed.isBase() {
			return true
		}
	}
	return false
}

// Reserve makes room for at least nodes more nodes and edges more edges
// without reallocation: a capacity hint for callers that know the size of
// their instance (the checker creates hundreds of thousands of each).
func (s *Solver) Reserve(nodes, edges int) {
	t := &s.th
	t.edges = slices.Grow(t.edges, edges)
	t.ord = slices.Grow(t.ord, nodes)
	t.pos = slices.Grow(t.pos, nodes)
	t.out = slices.Grow(t.out, nodes)
	t.in = slices.Grow(t.in, nodes)
	t.cand = slices.Grow(t.cand, nodes)
	t.candIn = slices.Grow(t.candIn, nodes)
	t.removed = slices.Grow(t.removed, nodes)
	t.fmark = slices.Grow(t.fmark, nodes)
	t.bmark = slices.Grow(t.bmark, nodes)
	t.parent = slices.Grow(t.parent, nodes)
	t.dist = slices.Grow(t.dist, nodes)
}

// AddEdge attaches edge from -> to to literal p: the edge is present
// exactly when p is true.
func (s *Solver) AddEdge(p Lit, from, to Node) {
	s.addEdge(p, litUndef, from, to)
}

// AddEdge2 attaches an edge that is present exactly when p and q are both
// true.
func (s *Solver) AddEdge2(p, q Lit, from, to Node) {
	s.addEdge(p, q, from, to)
}

func (s *Solver) addEdge(p, q Lit, from, to Node) {
	if !s.ok {
		return
	}
	s.cancelUntil(0)
	s.hasModel = false
	if s.retired[p.Var()] || (q != litUndef && s.retired[q.Var()]) {
		panic("solver: edge on a retired variable")
	}
	if s.th.removed[from] || s.th.removed[to] {
		panic("solver: edge on a removed node")
	}
	// Normalize: literals fixed true at level 0 drop out, fixed false or
	// complementary literals make the edge impossible.
	if q == p {
		q = litUndef
	}
	if q != litUndef && (q == p.Not() || s.val[p] < 0 || s.val[q] < 0) {
		return
	}
	if q != litUndef && s.val[q] > 0 {
		q = litUndef
	} else if q != litUndef && s.val[p] > 0 {
		p, q = q, litUndef
	}
	if from == to {
		if q == litUndef {
			s.AddClause(p.Not())
		} else {
			s.AddClause(p.Not(), q.Not())
		}
		return
	}
	if s.val[p] < 0 {
		return
	}
	t := &s.th
	if lim := s.opts.PruneLimit; lim >= 0 && (s.val[p] == 0 || (q != litUndef && s.val[q] == 0)) {
		// An edge that closes a cycle with permanent edges is pruned at
		// once (VeriStrong §6.1.1): its literals cannot all hold.
		// The snapshot index first (reachindex.go): it proves most such
		// paths in O(1); a path it does not know is searched for.
		if t.ord[to] <= t.ord[from] && (t.permanentReaches(to, from) || t.reachesBounded(to, from, lim)) {
			s.stats.PruneLemmas++
			if q == litUndef {
				s.addLemma(p.Not())
			} else {
				s.addLemma(p.Not(), q.Not())
			}
		}
	}
	t.edges = append(t.edges, edge{from: from, to: to, a: p, b: q, at: -1})
	e := int32(len(t.edges) - 1)
	t.edgesOf[p] = append(t.edgesOf[p], e)
	if q != litUndef {
		t.edgesOf[q] = append(t.edgesOf[q], e)
	}
	t.cand[from] = append(t.cand[from], candRef{to, e})
	t.candIn[to] = append(t.candIn[to], candRef{from, e})
	t.nCand++
	if s.propagate() != nil {
		s.ok = false
		return
	}
	if s.val[p] > 0 && q == litUndef && !t.edges[e].present {
		// p was fed to the theory before this edge existed.
		if !t.insert(s, e) {
			s.ok = false
			return
		}
		t.activate(s, e, s.trailPos[p.Var()])
		t.propagateFrom(s, e)
		if s.propagate() != nil {
			s.ok = false
		}
	}
}

// reachesBounded reports whether x reaches y over present edges, visiting
// at most 16*limit edges (false when the budget runs out). Nodes
// ordered after y cannot lie on such a path (T1). The budget counts edges,
// not nodes: a writer read by thousands has thousands of present wr edges,
// and a node budget let one search scan them all (serializable instances
// spent two thirds of their encoding here; solver/doc.go, Tuning).
func (t *theory) reachesBounded(x, y Node, limit int) bool {
	oy := t.ord[y]
	if t.ord[x] > oy {
		return false
	}
	t.fgen++
	t.stack = append(t.stack[:0], x)
	t.fmark[x] = t.fgen
	n := 0
	// The work is what pays for the pruning index (reachindex.go).
	defer func() { t.rix.work += n }()
	for len(t.stack) > 0 && n < 16*limit {
		z := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		if z == y {
			return true
		}
		n += 1 + len(t.out[z])
		for _, f := range t.out[z] {
			w := t.edges[f].to
			if t.fmark[w] != t.fgen && t.ord[w] <= oy {
				t.fmark[w] = t.fgen
				t.stack = append(t.stack, w)
			}
		}
	}
	return false
}

// link puts present edge e into the adjacency lists.
func (t *theory) link(e int32) {
	ed := &t.edges[e]
	t.out[ed.from] = append(t.out[ed.from], e)
	t.in[ed.to] = append(t.in[ed.to], e)
}

func (t *theory) activate(s *Solver, e int32, at int32) {
	ed := &t.edges[e]
	ed.present = true
	ed.at = at
	t.link(e)
	t.active = append(t.active, e)
	s.stats.EdgeInsertions++
}

// backtrack removes the edges made present at trail index lim or later
// (invariant T2: the present set is a function of the trail prefix that
// the theory has seen). The topological order is kept: it stays valid for
// any subgraph.
func (t *theory) backtrack(s *Solver, lim int) {
	for n := len(t.active); n > 0; n-- {
		e := t.active[n-1]
		ed := &t.edges[e]
		if int(ed.at) < lim {
			break
		}
		ed.present = false
		o := t.out[ed.from]
		if o[len(o)-1] != e {
			panic("solver: theory adjacency is not LIFO")
		}
		t.out[ed.from] = o[:len(o)-1]
		i := t.in[ed.to]
		t.in[ed.to] = i[:len(i)-1]
		t.active = t.active[:n-1]
	}
	t.head = min(t.head, lim)
}

// propagate feeds the trail to the theory from t.head. It stops early when
// it implied literals (so that cheap unit propagation runs first) and
// returns a conflict clause when an edge closes a cycle.
func (t *theory) propagate(s *Solver) []Lit {
	t.propagated = false
	for t.head < len(s.trail) && !t.propagated {
		k := t.head
		p := s.trail[k]
		for _, e := range t.edgesOf[p] {
			ed := &t.edges[e]
			if ed.dead || ed.present {
				continue
			}
			if ed.b != litUndef {
				other := ed.a
				if other == p {
					other = ed.b
				}
				if s.val[other] <= 0 || int(s.trailPos[other.Var()]) > k {
					continue // the later of the two literals activates it
				}
			}
			if !t.insert(s, e) {
				s.stats.TheoryConflicts++
				return t.confl
			}
			t.activate(s, e, int32(k))
			t.propagateFrom(s, e)
		}
		t.head++
	}
	return nil
}

// insert checks that edge e (not yet present) keeps the present graph
// acyclic and updates the order (Pearce–Kelly). On a cycle it leaves the
// order untouched, fills t.confl and returns false.
func (t *theory) insert(s *Solver, e int32) bool {
	ed := &t.edges[e]
	u, v := ed.from, ed.to
	if t.oracle != nil && t.oracle.Reaches(v, u) {
		t.confl = t.appendNeg(s, t.confl[:0], e)
		return false
	}
	lb, ub := t.ord[v], t.ord[u]
	if ub < lb {
		return true
	}
	// Forward from v among nodes ordered at most ub: reaching u is a cycle.
	t.fgen++
	t.deltaF = t.deltaF[:0]
	t.stack = append(t.stack[:0], v)
	t.fmark[v] = t.fgen
	for len(t.stack) > 0 {
		x := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.deltaF = append(t.deltaF, x)
		for _, f := range t.out[x] {
			y := t.edges[f].to
			if y == u {
				t.cycleClause(s, e)
				return false
			}
			if t.fmark[y] != t.fgen && t.ord[y] < ub {
				t.fmark[y] = t.fgen
				t.stack = append(t.stack, y)
			}
		}
	}
	// Backward from u among nodes ordered above lb, within a budget: when
	// the ancestors of u fill much of the interval, moving the
	// descendants of v alone is cheaper (shiftForward, T6).
	budget := math.MaxInt
	if span := int(ub - lb); !noShift && span >= shiftMinSpan {
		budget = span / shiftSpanShare
	}
	t.bgen++
	t.deltaB = t.deltaB[:0]
	t.stack = append(t.stack[:0], u)
	t.bmark[u] = t.bgen
	for len(t.stack) > 0 {
		if len(t.deltaB) > budget {
			t.shiftForward(lb, ub)
			return true
		}
		x := t.stack[len(t.stack)-1]
		t.stack = t.stack[:len(t.stack)-1]
		t.deltaB = append(t.deltaB, x)
		for _, f := range t.in[x] {
			y := t.edges[f].from
			if t.bmark[y] != t.bgen && t.ord[y] > lb {
				t.bmark[y] = t.bgen
				t.stack = append(t.stack, y)
			}
		}
	}
	// Reorder: the ancestors of u take the lowest of the freed positions,
	// the descendants of v the highest, each group keeping its order.
	t.ords = reorder(t.ord, t.deltaB, t.deltaF, t.ords)
	for _, x := range t.deltaB {
		t.pos[t.ord[x]] = x
	}
	for _, x := range t.deltaF {
		t.pos[t.ord[x]] = x
	}
	return true
}

// appendNeg appends the negations of e's literals.
func (t *theory) appendNeg(s *Solver, out []Lit, e int32) []Lit {
	ed := &t.edges[e]
	if ed.a != litUndef {
		out = append(out, ed.a.Not())
	}
	if ed.b != litUndef {
		out = append(out, ed.b.Not())
	}
	return out
}

// cycleClause builds the conflict for edge e = u->v given that v reaches
// u: e's literals and those of a path from v to u with the fewest
// literals (invariant T3: every literal of the clause is false).
func (t *theory) cycleClause(s *Solver, e int32) {
	ed := &t.edges[e]
	t.confl = t.appendNeg(s, t.confl[:0], e)
	t.confl = t.shortestPath(s, ed.to, ed.from, -1, t.confl)
}

// shortestPath appends to out the negated literals of a path from x to y
// over present edges activated before trail index before (-1: any
// present edge), minimizing the number of literal-carrying edges (0-1
// BFS: base edges cost nothing). It panics if there is no such path.
func (t *theory) shortestPath(s *Solver, x, y Node, before int32, out []Lit) []Lit {
	// Every node of a path x~>y over present edges lies between x and y
	// in the order (T1), which bounds the search to the affected region.
	oy := t.ord[y]
	t.bgen++
	gen := t.bgen
	// bmark: settled; fmark with fgen: discovered. Discovery keeps the
	// parent of the first (cheapest-layer) push.
	t.fgen++
	t.q0 = append(t.q0[:0], x)
	t.q1 = t.q1[:0]
	t.fmark[x] = t.fgen
	t.parent[x] = -1
	for len(t.q0) > 0 {
		for i := 0; i < len(t.q0); i++ {
			z := t.q0[i]
			if t.bmark[z] == gen {
				continue
			}
			t.bmark[z] = gen
			if z == y {
				for z != x {
					f := t.parent[z]
					out = t.appendNeg(s, out, f)
					z = t.edges[f].from
				}
				return out
			}
			for _, f := range t.out[z] {
				fe := &t.edges[f]
				if before >= 0 && fe.at >= before {
					continue
				}
				w := fe.to
				if t.bmark[w] == gen || t.ord[w] > oy {
					continue
				}
				if fe.isBase() {
					// Cost 0: same layer; may improve a parent found via
					// a cost-1 edge.
					if t.fmark[w] != t.fgen || t.dist[w] > 0 {
						t.parent[w] = f
						t.fmark[w] = t.fgen
						t.dist[w] = 0
					}
					t.q0 = append(t.q0, w)
				} else if t.fmark[w] != t.fgen {
					t.parent[w] = f
					t.fmark[w] = t.fgen
					t.dist[w] = 1
					t.q1 = append(t.q1, w)
				}
			}
		}
		// Next layer: nodes discovered through a literal edge now count
		// as distance 0 relative to the new layer.
		t.q0, t.q1 = t.q1, t.q0[:0]
		for _, z := range t.q0 {
			t.dist[z] = 0
		}
	}
	panic("solver: theory path not found")
}

// propagateFrom looks, after edge e = u->v became present, for non-present
// edges b->a with b below v and a above u (bounded searches): such an edge
// would close a cycle, so its literal is set false (Vbox §3.6
// "Propagation"). The reason is built lazily by explain.
func (t *theory) propagateFrom(s *Solver, e int32) {
	limit := s.opts.TheoryPropagationLimit
	if limit < 0 || t.nCand == 0 {
		return
	}
	ed := &t.edges[e]
	u, v := ed.from, ed.to
	// Descendants of v.
	t.fgen++
	t.deltaF = append(t.deltaF[:0], v)
	t.fmark[v] = t.fgen
	for i := 0; i < len(t.deltaF) && len(t.deltaF) < limit; i++ {
		for _, f := range t.out[t.deltaF[i]] {
			y := t.edges[f].to
			if t.fmark[y] != t.fgen {
				t.fmark[y] = t.fgen
				t.deltaF = append(t.deltaF, y)
			}
		}
	}
	// Ancestors of u.
	t.bgen++
	t.deltaB = append(t.deltaB[:0], u)
	t.bmark[u] = t.bgen
	for i := 0; i < len(t.deltaB) && len(t.deltaB) < limit; i++ {
		for _, f := range t.in[t.deltaB[i]] {
			y := t.edges[f].from
			if t.bmark[y] != t.bgen {
				t.bmark[y] = t.bgen
				t.deltaB = append(t.deltaB, y)
			}
		}
	}
	// Scan the side with fewer candidate edges: out-candidates of the
	// descendants, or in-candidates of the ancestors.
	nf, nb := 0, 0
	for _, x := range t.deltaF {
		nf += len(t.cand[x])
	}
	for _, x := range t.deltaB {
		nb += len(t.candIn[x])
	}
	if nf <= nb {
		for _, b := range t.deltaF {
			for _, cr := range t.cand[b] {
				if t.bmark[cr.other] == t.bgen {
					t.tryPropagate(s, cr.e)
				}
			}
		}
	} else {
		for _, a := range t.deltaB {
			for _, cr := range t.candIn[a] {
				if t.fmark[cr.other] == t.fgen {
					t.tryPropagate(s, cr.e)
				}
			}
		}
	}
}

// tryPropagate sets false the literal of non-present edge c, known to
// close a cycle with present edges, if that literal is undecided.
func (t *theory) tryPropagate(s *Solver, c int32) {
	ce := &t.edges[c]
	if ce.present || ce.dead {
		return
	}
	var p Lit
	switch {
	case ce.b == litUndef:
		p = ce.a
	case s.val[ce.a] > 0:
		p = ce.b
	case s.val[ce.b] > 0:
		p = ce.a
	default:
		return // both undecided: no unit consequence
	}
	if s.val[p] != 0 {
		return // already false, or true and about to conflict
	}
	s.enqueue(p.Not(), crefTheory)
	s.tReason[p.Var()] = c
	s.stats.TheoryPropagations++
	t.propagated = true
}

// explain builds the reason clause of variable v, implied by the theory:
// the implied literal first, then the negations of the other literal of
// its edge (if any) and of a path that closes the cycle, using only edges
// present before v was assigned (invariant T4).
func (t *theory) explain(s *Solver, v Var) cref {
	s.stats.TheoryExplanations++
	e := s.tReason[v]
	ed := &t.edges[e]
	implied := s.trail[s.trailPos[v]]
	out := append(t.expl[:0], implied)
	switch {
	case ed.b == litUndef:
	case ed.a.Var() == v:
		out = append(out, ed.b.Not())
	default:
		out = append(out, ed.a.Not())
	}
	out = t.shortestPath(s, ed.to, ed.from, s.trailPos[v], out)
	t.expl = out
	c := s.alloc(out, flagLearnt|flagDetached, len(out))
	s.detached = append(s.detached, c)
	s.reason[v] = c
	return c
}

// phase is the order-guided polarity of VeriStrong §6.2 generalized to
// edge sets (doc.go, "Phase"): +1 for true, -1 for false, 0 for no
// preference.
func (t *theory) phase(s *Solver, v Var) int {
	score := t.vote(s, PosLit(v)) - t.vote(s, NegLit(v))
	switch {
	case score > 0:
		return 1
	case score < 0:
		return -1
	}
	return 0
}

// voteEdges is how many edges of a literal vote: the first ones added,
// which for an edge set are its defining edges (a version order, a
// read-from), so that large derived sets do not make decisions costly.
const voteEdges = 4

// vote counts p's possible edges pointing forward minus those pointing
// backward in the current order, over its first voteEdges edges.
func (t *theory) vote(s *Solver, p Lit) int {
	n := 0
	es := t.edgesOf[p]
	if len(es) > voteEdges {
		es = es[:voteEdges]
	}
	for _, e := range es {
		ed := &t.edges[e]
		if ed.dead || ed.present {
			continue
		}
		if ed.b != litUndef {
			other := ed.a
			if other == p {
				other = ed.b
			}
			if s.val[other] < 0 {
				continue
			}
		}
		if t.ord[ed.from] < t.ord[ed.to] {
			n++
		} else {
			n--
		}
	}
	return n
}

// order appends the nodes in topological order of the present edges (and
// of the oracle, when there is one; finalCheck computed it then).
func (t *theory) order(s *Solver, out []Node) []Node {
	if t.oracle != nil && len(t.oracleOrder) == len(t.pos) {
		return append(out, t.oracleOrder...)
	}
	return append(out, t.pos...)
}

// FixedEdges appends to dst the nodes joined to n by an edge present in
// every model: base edges and edges whose literals are fixed true at level
// 0. forward selects edges leaving n (their heads), otherwise edges
// entering n (their tails). The online engine keeps these orders when it
// evicts n (docs/SEMANTICS.md §5, R5).
func (s *Solver) FixedEdges(n Node, forward bool, dst []Node) []Node {
	t := &s.th
	list, cands := t.in[n], t.candIn[n]
	if forward {
		list, cands = t.out[n], t.cand[n]
	}
	for _, ei := range list {
		e := &t.edges[ei]
		if e.isBase() && !e.dead {
			dst = append(dst, e.other(n))
		}
	}
	for _, c := range cands {
		e := &t.edges[c.e]
		if e.dead {
			continue
		}
		if v, ok := s.Fixed(e.a); !ok || !v {
			continue
		}
		if e.b != litUndef {
			if v, ok := s.Fixed(e.b); !ok || !v {
				continue
			}
		}
		dst = append(dst, c.other)
	}
	return dst
}

func (e *edge) other(n Node) Node {
	if e.from == n {
		return e.to
	}
	return e.from
}

// IncidentEdges calls fn for every live edge attached to literals (not base
// edges) with n as an endpoint: the other endpoint, whether n is the tail,
// and the edge's literals (q is meaningful only when two is set). The online
// engine evicts n only once every such edge is decided (docs/SEMANTICS.md §5,
// R2).
func (s *Solver) IncidentEdges(n Node, fn func(other Node, out bool, p, q Lit, two bool)) {
	t := &s.th
	for _, pass := range [2]struct {
		cands []candRef
		out   bool
	}{{t.cand[n], true}, {t.candIn[n], false}} {
		for _, c := range pass.cands {
			e := &t.edges[c.e]
			if e.dead {
				continue
			}
			fn(c.other, pass.out, e.a, e.b, e.b != litUndef)
		}
	}
}

// reanchor recomputes the topological order at level 0 as the one closest
// to node id order (Kahn's algorithm taking the smallest ready node
// first), undoing the drift that reordering on edge insertion causes
// (Options.Reanchor).
func (t *theory) reanchor() {
	n := len(t.pos)
	indeg := make([]int32, len(t.ord))
	for u := range t.out {
		for _, e := range t.out[u] {
			indeg[t.edges[e].to]++
		}
	}
	h := &nodeMinHeap{a: make([]Node, 0, 64)}
	for u := range t.ord {
		if indeg[u] == 0 {
			h.push(Node(u))
		}
	}
	i := 0
	for len(h.a) > 0 {
		u := h.pop()
		t.ord[u] = int32(i)
		t.pos[i] = u
		i++
		for _, e := range t.out[u] {
			v := t.edges[e].to
			if indeg[v]--; indeg[v] == 0 {
				h.push(v)
			}
		}
	}
	if i != n {
		panic("solver: reanchor found a cycle at level 0")
	}
}

type nodeMinHeap struct{ a []Node }

func (h *nodeMinHeap) push(x Node) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h.a[p] <= h.a[i] {
			break
		}
		h.a[p], h.a[i] = h.a[i], h.a[p]
		i = p
	}
}

func (h *nodeMinHeap) pop() Node {
	top := h.a[0]
	last := len(h.a) - 1
	h.a[0] = h.a[last]
	h.a = h.a[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.a) && h.a[l] < h.a[m] {
			m = l
		}
		if r < len(h.a) && h.a[r] < h.a[m] {
			m = r
		}
		if m == i {
			return top
		}
		h.a[m], h.a[i] = h.a[i], h.a[m]
		i = m
	}
}

// reorder is Pearce and Kelly's last step, shared by the theory and the
// saved model's test (flip_prop.go): the ancestors dB of an inserted
// edge's head take the lowest of the positions the two groups held, the
// descendants dF of its tail the highest, each group keeping its order.
// It sorts dB and dF by ord and returns ords, the scratch it used.
func reorder(ord []int32, dB, dF []Node, ords []int32) []int32 {
	byOrd := func(a, b Node) int { return int(ord[a] - ord[b]) }
	slices.SortFunc(dB, byOrd)
	slices.SortFunc(dF, byOrd)
	ords = ords[:0]
	for _, x := range dB {
		ords = append(ords, ord[x])
	}
	for _, x := range dF {
		ords = append(ords, ord[x])
	}
	slices.Sort(ords)
	i := 0
	for _, x := range dB {
		ord[x] = ords[i]
		i++
	}
	for _, x := range dF {
		ord[x] = ords[i]
		i++
	}
	return ords
}
