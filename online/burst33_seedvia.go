package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/incremental"
)

// R5's real-time successors from a kept order already there
// (docs/SEMANTICS.md §5 "R5's real-time successors from a kept order";
// issue 20, item 7).
//
// keepAfter(a, t) keeps a -> b for the b that t precedes in real time
// and a does not, and stops covering once it has kept a -> c for a c
// that commits for sure: every b that c precedes in real time is
// reached from a through c. But it looked for c only among the b it
// visited, so each removal of a successor t of a started over. On the
// second step of a burst inside one tick (the unknowns' horizon passed)
// each unknown a decided committed had its kept successor moved on one
// transaction per removal, each move a new kept order (23,022 of the
// 23,487 orders appended in that step of a 100K burst, 1,847 at 30K).
// A kept order a -> c already in keptOut[a], with c committing for
// sure, covers the same b: the visit now starts with the
// earliest-ending such c as its cover.
//
// The argument is keepAfter's own: for a skipped b, c precedes b in
// real time, so the encoding's time chain holds c -> b in every
// completion in which b commits (c commits in all: its commit is the
// constant true, and it has a node), and the kept order a -> c holds
// whenever a commits (an order out of an unknown whose commit is open
// is guarded by it). So a reaches b wherever both commit, which is
// where a kept a -> b would hold: the instance's reachability is the
// one with the order kept. The kept order names a and c, so build keeps
// both while it holds, and keptCover keeps every ghost that c precedes
// in real time and a does not, so that a skipped b that becomes a ghost
// stays in the instances in which c may leave; when c leaves, R5 keeps
// a's orders through it (keepAfter(a, c) visits b).
//
// The mirror for keepBefore (a kept c -> b in keptIn[b] covering the a
// that precede c in real time) is not sound as it stands: a skipped
// ghost a is named by no kept order and nothing keeps it in the
// instance, so when c leaves in a step whose instance does not hold a,
// R5 cannot keep a -> b (stream 1235 of the long sweep, see
// docs/SEMANTICS.md). It would need keptCover's mirror: the ghosts that
// end between start(b)-2Δ and start(c)-2Δ, which the ghost index (by
// start) cannot bound.

// keepSeedVia switches the rule (tests: off is the rule before it).
var keepSeedVia = true

// keepSeedBroken (tests) breaks the rule as named.
var keepSeedBroken int

const (
	seedSound     = iota
	seedAnyCommit // the kept c need not commit for sure (wrong)
	seedWrongSide // the kept order runs the other way: c -> a (wrong)
	seedRemoved   // a c removed in the step still covers (wrong)
)

// keepSeedSkipped (tests) is told of each b that keepAfter skipped, or
// stopped at, while its cover was the seeded one.
var keepSeedSkipped func()

// seedSkipped tells keepSeedSkipped of a skip while the cover is still
// the seeded one.
func seedSkipped(via, seed int32) {
	if keepSeedSkipped != nil && seed >= 0 && via == seed {
		keepSeedSkipped()
	}
}

// seedVias is, per transaction x of the step, the kept neighbour the
// seed found (or -1) and how much of x's kept list it has read.
type seedVias struct {
	ready bool
	via   []int32
	read  []int32
}

// seedSure: c can carry kept orders on by its real time: not removed,
// committing for sure, with a node and a time.
func (s *evictStep) seedSure(c int32) bool {
	if s.removed[c] && keepSeedBroken != seedRemoved || s.e.Node()[c] < 0 || !s.p.History().Txns[c].HasTime {
		return false
	}
	return keepSeedBroken == seedAnyCommit || s.e.Act()[c] == incremental.LitTrue
}

// seedAfter is keepAfter's seeded cover for a: of a's kept successors
// (keptOut[a]), one that seedSure allows with the earliest effective
// end, or -1.
func (s *evictStep) seedAfter(a int32) int32 {
	if !keepSeedVia {
		return -1
	}
	x, list := s.later(), s.keptOut[a]
	if keepSeedBroken == seedWrongSide {
		list = s.keptIn[a]
	}
	return s.seedVia(&x.seedOut, a, list, func(c, v int32) bool {
		return earliestStartAfter(s.p, c) < earliestStartAfter(s.p, v)
	})
}

// seedVia reads only the entries of list appended since its last call
// for x, unless the one it found has been removed since (a transaction
// once removed, or not seedSure, stays so for the step).
func (s *evictStep) seedVia(sv *seedVias, x int32, list []int32, better func(c, v int32) bool) int32 {
	if !sv.ready {
		n := len(s.r.h.Txns)
		sv.via = slices.Grow(sv.via[:0], n)[:n]
		sv.read = slices.Grow(sv.read[:0], n)[:n]
		for i := range sv.via {
			sv.via[i] = -1
		}
		clear(sv.read)
		sv.ready = true
	}
	v := sv.via[x]
	if v >= 0 && s.removed[v] && keepSeedBroken != seedRemoved {
		v, sv.read[x] = -1, 0
	}
	for _, c := range list[sv.read[x]:] {
		if s.seedSure(c) && (v < 0 || better(c, v)) {
			v = c
		}
	}
	sv.via[x], sv.read[x] = v, int32(len(list))
	return v
}
