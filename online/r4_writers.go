package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// writersLeft returns the writers of interned key k that may still
// matter to this step's scans of k, in position order (the order of
// p.WritersOf()[k]): every writer except those that every scan skips and
// that stay skipped for the rest of the step.
//
// R4 (r4Earlier, r4LiveVersion) and the list rule (listPrefix) scan the
// writers of every key a transaction they try writes. On a burst inside
// one tick, one step evicts most of the burst, and the scan went over
// every writer of the key, the evicted ones included, for each evicted
// writer: quadratic in writers per key (issue 20, item 7). The list of
// each key is compacted in place as it is read, so each writer that
// drops out is passed over once per key, not once per later scan.
//
// A writer w drops out of k's list when all three scans skip it and will
// skip it until the step ends:
//
//   - removed by R5 (every scan skips it; only r5Remove sets removed,
//     and nothing clears it before the next step's new evictStep);
//   - aborted (every scan skips it; a status is fixed);
//   - a ghost that no longer holds k and is not k's live version:
//     r4LiveVersion skips a ghost overwritten on k unless it is the live
//     version, listPrefix every ghost without k, r4Earlier (holdsBack)
//     every ghost. Within a step a ghost's keys only shrink (dropGhostKey;
//     becomeGhost and the skeleton of r5Remove make ghosts of members, and
//     a ghost is never tried again, evict's passes drop them), and a new
//     live version is always the member being tried (r4LiveVersion's
//     caller, the list fold), never a ghost: such a w stays skipped.
//
// The writers the scans do look at are the same, in the same order, so
// they decide the same (TestWritersLeftIsTheNaiveScan: the same engine
// state after every step as with p.WritersOf()[k], on generated streams).
func (s *evictStep) writersLeft(k int32) []int32 {
	if writersLeftNaive {
		return s.p.WritersOf()[k]
	}
	s.writersLeftInit(k)
	ws := s.wLeft[k]
	j := 0
	for _, w := range ws {
		if !s.writerGone(w, k) {
			ws[j] = w
			j++
		}
	}
	if writersLeftCount != nil {
		writersLeftCount(len(ws)-j, j)
	}
	ws = ws[:j]
	s.wLeft[k] = ws
	return ws
}

// writersLeftInit makes k's list at the step's first question.
func (s *evictStep) writersLeftInit(k int32) {
	if s.wLeft == nil {
		sx := s.sx // live_scratch.go: the last step's lists, emptied
		s.wLeft = emptied(&sx.wLeft, len(s.p.Keys()))
		s.wLeftInit = zeroed(&sx.wLeftInit, len(s.p.Keys()))
	}
	if s.wLeftInit[k] {
		return
	}
	// A copy (WritersOf is the prepared history's, shared with the
	// encoder and the rest of the step), without the aborted writers,
	// once: a status read per writer and call was a cache miss each (a
	// transaction is a large struct). The list's array is the last
	// step's (emptied), or a new one.
	ws := s.wLeft[k][:0]
	for _, w := range s.p.WritersOf()[k] {
		if s.r.h.Txns[w].Status != history.Aborted {
			ws = append(ws, w)
		}
	}
	s.wLeft[k] = ws
	s.wLeftInit[k] = true
}

// writerGone: every scan of k's writers skips w for the rest of the step
// (writersLeft; the aborted writers are left out when the list is made).
func (s *evictStep) writerGone(w, k int32) bool {
	r := s.r
	if s.removed[w] {
		return true
	}
	if !r.ghost[w] {
		return false
	}
	i := r.pos[w]
	return i >= 0 && w != s.livePos(k) && !slices.Contains(s.st.GhostKeys[i], s.p.Keys()[k])
}

// writersLeftNaive (tests) makes writersLeft return p.WritersOf()[k]
// whole: the scans as they were, for the differential test.
var writersLeftNaive bool

// writersLeftCount (tests) is told, at each call, how many writers the
// call dropped and how many it left.
var writersLeftCount func(dropped, left int)
