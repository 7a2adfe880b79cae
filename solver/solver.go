package solver

import (
	"context"
	"fmt"
	"slices"
)

type watcher struct {
	c       cref
	blocker Lit // some other literal of c; if true, c need not be visited
}

// Solver is an incremental CDCL(T) solver: a CDCL core over clauses plus an
// acyclicity theory over edges attached to literals. It is not safe for
// concurrent use. See doc.go for the model and invariants.
type Solver struct {
	opts Options
	ok   bool // false once unsatisfiable without assumptions

	// Per literal.
	val     []int8      // +1 true, -1 false, 0 unassigned
	watches [][]watcher // watches[p]: clauses watching p, visited when p becomes false

	// Per variable.
	level    []int32
	reason   []cref
	trailPos []int32 // index in trail while assigned
	activity []float64
	phase    []int8 // saved phase: +1 true, -1 false, 0 none
	userPh   []int8 // SetPhase hint, overrides everything else
	seen     []uint8
	retired  []bool // retired, waiting for purge or for reuse
	tReason  []int32

	freeVars []Var // purged indices that NewVar may recycle
	// nFree counts the live variables left unassigned: val 0 and not
	// retired (allAssigned; kept by NewVar, enqueue, cancelUntil and
	// Retire, the only places that change either).
	nFree       int
	pendingRet  []Var // retired, not yet purged
	heap        varHeap
	varInc      float64
	clauseInc   float32
	trail       []Lit
	trailLim    []int32
	qhead       int
	arena       []Lit
	wasted      int
	clauses     []cref
	learnts     []cref
	detached    []cref // theory explanations held as reasons
	assumptions []Lit
	conflict    []Lit // FailedAssumptions, negated (minisat convention)

	model    []int8
	order    []Node
	hasModel bool
	// modelGen counts the models saved. probeFromModel turns F2 on
	// (flip_prop.go), kept is its scratch and where the instance stood
	// at the save; removes counts RemoveNode calls.
	modelGen       int64
	probeFromModel bool
	kept           keptScratch
	removes        int

	// Restart and reduction schedule.
	lubyIdx      int
	nextReduce   int64
	reduceCount  int64
	conflictsNow int64 // conflicts in this Solve call
	// lazy are the learnt units waiting to become level-0 facts
	// (burst34_lazyunit.go); empty between Solve calls.
	lazy []Lit

	// Level-0 simplification bookkeeping.
	simpTrail int // size of the level-0 trail at the last simplify
	simpAdds  int // clauses added since the last simplify

	// Analysis scratch.
	learntBuf []Lit
	toClear   []Var
	stack     []Var
	lvlStamp  []uint32
	stampGen  uint32
	tmpLits   []Lit

	rng uint64

	occ []bool // occursUnsatisfied cache
	// compacts counts Compact calls; flip is FlipKeepsModel's index
	// (flip.go).
	compacts int
	flip     flipIndex
	occKey   [3]int

	th theory

	stats Stats
}

// New returns an empty solver.
func New(opts Options) *Solver {
	if opts.RestartBase <= 0 {
		opts.RestartBase = 100
	}
	if opts.ReduceBase <= 0 {
		opts.ReduceBase = 2000
	}
	if opts.ReduceInc <= 0 {
		opts.ReduceInc = 300
	}
	if opts.TheoryPropagationLimit == 0 {
		opts.TheoryPropagationLimit = 32
	}
	if opts.PruneLimit == 0 {
		opts.PruneLimit = 256
	}
	if opts.ChronoThreshold <= 0 {
		opts.ChronoThreshold = int(^uint(0) >> 1) // never
	}
	s := &Solver{opts: opts, ok: true, varInc: 1, clauseInc: 1}
	s.heap.act = &s.activity
	s.rng = opts.Seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	s.nextReduce = int64(opts.ReduceBase)
	s.lvlStamp = []uint32{0}
	s.probeFromModel = probeAlways
	return s
}

// probeAlways (tests) turns F2 on in every new solver.
var probeAlways bool

