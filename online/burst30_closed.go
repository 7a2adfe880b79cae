package online

import "slices"

// The time-closed unknowns before t, by index (issue 20, item 7;
// docs/SEMANTICS.md §5 "The time-closed unknowns before t, by index").
//
// closedUnknownsBefore (rules29_through.go) is asked at every removal
// and at every ghost: it visited every unknown of t's session ranked
// before t, and every unknown whose effective end is at most t's start
// minus 2Δ, and tested each for being time-closed (a search of the
// window's flags). When the stream's end closes a burst inside one tick,
// every unknown is time-closed and each removal walked its session's
// unknowns so far: unknowns times removals, 9x the CPU for 3x the burst
// from 100K to 300K transactions.
//
// The index keeps, per session in rank order and by effective end, only
// the unknowns that are time-closed (o.closed does not change within a
// step), and skips for the rest of the step each one that is removed or
// whose commit commitOf has decided: both only become true within a
// step (a removal is not undone; a decided commit is a fixed literal of
// the solver, level 0, and stays one), and such an unknown is never
// appended again. Asking commitOf of a decided unknown changes nothing
// (fixedLit answers, no probe), so the unknowns commitOf is asked about
// that can probe, and their order, are the scan's: t's session's ranked
// before t first, in rank order, then the others by effective end, each
// once (one of t's session ranked before t was asked in the first part).

// closedSkip is one list of time-closed unknowns with its skip
// pointers: next[j] is j while entry j may still be appended, else an
// index after it to look at next (path-compressed).
type closedSkip struct {
	us   []int32
	next []int32
}

// find returns the first index at or after j whose entry may still be
// appended (len(us) if none), compressing the path.
func (c *closedSkip) find(j int32) int32 {
	r := j
	for int(r) < len(c.us) && c.next[r] != r {
		r = c.next[r]
	}
	for j != r {
		n := c.next[j]
		c.next[j] = r
		j = n
	}
	return r
}

func newClosedSkip(us []int32) *closedSkip {
	c := &closedSkip{us: us, next: make([]int32, len(us))}
	for j := range c.next {
		c.next[j] = int32(j)
	}
	return c
}

// closedIdx is the index: by session (rank order) and by effective end.
type closedIdx struct {
	bySession map[int32]*closedSkip
	byEnd     *closedSkip
	ends      []int64
}

func (s *evictStep) closedIndex() *closedIdx {
	ix := s.unknownIndex()
	if ix.closed != nil {
		return ix.closed
	}
	cx := &closedIdx{bySession: map[int32]*closedSkip{}}
	for ss, us := range ix.bySession {
		var cs []int32
		for _, u := range us {
			if s.closedOpenUnknown(u) {
				cs = append(cs, u)
			}
		}
		if len(cs) > 0 {
			cx.bySession[ss] = newClosedSkip(cs)
		}
	}
	var ce []int32
	for j, u := range ix.byEnd {
		if s.closedOpenUnknown(u) {
			ce = append(ce, u)
			cx.ends = append(cx.ends, ix.ends[j])
		}
	}
	cx.byEnd = newClosedSkip(ce)
	ix.closed = cx
	return cx
}

// closedUnknownsByIndex is closedUnknownsBefore's loop by the index:
// it appends to out the same unknowns, asking commitOf the same
// questions in the same order.
func (s *evictStep) closedUnknownsByIndex(t int32, out []int32) []int32 {
	p, r := s.p, s.r
	cx := s.closedIndex()
	ss := p.SessionOf()[t]
	rank := p.SessionRank()[t]
	// visit asks about entry j of c, reporting whether it is dead.
	visit := func(u int32) (dead bool) {
		if s.removed[u] {
			return true
		}
		if !p.Before(u, t) {
			return false
		}
		_, ok := s.commitOf(u)
		if !ok {
			out = append(out, u)
		}
		return ok || closedSkipBroken == 2
	}
	walk := func(c *closedSkip, hi int, dup func(u int32) bool) {
		for j := c.find(0); int(j) < hi; j = c.find(j + 1) {
			u := c.us[j]
			if closedVisitCount != nil {
				closedVisitCount()
			}
			if u == t || dup(u) {
				continue
			}
			if visit(u) && closedSkipBroken != 1 {
				c.next[j] = j + 1
			}
		}
	}
	if ss >= 0 {
		if c := cx.bySession[ss]; c != nil {
			hi := sortSearchRank(p, c.us, rank) // rules22e_session.go
			walk(c, hi, func(int32) bool { return false })
		}
	}
	if tx := &r.h.Txns[t]; tx.HasTime {
		lim := tx.Start - 2*p.Opts().Skew
		n, _ := slices.BinarySearchFunc(cx.ends, lim, func(e, lim int64) int {
			if e <= lim {
				return -1
			}
			return 1
		})
		walk(cx.byEnd, n, func(u int32) bool {
			// Asked about in the session part already.
			return ss >= 0 && p.SessionOf()[u] == ss && p.SessionRank()[u] < rank
		})
	}
	return out
}

// closedUnknownsNaive (tests) makes closedUnknownsBefore the scan of
// every candidate, as before the index; closedSkipBroken (tests) breaks
// the skip on purpose: 1 never skips (the answer is right, only slow),
// 2 skips an unknown whose commit is open, not decided.
// closedVisitCount (tests), when set, is called at each entry the index
// visits.
var (
	closedUnknownsNaive bool
	closedSkipBroken    int
	closedVisitCount    func()
)
