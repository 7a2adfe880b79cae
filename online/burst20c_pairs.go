package online

// R5's pairs by stamp (docs/SEMANTICS.md §5 "R5's pairs against a
// stamped row"; issue 20, item 7).
//
// r5Remove keeps a -> b for every predecessor a and successor b of the
// transaction t it removes (addKept: unless a == b, an end was removed,
// the level orders them, or the order is kept already). On a burst an
// unknown in doubt precedes the rest of the burst only by kept orders,
// and when one whose commit got decided leaves, its predecessors are
// other unknowns in doubt and its successors a thousand transactions,
// most of them already kept after each predecessor: addKept's "kept
// already" was a map lookup per pair (keptSet), a fifth of `run`'s CPU
// on a 300K burst.
//
// keepPairs asks the same questions of the same pairs, in the same
// order, and appends the same orders in the same order. For an a with a
// long kept list, "kept already" reads a's row of keptSet, a bit per
// position (keptBits, evict_rules.go; it was a map per row). For an a
// with a short one it stamps a's kept successors (keptOut[a]) in an
// array by position, and reads the array; an order it appends is
// stamped too, as hasKept would then find it. A stamp is fresh for each
// a (a counter that only grows; the array is zeroed when it wraps), so
// no mark of another a, or of another step, is read as a's. Removals
// with few successors go through addKept as before.

// pairStamps is keepPairs' array and counter, kept in the step's pooled
// index (burst20c_later.go).
type pairStamps struct {
	mark  []uint32
	stamp uint32
}

// r5PairsNaive (tests) sends every pair through addKept, and makes
// hasKept scan keptOut[a] (no row, no stamp): the reference.
var r5PairsNaive bool

// r5PairsCount (tests) is told how many pairs each call decided by
// stamp.
var r5PairsCount func(n int)

// next returns a fresh stamp over n positions.
func (ps *pairStamps) next(n int) uint32 {
	if len(ps.mark) < n {
		ps.mark = append(ps.mark, make([]uint32, n-len(ps.mark))...)
	}
	ps.stamp++
	if ps.stamp == 0 {
		clear(ps.mark)
		ps.stamp = 1
	}
	return ps.stamp
}

// keepPairs is r5Remove's loop "addKept(a, b) for a in preds, b in
// succs".
func (s *evictStep) keepPairs(preds, succs []int32) {
	via := s.pairsVia(succs) // burst32_pairvia.go
	if r5PairsNaive || len(succs) < 8 {
		for _, a := range preds {
			v, w := s.viaFor(a, via), s.keptVia(a)
			for _, b := range succs {
				if s.viaCovers(v, b) || s.viaCovers(w, b) {
					if r5ViaSkipped != nil {
						r5ViaSkipped()
					}
					continue
				}
				s.addKept(a, b)
			}
		}
		return
	}
	p, removed := s.p, s.removed
	ps := &s.later().ps
	n := len(s.r.h.Txns)
	stamped := 0
	for _, a := range preds {
		if removed[a] {
			continue // addKept keeps nothing out of a
		}
		if len(s.keptOut[a]) >= keptSetMin {
			// a's row of kept orders (hasKept would make it at the
			// first pair): a bit read per pair.
			bs := s.keptRow(a)
			stamped += len(succs)
			v, w := s.viaFor(a, via), s.keptVia(a)
			for _, b := range succs {
				if a == b || removed[b] || p.Before(a, b) || bs.has(b) {
					continue
				}
				if s.viaCovers(v, b) || s.viaCovers(w, b) {
					if r5ViaSkipped != nil {
						r5ViaSkipped()
					}
					continue
				}
				s.keptOut[a] = append(s.keptOut[a], b)
				s.keptIn[b] = append(s.keptIn[b], a)
				bs.set(b)
			}
			continue
		}
		st := ps.next(n)
		mark := ps.mark
		stamped += len(succs)
		for _, x := range s.keptOut[a] {
			mark[x] = st
		}
		bs, indexed := s.keptSet[a]
		v, w := s.viaFor(a, via), s.keptVia(a)
		for _, b := range succs {
			if a == b || removed[b] || p.Before(a, b) || mark[b] == st {
				continue
			}
			if s.viaCovers(v, b) || s.viaCovers(w, b) {
				if r5ViaSkipped != nil {
					r5ViaSkipped()
				}
				continue
			}
			s.keptOut[a] = append(s.keptOut[a], b)
			s.keptIn[b] = append(s.keptIn[b], a)
			if indexed {
				bs.set(b)
			}
			mark[b] = st
		}
	}
	if r5PairsCount != nil {
		r5PairsCount(stamped)
	}
}
