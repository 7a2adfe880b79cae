package online

// The settled walk of sessionLastPred skips the dead ranks (issue 20,
// item 7; docs/SEMANTICS.md §5 "R5's walk down a session skips the
// dead").
//
// sessionLastPred (rules22e_session.go) walks t's session down from t
// for the highest-ranked settled member that commits and that real time
// does not order before t, stopping at the settled bound
// (settledAllBefore) or at the unsettled candidate. On a burst inside
// one tick real time orders nothing within 2Δ, the bound does not stop
// the walk, and the members below t were mostly removed earlier in the
// step: each removal walked back over its session's removed members,
// quadratic in a session's length.
//
// A rank is dead for the walk, for the rest of the step, when its member
// is removed (a removal is not undone within a step), is not settled
// (the unsettled ones are found by their own list; settled is fixed at
// the index's build), or is settled and does not commit (a settled
// member's commit is a constant of the encoding: commitOf answers it
// without a probe, the same each time). None of these can be the
// candidate, for this t or a later one, and skipping one asks nothing
// that could probe (a settled member's commitOf changes nothing). The
// bound is monotone in the rank (true at a rank, true at every lower
// one), so where the walk passes over dead ranks to a rank where the
// bound holds, the scan would have stopped at one of them or there,
// with no candidate between: the candidate is the scan's.

// sessionDownNaive (tests) walks every rank, as before the skip;
// sessionDownBroken (tests) breaks the skip on purpose: it kills the
// candidate's rank too.
var (
	sessionDownNaive  bool
	sessionDownBroken bool
)

// downSkip is, for one session, the walk's skip pointers by rank: up[k]
// is k while rank k may hold the candidate, else a lower rank to look
// at next (-1: none), path-compressed.
type downSkip struct {
	up []int32
}

// find returns the highest rank at or below k that is not dead (-1 if
// none).
func (d *downSkip) find(k int32) int32 {
	if d == nil {
		return k
	}
	r := k
	for r >= 0 && d.up[r] != r {
		r = d.up[r]
	}
	for k != r {
		n := d.up[k]
		d.up[k] = r
		k = n
	}
	return r
}

// kill marks rank k dead for the rest of the step.
func (d *downSkip) kill(k int32) {
	if d != nil {
		d.up[k] = k - 1
	}
}

// sessionDown is session ss's skip pointers for the step (nil with
// sessionDownNaive: every rank is walked).
func (s *evictStep) sessionDown(ss int32, n int) *downSkip {
	if sessionDownNaive {
		return nil
	}
	ix := s.sessionIndex()
	if ix.down == nil {
		ix.down = map[int32]*downSkip{}
	}
	d := ix.down[ss]
	if d == nil {
		d = &downSkip{up: make([]int32, n)}
		for k := range d.up {
			d.up[k] = int32(k)
		}
		ix.down[ss] = d
	}
	return d
}
