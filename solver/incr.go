package solver

import (
	"errors"
	"fmt"
)

// ErrRetire is wrapped by the errors Retire returns.
var ErrRetire = errors.New("solver: cannot retire variable")

// NewSelector returns a fresh selector literal. The convention (doc.go,
// "Selectors"): add ¬sel to every clause of a group, assume sel while the
// group is wanted, and call RemoveSelector(sel) to delete the group.
func (s *Solver) NewSelector() Lit { return PosLit(s.NewVar()) }

// RemoveSelector fixes sel false at level 0. Every clause of its group,
// and every learned clause derived from one (they carry ¬sel), becomes
// satisfied and is dropped at once; their arena space is reclaimed by the
// next GC. The selector variable may then be retired.
func (s *Solver) RemoveSelector(sel Lit) {
	s.AddClause(sel.Not())
	if s.ok {
		s.simpTrail = -1
		s.simplify()
	}
}

// simplify drops clauses satisfied at level 0 once the level-0 trail has
// grown (or when forced by simpTrail = -1). Level-0 facts lose their
// reasons: they are never explained (invariant A2).
func (s *Solver) simplify() {
	if s.decisionLevel() != 0 || len(s.trail) == s.simpTrail || !s.ok {
		return
	}
	for _, p := range s.trail {
		s.reason[p.Var()] = crefUndef
	}
	drop := func(cs []cref) []cref {
		j := 0
		for _, c := range cs {
			if s.isDeleted(c) {
				continue
			}
			if s.satisfied(c) {
				s.free(c)
				continue
			}
			cs[j] = c
			j++
		}
		return cs[:j]
	}
	s.clauses = drop(s.clauses)
	s.learnts = drop(s.learnts)
	s.dropDetached()
	s.cleanWatches()
	s.simpTrail = len(s.trail)
	s.maybeGC()
}

func (s *Solver) satisfied(c cref) bool {
	for _, p := range s.clits(c) {
		if s.val[p] > 0 {
			return true
		}
	}
	return false
}

// Retire gives variable v back for reuse by a later NewVar. It is allowed
// once v is fixed at level 0, or when every clause containing v is
// satisfied at level 0 and no edge that could still be present depends on
// v. The clauses, watches, heap entry, phase and reasons of v are purged
// (lazily, in batches, but always before the index is handed out again, so
// a recycled index never meets a stale learned clause: invariant R1).
func (s *Solver) Retire(v Var) error {
	if int(v) >= len(s.level) || v < 0 || s.retired[v] {
		return fmt.Errorf("%w %d: not a live variable", ErrRetire, v)
	}
	s.cancelUntil(0)
	s.hasModel = false
	if s.ok && s.propagate() != nil {
		s.ok = false
	}
	if s.val[PosLit(v)] == 0 {
		if s.occursUnsatisfied(v) {
			return fmt.Errorf("%w %d: it is unfixed and occurs in a clause not satisfied at level 0", ErrRetire, v)
		}
		for _, p := range []Lit{PosLit(v), NegLit(v)} {
			for _, e := range s.th.edgesOf[p] {
				ed := &s.th.edges[e]
				if ed.dead {
					continue
				}
				other := ed.b
				if other == p {
					other = ed.a
				}
				if other != litUndef && other != p && s.val[other] < 0 {
					continue
				}
				return fmt.Errorf("%w %d: it is unfixed and carries an edge %d->%d", ErrRetire, v, ed.from, ed.to)
			}
		}
	}
	if s.val[PosLit(v)] == 0 {
		s.nFree-- // unassigned, and no longer live
	}
	s.retired[v] = true
	s.heap.remove(v)
	s.pendingRet = append(s.pendingRet, v)
	return nil
}

// occursUnsatisfied reports whether v occurs in an original clause not
// satisfied at level 0. The occurrence set is cached until the clauses or
// the level-0 trail change, so retiring a batch of variables costs one
// scan.
func (s *Solver) occursUnsatisfied(v Var) bool {
	key := [3]int{len(s.trail), s.simpAdds, len(s.clauses)}
	if key != s.occKey || len(s.occ) < len(s.level) {
		s.occKey = key
		s.occ = s.occ[:0]
		for range len(s.level) {
			s.occ = append(s.occ, false)
		}
		for _, c := range s.clauses {
			if s.isDeleted(c) || s.satisfied(c) {
				continue
			}
			for _, p := range s.clits(c) {
				s.occ[p.Var()] = true
			}
		}
	}
	return s.occ[v]
}

// RemoveNode deletes node n. Paths through n made of permanent edges (base
// edges and edges true at level 0) are kept as base edges p->q for every
// permanent p->n and n->q; every other edge touching n disappears.
// Level-0 literals the theory implied become plain level-0 facts (their
// reasons, which may pass through n, are dropped: invariant A2). The id
// may be handed out again by a later NewNode.
//
// RemoveNode is meant for settled nodes: every edge touching n decided at
// level 0 (present or impossible), as a transaction leaving the checker's
// window is. Clauses learned while n existed stay; for a settled node they
// remain implied by what is left (the bridges replace the paths through
// n), for an unsettled one they are consequences of the old graph and may
// over-constrain the new one.

