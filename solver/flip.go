package solver

// F1: a flip of the saved model (issue 20, item 7).
//
// A caller that holds a model and asks whether a variable is decided
// (the online engine's prober: is this edge, read source or commit the
// same in every completion?) learns "no" from any second model that sets
// it the other way. The cheapest such model is the one in hand with the
// variable flipped, when that is a model: FlipKeepsModel tests it without
// a solve. It looks at no more than the flip can break:
//
//   - the clauses that contain q, the literal of v that the model sets
//     true and the flip makes false: each must hold a second literal the
//     model sets true (every other clause keeps its true literal, and
//     the ones with ¬q gain one);
//   - the edges that ¬q helps make present: each one present after the
//     flip (its other literal, if any, true) must go forward in rank, a
//     topological order of the model's present edges; the edges that
//     were present stay so or go, and rank still orders them.
//
// Learned clauses are left out: each follows from the original clauses
// and the theory, so a model of those satisfies it. A variable fixed at
// level 0 (a unit fact: no clause holds it) or retired is never flipped,
// and neither is any variable while a reachability oracle is set (its
// pairs are not edges the test can see).
//
// The answer "the flip is a model" is exact only when the model and rank
// are a model of the solver as it is and its order; the prober's are
// (burst_probe.go's argument). When they were not, the answer could only
// make a caller call a variable undecided that a probe would have
// decided: for the prober, a member kept longer, never a wrong eviction.
//
// The clauses holding a literal come from an index (flipIndex) built from
// the clause list once and extended by the clauses allocated since: the
// arena only grows between garbage collections and Compact calls, so a
// walk from where the index ended finds every new clause; a GC (which
// moves every clause) or a Compact (which shortens clauses in place)
// makes the next query rebuild it.

// flipIndex lists, per literal, the original clauses that hold it.
type flipIndex struct {
	built    bool
	gcs      int64 // s.stats.GCs at the build
	compacts int   // s.compacts at the build
	end      int   // arena length the index covers
	off      []int32
	cs       []cref
	extra    []cref // original clauses allocated since the build
}

// sync makes the index describe s's original clauses.
func (x *flipIndex) sync(s *Solver) {
	if x.built && x.gcs == s.stats.GCs && x.compacts == s.compacts {
		for c := x.end; c < len(s.arena); c += hdrWords + int(s.arena[c]) {
			if s.arena[c+1]&(flagLearnt|flagDetached) == 0 {
				x.extra = append(x.extra, cref(c))
			}
		}
		x.end = len(s.arena)
		return
	}
	nl := 2 * len(s.level)
	x.off = append(x.off[:0], make([]int32, nl+1)...)
	for _, c := range s.clauses {
		if s.isDeleted(c) {
			continue
		}
		for _, p := range s.clits(c) {
			x.off[p+1]++
		}
	}
	for i := 1; i <= nl; i++ {
		x.off[i] += x.off[i-1]
	}
	x.cs = append(x.cs[:0], make([]cref, x.off[nl])...)
	fill := append([]int32(nil), x.off[:nl]...)
	for _, c := range s.clauses {
		if s.isDeleted(c) {
			continue
		}
		for _, p := range s.clits(c) {
			x.cs[fill[p]] = c
			fill[p]++
		}
	}
	x.extra = x.extra[:0]
	x.built, x.gcs, x.compacts, x.end = true, s.stats.GCs, s.compacts, len(s.arena)
}

// modelLit is p's value in the saved model, and whether the model has
// one: a variable made after the model has the value level 0 fixed, or
// none (the test then cannot tell).
func (s *Solver) modelLit(p Lit) (val, known bool) {
	if int(p.Var()) < len(s.model) {
		return s.Value(p), true
	}
	return s.Fixed(p)
}

// FlipKeepsModel reports whether the saved model with v set the other way
// satisfies every original clause and has its present edges forward in
// rank (rank[n]: node n's position in a topological order of the saved
// model's present edges, as the prober fills it from AppendOrder). False
// means only that this test cannot tell (F1 above).
func (s *Solver) FlipKeepsModel(v Var, rank []int32) bool {
	if !s.ok || int(v) >= len(s.level) || s.retired[v] || s.th.oracle != nil || rank == nil {
		return false
	}
	if int(v) >= len(s.model) {
		return false
	}
	q := PosLit(v)
	if !s.Value(q) {
		q = NegLit(v)
	}
	if _, fixed := s.Fixed(q); fixed {
		return false
	}
	nq := q.Not()
	x := &s.flip
	x.sync(s)
	holds := func(c cref) bool {
		if s.isDeleted(c) {
			return true
		}
		for _, p := range s.clits(c) {
			if p == nq {
				return true // true after the flip
			}
			if p.Var() != v {
				if val, known := s.modelLit(p); val && known {
					return true
				}
			}
		}
		return false
	}
	if int(q) < len(x.off)-1 {
		for _, c := range x.cs[x.off[q]:x.off[q+1]] {
			if !holds(c) {
				return false
			}
		}
	}
	for _, c := range x.extra {
		if slicesContains(s.clits(c), q) && !holds(c) {
			return false
		}
	}
	t := &s.th
	if int(nq) >= len(t.edgesOf) {
		return true
	}
	for _, e := range t.edgesOf[nq] {
		ed := &t.edges[e]
		if ed.dead {
			continue
		}
		other := ed.a
		if other == nq {
			other = ed.b
		}
		if other != litUndef && other != nq {
			if other == q {
				continue // absent after the flip
			}
			val, known := s.modelLit(other)
			if !known {
				return false
			}
			if !val {
				continue // absent after the flip
			}
		}
		if int(ed.from) >= len(rank) || int(ed.to) >= len(rank) || rank[ed.from] >= rank[ed.to] {
			return false
		}
	}
	return true
}

func slicesContains(ls []Lit, p Lit) bool {
	for _, l := range ls {
		if l == p {
			return true
		}
	}
	return false
}