func (s *Solver) rand() uint64 {
	// xorshift64*: small, deterministic, good enough for tie breaking.
	s.rng ^= s.rng >> 12
	s.rng ^= s.rng << 25
	s.rng ^= s.rng >> 27
	return s.rng * 2685821657736338717
}

// NewVar adds a variable, recycling a retired index when one is free.
func (s *Solver) NewVar() Var {
	if len(s.freeVars) == 0 && len(s.pendingRet) >= 64 && len(s.pendingRet)*8 >= len(s.level) {
		s.purge()
	}
	var v Var
	if n := len(s.freeVars); n > 0 {
		v = s.freeVars[n-1]
		s.freeVars = s.freeVars[:n-1]
		s.retired[v] = false
	} else {
		v = Var(len(s.level))
		s.val = append(s.val, 0, 0)
		s.watches = appendList(appendList(s.watches)) // recycle.go
		s.level = append(s.level, 0)
		s.reason = append(s.reason, crefUndef)
		s.trailPos = append(s.trailPos, 0)
		s.activity = append(s.activity, 0)
		s.phase = append(s.phase, 0)
		s.userPh = append(s.userPh, 0)
		s.seen = append(s.seen, 0)
		s.retired = append(s.retired, false)
		s.tReason = append(s.tReason, -1)
		s.th.growLits(2 * len(s.level))
	}
	s.activity[v] = 0
	if s.opts.Seed != 0 {
		// A tiny seeded jitter decides ties among untouched variables.
		s.activity[v] = float64(s.rand()>>40) * 1e-12
	}
	s.phase[v] = 0
	s.userPh[v] = 0
	s.reason[v] = crefUndef
	s.heap.insert(v)
	s.nFree++ // fresh, or purged (val 0) and no longer retired
	return v
}

// NumVars returns the number of variable indices in use, retired ones
// included (indices are never shrunk, only recycled).
func (s *Solver) NumVars() int { return len(s.level) }

// SetPhase sets the preferred polarity of v, overriding the saved phase
// and the theory's order-guided phase.
func (s *Solver) SetPhase(v Var, phase bool) {
	if phase {
		s.userPh[v] = 1
	} else {
		s.userPh[v] = -1
	}
}

// Stats returns the counters accumulated so far.
func (s *Solver) Stats() Stats {
	st := s.stats
	st.PruneIndexHits = s.th.rixHits
	st.PruneIndexBuilds = s.th.rixBuilds
	return st
}

func (s *Solver) decisionLevel() int { return len(s.trailLim) }

func (s *Solver) value(p Lit) int8 { return s.val[p] }

// Value returns p's value in the last model; it is meaningful only after
// Solve returned Sat (and until the next Solve).
func (s *Solver) Value(p Lit) bool {
	v := p.Var()
	if int(v) >= len(s.model) {
		return false
	}
	b := s.model[v] > 0
	if p.IsNeg() {
		return !b
	}
	return b
}

// Fixed returns p's value if it is assigned at level 0 (true for every
// later model).
func (s *Solver) Fixed(p Lit) (value, ok bool) {
	v := p.Var()
	if int(v) >= len(s.level) || s.val[p] == 0 || s.level[v] != 0 {
		return false, false
	}
	return s.val[p] > 0, true
}

// FailedAssumptions returns, after Unsat, a subset of the assumptions of
// that call that is unsatisfiable with the clauses; it is empty when the
// instance is unsatisfiable without assumptions.
func (s *Solver) FailedAssumptions() []Lit {
	out := make([]Lit, len(s.conflict))
	for i, p := range s.conflict {
		out[i] = p.Not()
	}
	return out
}

func (s *Solver) enqueue(p Lit, from cref) {
	v := p.Var()
	s.val[p] = 1
	s.val[p^1] = -1
	s.level[v] = int32(s.decisionLevel())
	s.reason[v] = from
	s.trailPos[v] = int32(len(s.trail))
	s.trail = append(s.trail, p)
	if !s.retired[v] {
		s.nFree--
	}
}

func (s *Solver) newDecisionLevel() { s.trailLim = append(s.trailLim, int32(len(s.trail))) }