func (s *Solver) RemoveNode(n Node) {
	t := &s.th
	if int(n) >= len(t.ord) || t.removed[n] {
		return
	}
	s.cancelUntil(0)
	s.hasModel = false
	s.removes++ // F2 (flip_prop.go) reads no model saved before a removal
	if s.ok && s.propagate() != nil {
		s.ok = false
	}
	for _, p := range s.trail {
		s.reason[p.Var()] = crefUndef
	}
	// The pruning snapshot may name n; a new one waits for the permanent
	// edges to double (reachindex.go).
	t.dropReachIndex()
	// Bridge permanent paths.
	var bridges [][2]Node
	for _, ei := range t.in[n] {
		for _, eo := range t.out[n] {
			p, q := t.edges[ei].from, t.edges[eo].to
			if p != q && p != n && q != n {
				bridges = append(bridges, [2]Node{p, q})
			}
		}
	}
	kill := func(e int32) {
		ed := &t.edges[e]
		if ed.dead {
			return
		}
		ed.dead = true
		if !ed.isBase() {
			t.nCand--
		}
		if ed.present {
			ed.present = false
			t.out[ed.from] = removeID(t.out[ed.from], e)
			t.in[ed.to] = removeID(t.in[ed.to], e)
		}
		t.dead++
	}
	for _, e := range append([]int32(nil), t.out[n]...) {
		kill(e)
	}
	for _, e := range append([]int32(nil), t.in[n]...) {
		kill(e)
	}
	for _, cr := range t.cand[n] {
		kill(cr.e)
	}
	for _, cr := range t.candIn[n] {
		kill(cr.e)
	}
	t.out[n], t.in[n], t.cand[n], t.candIn[n] = t.out[n][:0], t.in[n][:0], t.cand[n][:0], t.candIn[n][:0]
	t.removed[n] = true
	t.pendingNodes = append(t.pendingNodes, n)
	for _, b := range bridges {
		s.AddBaseEdge(b[0], b[1]) // cannot close a cycle: p->n->q was acyclic
	}
}

func removeID(xs []int32, x int32) []int32 {
	for i, y := range xs {
		if y == x {
			copy(xs[i:], xs[i+1:])
			return xs[:len(xs)-1]
		}
	}
	return xs
}

// Compact purges retired variables and removed nodes now, so that their
// indices can be reused, and rebuilds the watch lists and the theory's
// edge tables. NewVar and NewNode call it on their own once enough is
// pending; it costs time linear in the size of the instance.
func (s *Solver) Compact() {
	if !s.ok {
		return // nothing will be solved again
	}
	s.cancelUntil(0)
	s.hasModel = false
	s.compacts++ // clauses shorten in place: flip.go's index is rebuilt
	if s.propagate() != nil {
		s.ok = false
		return
	}
	s.simpTrail = -1
	s.simplify()
	for _, p := range s.trail {
		s.reason[p.Var()] = crefUndef
	}
	ret := s.retired
	// Clauses: learned ones mentioning a retired variable go; originals
	// lose their level-0-false literals (a retired unfixed variable cannot
	// occur in an unsatisfied original clause: Retire checked it).
	strip := func(cs []cref, learnt bool) []cref {
		j := 0
		for _, c := range cs {
			if s.isDeleted(c) {
				continue
			}
			lits := s.clits(c)
			k := 0
			drop := false
			for _, p := range lits {
				if ret[p.Var()] && s.val[p] == 0 {
					drop = true
				}
				if s.val[p] < 0 {
					continue
				}
				lits[k] = p
				k++
			}
			if drop {
				if !learnt {
					panic("solver: retired unfixed variable in an original clause")
				}
				s.free(c)
				continue
			}
			if k < len(lits) {
				s.wasted += len(lits) - k
				s.arena[c] = Lit(k)
			}
			if k < 2 {
				panic("solver: clause shorter than 2 after level-0 propagation")
			}
			cs[j] = c
			j++
		}
		return cs[:j]
	}
	s.clauses = strip(s.clauses, false)
	s.learnts = strip(s.learnts, true)
	for _, c := range s.detached {
		s.free(c)
	}
	s.detached = s.detached[:0]
	for l := range s.watches {
		s.watches[l] = s.watches[l][:0]
	}
	for _, c := range s.clauses {
		s.attach(c)
	}
	for _, c := range s.learnts {
		s.attach(c)
	}

	// Theory first: it reads the level-0 values of retired variables.
	s.th.rebuild(s)

	// Level-0 trail without retired variables.
	j := 0
	for _, p := range s.trail {
		if ret[p.Var()] {
			continue
		}
		s.trail[j] = p
		s.trailPos[p.Var()] = int32(j)
		j++
	}
	s.trail = s.trail[:j]
	s.qhead = j
	for _, v := range s.pendingRet {
		s.val[PosLit(v)], s.val[NegLit(v)] = 0, 0
		s.level[v] = 0
		s.reason[v] = crefUndef
		s.activity[v] = 0
		s.phase[v] = 0
		s.userPh[v] = 0
		s.tReason[v] = -1
		s.heap.remove(v)
		s.freeVars = append(s.freeVars, v)
	}
	s.pendingRet = s.pendingRet[:0]
	// Re-index the theory's level-0 edges against the compacted trail.
	s.th.head = 0
	s.th.reindex(s)
	s.simpTrail = len(s.trail)
	s.maybeGC()
}

