package online

import (
	"math"
	"slices"
	"sync"

	"github.com/streamcheck/streamcheck/history"
)

// R4's later writers reached through t (docs/SEMANTICS.md §5 "R4: the
// writers real time puts after t are reached through t"; issue 20,
// item 7).
//
// r4LiveVersion visited, for each key k a committed t writes last, every
// writer of k still in the instance, and put each that follows t by the
// level's order into the list of writers every replaced reader of the
// overwritten version precedes. On a burst inside one tick, one step
// evicts the burst in start order, so the writers after t were most of
// k's writers at every eviction: writers squared per key, and as many
// kept orders per replaced read.
//
// When t is not overtaken on k, t itself is in that list, and a replaced
// reader u gets the kept order u -> t. A writer w that starts after
// effEnd(t)+2Δ follows t in real time (Precedes(t, w): effEnd(t) <=
// start(w)-2Δ, and not effEnd(w) <= start(t)-2Δ, since effEnd(w) >=
// start(w) > effEnd(t)+2Δ >= start(t)), so u -> t -> w holds in every
// completion in which w commits (t commits; I1 removes w's incoming
// edges otherwise, and the kept order u -> w held in no more). R5 keeps
// the path when t leaves (a kept predecessor of t keeps its order to
// t's real-time successors, "Real-time successors through one kept
// order"), and no ghost named by a kept order is left out of or folded
// out of an instance (B1). So u -> w need not be kept: the visit stops
// at the first writer that starts after effEnd(t)+2Δ (writers are in
// start order), the instance's reachability is the same, and so is
// every answer a probe or the closure gives.
//
// What the visit of those writers did besides is kept exactly: the
// writers after the cut are all decided after t (no "not ordered"), and
// none is the live version or a fixed initial value (r4Cut checks both;
// else the whole list is visited as before), so only r4Skip's commit
// question of an unknown writer had an effect (it may probe): those are
// asked in the same order (r4SuffixUnknowns), so the probes, and the
// budget left, are the visit's. When t is overtaken on k (the live
// version follows t), t is not in the list, and the writers after the
// cut are visited as before.

// r4Later is the step's index for the cut, per interned key, built at
// R4's first question for the key: whether k's writers (aborted ones
// too) all have a time and come in start order (else no cut), the
// latest start of a writer that is no window member (a fixed initial
// value: the cut must pass it), and k's unknown writers in position
// order. fi is firstAfterInitial's cursor (firstAfterInitialAt).
type r4Later struct {
	init    []bool
	sorted  []bool
	special []int64
	unk     [][]int32
	fi      []int32
	ps      pairStamps // burst20c_pairs.go: not reset, its stamps only grow
	pv      pairVias   // burst32_pairvia.go: emptied at the step's first use
	seedOut seedVias   // burst33_seedvia.go: emptied at the step's first use
}

// r4LaterPool holds the indexes between steps (and engines): a new set
// of arrays per step was an allocation of a few per key at every step.
// A step takes one, empties it (reset), and gives it back at its end.
var r4LaterPool = sync.Pool{New: func() any { return &r4Later{} }}

// r4LaterOff (tests) turns the cut off: r4LiveVersion visits every
// writer, as before.
var r4LaterOff bool

// r4LaterNaive (tests) is the naive cut: every writer that starts after
// effEnd(t)+2Δ is left out of the visit, k's live version included
// (r4Cut does not ask where the live version starts).
var r4LaterNaive bool

// r4LaterCount (tests) is told, at each cut, whether t was overtaken on
// the key (then the writers after the cut are visited as before).
var r4LaterCount func(overtaken bool)

func (x *r4Later) reset(nk int) {
	x.init = zeroed(&x.init, nk)
	x.sorted = zeroed(&x.sorted, nk)
	x.special = zeroed(&x.special, nk)
	x.fi = zeroed(&x.fi, nk)
	x.unk = emptied(&x.unk, nk)
	x.pv.ready = false
	x.seedOut.ready = false
}

// later returns the step's index, taken from the pool at the first call.
func (s *evictStep) later() *r4Later {
	if s.lx == nil {
		s.lx = r4LaterPool.Get().(*r4Later)
		s.lx.reset(len(s.p.Keys()))
	}
	return s.lx
}

// releaseLater gives the step's index back (evict's end).
func (s *evictStep) releaseLater() {
	if s.lx != nil {
		r4LaterPool.Put(s.lx)
		s.lx = nil
	}
}

// r4KeyFacts fills the index of key k.
func (s *evictStep) r4KeyFacts(k int32) {
	x := s.later()
	if x.init[k] {
		return
	}
	x.init[k] = true
	r := s.r
	sorted, special := true, int64(math.MinInt64)
	last := int64(math.MinInt64)
	unk := x.unk[k][:0]
	for _, w := range s.p.WritersOf()[k] {
		// Aborted writers count for the order: writersLeftNaive's list
		// (tests) keeps them.
		tw := &r.h.Txns[w]
		if !tw.HasTime || tw.Start < last {
			sorted = false
		}
		last = tw.Start
		if tw.Status == history.Aborted {
			continue
		}
		if r.pos[w] < 0 {
			special = max(special, tw.Start)
		}
		if tw.Status == history.Unknown {
			unk = append(unk, w)
		}
	}
	x.sorted[k], x.special[k], x.unk[k] = sorted, special, unk
}

