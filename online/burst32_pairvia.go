package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/incremental"
)

// R5's pairs through one sure successor (docs/SEMANTICS.md §5 "R5's
// pairs through one sure successor"; issue 20, item 7).
//
// keepPairs keeps a -> b for every predecessor a and successor b of the
// transaction t that leaves. On a burst inside one tick the predecessors
// are unknowns in doubt and the successors most of the rest of the
// burst, in real-time order: each unknown's kept list grew to the whole
// burst after it (quadratic in the burst, in memory and in every later
// step's encoding). Among the successors, the one v that commits for
// sure (its commit is the constant true, and it has a node) and whose
// effective end is the least precedes in real time every successor b
// that real time orders after it: once a -> v is kept, a reaches each
// such b through v's time chain in every completion in which a commits,
// which is where a kept a -> b would hold. So b is not kept from a.

// r5PairsVia switches the rule (tests: off is the rule before it,
// which kept every pair).
var r5PairsVia = true

// r5PairsViaBroken (tests) breaks the rule as named.
var r5PairsViaBroken int

const (
	viaSound     = iota
	viaAnyCommit // v need not commit for sure (wrong)
)

// pairsVia is the v of succs, or -1: not removed, committing for sure
// with a node, the least effective end (the earliest-ending v precedes
// the most; any v would be exact).
func (s *evictStep) pairsVia(succs []int32) int32 {
	p := s.p
	if !r5PairsVia || !p.Opts().Level.RealTime() || len(succs) < 2 {
		return -1
	}
	via, end := int32(-1), int64(0)
	for _, c := range succs {
		if !s.sureVia(c) {
			continue
		}
		if x := earliestStartAfter(p, c); via < 0 || x < end {
			via, end = c, x
		}
	}
	return via
}

// viaFor is via for predecessor a, or -1: a -> via must be kept by the
// pair loop or be kept already (a kept order names via, so that build
// keeps, as keptCover does, every ghost via precedes in real time and a
// does not). An a that the level orders before via without a kept
// order (session order) gets no via: a ghost that via's real time
// reaches would not be kept in the instance through a.
func (s *evictStep) viaFor(a, via int32) int32 {
	if via < 0 || a == via || s.removed[a] {
		return -1
	}
	if s.p.Before(a, via) && !s.hasKept(a, via) {
		return -1
	}
	return via
}

// viaCovers: b is reached from a through v (v = viaFor(a, ...)), so the
// pair a -> b is not kept.
func (s *evictStep) viaCovers(v, b int32) bool {
	if v < 0 || b == v {
		return false
	}
	return s.p.RealTimeBefore(v, b)
}

// pairVias is, per transaction a of the step, the kept successor
// keptVia found (or -1) and how much of keptOut[a] it has read.
type pairVias struct {
	ready bool
	via   []int32
	read  []int32
}

// sureVia: c can carry a's orders on by its real time: not removed,
// committing for sure, with a node and a time.
func (s *evictStep) sureVia(c int32) bool {
	if s.removed[c] || s.e.Node()[c] < 0 || !s.p.History().Txns[c].HasTime {
		return false
	}
	return r5PairsViaBroken == viaAnyCommit || s.e.Act()[c] == incremental.LitTrue
}

// keptVia is, of a's kept successors (keptOut[a]: a kept order a -> c
// names c, and keptCover keeps every ghost c precedes in real time and a
// does not), one that sureVia allows with the least effective end, or
// -1. It reads only the orders appended since its last call, unless the
// one it found has been removed since.
func (s *evictStep) keptVia(a int32) int32 {
	if !r5PairsVia || !s.p.Opts().Level.RealTime() {
		return -1
	}
	pv := &s.later().pv
	if !pv.ready {
		n := len(s.r.h.Txns)
		pv.via = slices.Grow(pv.via[:0], n)[:n]
		pv.read = slices.Grow(pv.read[:0], n)[:n]
		for i := range pv.via {
			pv.via[i] = -1
		}
		clear(pv.read)
		pv.ready = true
	}
	v := pv.via[a]
	if v >= 0 && s.removed[v] {
		v, pv.read[a] = -1, 0
	}
	end := int64(0)
	if v >= 0 {
		end = earliestStartAfter(s.p, v)
	}
	list := s.keptOut[a]
	for _, c := range list[pv.read[a]:] {
		if !s.sureVia(c) {
			continue
		}
		if x := earliestStartAfter(s.p, c); v < 0 || x < end {
			v, end = c, x
		}
	}
	pv.via[a], pv.read[a] = v, int32(len(list))
	return v
}

// r5ViaSkipped (tests) is told of each pair the rule did not keep.
var r5ViaSkipped func()
