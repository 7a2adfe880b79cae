package online

import (
	"cmp"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// unknownCandidates appends to c, from the step's index, the unknowns
// that may come before t: those of t's session ranked before it, then
// those whose effective end is at most t's start minus 2Δ (a prefix of
// the unknowns by effective end). A transaction may be in both parts;
// callers test each candidate (u != t, not removed, p.Before).
func (s *evictStep) unknownCandidates(t int32, c []int32) []int32 {
	return s.unknownCandidatesOf(t, c, false)
}

// unknownCandidatesOf is unknownCandidates; with notFree it leaves out
// unknowns that skeletonFree(u, t) is known to pass without asking
// (docs/SEMANTICS.md §5 "Unknowns that need no skeleton, by index"):
// the first ones of t's session by the free-rank bound, and the
// time-closed ones (freeBelow, byEndNotFree). Callers still test each
// candidate as before.
func (s *evictStep) unknownCandidatesOf(t int32, c []int32, notFree bool) []int32 {
	p, r := s.p, s.r
	ix := s.unknownIndex()
	if ss := p.SessionOf()[t]; ss >= 0 {
		rank := p.SessionRank()[t]
		us := ix.bySession[ss]
		lo := 0
		if notFree && !unknownFreeNaive {
			// freeBelow is nondecreasing: the members before lo all
			// have a free rank below t's.
			lo, _ = slices.BinarySearchFunc(ix.freeBelow[ss], rank, func(f, rank int32) int {
				if f < rank {
					return -1
				}
				return 1
			})
		}
		for _, u := range us[lo:] {
			if p.SessionRank()[u] >= rank {
				break
			}
			c = append(c, u)
		}
	}
	if tx := &r.h.Txns[t]; tx.HasTime {
		lim := tx.Start - 2*p.Opts().Skew
		byEnd, ends := ix.byEnd, ix.ends
		if notFree && !unknownFreeNaive {
			byEnd, ends = ix.byEndNotFree, ix.endsNotFree
		}
		n, _ := slices.BinarySearchFunc(ends, lim, func(e, lim int64) int {
			if e <= lim {
				return -1
			}
			return 1
		})
		c = append(c, byEnd[:n]...)
	}
	return c
}

// undecidedUnknownBefore is r5Remove's question "does an order through t
// depend on a commit still open?": the first unknown u, in position
// order, that precedes t by the level's order (p.Before), is not
// removed, is not behind an anchor that precedes t (skeletonFree,
// rules29_skeleton.go), and whose commit commitOf leaves undecided; -1
// if none. It
// calls commitOf on every such u before that one, in the same order, as
// the scan it replaces did (a commit probe spends the step's budget, so
// the order of the questions is kept).
//
// The scan went over every unknown of the instance for every removal:
// on a burst inside one tick, where one step removes most of the burst
// and 1% of it is in doubt, that was unknowns times removals, a fifth of
// run's CPU at 100K transactions (issue 20, item 7). p.Before(u, t)
// holds by session order (u earlier in t's session) or by real time
// (u's effective end at most t's start minus 2Δ, history.Options.
// Precedes), so only two groups can answer: t's session's unknowns
// ranked before t, and the unknowns whose effective end is at most t's
// start minus 2Δ, a prefix of the unknowns by effective end. Both are
// found by index, built once a step; every candidate still passes the
// scan's own test (u != t, not removed, p.Before), so the answer and the
// questions asked are the scan's (TestUnknownBeforeIsTheScan: the same
// engine state after every step, on generated streams).
func (s *evictStep) undecidedUnknownBefore(t int32) int32 {
	if unknownBeforeNaive {
		for _, u := range s.to.unknown {
			if u != t && !s.removed[u] && s.p.Before(u, t) && !s.skeletonFree(u, t) {
				if _, ok := s.commitOf(u); !ok {
					return u
				}
			}
		}
		return -1
	}
	p := s.p
	ix := s.unknownIndex()
	c := s.unknownCandidatesOf(t, ix.buf[:0], true)
	slices.Sort(c)
	c = slices.Compact(c)
	ix.buf = c
	if unknownCandidatesCount != nil {
		// The unknowns the scan asks about (every test but the commit)
		// against those the skip leaves in, and how many it visits.
		var want, got []int32
		for _, u := range s.to.unknown {
			if u != t && !s.removed[u] && p.Before(u, t) && !s.skeletonFree(u, t) {
				want = append(want, u)
			}
		}
		for _, u := range c {
			if u != t && !s.removed[u] && p.Before(u, t) && !s.skeletonFree(u, t) {
				got = append(got, u)
			}
		}
		unknownCandidatesCount(len(c), want, got)
	}
	if unknownBeforeCheck != nil {
		var want, got []int32
		// The index's candidates without the free-rank skip (its own
		// check: TestUnknownFreeSkipIsTheScan).
		full := s.unknownCandidatesOf(t, nil, false)
		slices.Sort(full)
		full = slices.Compact(full)
		for _, u := range s.to.unknown {
			if u != t && !s.removed[u] && p.Before(u, t) {
				want = append(want, u)
			}
		}
		for _, u := range full {
			if u != t && !s.removed[u] && p.Before(u, t) {
				got = append(got, u)
			}
		}
		unknownBeforeCheck(want, got)
	}
	for _, u := range c {
		if u != t && !s.removed[u] && p.Before(u, t) && !s.skeletonFree(u, t) {
			if _, ok := s.commitOf(u); !ok {
				return u
			}
		}
	}
	return -1
}

// unknownIdx indexes the instance's unknowns (timeOrder.unknown) for
// undecidedUnknownBefore: by session in rank order, and those with a
// timestamp by effective end.
type unknownIdx struct {
	bySession map[int32][]int32
	byEnd     []int32
	ends      []int64
	buf       []int32
	// freeBelow: by session, parallel to bySession, the largest free
	// rank of the session's unknowns up to each (unknownFreeRank);
	// nondecreasing.
	freeBelow map[int32][]int32
	// byEndNotFree, endsNotFree: byEnd and ends without the unknowns
	// that are time-closed (skeletonFree for every t).
	byEndNotFree []int32
	endsNotFree  []int64
	// closed: the time-closed ones (burst30_closed.go).
	closed *closedIdx
}

func (s *evictStep) unknownIndex() *unknownIdx {
	if s.unkIdx != nil {
		return s.unkIdx
	}
	p, r := s.p, s.r
	ix := &unknownIdx{bySession: map[int32][]int32{}}
	for _, u := range s.to.unknown {
		if ss := p.SessionOf()[u]; ss >= 0 {
			ix.bySession[ss] = append(ix.bySession[ss], u)
		}
		if r.h.Txns[u].HasTime {
			ix.byEnd = append(ix.byEnd, u)
		}
	}
	for _, us := range ix.bySession {
		slices.SortFunc(us, func(a, b int32) int { return cmp.Compare(p.SessionRank()[a], p.SessionRank()[b]) })
	}
	effEnd := func(u int32) int64 { return p.Opts().EffectiveEnd(&r.h.Txns[u]) }
	slices.SortStableFunc(ix.byEnd, func(a, b int32) int { return cmp.Compare(effEnd(a), effEnd(b)) })
	ix.ends = make([]int64, len(ix.byEnd))
	for i, u := range ix.byEnd {
		ix.ends[i] = effEnd(u)
		if !s.closedOpenUnknown(u) && unknownFreeRankBroken != 1 {
			ix.byEndNotFree = append(ix.byEndNotFree, u)
			ix.endsNotFree = append(ix.endsNotFree, ix.ends[i])
		}
	}
	ix.freeBelow = make(map[int32][]int32, len(ix.bySession))
	for ss, us := range ix.bySession {
		fb := make([]int32, len(us))
		m := int32(math.MinInt32)
		for j, u := range us {
			m = max(m, s.unknownFreeRank(u, ss))
			fb[j] = m
		}
		ix.freeBelow[ss] = fb
	}
	s.unkIdx = ix
	return ix
}

// unknownFreeRank is a rank of u's session (ss) above which every
// member t of the session has skeletonFree(u, t) without asking it:
// MinInt32 when u is time-closed (closedOpenUnknown does not depend on
// t, and o.closed does not change within a step); its anchor's rank when
// the anchor is a member of the same session (behindAnchor: the anchor
// precedes each later member of the session by session order, which
// p.Before gives at a level with session order); MaxInt32 otherwise.
// Every argument is fixed for the step (the anchors, o.doubt, are made
// at build).
func (s *evictStep) unknownFreeRank(u, ss int32) int32 {
	p := s.p
	if unknownFreeRankBroken == 1 {
		return math.MinInt32
	}
	if s.closedOpenUnknown(u) {
		return math.MinInt32
	}
	if skeletonsBehindAnchor && s.r.h.Txns[u].Status == history.Unknown && p.Opts().Level.SessionOrder() {
		if a := s.anchorOf(u); a >= 0 && p.SessionOf()[a] == ss {
			if unknownFreeRankBroken == 2 {
				return p.SessionRank()[a] - 1
			}
			return p.SessionRank()[a]
		}
	}
	return math.MaxInt32
}

// unknownFreeNaive (tests) turns the free-rank skip off: the candidates
// are every unknown of t's session ranked before t and every unknown
// ending before t's start, as before the skip. unknownFreeRankBroken
// (tests) breaks the rule on purpose: 1 calls every unknown free (in
// both parts), 2 counts the anchor itself as after the anchor.
// unknownCandidatesCount (tests), when set, is given at each question
// the number of candidates visited, and the unknowns the question asks
// about by the scan and by the skip.
var (
	unknownFreeNaive       bool
	unknownFreeRankBroken  int
	unknownCandidatesCount func(n int, want, got []int32)
)

// unknownBeforeNaive (tests) makes undecidedUnknownBefore scan every
// unknown, as r5Remove did: the differential test's reference.
var unknownBeforeNaive bool

// unknownBeforeCheck (tests) is given, at each question, the unknowns
// the scan would ask about and those the index asks about, in order.
var unknownBeforeCheck func(want, got []int32)