// r4Cut returns the bound of the cut for t on k, whose live version is
// prev: every writer of k that starts after it follows t in real time,
// and none of them is prev or a fixed initial value. ok is false when
// there is no cut (the level has no real time, t or a writer has no
// time, k's writers are not in start order, t's effective end is
// unbounded, or prev or a fixed initial value starts after the bound).
func (s *evictStep) r4Cut(k, t, prev int32) (bound int64, ok bool) {
	if r4LaterOff || !s.p.Opts().Level.RealTime() {
		return 0, false
	}
	r := s.r
	tx := &r.h.Txns[t]
	if !tx.HasTime {
		return 0, false
	}
	bound = earliestStartAfter(s.p, t)
	if bound == math.MaxInt64 {
		return 0, false
	}
	s.r4KeyFacts(k)
	x := s.lx
	if !x.sorted[k] || x.special[k] > bound {
		return 0, false
	}
	if prev >= 0 && r.h.Txns[prev].Start > bound && !r4LaterNaive {
		return 0, false
	}
	return bound, true
}

// writersUpTo returns the writers writersLeft(k) would return that start
// no later than bound, in the same order, compacting only that part of
// k's list: the survivors move towards the writers after the bound,
// which stay where they are (writersLeft compacts them when it is asked
// for the whole list). k's writers must be in start order (r4Cut).
func (s *evictStep) writersUpTo(k int32, bound int64) []int32 {
	r := s.r
	if writersLeftNaive {
		ws := s.p.WritersOf()[k]
		j, _ := slices.BinarySearchFunc(ws, bound, func(w int32, b int64) int {
			if r.h.Txns[w].Start <= b {
				return -1
			}
			return 1
		})
		return ws[:j]
	}
	s.writersLeftInit(k)
	ws := s.wLeft[k]
	j, _ := slices.BinarySearchFunc(ws, bound, func(w int32, b int64) int {
		if r.h.Txns[w].Start <= b {
			return -1
		}
		return 1
	})
	m := j
	for i := j - 1; i >= 0; i-- {
		if w := ws[i]; !s.writerGone(w, k) {
			m--
			ws[m] = w
		}
	}
	if writersLeftCount != nil {
		writersLeftCount(m, j-m)
	}
	ws = ws[m:]
	s.wLeft[k] = ws
	return ws[:j-m]
}

// r4SuffixUnknowns asks r4Skip's question, in the visit's order, of
// every unknown writer of k after the cut that the visit would have met
// (those writersLeft keeps): t's eviction does not depend on the
// answers, but noCommit may probe, and the probes a step makes are kept
// as they were.
//
// An unknown whose question can no longer have an effect leaves k's list
// of unknowns (settled): removed (r4Skip answers at once), dropped or no
// window member (noCommit answers at once), its commit fixed at level 0
// (noCommit reads it), or left open by a probe of this step (openCommit:
// noCommit asks no more). Each of those holds for the rest of the step
// once it holds, for every t that asks: so the list keeps every unknown
// whose question may still probe, in order, and each settled one is
// passed over once per key instead of once per eviction.
func (s *evictStep) r4SuffixUnknowns(k, t int32, bound int64) {
	r := s.r
	unk := s.lx.unk[k]
	i, _ := slices.BinarySearchFunc(unk, bound, func(w int32, b int64) int {
		if r.h.Txns[w].Start <= b {
			return -1
		}
		return 1
	})
	j := i
	for _, w := range unk[i:] {
		if writersLeftNaive || !s.writerGone(w, k) {
			s.r4Skip(w, t)
		}
		if !s.settled(w) {
			unk[j] = w
			j++
		}
	}
	s.lx.unk[k] = unk[:j]
}

// settled: r4Skip's question of unknown w can have no effect for the
// rest of the step (r4SuffixUnknowns).
func (s *evictStep) settled(w int32) bool {
	if s.removed[w] || s.r.pos[w] < 0 || s.p.Txns()[w].Dropped() || s.openCommit[w] {
		return true
	}
	_, fixed := fixedLit(s.e.Solver(), s.e.Act()[w])
	return fixed
}

// writersStartingBy is r4Earlier's list of k's writers: its scan stops at
// the first writer that starts after start, so when k's writers are in
// start order it is given those that start by then (writersUpTo), the
// same writers in the same order, without a pass over the rest.
func (s *evictStep) writersStartingBy(k int32, start int64) []int32 {
	if r4LaterOff {
		return s.writersLeft(k)
	}
	s.r4KeyFacts(k)
	if !s.lx.sorted[k] {
		return s.writersLeft(k)
	}
	return s.writersUpTo(k, start)
}

// firstAfterInitialAt is firstAfterInitial (evict_guarded.go, G5) with a
// cursor per key over the reads of k's initial version: R4 asks it at
// every eviction of a writer of k whose live version is a ghost, and
// each question scanned those reads from the first, past every read
// whose reader was removed or whose initial-version candidates are all
// fixed, to the first that is neither. On a burst under an unknown
// initial state every read of a key's initial value is one, and most
// are passed over: reads times writers per key. Both conditions hold for
// the rest of the step once they hold (R5 is the only one to set
// removed, and nothing clears it before the next step; a literal fixed
// at level 0 stays fixed, a probe only adds units), so a read passed
// over once is passed over by every later scan, and the cursor starts
// where the last scan stopped: the answer is the scan's.
func (s *evictStep) firstAfterInitialAt(k, g int32) bool {
	if r4LaterOff {
		return s.firstAfterInitial(k, g)
	}
	if !s.initialGhostIs(k, g) {
		return false
	}
	x := s.later()
	rs := s.readsOfVersion(k, -1)
	i := int(x.fi[k])
	for ; i < len(rs); i++ {
		if s.initialReadOpen(rs[i]) {
			break
		}
	}
	x.fi[k] = int32(i)
	return i < len(rs)
}
