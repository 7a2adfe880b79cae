package solver

// F2: a solve under one assumption answered from the saved model (issue
// 20, item 7; docs/SEMANTICS.md §5, "A probe answered from the kept
// model under its assumption").
//
// A probe solves under one assumption p that the saved model M sets
// false. On a burst most such probes are satisfiable, and the search
// finds its model by re-deciding the whole window along M's saved phases
// with hardly a conflict: the cost of a solve from level 0 for an answer
// that is mostly M. The kept-model test tries that answer directly. It
// asserts p at level 1 over the level-0 trail, propagates (clauses and
// the theory, the fixpoint the search reaches before its next decision),
// and takes M' = the trail's value for every variable the trail assigns,
// M's for the others. The variables on the trail whose value is not M's
// are the flipped ones. M' is a model of the instance as it is now when:
//
//  1. propagation found no conflict; every variable has a value in M'
//     (M has one, or the trail); no reachability oracle is set; and
//     since M was saved no garbage collection, Compact or RemoveNode
//     ran (they move, shorten or drop what the test reads);
//  2. every original clause that holds a literal M sets true and M'
//     false (a flipped variable's old literal) holds a literal M' sets
//     true, and so does every original clause allocated since M was
//     saved. Any other clause existed when M was found and keeps the
//     literal M made true. Units added since are level-0 facts, on the
//     trail, so M' holds them;
//  3. the edges present in M' (every literal true in M') have a
//     topological order. M's saved order orders M's present edges; an
//     edge present in M' but not in M has a flipped literal or was added
//     since M was saved, and those are the only ones checked. Each that
//     goes backward in the order is inserted as Pearce and Kelly insert
//     an edge (theory.go, T1), on a copy of the order, through M''s
//     edges: the forward search from its head, bounded by its tail's
//     position, reaching the tail is a cycle of M'; else the two
//     searched sets swap places and every edge that went forward still
//     does (reorderKept has the argument).
//
// Learned clauses follow from the original clauses and the theory, so M'
// satisfies them too. M was a model of the instance when it was saved
// (a satisfiable solve found it, with its order), and 1-3 cover every
// change since: the test needs nothing from the caller. Its answer "Sat"
// is a model with p true, saved as a solve's would be (values and order);
// when it cannot tell, Solve searches as before. It never answers Unsat:
// when the propagation of p conflicts, the test learns from the conflict
// as the search does after the same decision (handleConflict) and stops,
// so that the search that follows, or a second test, does not meet that
// conflict again (explaining a theory conflict is a search of the
// present edges).
//
// Without a conflict the test leaves the solver as it found it apart
// from the theory's order (insertions reorder nodes; an order of a graph
// stays one of its subgraphs, T2), the watch lists' arrangement and
// statistics; the saved phases of the variables it assigned are put
// back, so that a search after it decides as it would have. After a
// conflict it leaves what the search's first conflict would have: the
// clause learnt, its literal asserted at level 0, the phases saved.

// keptScratch is the test's working memory, reused from call to call.
type keptScratch struct {
	rank    []int32 // a copy of the saved order's positions, reordered
	pos     []Node  // its inverse
	flipped []Lit   // the flipped variables' literals, as M' sets them
	back    []int32 // edges of M' that go backward in rank
	phase   []int8
	lits    []Lit
	dF, dB  []Node
	ords    []int32
	// What the test reads of one saved model, kept (burst31_keptcache.go).
	cache keptCache
	// Where the instance stood when the model was saved (condition 1, 2).
	arena, edges   int
	gcs            int64
	compacts, rems int
}

// SetProbeFromModel turns F2 on or off for Solve calls with exactly one
// assumption (off in a new solver). A caller whose probes are mostly
// satisfiable and close to the last model (the online prober) turns it
// on; the answers are those of a search either way.
func (s *Solver) SetProbeFromModel(on bool) { s.probeFromModel = on }

// markSaved records where the instance stands when a model is saved.
func (s *Solver) markSaved() {
	k := &s.kept
	k.arena, k.edges = len(s.arena), len(s.th.edges)
	k.gcs, k.compacts, k.rems = s.stats.GCs, s.compacts, s.removes
}

// ProbeKeepsModel reports whether F2's test finds a model with p true
// from the saved model, without a search. With save it makes that model
// the saved one (values and order, as a satisfiable Solve does);
// without, the saved model stays. flipped (appended) receives the
// literals of the variables whose value the new model changes, as it
// sets them. False means only that the test cannot tell.
func (s *Solver) ProbeKeepsModel(p Lit, save bool, flipped []Lit) (bool, []Lit) {
	ok := s.keptModel(p, save)
	if ok {
		flipped = append(flipped, s.kept.flipped...)
	}
	return ok, flipped
}