// cancelUntil backtracks to level lvl, saving phases and undoing the
// theory's edges that were made present above it.
func (s *Solver) cancelUntil(lvl int) {
	if s.decisionLevel() <= lvl {
		return
	}
	lim := int(s.trailLim[lvl])
	for i := len(s.trail) - 1; i >= lim; i-- {
		p := s.trail[i]
		v := p.Var()
		s.val[p] = 0
		s.val[p^1] = 0
		if p.IsNeg() {
			s.phase[v] = -1
		} else {
			s.phase[v] = 1
		}
		s.reason[v] = crefUndef
		s.heap.insert(v)
		if !s.retired[v] {
			s.nFree++
		}
	}
	s.trail = s.trail[:lim]
	s.trailLim = s.trailLim[:lvl]
	s.qhead = min(s.qhead, lim)
	s.th.backtrack(s, lim)
}

// AddClause adds a clause at level 0 and reports whether the instance is
// still satisfiable as far as level-0 propagation can tell.
func (s *Solver) AddClause(lits ...Lit) bool {
	if !s.ok {
		return false
	}
	s.cancelUntil(0)
	s.hasModel = false
	ls := append(s.tmpLits[:0], lits...)
	slices.Sort(ls)
	j := 0
	prev := litUndef
	for _, p := range ls {
		if s.retired[p.Var()] {
			panic("solver: AddClause with a retired variable")
		}
		switch {
		case p == prev || s.val[p] < 0:
			continue // duplicate, or false at level 0
		case p == prev^1 || s.val[p] > 0:
			s.tmpLits = ls
			return true // tautology or satisfied
		}
		ls[j] = p
		j++
		prev = p
	}
	ls = ls[:j]
	s.tmpLits = ls
	s.simpAdds++
	switch len(ls) {
	case 0:
		s.ok = false
		return false
	case 1:
		s.enqueue(ls[0], crefUndef)
		if s.propagate() != nil {
			s.ok = false
		}
		return s.ok
	}
	c := s.alloc(ls, 0, 0)
	s.clauses = append(s.clauses, c)
	s.attach(c)
	return true
}

// addLemma adds a theory consequence at level 0 as a learned clause: it
// is implied by the edges, not part of the caller's formula, so it never
// keeps a variable from being retired and may be deleted like any learned
// clause (glue clauses are kept by reduction).
func (s *Solver) addLemma(lits ...Lit) {
	ls := s.tmpLits[:0]
	for _, p := range lits {
		switch {
		case s.val[p] > 0:
			return
		case s.val[p] < 0:
			continue
		}
		ls = append(ls, p)
	}
	s.tmpLits = ls
	s.stats.Learned++
	switch len(ls) {
	case 0:
		s.ok = false
	case 1:
		s.enqueue(ls[0], crefUndef)
		if s.propagate() != nil {
			s.ok = false
		}
	default:
		c := s.alloc(ls, flagLearnt, 2)
		s.learnts = append(s.learnts, c)
		s.attach(c)
	}
}

// propagate runs unit propagation and the theory to a joint fixpoint. It
// returns the conflicting literals (all false) or nil.
func (s *Solver) propagate() []Lit {
	for {
		if c := s.bcp(); c != crefUndef {
			if s.isLearnt(c) {
				s.bumpClause(c)
			}
			return s.clits(c)
		}
		if s.th.head >= len(s.trail) {
			return nil
		}
		if confl := s.th.propagate(s); confl != nil {
			return confl
		}
	}
}

