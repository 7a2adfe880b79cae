package online

import (
	"math"
)

// Lists: appenders that real time puts after the fold (docs/SEMANTICS.md
// §5, issue 20 item 7).
//
// listPrefix asks, of every other member appender w of key k, that w
// follows t in every completion in which w commits. Its scan went over
// every appender of k left in the instance, the later ones included, at
// every fold: on a burst inside one tick, where a step folds most of a
// key's appenders in start order, the later appenders were visited once
// per earlier fold (quadratic in a key's appenders), and an unknown in
// doubt among them had its commit asked, a probe, at each.
//
// t is committed for sure (listPrefix asks that first). An appender w
// that t precedes by the level's order (p.Before: session order, or real
// time, effEnd(t)+2Δ <= start(w)) follows t in every completion in which
// w commits: the order t -> w leaves t, which commits, so it is an edge
// of every such completion (I1). A completion in which w does not commit
// holds none of w's appends. So the fold's condition holds for w
// whatever w's commit, its Dropped flag, or an order w -> t as well (a
// cycle through t: w commits in no completion of any instance from now
// on). The scan passes over w without asking anything.
//
// The appenders come in position order, which is start order (a step's
// instance is released in start order, and writersLeft keeps
// p.WritersOf()'s order). Once one starts after effEnd(t)+2Δ, every
// later one does too and real time puts it after t: Precedes(t, w)
// needs effEnd(t) <= start(w)-2Δ, which the start gives, and not
// effEnd(w) <= start(t)-2Δ, which cannot hold since effEnd(w) >=
// start(w) > effEnd(t)+2Δ >= start(t). The scan stops there.
//
// The naive cover, which stops at the first appender that t precedes by
// the level's order, is wrong: that one may follow t by session order
// alone (with a clock skew Δ a session's next transaction can start
// within 2Δ of t's end), and an appender after it in start order can
// still overlap t (TestListLaterNaiveFirstWrong).

// listLaterMode is listPrefix's treatment of the appenders after t (tests
// compare the others with the rule).
var listLaterMode = listLaterRule

const (
	listLaterRule       = iota // pass over real-time successors, stop past effEnd(t)+2Δ
	listLaterEvery             // ask every appender, as before the rule
	listLaterNaiveFirst        // stop at the first appender t precedes by the level's order (wrong)
)

// laterAppenders returns, for committed t, the start past which every
// appender follows t in real time (rtEnd) and whether the scan may stop
// there (rtStop: the level has real time and t has timestamps).
func (s *evictStep) laterAppenders(t int32) (rtEnd int64, rtStop bool) {
	if listLaterMode != listLaterRule || !s.p.Opts().Level.RealTime() {
		return math.MaxInt64, false
	}
	rtEnd = earliestStartAfter(s.p, t) // evict_time.go
	return rtEnd, rtEnd != math.MaxInt64
}

// laterAppender is the rule for one appender w of the scan: skip (w
// follows t in real time: nothing to ask) or stop (w and every later
// appender start after effEnd(t)+2Δ).
func (s *evictStep) laterAppender(t, w int32, rtEnd int64, rtStop bool) (skip, stop bool) {
	switch listLaterMode {
	case listLaterEvery:
		return false, false
	case listLaterNaiveFirst:
		return false, s.p.Before(t, w)
	}
	if tw := &s.r.h.Txns[w]; rtStop && tw.HasTime && tw.Start > rtEnd {
		if listLaterStops != nil {
			listLaterStops()
		}
		return true, true
	}
	return s.p.Before(t, w), false
}

// listLaterStops (tests) is called at each scan the rule stops early.
var listLaterStops func()