// purge is Compact under the name NewVar uses.
func (s *Solver) purge() { s.Compact() }

// rebuild compacts the edge table: dead edges go, literals of retired
// variables fixed true drop out of their edges (an edge left without
// literals becomes a base edge), edges needing a retired variable false
// die, removed nodes become reusable.
func (t *theory) rebuild(s *Solver) {
	old := t.edges
	t.edges = t.edges[:0:0]
	baseSet := map[[2]Node]struct{}{}
	for l := range t.edgesOf {
		t.edgesOf[l] = t.edgesOf[l][:0]
	}
	for u := range t.out {
		t.out[u], t.in[u], t.cand[u], t.candIn[u] = t.out[u][:0], t.in[u][:0], t.cand[u][:0], t.candIn[u][:0]
	}
	t.active = t.active[:0]
	t.nCand = 0
	t.nBase = 0
	t.dead = 0
	// Edge ids and node ids change: the pruning snapshot no longer
	// describes them (reachindex.go).
	t.dropReachIndex()
	for _, ed := range old {
		if ed.dead || t.removed[ed.from] || t.removed[ed.to] {
			continue
		}
		lits := [2]Lit{ed.a, ed.b}
		k := 0
		dead := false
		for _, p := range lits {
			if p == litUndef {
				continue
			}
			if s.retired[p.Var()] {
				if s.val[p] > 0 {
					continue
				}
				dead = true
			}
			lits[k] = p
			k++
		}
		if dead {
			continue
		}
		ne := edge{from: ed.from, to: ed.to, a: litUndef, b: litUndef, at: -1}
		if k > 0 {
			ne.a = lits[0]
		}
		if k > 1 {
			ne.b = lits[1]
		}
		if ne.isBase() {
			key := [2]Node{ne.from, ne.to}
			if _, dup := baseSet[key]; dup {
				continue
			}
			baseSet[key] = struct{}{}
		}
		t.edges = append(t.edges, ne)
	}
	for _, n := range t.pendingNodes {
		t.free = append(t.free, n)
	}
	t.pendingNodes = t.pendingNodes[:0]
}

// reindex fills the adjacency and literal tables from t.edges after a
// rebuild, at level 0: base edges and edges whose literals are all true
// are present (they were before, so the order stays valid).
func (t *theory) reindex(s *Solver) {
	for i := range t.edges {
		e := int32(i)
		ed := &t.edges[i]
		ed.present = false
		if ed.isBase() {
			ed.present = true
			t.link(e)
			t.nBase++
			continue
		}
		t.edgesOf[ed.a] = append(t.edgesOf[ed.a], e)
		if ed.b != litUndef {
			t.edgesOf[ed.b] = append(t.edgesOf[ed.b], e)
		}
		t.cand[ed.from] = append(t.cand[ed.from], candRef{ed.to, e})
		t.candIn[ed.to] = append(t.candIn[ed.to], candRef{ed.from, e})
		t.nCand++
		at := int32(-1)
		all := true
		for _, p := range [2]Lit{ed.a, ed.b} {
			if p == litUndef {
				continue
			}
			if s.val[p] <= 0 {
				all = false
				break
			}
			at = max(at, s.trailPos[p.Var()])
		}
		if all {
			ed.present = true
			ed.at = at
			t.link(e)
			t.active = append(t.active, e)
		}
	}
	t.head = len(s.trail)
}

// Order returns, after Sat, a topological order of all nodes that every
// base edge, every edge true in the model and every oracle pair respects.
func (s *Solver) Order() []Node {
	if !s.hasModel {
		return nil
	}
	return append([]Node(nil), s.order...)
}

// AppendOrder appends Order() to dst: a caller that ranks the nodes of
// model after model (the evicting engine's prober) reuses one array
// instead of a copy per model, which was a tenth of its allocations.
func (s *Solver) AppendOrder(dst []Node) []Node {
	if !s.hasModel {
		return dst
	}
	return append(dst, s.order...)
}