// bcp is two-watched-literal unit propagation (invariant W1 in doc.go).
func (s *Solver) bcp() cref {
	confl := crefUndef
	val := s.val
	for s.qhead < len(s.trail) {
		p := s.trail[s.qhead]
		s.qhead++
		s.stats.Propagations++
		falseLit := p.Not()
		ws := s.watches[falseLit]
		i, j := 0, 0
		n := len(ws)
	next:
		for i < n {
			w := ws[i]
			i++
			if val[w.blocker] > 0 {
				ws[j] = w
				j++
				continue
			}
			c := w.c
			sz := cref(s.arena[c])
			lits := s.arena[c+hdrWords : c+hdrWords+sz]
			if lits[0] == falseLit {
				lits[0], lits[1] = lits[1], falseLit
			}
			first := lits[0]
			if first != w.blocker && val[first] > 0 {
				ws[j] = watcher{c, first}
				j++
				continue
			}
			for k := 2; k < len(lits); k++ {
				if q := lits[k]; val[q] >= 0 {
					lits[1], lits[k] = q, falseLit
					s.watches[q] = append(s.watches[q], watcher{c, first})
					continue next
				}
			}
			ws[j] = watcher{c, first}
			j++
			if val[first] < 0 {
				confl = c
				s.qhead = len(s.trail)
				for i < n {
					ws[j] = ws[i]
					j++
					i++
				}
			} else {
				s.enqueue(first, c)
			}
		}
		s.watches[falseLit] = ws[:j]
		if confl != crefUndef {
			return confl
		}
	}
	return confl
}

func (s *Solver) bumpVar(v Var) {
	s.activity[v] += s.varInc
	if s.activity[v] > 1e100 {
		for i := range s.activity {
			s.activity[i] *= 1e-100
		}
		s.varInc *= 1e-100
	}
	s.heap.increased(v)
}

func (s *Solver) bumpClause(c cref) {
	a := s.cact(c) + s.clauseInc
	s.setCact(c, a)
	if a > 1e20 {
		for _, l := range s.learnts {
			s.setCact(l, s.cact(l)*1e-20)
		}
		s.clauseInc *= 1e-20
	}
}

// reasonLits returns the reason clause of assigned variable v, with v's
// literal first, building a theory explanation on demand.
func (s *Solver) reasonLits(v Var) []Lit {
	r := s.reason[v]
	if r == crefTheory {
		r = s.th.explain(s, v)
	}
	return s.clits(r)
}

// analyze derives a 1-UIP clause from confl (all literals false, at least
// one at the current level) into s.learntBuf and returns the backjump
// level.
func (s *Solver) analyze(confl []Lit) (int, int) {
	out := append(s.learntBuf[:0], litUndef)
	pathC := 0
	p := litUndef
	idx := len(s.trail) - 1
	dl := int32(s.decisionLevel())
	lits := confl
	for {
		start := 0
		if p != litUndef {
			start = 1
		}
		for _, q := range lits[start:] {
			v := q.Var()
			if s.seen[v] == 0 && s.level[v] > 0 {
				s.bumpVar(v)
				s.seen[v] = 1
				if s.level[v] >= dl {
					pathC++
				} else {
					out = append(out, q)
				}
			}
		}
		for s.seen[s.trail[idx].Var()] == 0 {
			idx--
		}
		p = s.trail[idx]
		idx--
		v := p.Var()
		s.seen[v] = 0
		pathC--
		if pathC <= 0 {
			break
		}
		r := s.reason[v]
		if r == crefTheory {
			r = s.th.explain(s, v)
		}
		if s.isLearnt(r) {
			s.bumpClause(r)
		}
		lits = s.clits(r)
	}
	out[0] = p.Not()

	// Recursive minimization (minisat's "deep" mode): drop literals
	// implied by the others.
	s.toClear = s.toClear[:0]
	abstract := uint32(0)
	for _, q := range out[1:] {
		abstract |= s.abstractLevel(q.Var())
		s.toClear = append(s.toClear, q.Var())
	}
	for _, q := range out[1:] {
		s.seen[q.Var()] = 1
	}
	j := 1
	for i := 1; i < len(out); i++ {
		v := out[i].Var()
		if s.reason[v] == crefUndef || !s.litRedundant(out[i], abstract) {
			out[j] = out[i]
			j++
		}
	}
	out = out[:j]
	for _, v := range s.toClear {
		s.seen[v] = 0
	}

	// Backjump to the highest level below the current one; that literal
	// goes to position 1 so it is watched.
	bt := 0
	if len(out) > 1 {
		mi := 1
		for i := 2; i < len(out); i++ {
			if s.level[out[i].Var()] > s.level[out[mi].Var()] {
				mi = i
			}
		}
		out[1], out[mi] = out[mi], out[1]
		bt = int(s.level[out[1].Var()])
	}
	s.learntBuf = out
	return bt, s.lbd(out)
}