// keptModel is F2's test; on success with save, M' replaces M.
func (s *Solver) keptModel(p Lit, save bool) bool {
	k := &s.kept
	v := p.Var()
	n := len(s.th.ord)
	if !s.ok || s.modelGen == 0 || int(v) >= len(s.level) || s.retired[v] || s.th.oracle != nil ||
		len(s.order) != n || k.gcs != s.stats.GCs || k.compacts != s.compacts || k.rems != s.removes {
		return false
	}
	s.cancelUntil(0)
	if confl := s.propagate(); confl != nil {
		// As Solve: a conflict at level 0 is unsatisfiability.
		s.ok = false
		return false
	}
	switch {
	case s.val[p] < 0:
		return false
	case s.val[p] == 0:
		s.newDecisionLevel()
		s.enqueue(p, crefUndef)
		if confl := s.propagate(); confl != nil {
			// The search would meet this conflict at once, after the
			// same decision: learn from it as the search does, so that
			// neither the search nor a second test finds it again (a
			// theory conflict's explanation is a search over the
			// present edges).
			if !s.handleConflict(confl) {
				s.ok = false
			}
			s.cancelUntil(0)
			return false
		}
	}
	ok := s.keptTest()
	if ok && save {
		s.saveKept()
	}
	s.undoLevel1()
	if ok {
		s.stats.KeptModelSolves++
	}
	return ok
}

// undoLevel1 backtracks to level 0 and puts back the saved phases of the
// variables it unassigns: the test must not steer the next search.
func (s *Solver) undoLevel1() {
	if s.decisionLevel() == 0 {
		return
	}
	k := &s.kept
	lim := int(s.trailLim[0])
	k.lits = append(k.lits[:0], s.trail[lim:]...)
	k.phase = k.phase[:0]
	for _, q := range k.lits {
		k.phase = append(k.phase, s.phase[q.Var()])
	}
	s.cancelUntil(0)
	for i, q := range k.lits {
		s.phase[q.Var()] = k.phase[i]
	}
}

// mval is q's value in M': the trail's, else the saved model's; known is
// false when neither has one.
func (s *Solver) mval(q Lit) (val, known bool) {
	if x := s.val[q]; x != 0 {
		return x > 0, true
	}
	w := q.Var()
	if int(w) >= len(s.model) || s.model[w] == 0 {
		return false, false
	}
	return s.Value(q), true
}

// holdsKept reports whether clause c has a literal M' sets true.
func (s *Solver) holdsKept(c cref) bool {
	if s.isDeleted(c) {
		return true
	}
	for _, l := range s.clits(c) {
		if val, known := s.mval(l); val && known {
			return true
		}
	}
	return false
}

// edgeKept reports whether edge ed is present in M', and whether M'
// gives its literals a value.
func (s *Solver) edgeKept(ed *edge) (in, known bool) {
	if ed.dead {
		return false, true
	}
	if ed.isBase() {
		return true, true
	}
	va, ka := s.mval(ed.a)
	if ka && !va {
		return false, true
	}
	if ed.b == litUndef {
		return va, ka
	}
	vb, kb := s.mval(ed.b)
	if kb && !vb {
		return false, true
	}
	return va && vb, ka && kb
}

// keptTest is conditions 1-3 on the current trail (level 0, and p's
// level 1).
func (s *Solver) keptTest() bool {
	k := &s.kept
	// 1: every variable has a value in M'.
	for w := len(s.model); w < len(s.level); w++ {
		if s.val[PosLit(Var(w))] == 0 && !s.retired[w] {
			return false
		}
	}
	k.cache.reordered = false
	if !s.keptScanTrail() { // burst31_keptcache.go
		return false
	}
	// 2: the clauses holding a flipped variable's old literal, and the
	// clauses allocated since M was saved.
	x := &s.flip
	x.sync(s)
	for _, q := range k.flipped {
		old := q.Not() // true in M, false in M'
		if int(old) < len(x.off)-1 {
			for _, c := range x.cs[x.off[old]:x.off[old+1]] {
				if !s.holdsKept(c) {
					return false
				}
			}
		}
		for _, c := range x.extra {
			if int(c) < k.arena && slicesContains(s.clits(c), old) && !s.holdsKept(c) {
				return false
			}
		}
	}
	for c := k.arena; c < len(s.arena); c += hdrWords + int(s.arena[c]) {
		if s.arena[c+1]&(flagLearnt|flagDetached) == 0 && !s.holdsKept(cref(c)) {
			return false
		}
	}
	// 3: the edges that may be present in M' and not in M: a flipped
	// variable's new literal's, and the edges added since M was saved.
	t := &s.th
	n := len(t.ord)
	// The saved order's inverse, made once per model; reorderKept works
	// on a copy (burst31_keptcache.go).
	base := s.keptBase(n)
	k.back = k.back[:0]
	check := func(e int32) bool {
		ed := &t.edges[e]
		in, known := s.edgeKept(ed)
		if !known {
			return false
		}
		if in && base[ed.from] > base[ed.to] {
			k.back = append(k.back, e)
		}
		return true
	}
	for _, q := range k.flipped {
		if int(q) >= len(t.edgesOf) {
			continue
		}
		for _, e := range t.edgesOf[q] {
			if !check(e) {
				return false
			}
		}
	}
	for e := k.edges; e < len(t.edges); e++ {
		if !check(int32(e)) {
			return false
		}
	}
	// Vars made since M on the trail: their edges were added since M,
	// so the loop above saw them.
	if len(k.back) == 0 {
		return true // every edge of M' goes forward in M's order
	}
	s.keptReorderFrom(base)
	return s.reorderKept()
}

