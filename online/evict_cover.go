package online

import (
	"cmp"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/incremental"
)

// keepAfter is R5 for the orders a -> t -> b whose second step is real
// time: t leaves, a stays, and every remaining b that t precedes in real
// time but a does not gets the kept order a -> b (docs/SEMANTICS.md §5
// "Real-time successors through one kept order").
//
// The b to visit start between effEnd(t)+2Δ and effEnd(a)+2Δ. For an
// unknown a that span is the in-doubt horizon, so in a burst (every
// transaction inside one tick) each removal visited the rest of the
// burst and kept an order to each: the step was quadratic and st.Kept
// grew by a burst per unknown. But once a -> c is kept for a c that
// commits for sure (its commit is the constant true), every b that c
// precedes in real time is reached from a through c by the encoding's
// time chain, in every assignment: a kept order to b adds nothing. The
// visit, in start order, stops at the first b that starts after
// effEnd(c)+2Δ for the earliest-ending such c, and skips the b before it
// that c precedes. The instance's reachability is the same as with an
// order kept to every b.
func (s *evictStep) keepAfter(a, t int32) {
	if keepAfterMode == keepAfterEvery {
		s.to.startingIn(earliestStartAfter(s.p, t), s.succBound(a), func(b int32) {
			if b != t && !s.removed[b] && s.p.RealTimeBefore(t, b) && !s.anchorBefore(a, b) {
				s.addKept(a, b)
			}
		})
		return
	}
	p, to, removed, e := s.p, s.to, s.removed, s.e
	if s.leftBefore(a) {
		// a left earlier in the step (r5Remove's predecessors hold the
		// stale entries of keptIn): addKept keeps nothing out of it
		// (docs/SEMANTICS.md §5 "R5 visits no neighbour that has left").
		if keepLeftSkips != nil {
			keepLeftSkips()
		}
		return
	}
	// succBound and anchorBefore (evict_unknown.go) leave out the b that
	// an unknown a's session anchor already precedes in real time: those
	// orders hold through the anchor, as the ones below hold through c.
	lo, hi := earliestStartAfter(p, t), s.succBound(a)
	// A committed c with a -> c kept, the earliest to end: to begin
	// with, one already kept (burst33_seedvia.go).
	via := s.seedAfter(a)
	seed := via
	i, _ := slices.BinarySearch(to.starts, lo)
	for ; i < len(to.starts) && to.starts[i] <= hi; i++ {
		b := to.byStart[i]
		if via >= 0 {
			// b starts after effEnd(via)+2Δ, and so does every later
			// one: via precedes them all (its end is not before its
			// start, so the converse order cannot hold as well).
			if to.starts[i] > earliestStartAfter(p, via) {
				seedSkipped(via, seed)
				return
			}
			if p.RealTimeBefore(via, b) {
				seedSkipped(via, seed)
				continue
			}
		}
		if b == t || removed[b] || !p.RealTimeBefore(t, b) || s.anchorBefore(a, b) {
			continue
		}
		s.addKept(a, b)
		if keepAfterMode == keepAfterFirst && s.hasKept(a, b) {
			return
		}
		if e.Act()[b] == incremental.LitTrue && e.Node()[b] >= 0 && s.hasKept(a, b) &&
			(via < 0 || earliestStartAfter(p, b) < earliestStartAfter(p, via)) {
			via = b
		}
	}
}

// keepBefore is R5 for the orders a -> t -> b whose first step is real
// time: t leaves, b stays (a kept or fixed successor of t), and every
// remaining committed a that precedes t in real time but not b gets the
// kept order a -> b. It is keepAfter's rule seen from the other end
// (docs/SEMANTICS.md §5 "Real-time predecessors through one kept
// order"): the a to visit end between start(b)-2Δ and start(t)-2Δ, in a
// burst most of the window for each b, and each removal of a list
// holder (whose successors are the readers its prefix replaced) visited
// them all. Once c -> b is kept for a c that commits for sure, every a
// that precedes c in real time reaches b through c (the time chain out
// of a, whose commit is decided, then the kept order): the visit, from
// the latest end down, skips those and stops at the first a that ends
// before start(c)-2Δ for the latest-starting such c.
func (s *evictStep) keepBefore(b, t int32) {
	p, to, removed, e := s.p, s.to, s.removed, s.e
	if keepAfterMode != keepAfterEvery && s.leftBefore(b) {
		// b left earlier in the step: addKept keeps nothing into it, and
		// the visit only asked commits (docs/SEMANTICS.md §5 "R5 visits
		// no neighbour that has left").
		if keepLeftSkips != nil {
			keepLeftSkips()
		}
		return
	}
	lo, hi := latestEndBefore(p, b), latestEndBefore(p, t)
	keep := func(a int32) bool {
		if a == t || removed[a] || !p.RealTimeBefore(a, t) {
			return false
		}
		if c, _ := s.commitOf(a); c {
			s.addKept(a, b)
			return true
		}
		return false
	}
	if keepAfterMode == keepAfterEvery {
		to.endingIn(lo, hi, func(a int32) { keep(a) })
		return
	}
	via := int32(-1) // a committed c with c -> b kept, the latest to start
	// The last end at or below hi, then down to lo.
	i, found := slices.BinarySearch(to.ends, hi)
	if found {
		for i+1 < len(to.ends) && to.ends[i+1] == hi {
			i++
		}
	} else {
		i--
	}
	for ; i >= 0 && to.ends[i] >= lo; i-- {
		a := to.byEnd[i]
		if via >= 0 {
			// a ends before start(via)-2Δ, and so does every earlier
			// one: each precedes via in real time.
			if to.ends[i] < latestEndBefore(p, via) {
				return
			}
			if p.RealTimeBefore(a, via) {
				continue
			}
		}
		if !keep(a) {
			continue
		}
		if (keepAfterMode == keepAfterFirst || keepAfterMode == keepBeforeFirst) && s.hasKept(a, b) {
			return
		}
		if e.Act()[a] == incremental.LitTrue && e.Node()[a] >= 0 && s.hasKept(a, b) &&
			(via < 0 || latestEndBefore(p, a) > latestEndBefore(p, via)) {
			via = a
		}
	}
}