func (s *Solver) abstractLevel(v Var) uint32 { return 1 << (uint32(s.level[v]) & 31) }

// litRedundant reports whether p's negation is implied by the other
// literals of the learned clause (those marked seen).
func (s *Solver) litRedundant(p Lit, abstract uint32) bool {
	s.stack = append(s.stack[:0], p.Var())
	top := len(s.toClear)
	for len(s.stack) > 0 {
		v := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		lits := s.reasonLits(v)
		for _, q := range lits[1:] {
			w := q.Var()
			if s.seen[w] != 0 || s.level[w] == 0 {
				continue
			}
			if s.reason[w] != crefUndef && s.abstractLevel(w)&abstract != 0 {
				s.seen[w] = 1
				s.stack = append(s.stack, w)
				s.toClear = append(s.toClear, w)
				continue
			}
			for _, u := range s.toClear[top:] {
				s.seen[u] = 0
			}
			s.toClear = s.toClear[:top]
			return false
		}
	}
	return true
}

func (s *Solver) lbd(lits []Lit) int {
	s.stampGen++
	if s.stampGen == 0 {
		clear(s.lvlStamp)
		s.stampGen = 1
	}
	n := 0
	for _, q := range lits {
		l := int(s.level[q.Var()])
		for l >= len(s.lvlStamp) {
			s.lvlStamp = append(s.lvlStamp, 0)
		}
		if s.lvlStamp[l] != s.stampGen {
			s.lvlStamp[l] = s.stampGen
			n++
		}
	}
	return n
}

// analyzeFinal computes the assumptions responsible for p being true
// (p is the negation of a failed assumption), into s.conflict as negated
// assumptions (minisat's convention: a clause over the assumptions).
func (s *Solver) analyzeFinal(p Lit) {
	s.conflict = append(s.conflict[:0], p)
	if s.decisionLevel() == 0 {
		return
	}
	s.seen[p.Var()] = 1
	for i := len(s.trail) - 1; i >= int(s.trailLim[0]); i-- {
		q := s.trail[i]
		v := q.Var()
		if s.seen[v] == 0 {
			continue
		}
		if s.reason[v] == crefUndef {
			if s.level[v] > 0 {
				s.conflict = append(s.conflict, q.Not())
			}
		} else {
			for _, r := range s.reasonLits(v)[1:] {
				if s.level[r.Var()] > 0 {
					s.seen[r.Var()] = 1
				}
			}
		}
		s.seen[v] = 0
	}
	s.seen[p.Var()] = 0
}

// reduceDB deletes about half of the learned clauses, keeping glue
// clauses (LBD <= 2) and reasons.
func (s *Solver) reduceDB() {
	ls := s.learnts
	slices.SortFunc(ls, func(a, b cref) int {
		la, lb := s.clbd(a), s.clbd(b)
		if la != lb {
			return lb - la // worse (higher) LBD first
		}
		aa, ab := s.cact(a), s.cact(b)
		switch {
		case aa < ab:
			return -1
		case aa > ab:
			return 1
		}
		return int(a) - int(b)
	})
	half := len(ls) / 2
	j := 0
	for i, c := range ls {
		if i < half && s.clbd(c) > 2 && s.csize(c) > 2 && !s.locked(c) {
			s.free(c)
			s.stats.Deleted++
			continue
		}
		ls[j] = c
		j++
	}
	s.learnts = ls[:j]
	s.dropDetached()
	s.cleanWatches()
	s.maybeGC()
}

// dropDetached frees theory explanations that no longer explain anything.
func (s *Solver) dropDetached() {
	j := 0
	for _, c := range s.detached {
		if s.isDeleted(c) {
			continue
		}
		if !s.locked(c) {
			s.free(c)
			continue
		}
		s.detached[j] = c
		j++
	}
	s.detached = s.detached[:j]
}