// keptVisits bounds the nodes one test's searches visit; past it the
// test answers "cannot tell".
const keptVisits = 1 << 15

// reorderKept inserts the backward edges of M' (k.back) into the copy of
// the order, Pearce–Kelly style, and reports whether none closes a
// cycle. Every other edge of M' goes forward in the order.
//
// For u -> v backward (lb = rank v < rank u = ub): dF is what v reaches
// along M”s edges through nodes ranked below ub, dB what reaches u
// through nodes ranked above lb. If dF holds u, or meets dB, M' has a
// cycle through u -> v (the test says it cannot tell). Else dB takes the
// lowest of the positions dF and dB held and dF the highest, each in its
// old order. An edge of M' that went forward still does: inside one set
// the order is kept, and dB ends below dF; an edge x -> y out of dF to
// y outside it has y ranked above ub (dF is closed under such edges
// below ub), where no position moves; an edge into dB from outside
// comes from below lb, likewise; a member of dB only moves down and one
// of dF only up (each takes the i-th lowest or highest of a pool that
// holds its own positions), which keeps edges that leave dB or enter dF
// forward. And u -> v now goes forward. The searches may follow edges
// of M' that are still backward (not yet inserted): the sets are then
// larger, closed under more edges, and the argument is the same. Edges
// inserted earlier stay forward, so after the last one the copy is a
// topological order of M”s present edges.
func (s *Solver) reorderKept() bool {
	k, t := &s.kept, &s.th
	visits := 0
	for _, e := range k.back {
		u, v := t.edges[e].from, t.edges[e].to
		if k.rank[u] < k.rank[v] {
			continue // an earlier insertion put it forward
		}
		lb, ub := k.rank[v], k.rank[u]
		// dF: forward from v through nodes ranked below ub.
		t.fgen++
		k.dF = append(k.dF[:0], v)
		t.fmark[v] = t.fgen
		for i := 0; i < len(k.dF); i++ {
			if visits++; visits > keptVisits {
				return false
			}
			x := k.dF[i]
			for _, f := range t.out[x] {
				if ed := &t.edges[f]; ed.isBase() && !ed.dead {
					if !s.keptStepF(ed.to, u, lb, ub) {
						return false
					}
				}
			}
			for _, c := range t.cand[x] {
				in, known := s.edgeKept(&t.edges[c.e])
				if !known {
					return false
				}
				if in && !s.keptStepF(c.other, u, lb, ub) {
					return false
				}
			}
		}
		// dB: backward from u through nodes ranked above lb.
		t.bgen++
		k.dB = append(k.dB[:0], u)
		t.bmark[u] = t.bgen
		for i := 0; i < len(k.dB); i++ {
			if visits++; visits > keptVisits {
				return false
			}
			x := k.dB[i]
			for _, f := range t.in[x] {
				if ed := &t.edges[f]; ed.isBase() && !ed.dead {
					if !s.keptStepB(ed.from, lb, ub) {
						return false
					}
				}
			}
			for _, c := range t.candIn[x] {
				in, known := s.edgeKept(&t.edges[c.e])
				if !known {
					return false
				}
				if in && !s.keptStepB(c.other, lb, ub) {
					return false
				}
			}
		}
		// dB takes the lowest of the pooled positions, dF the highest.
		k.ords = reorder(k.rank, k.dB, k.dF, k.ords)
	}
	return true
}

// keptStepF is reorderKept's forward step to y: false when y is u (a
// cycle of M'); else y joins dF if it is new and ranked in [lb, ub).
func (s *Solver) keptStepF(y, u Node, lb, ub int32) bool {
	k, t := &s.kept, &s.th
	if y == u {
		return false
	}
	if t.fmark[y] != t.fgen && k.rank[y] < ub && k.rank[y] >= lb {
		t.fmark[y] = t.fgen
		k.dF = append(k.dF, y)
	}
	return true
}

// keptStepB is reorderKept's backward step to y: false when y is in dF
// (a path v ~> y ~> u: a cycle of M'); else y joins dB if it is new and
// ranked in (lb, ub].
func (s *Solver) keptStepB(y Node, lb, ub int32) bool {
	k, t := &s.kept, &s.th
	if t.fmark[y] == t.fgen {
		return false
	}
	if t.bmark[y] != t.bgen && k.rank[y] > lb && k.rank[y] <= ub {
		t.bmark[y] = t.bgen
		k.dB = append(k.dB, y)
	}
	return true
}

// saveKept makes M' the saved model: values and order.
func (s *Solver) saveKept() {
	k := &s.kept
	for _, q := range k.flipped {
		if q.IsNeg() {
			s.model[q.Var()] = -1
		} else {
			s.model[q.Var()] = 1
		}
	}
	n := len(s.level)
	for w := len(s.model); w < n; w++ {
		s.model = append(s.model, s.val[PosLit(Var(w))])
	}
	s.keptSavedOrder(s.modelGen + 1) // burst31_keptcache.go
	s.hasModel = true
	s.modelGen++
	s.markSaved()
}
