package online

import (
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// G4 only for an unknown not ordered with the live version (rmw34;
// docs/SEMANTICS.md §5 "G4 asks both directions (rmw34)").
//
// G4 (evict_guarded.go, r4LiveVersion) keeps k's live version L as a
// stale ghost when the writer t that overwrites it overtakes an unknown
// w past its horizon whose commit is open and that is not ordered with
// L. undecidedAgainst asked only one direction (L before w): an unknown
// that precedes L by its session or by real time from the end of its
// in-doubt horizon counted as not ordered with it, so every later
// writer of w's keys, each overwriting the one before, left the one
// before as a stale ghost for good (2 per 100 transactions on the 2M
// read-modify-write stream from one horizon on). Such a w is an
// overtaken writer decided before L ("Overtaking" in §5): its version,
// if it commits, precedes L's, a reader of L's version precedes none of
// w's, and L's key goes as for any other overwrite.

// g4BothWays switches the rule (tests break it on purpose: off, the
// live version is kept as a stale ghost as before).
var g4BothWays = true

// g4Naive (tests only) is the naive rule: an overtaken unknown past
// its horizon whose commit is open counts as decided before L whether
// or not anything orders it, so L's key goes and the reads of L's
// version are replaced as if w's version could not follow L's.
// testdata/evict/unknown_overtaken_stale.txt fails under it: L leaves
// while R's read of L's x1 precedes U exactly when U commits after L.
var g4Naive = false

// g4Before: in every completion that commits unknown w, w precedes
// prev: by the level (its session, or real time from the end of its
// horizon), or by an edge w -> prev of the instance on w's commit
// literal or fixed true (a kept order out of w, G2, or one the
// instance fixed). Either is a fact of every later instance: kept
// orders stay while both ends are members.
func (s *evictStep) g4Before(w, prev int32) bool {
	if s.p.Before(w, prev) {
		return true
	}
	nw, np := s.e.Node()[w], s.e.Node()[prev]
	if nw < 0 || np < 0 {
		return false
	}
	act := s.e.Act()[w]
	found := false
	s.e.Solver().IncidentEdges(nw, func(other solver.Node, out bool, a, _ solver.Lit, two bool) {
		if found || !out || two || other != np {
			return
		}
		if incremental.Lit(a) == act {
			found = true
		} else if v, ok := fixedLit(s.e.Solver(), incremental.Lit(a)); ok && v {
			found = true
		}
	})
	return found
}