// cleanWatches removes watchers of deleted clauses.
func (s *Solver) cleanWatches() {
	for l, ws := range s.watches {
		j := 0
		for _, w := range ws {
			if !s.isDeleted(w.c) {
				ws[j] = w
				j++
			}
		}
		clear(ws[j:])
		s.watches[l] = ws[:j]
	}
}

// reanchor implements Options.Reanchor; it runs at level 0.
func (s *Solver) reanchor() {
	s.cancelUntil(0)
	s.th.reanchor()
	for v := range s.phase {
		if p, n := int(PosLit(Var(v))), int(NegLit(Var(v))); max(p, n) < len(s.th.edgesOf) && len(s.th.edgesOf[p])+len(s.th.edgesOf[n]) > 0 {
			s.phase[v] = 0
		}
	}
}

// luby returns the i-th element (from 0) of the Luby sequence 1 1 2 1 1 2 4 ...
func luby(i int) int {
	size, seq := 1, 0
	for size < i+1 {
		seq++
		size = 2*size + 1
	}
	for size-1 != i {
		size = (size - 1) >> 1
		seq--
		i %= size
	}
	return 1 << seq
}

// pickBranch chooses the next decision literal, or litUndef when every
// variable is assigned.
func (s *Solver) pickBranch() Lit {
	for {
		if s.heap.empty() {
			return litUndef
		}
		v := s.heap.pop()
		if s.val[PosLit(v)] != 0 || s.retired[v] {
			continue
		}
		return s.polarity(v)
	}
}

// polarity implements doc.go "Phase": SetPhase, then the theory's order,
// then the saved phase, then false.
func (s *Solver) polarity(v Var) Lit {
	switch s.userPh[v] {
	case 1:
		return PosLit(v)
	case -1:
		return NegLit(v)
	}
	if s.phase[v] == 0 || s.opts.AlwaysOrderPhase {
		if t := s.th.phase(s, v); t != 0 {
			if t > 0 {
				return PosLit(v)
			}
			return NegLit(v)
		}
	}
	if s.phase[v] > 0 {
		return PosLit(v)
	}
	return NegLit(v)
}

// handleConflict learns from confl and backjumps. It returns false when
// the conflict holds at level 0.
func (s *Solver) handleConflict(confl []Lit) bool {
	s.stats.Conflicts++
	s.conflictsNow++
	// A conflict need not involve the current level (theory final checks);
	// analysis needs one literal at the level it starts from.
	maxLvl := 0
	for _, q := range confl {
		maxLvl = max(maxLvl, int(s.level[q.Var()]))
	}
	if maxLvl == 0 {
		return false
	}
	if maxLvl < s.decisionLevel() {
		// Copy first: backtracking may release the theory buffer.
		confl = append(s.tmpLits[:0], confl...)
		s.tmpLits = confl
		s.cancelUntil(maxLvl)
	}
	bt, lbd := s.analyze(confl)
	out := s.learntBuf
	if len(out) > 1 && s.decisionLevel()-bt > s.opts.ChronoThreshold {
		// Chronological backtracking (opt-in), simplified: undo only the conflict
		// level and assert the learned literal one level down, higher
		// than its clause needs. Levels stay sorted on the trail; the
		// price is that the assertion is not redone if a later backjump
		// lands between bt and here (the clause then reports a conflict
		// instead of propagating). On instances with hundreds of
		// thousands of independent decisions this avoids redoing them
		// after every conflict, but measured on a 500K-variable checker
		// instance it cut CPU by a fifth only and multiplied conflicts
		// by 700, hence off by default.
		bt = s.decisionLevel() - 1
	}
	if len(out) == 1 && bt == 0 && s.lazyUnit(out[0], s.decisionLevel()) {
		// burst34_lazyunit.go: the conflict level undone, out[0] a
		// decision in its place, a level-0 fact at the next level 0.
		s.stats.Learned++
		s.varInc /= 0.95
		s.clauseInc /= 0.999
		return true
	}
	s.cancelUntil(bt)
	s.stats.Learned++
	if len(out) == 1 {
		s.enqueue(out[0], crefUndef)
	} else {
		c := s.alloc(out, flagLearnt, lbd)
		s.learnts = append(s.learnts, c)
		s.attach(c)
		s.bumpClause(c)
		s.enqueue(out[0], c)
	}
	s.varInc /= 0.95
	s.clauseInc /= 0.999
	return true
}

