package online

// Skeletons behind an anchor (docs/SEMANTICS.md §5 "Skeletons behind an
// anchor").
//
// r5Remove kept a committed t that leaves as a skeleton, a ghost with no
// key, while an unknown u in doubt precedes it (undecidedUnknownBefore):
// the order u -> t is guarded by u's commit, and R5 keeps only orders
// through predecessors that surely commit. On a read-modify-write stream
// whose unknowns stay in doubt for the whole run, every later member of
// an unknown's session became one, and the skeletons grew with the
// stream. When u is closed by its session and its anchor K precedes t
// (behindAnchor), u -> K is in the instance while u is in doubt and K is
// a committed predecessor of t, so R5 keeps K -> y for every successor y
// of t: u -> K -> y carries u -> t -> y in every completion that commits
// u, and in the others u has no outgoing edge. Such a u keeps nothing.

// skeletonsBehindAnchor switches the rule (tests break it on purpose to
// see a history fail).
var skeletonsBehindAnchor = true

// skeletonFree: u, an unknown before t, needs no skeleton of t: its
// anchor precedes t, or it is time-closed and r5Remove keeps the orders
// through t out of it (rules29_through.go).
func (s *evictStep) skeletonFree(u, t int32) bool {
	return skeletonsBehindAnchor && s.behindAnchor(u, t) || s.closedOpenUnknown(u) // rules29_through.go
}
