package solver

// T6: the order kept by moving the descendants alone.
//
// Pearce–Kelly (theory.insert) reorders, for a new edge u->v against the
// order, the descendants of v and the ancestors of u inside the interval
// [ord v, ord u]. When the ancestors fill much of that interval, as they
// do on a burst of overlapping transactions where every earlier
// transaction reaches u through the time chain, their search and sort
// cost the interval several times over: a committed reader's edge to an
// unknown outcome that started long before (the unknown has no present
// edge out, so its descendants are itself alone) reordered thousands of
// nodes each, and there are as many such edges as unknowns, so the
// encoding grew with the square of the burst (issue 20, item 7).
//
// shiftForward keeps the order another way: the descendants of v in the
// interval (deltaF, found by the forward search, which also finds every
// cycle) move, in their order, to the top of the interval, just after u;
// every other node of the interval moves down by as many places as
// deltaF had members below it, keeping its order. It is a topological
// order of the present edges plus u->v (T1):
//
//   - an edge between two nodes outside deltaF keeps its direction: their
//     relative order is unchanged (nodes outside the interval do not
//     move);
//   - an edge x->y out of deltaF: y is a descendant of v, so y is in
//     deltaF or ord y > ord u (the forward search reaches every
//     descendant ordered below u, and reaching u is a cycle); deltaF
//     keeps its order and ends at ord u, below every such y;
//   - an edge x->y into deltaF from outside it: x was below y, and y only
//     moves up, x (in the interval) only down;
//   - u->v: u stays outside deltaF, below it.
//
// The cost is one pass over the interval, without its edges and without
// a sort. insert takes this way only when the backward search has
// collected more than a 1/shiftSpanShare of the interval (so it costs
// at most a constant times what Pearce–Kelly costs), on intervals of at
// least shiftMinSpan positions. Either way the answer (acyclic or the
// cycle found) is the forward search's, unchanged: only which
// topological order the theory keeps differs, and every use of the
// order (propagation bounds, the model's order, phases) takes any
// topological order. TestShiftKeepsTopologicalOrder (theory_shift_test.go)
// checks T1 after every insertion against the order Pearce–Kelly keeps
// (noShift) on random graphs.

// Variables only so that tests can force either way.
var (
	// shiftMinSpan: shorter intervals always take Pearce–Kelly's way.
	shiftMinSpan = 256
	// shiftSpanShare: the backward search gives up once it holds more
	// than this fraction of the interval.
	shiftSpanShare = 8
	// noShift turns shiftForward off (tests: Pearce–Kelly alone).
	noShift bool
	// shifts counts shiftForward's reorders (tests: the way was taken).
	shifts int
)

// shiftForward reorders the interval [lb, ub] of the order so that the
// nodes of deltaF (marked by the forward search, all inside the
// interval) come last in it, in their order, and the others first, in
// theirs (T6).
func (t *theory) shiftForward(lb, ub int32) {
	shifts++
	t.deltaF = t.deltaF[:0]
	w := lb
	for i := lb; i <= ub; i++ {
		x := t.pos[i]
		if t.fmark[x] == t.fgen {
			t.deltaF = append(t.deltaF, x)
			continue
		}
		t.pos[w] = x
		t.ord[x] = w
		w++
	}
	for _, x := range t.deltaF {
		t.pos[w] = x
		t.ord[x] = w
		w++
	}
}

// ForceShiftForTesting makes every reorder of an insertion take
// shiftForward (on) or none (off), for the tests of other packages that
// compare the checker with brute force on histories too small for the
// default thresholds; it returns the function that restores them. Not
// safe while a solver runs on another goroutine.
func ForceShiftForTesting(on bool) (restore func()) {
	m, sh, no := shiftMinSpan, shiftSpanShare, noShift
	if on {
		shiftMinSpan, shiftSpanShare, noShift = 1, 1<<30, false
	} else {
		noShift = true
	}
	return func() { shiftMinSpan, shiftSpanShare, noShift = m, sh, no }
}

// ShiftsForTesting is the number of shiftForward reorders so far.
func ShiftsForTesting() int { return shifts }
