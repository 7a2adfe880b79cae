package solver

import "math"

// Clause arena (doc.go, "Clause layout"). A clause reference (cref) is the
// index of its header in s.arena:
//
//	arena[c+0]  size (number of literals)
//	arena[c+1]  flags (low 8 bits) | lbd << 8
//	arena[c+2]  activity as float32 bits, or the new cref while relocating
//	arena[c+3:] literals; for a reason clause lits[0] is the implied one,
//	            for an attached clause lits[0] and lits[1] are watched.
type cref = uint32

const (
	hdrWords = 3

	flagLearnt   = 1 << 0 // may be deleted by reduction
	flagDeleted  = 1 << 1 // dead; space is reclaimed by the next GC
	flagDetached = 1 << 2 // not in any watch list (theory explanations)
	flagReloc    = 1 << 3 // moved by GC; arena[c+2] is the new cref

	// crefUndef: no clause (decisions, assumptions, level-0 facts).
	crefUndef cref = math.MaxUint32
	// crefTheory: implied by the theory; the reason clause is built on
	// demand from tReason (doc.go, "Theory").
	crefTheory cref = math.MaxUint32 - 1
)

func (s *Solver) csize(c cref) int       { return int(s.arena[c]) }
func (s *Solver) cflags(c cref) int32    { return int32(s.arena[c+1]) & 0xff }
func (s *Solver) clbd(c cref) int        { return int(s.arena[c+1] >> 8) }
func (s *Solver) clits(c cref) []Lit     { return s.arena[c+hdrWords : c+hdrWords+cref(s.arena[c])] }
func (s *Solver) isLearnt(c cref) bool   { return s.arena[c+1]&flagLearnt != 0 }
func (s *Solver) isDeleted(c cref) bool  { return s.arena[c+1]&flagDeleted != 0 }
func (s *Solver) isDetached(c cref) bool { return s.arena[c+1]&flagDetached != 0 }
func (s *Solver) setFlag(c cref, f Lit)  { s.arena[c+1] |= f }
func (s *Solver) setLBD(c cref, lbd int) {
	s.arena[c+1] = s.arena[c+1]&0xff | Lit(lbd)<<8
}
func (s *Solver) cact(c cref) float32 { return math.Float32frombits(uint32(s.arena[c+2])) }
func (s *Solver) setCact(c cref, a float32) {
	s.arena[c+2] = Lit(math.Float32bits(a))
}

// alloc copies lits into the arena and returns the new reference.
func (s *Solver) alloc(lits []Lit, flags Lit, lbd int) cref {
	c := cref(len(s.arena))
	s.arena = append(s.arena, Lit(len(lits)), flags|Lit(lbd)<<8, 0)
	s.arena = append(s.arena, lits...)
	return c
}

// free marks c deleted; callers remove it from watch lists and clause
// lists themselves (or let the next GC do it).
func (s *Solver) free(c cref) {
	if s.isDeleted(c) {
		return
	}
	s.setFlag(c, flagDeleted)
	s.wasted += hdrWords + s.csize(c)
}

// locked reports whether c is the reason of its first literal, so that
// deleting it would leave an assigned literal without explanation.
func (s *Solver) locked(c cref) bool {
	p := s.clits(c)[0]
	return s.val[p] > 0 && s.reason[p.Var()] == c
}

func (s *Solver) attach(c cref) {
	lits := s.clits(c)
	s.watches[lits[0]] = append(s.watches[lits[0]], watcher{c, lits[1]})
	s.watches[lits[1]] = append(s.watches[lits[1]], watcher{c, lits[0]})
}

// garbageCollect compacts the arena once enough of it is dead, relocating
// every reference: watch lists, reasons and the clause lists (invariant
// C3 in doc.go: no live reference to a deleted clause survives a GC).
func (s *Solver) maybeGC() {
	if s.wasted*4 < len(s.arena) || len(s.arena) < 1<<12 {
		return
	}
	s.stats.GCs++
	to := make([]Lit, 0, len(s.arena)-s.wasted+64)
	move := func(c cref) cref {
		if s.arena[c+1]&flagReloc != 0 {
			return cref(s.arena[c+2])
		}
		n := cref(len(to))
		to = append(to, s.arena[c:c+hdrWords+cref(s.arena[c])]...)
		s.arena[c+1] |= flagReloc
		s.arena[c+2] = Lit(n)
		return n
	}
	// Watch lists first, dropping dead clauses, so that a clause keeps the
	// locality of its watchers.
	for l := range s.watches {
		ws := s.watches[l]
		j := 0
		for _, w := range ws {
			if s.isDeleted(w.c) {
				continue
			}
			w.c = move(w.c)
			ws[j] = w
			j++
		}
		s.watches[l] = ws[:j]
	}
	for _, p := range s.trail {
		v := p.Var()
		if r := s.reason[v]; r < crefTheory {
			if s.isDeleted(r) {
				// Only level-0 facts can lose their reason (simplify strips
				// clauses at level 0); they need none.
				s.reason[v] = crefUndef
				continue
			}
			s.reason[v] = move(r)
		}
	}
	filter := func(cs []cref) []cref {
		j := 0
		for _, c := range cs {
			if s.isDeleted(c) {
				continue
			}
			cs[j] = move(c)
			j++
		}
		return cs[:j]
	}
	s.clauses = filter(s.clauses)
	s.learnts = filter(s.learnts)
	s.detached = filter(s.detached)
	s.arena = to
	s.wasted = 0
}
