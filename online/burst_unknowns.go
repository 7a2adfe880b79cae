package online

import (
	"cmp"
	"slices"
)

// unknownCandidates appends to c, from the step's index, the unknowns
// that may come before t: those of t's session ranked before it, then
// those whose effective end is at most t's start minus 2Δ (a prefix of
// the unknowns by effective end). A transaction may be in both parts;
// callers test each candidate (u != t, not removed, p.Before).
func (s *evictStep) unknownCandidates(t int32, c []int32) []int32 {
	p, r := s.p, s.r
	ix := s.unknownIndex()
	if ss := p.SessionOf()[t]; ss >= 0 {
		rank := p.SessionRank()[t]
		for _, u := range ix.bySession[ss] {
			if p.SessionRank()[u] >= rank {
				break
			}
			c = append(c, u)
		}
	}
	if tx := &r.h.Txns[t]; tx.HasTime {
		lim := tx.Start - 2*p.Opts().Skew
		n, _ := slices.BinarySearchFunc(ix.ends, lim, func(e, lim int64) int {
			if e <= lim {
				return -1
			}
			return 1
		})
		c = append(c, ix.byEnd[:n]...)
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
	c := s.unknownCandidates(t, ix.buf[:0])
	slices.Sort(c)
	c = slices.Compact(c)
	ix.buf = c
	if unknownBeforeCheck != nil {
		var want, got []int32
		for _, u := range s.to.unknown {
			if u != t && !s.removed[u] && p.Before(u, t) {
				want = append(want, u)
			}
		}
		for _, u := range c {
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
	}
	s.unkIdx = ix
	return ix
}

// unknownBeforeNaive (tests) makes undecidedUnknownBefore scan every
// unknown, as r5Remove did: the differential test's reference.
var unknownBeforeNaive bool

// unknownBeforeCheck (tests) is given, at each question, the unknowns
// the scan would ask about and those the index asks about, in order.
var unknownBeforeCheck func(want, got []int32)