// keepAfterMode is keepAfter's rule (and keepBefore's); tests compare the others with it.
var keepAfterMode = keepAfterCover

const (
	keepAfterCover  = iota // stop at the first committed c kept (the rule)
	keepAfterEvery         // keep an order to every b (the rule before it)
	keepAfterFirst         // the naive cover: stop at the first b kept (wrong)
	keepBeforeFirst        // the naive cover in keepBefore only (wrong)
	keepLeftGhost          // "left" read as "not a member": ghosts skipped too (wrong)
)

// keepLeftSkips (tests) is told of each visit skipped because its
// neighbour has left.
var keepLeftSkips func()

// leftBefore says whether R5's neighbour x has left the step's instance
// (removed, so that addKept keeps no order with it). A ghost (a skeleton
// R5 kept, or a reader the list rule replaced) is not a member but
// stays: orders into it must be kept. keepLeftGhost (tests) reads
// "left" as "not a member", the naive rule.
func (s *evictStep) leftBefore(x int32) bool {
	if keepAfterMode == keepLeftGhost {
		return s.removed[x] || s.r.ghost[x]
	}
	return s.removed[x]
}

// keptCover says which ghosts build must keep in the instance although no
// member touches them: a ghost g that some kept order a -> c reaches
// through c's real time (c precedes g, a does not). keepAfter keeps no
// order a -> g for such a g, and a ghost outside a step's instance is
// invisible to R5: were c to leave in that step, the order a -> g would
// be lost (stream 362 of TestKeepAfterSameReachability's long sweep). It
// errs on the side of keeping (any c, committed or not; ties kept).
//
// The covered ghosts start in the union of the ranges [effEnd(c)+2Δ,
// effEnd(a)+2Δ] of the kept orders: ranges lists it (merged, ascending),
// so that build visits the ghosts in it (ghost_index.go, GX2) instead of
// asking covered of every ghost.
func (o *Online) keptCover() keptCoverSet {
	st := &o.ev
	type entry struct{ ec, ea int64 }
	var es []entry
	for _, k := range st.Kept {
		ta, tc := o.log.at(k[0]), o.log.at(k[1])
		if !tc.HasTime {
			continue
		}
		ea := int64(math.MaxInt64)
		if ta.HasTime {
			ea = o.instanceEnd(k[0], ta) // rmw31_sessend.go: the instance's end
		}
		if ec := o.instanceEnd(k[1], tc); ea > ec {
			es = append(es, entry{ec, ea})
		}
	}
	if len(es) == 0 {
		return keptCoverSet{covered: func(int) bool { return false }}
	}
	slices.SortFunc(es, func(x, y entry) int { return cmp.Compare(x.ec, y.ec) })
	skew2 := 2 * o.opts.Skew
	var ranges [][2]int64
	for _, e := range es {
		// covered below: ec <= satAdd(start, -2Δ) and satAdd(ea, 2Δ) >=
		// start. The first is start >= ec+2Δ but where satAdd
		// saturates (ec the least time: every start).
		lo, hi := satAdd(e.ec, skew2), satAdd(e.ea, skew2)
		if e.ec == math.MinInt64 {
			lo = math.MinInt64
		}
		if n := len(ranges); n > 0 && lo <= ranges[n-1][1] {
			ranges[n-1][1] = max(ranges[n-1][1], hi)
		} else {
			ranges = append(ranges, [2]int64{lo, hi})
		}
	}
	for j := 1; j < len(es); j++ {
		es[j].ea = max(es[j].ea, es[j-1].ea) // the latest a among c ending by here
	}
	covered := func(i int) bool {
		g := o.log.at(i)
		if !g.HasTime {
			return false
		}
		// The entries whose c may precede g: effEnd(c)+2Δ <= start(g).
		n, _ := slices.BinarySearchFunc(es, satAdd(g.Start, -skew2)+1, func(x entry, t int64) int { return cmp.Compare(x.ec, t) })
		return n > 0 && satAdd(es[n-1].ea, skew2) >= g.Start
	}
	return keptCoverSet{covered: covered, ranges: ranges}
}

// keptCoverSet is keptCover's answer: covered(g) for a ghost g, and the
// ranges of start times outside which it is false.
type keptCoverSet struct {
	covered func(i int) bool
	ranges  [][2]int64
}