// Solve decides the instance under the assumptions.
func (s *Solver) Solve(ctx context.Context, assumptions ...Lit) Status {
	st := s.solve(ctx, assumptions)
	s.settleLazy() // burst34_lazyunit.go
	return st
}

func (s *Solver) solve(ctx context.Context, assumptions []Lit) Status {
	s.stats.Solves++
	s.hasModel = false
	s.conflict = s.conflict[:0]
	if !s.ok {
		return Unsat
	}
	s.cancelUntil(0)
	// Search never asks the pruning snapshot; its memory goes
	// (reachindex.go).
	s.th.dropReachIndex()
	for _, p := range assumptions {
		if s.retired[p.Var()] {
			panic("solver: assumption on a retired variable")
		}
	}
	s.assumptions = append(s.assumptions[:0], assumptions...)
	s.conflictsNow = 0
	if confl := s.propagate(); confl != nil {
		s.ok = false
		return Unsat
	}
	if s.probeFromModel && len(assumptions) == 1 {
		if s.keptModel(assumptions[0], true) {
			// F2 (flip_prop.go): the saved model with the assumption's
			// consequences in place of its own values is a model.
			return Sat
		}
		if !s.ok {
			return Unsat
		}
	}
	s.simplify()
	done := ctx.Done()
	st := Unknown
	for st == Unknown {
		budget := int64(luby(s.lubyIdx) * s.opts.RestartBase)
		s.lubyIdx++
		st = s.search(budget, done)
		if st == Unknown {
			if s.opts.ConflictBudget > 0 && s.conflictsNow >= s.opts.ConflictBudget {
				break
			}
			if done != nil {
				select {
				case <-done:
					s.cancelUntil(0)
					return Unknown
				default:
				}
			}
			s.stats.Restarts++
			if s.opts.Reanchor {
				s.reanchor()
			}
		}
	}
	if st == Sat {
		s.saveModel()
	}
	s.cancelUntil(0)
	return st
}

func (s *Solver) saveModel() {
	n := len(s.level)
	s.model = slices.Grow(s.model[:0], n)[:n]
	for v := range n {
		s.model[v] = s.val[PosLit(Var(v))]
	}
	s.order = s.th.order(s, s.order[:0])
	s.hasModel = true
	s.modelGen++
	s.markSaved()
}

