package online

// A step's flat arrays recycled (docs/SEMANTICS.md §5 "A step's other arrays
// recycled"; issue 22). newEvictStep made, at every step, a dozen arrays
// of one entry per position or interned key (removed, tried, stuck, why,
// lastEarlier, listTxn, opKeys, livePosOf), R4's writer lists
// (writersLeft), the time indexes (timeOrder) and the session bounds
// (sessionBounds): about a tenth of the bytes `run` allocated on the
// PostgreSQL recording, all garbage at the step's end. They now live in
// evictScratch from one step to the next, and each step takes them
// zeroed (zeroed) or emptied (emptied, evict.go), as the fresh arrays
// were: every entry a step reads is one it wrote or a zero, so the step
// decides what it decided on fresh arrays. Nothing in them outlives the
// step (evictStep is dropped at its end; countPinned copies its counts
// out), so reusing them at the next step shares nothing that is still
// read. The step-by-step twin TestRecycleStepByStep (recycled against
// fresh, the engine's state after every step) holds it: its fresh engine
// (noRecycle) takes a new evictScratch at every step (scratchFor).

// scratchFor is the step's scratch: the engine's, kept from the last
// step, or a new one for an engine that recycles nothing (noRecycle, the
// twin's fresh side).
func (o *Online) scratchFor() *evictScratch {
	if o.noRecycle {
		return &evictScratch{}
	}
	return &o.ev.scratch
}

// zeroed returns n zero values, reusing *s's array when it is large
// enough (and storing the result back): the array's old contents are
// cleared, so no pointer of an earlier step stays reachable through it.
func zeroed[T any](s *[]T, n int) []T {
	a := *s
	if cap(a) < n {
		a = make([]T, n)
	} else {
		clear(a[:cap(a)])
		a = a[:n]
	}
	*s = a
	return a
}
