package online

import (
	"math"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// sessionNeighbours is r5Remove's visit of t's session (t committed,
// the level with session order): it appends to preds the members ranked
// before t that commit (commitOf) and that real time does not order
// before t, and to succs the members ranked after t that real time does
// not order after t, each in rank order, skipping t and the removed
// members. It asks commitOf of exactly the members the scan it replaces
// asked that can probe, in the same order, so the solver's state, the
// budget spent and the kept orders are the scan's (docs/SEMANTICS.md §5,
// "A session's unknowns by index").
//
// The scan (sessionNeighboursScan) started its visit of the earlier
// members at the first rank, going down from t, below which every member
// precedes t in real time and has a constant commit (sessionBounds): on
// a burst, one unknown early in a session (its end is its horizon, and
// its commit is open) made that bound the session's start for every
// later member, and each removal walked the session's whole prefix:
// quadratic in the session's length (issue 20, item 7).
//
// The index splits the earlier members in two. A member whose commit is
// a constant of the encoding (committed, aborted, dropped: "settled")
// answers commitOf without a probe and without changing anything, so
// when it is asked does not matter, only whether it lands in preds; the
// visit finds those by bounds over the settled members alone, which an
// unknown does not spoil. The others (unknowns whose commit is a
// literal) are every one visited by the scan, whatever its start bound
// (the bound never passes below a member whose commit is not constant),
// and are kept per session in rank order; they are asked in that order.
// A settled member below the settled bound precedes t in real time
// (the bound's extremes imply Precedes for each member), so the scan
// would not have put it in preds either.
func (s *evictStep) sessionNeighbours(t int32, ss int32, preds, succs []int32) ([]int32, []int32) {
	if sessionNeighboursNaive {
		return s.sessionNeighboursScan(t, ss, preds, succs)
	}
	p := s.p
	ix := s.sessionIndex()
	if !ix.ok[ss] || !p.Opts().Level.RealTime() || !s.r.h.Txns[t].HasTime {
		return s.sessionNeighboursScan(t, ss, preds, succs)
	}
	if !sessionPredsAll {
		return s.sessionLastPred(t, ss, preds, succs) // rules22e_session.go
	}
	ms := p.SessionMembers()[ss]
	rank := p.SessionRank()[t]
	from := len(preds)
	// The settled members ranked before t that real time may leave
	// unordered with t, found going down from t until the settled
	// prefix all precedes t; collected in descending rank.
	down := ix.buf[:0]
	for k := rank - 1; k >= 0; k-- {
		u := ms[k]
		if ix.settledAllBefore(p, u, t) {
			break
		}
		if ix.settled[u] {
			down = append(down, u)
		}
	}
	// Merge, in ascending rank, the settled candidates with every
	// unsettled member ranked before t.
	uns := ix.unsettled[ss]
	i, j := len(down)-1, 0
	for i >= 0 || j < len(uns) && p.SessionRank()[uns[j]] < rank {
		var u int32
		settled := false
		if j >= len(uns) || p.SessionRank()[uns[j]] >= rank || i >= 0 && p.SessionRank()[down[i]] < p.SessionRank()[uns[j]] {
			u = down[i]
			i--
			settled = true
		} else {
			u = uns[j]
			j++
		}
		if u == t || s.removed[u] {
			continue
		}
		var c bool
		if settled {
			c, _ = s.commitOf(u)
		} else {
			// An unsettled member is a kept, unaborted member whose
			// commit is a literal: commitOf's first tests are false.
			c, _ = s.commitOfLit(u)
		}
		if c && !p.RealTimeBefore(u, t) {
			preds = append(preds, u)
		}
	}
	ix.buf = down
	if sessionNeighboursCheck != nil {
		want, unknownBefore := s.sessionNeighboursPure(t, ss)
		sessionNeighboursCheck(want, preds[from:], unknownBefore)
	}
	return preds, s.sessionSuccs(t, ss, succs)
}

// sessionSuccs is the scan's visit of the members ranked after t: no
// commit is asked there, and the scan's bound (sessionBounds.allAfter)
// is not spoiled by an unknown (an unknown's start is its own).
func (s *evictStep) sessionSuccs(t, ss int32, succs []int32) []int32 {
	p := s.p
	if s.sb == nil {
		s.sb = newSessionBoundsIn(s.r, &s.sx.sb)
	}
	ms := p.SessionMembers()[ss]
	hi := len(ms)
	for k := p.SessionRank()[t] + 1; int(k) < len(ms); k++ {
		if s.sb.allAfter(p, t, ms[k]) {
			hi = int(k)
			break
		}
	}
	from := len(succs)
	for _, u := range ms[p.SessionRank()[t]+1 : hi] {
		if u == t || s.removed[u] {
			continue
		}
		if !p.RealTimeBefore(t, u) {
			succs = append(succs, u)
		}
	}
	return s.sessionFirstSure(succs, from) // rules22e_session.go
}

// sessionNeighboursScan is the visit as r5Remove made it before the
// index: one loop over the members real time leaves unordered with t on
// either side, by sessionBounds.
func (s *evictStep) sessionNeighboursScan(t int32, ss int32, preds, succs []int32) ([]int32, []int32) {
	p, removed := s.p, s.removed
	// Members beyond the first ones real time orders with t on either
	// side are all ordered with it (sessionBounds): the visit stops
	// there.
	if s.sb == nil {
		s.sb = newSessionBoundsIn(s.r, &s.sx.sb)
	}
	sb := s.sb
	ms := p.SessionMembers()[ss]
	lo, hi := 0, len(ms)
	for k := p.SessionRank()[t] - 1; k >= 0; k-- {
		if sb.allBefore(p, ms[k], t) {
			lo = int(k) + 1
			break
		}
	}
	for k := p.SessionRank()[t] + 1; int(k) < len(ms); k++ {
		if sb.allAfter(p, t, ms[k]) {
			hi = int(k)
			break
		}
	}
	from, fromS := len(preds), len(succs)
	for _, u := range ms[lo:hi] {
		if u == t || removed[u] {
			continue
		}
		if p.SessionRank()[u] < p.SessionRank()[t] {
			if c, _ := s.commitOf(u); c && !p.RealTimeBefore(u, t) {
				preds = append(preds, u)
			}
		} else if !p.RealTimeBefore(t, u) {
			succs = append(succs, u)
		}
	}
	if !sessionPredsAll && len(preds) > from+1 {
		// R5 through the session's last predecessor (rules22e_session.go):
		// the earlier ones reach it by session order.
		preds = append(preds[:from], preds[len(preds)-1])
	}
	return preds, s.sessionFirstSure(succs, fromS)
}

// sessionNeighboursPure (tests: sessionNeighboursCheck) is the preds of
// the whole session's scan, without a probe: every member ranked before
// t, not removed, whose commit is decided true now (fixed at level 0 or
// constant), and that real time does not order before t. Called after
// the index has asked its commits, so an unsettled member's commit is
// then what commitOf answered (a probe that decides makes a unit).
func (s *evictStep) sessionNeighboursPure(t, ss int32) ([]int32, bool) {
	p, r := s.p, s.r
	var out []int32
	unknownBefore := false
	for _, u := range p.SessionMembers()[ss][:p.SessionRank()[t]] {
		if s.removed[u] {
			continue
		}
		var c bool
		switch {
		case r.pos[u] < 0:
			c = true
		case p.Txns()[u].Dropped() || r.h.Txns[u].Status == history.Aborted:
			c = false
		default:
			v, ok := fixedLit(s.e.Solver(), s.e.Act()[u])
			c = ok && v
			if !s.sessionIndex().settled[u] {
				unknownBefore = true
			}
		}
		if c && !p.RealTimeBefore(u, t) {
			out = append(out, u)
		}
	}
	return out, unknownBefore
}

// sessionIdx is the index sessionNeighbours reads, built once a step.
type sessionIdx struct {
	// settled: by position, the member's commit is a constant of the
	// encoding (sessionBounds' preOK condition): committed or aborted
	// at encode time, or left out by prepare.
	settled []bool
	// maxEnd, maxStart: by position, the largest effective end and
	// start of the settled members of its session ranked up to it
	// (math.MinInt64: none).
	maxEnd, maxStart []int64
	// ok: by session, every member has a time far from int64's ends
	// (so start-2Δ does not wrap) and the skew is sane: the bounds hold.
	ok []bool
	// unsettled: by session, its members whose commit is a literal, in
	// rank order.
	unsettled [][]int32
	buf       []int32
	// skip: by session, parallel to unsettled, the index to look at
	// next going down from each (itself while the member may still be a
	// predecessor; below it once it is removed or decided not to
	// commit, both for the rest of the step: sessionLastPred).
	skip [][]int32
	// down: by session, the settled walk's skip pointers
	// (burst30_down.go).
	down map[int32]*downSkip
}

// sessionIndex builds the step's sessionIdx on first use.
func (s *evictStep) sessionIndex() *sessionIdx {
	if s.bx.sess != nil {
		return s.bx.sess
	}
	r, p, e := s.r, s.p, s.e
	n := len(r.h.Txns)
	ix := &sessionIdx{
		settled:  make([]bool, n),
		maxEnd:   make([]int64, n),
		maxStart: make([]int64, n),
		ok:       make([]bool, len(p.SessionMembers())),
	}
	ix.unsettled = make([][]int32, len(p.SessionMembers()))
	skewOK := skewBoundable(p.Opts().Skew)
	for ss, ms := range p.SessionMembers() {
		ok := skewOK
		var maxEnd, maxStart int64 = math.MinInt64, math.MinInt64
		for _, u := range ms {
			tx := &p.History().Txns[u]
			end := p.Opts().EffectiveEnd(tx)
			ok = ok && tx.HasTime && saneBound(tx.Start) && saneBound(end)
			act := e.Act()[u]
			settled := p.Txns()[u].Dropped() || tx.Status == history.Aborted || act == incremental.LitTrue || act == incremental.LitFalse
			ix.settled[u] = settled
			if settled {
				maxEnd, maxStart = max(maxEnd, end), max(maxStart, tx.Start)
			} else {
				ix.unsettled[ss] = append(ix.unsettled[ss], u)
			}
			ix.maxEnd[u], ix.maxStart[u] = maxEnd, maxStart
		}
		ix.ok[ss] = ok
	}
	s.bx.sess = ix
	return ix
}

// settledAllBefore: every settled member of t's session ranked up to u
// precedes t in real time (Precedes: its end at most t's start minus 2Δ,
// and t's end not at most its start minus 2Δ). Monotone in the rank, as
// sessionBounds.allBefore is; true with no settled member up to u.
func (ix *sessionIdx) settledAllBefore(p *incremental.Prepared, u, t int32) bool {
	tt := &p.History().Txns[t]
	maxEnd := ix.maxEnd[u]
	if maxEnd == math.MinInt64 {
		return true
	}
	endT := p.Opts().EffectiveEnd(tt)
	return maxEnd != math.MaxInt64 && maxEnd <= tt.Start-2*p.Opts().Skew &&
		(endT == math.MaxInt64 || endT > ix.maxStart[u]-2*p.Opts().Skew)
}

// sessionNeighboursNaive (tests) makes sessionNeighbours the scan it
// replaces; sessionNeighboursCheck, when set, is given at every visit
// the preds of the whole session's pure scan and the index's, and
// whether an unsettled member (an unknown in doubt) precedes t in its
// session, the case that made the scan walk the session's prefix.
var (
	sessionNeighboursNaive bool
	sessionNeighboursCheck func(want, got []int32, unknownBefore bool)
)