// search runs CDCL for up to budget conflicts (then returns Unknown for a
// restart).
func (s *Solver) search(budget int64, done <-chan struct{}) Status {
	var conflicts int64
	for {
		if len(s.lazy) > 0 && s.decisionLevel() == 0 && !s.flushLazy() {
			s.ok = false
			return Unsat
		}
		confl := s.propagate()
		if confl == nil && s.allAssigned() {
			// Complete assignment: the theory's final check may still
			// find a cycle that passes through oracle reachability.
			confl = s.th.finalCheck(s)
		}
		if confl != nil {
			conflicts++
			if !s.handleConflict(confl) {
				s.ok = false
				return Unsat
			}
			if s.conflictsNow%256 == 0 && done != nil {
				select {
				case <-done:
					return Unknown
				default:
				}
			}
			continue
		}
		if s.opts.ConflictBudget > 0 && s.conflictsNow >= s.opts.ConflictBudget {
			s.cancelUntil(0)
			return Unknown
		}
		if conflicts >= budget {
			// Restart, but keep the decisions the heap would make again
			// anyway (partial trail reuse): on large instances a full
			// restart re-decides every variable. Waiting lazy units
			// (burst34_lazyunit.go) send it to level 0, to become facts.
			if len(s.lazy) > 0 {
				s.cancelUntil(0)
				return Unknown
			}
			s.cancelUntil(s.reuseLevel())
			return Unknown
		}
		if s.decisionLevel() == 0 {
			s.simplify()
		}
		if s.stats.Conflicts >= s.nextReduce {
			s.reduceCount++
			s.nextReduce = s.stats.Conflicts + int64(s.opts.ReduceBase) + s.reduceCount*int64(s.opts.ReduceInc)
			s.reduceDB()
		}
		next := litUndef
		for s.decisionLevel() < len(s.assumptions) {
			p := s.assumptions[s.decisionLevel()]
			if s.val[p] > 0 {
				s.newDecisionLevel() // already true: a dummy level keeps levels aligned
				continue
			}
			if s.val[p] < 0 {
				s.analyzeFinal(p.Not())
				return Unsat
			}
			next = p
			break
		}
		if next == litUndef {
			s.stats.Decisions++
			if s.stats.Decisions&1023 == 0 && done != nil {
				select {
				case <-done:
					return Unknown
				default:
				}
			}
			next = s.pickBranch()
			if next == litUndef {
				return Sat
			}
		}
		s.newDecisionLevel()
		s.enqueue(next, crefUndef)
	}
}

// reuseLevel is the decision level a restart backtracks to: the levels
// whose decisions all have more activity than the next decision the heap
// would make (assumption levels are kept whole or not at all, since they
// come first).
func (s *Solver) reuseLevel() int {
	next := Var(-1)
	for !s.heap.empty() {
		v := s.heap.heap[0]
		if s.val[PosLit(v)] == 0 && !s.retired[v] {
			next = v
			break
		}
		s.heap.pop()
	}
	if next < 0 {
		return 0
	}
	a := s.activity[next]
	for lvl := len(s.assumptions); lvl < s.decisionLevel(); lvl++ {
		d := s.trail[s.trailLim[lvl]].Var()
		if s.activity[d] < a {
			return lvl
		}
	}
	return s.decisionLevel()
}

// allAssigned reports whether every live variable is assigned (the
// pre-test for the final check), from the count nFree.
//
// It used to pop the heap until an unassigned variable came to its top,
// which held the same answer (every unassigned live variable is in the
// heap) but took out of the heap, at each call, the assigned variables
// above the first unassigned one, for cancelUntil to put back. Asked for
// on the profile of issue 20 item 7; measured there (the 100K burst in
// process) it was 0.02 s of the heap's 1.6 s of pops, the rest being
// pickBranch's own, so the count is a simplification more than a speed-
// up (BenchmarkProbes: 7.84 CPU s popping, 7.06 counting). The heap's content
// does not change which variable pickBranch and reuseLevel find first
// (the unassigned live one of greatest activity, ties by index: one
// order, however the heap is arranged), so the search decides exactly
// as before (TestFreeCountKeepsTheSearch).
func (s *Solver) allAssigned() bool {
	if verifyFree {
		s.checkFree()
	}
	if allAssignedByHeap {
		return s.allAssignedHeap()
	}
	return s.nFree == 0
}

// allAssignedHeap is the old test, popping the heap (tests:
// allAssignedByHeap).
func (s *Solver) allAssignedHeap() bool {
	for !s.heap.empty() {
		v := s.heap.heap[0]
		if s.val[PosLit(v)] == 0 && !s.retired[v] {
			return false
		}
		s.heap.pop()
	}
	return true
}

// checkFree panics when nFree is not the number of unassigned live
// variables (tests: verifyFree).
func (s *Solver) checkFree() {
	n := 0
	for v := range s.level {
		if s.val[PosLit(Var(v))] == 0 && !s.retired[v] {
			n++
		}
	}
	if n != s.nFree {
		panic(fmt.Sprintf("solver: nFree %d, %d unassigned live variables", s.nFree, n))
	}
}

// Test switches: verifyFree makes allAssigned check nFree against a
// count; allAssignedByHeap restores the popping test.
var verifyFree, allAssignedByHeap bool
