package solver

// Recycling a solver's arrays.
//
// The online engine (online/) builds, encodes and solves a new instance
// of a few hundred transactions at every step and drops it at the step's
// end; a fresh solver's per-variable, per-literal and per-node arrays
// were a sixth of the bytes a `run` allocates, and their garbage a good
// part of its collector's work. Recycle hands a dropped solver's arrays
// to the next one.
//
// R1 (a recycled solver is a new one): Recycle(old, opts) returns a
// solver in exactly the state New(opts) returns, field by field, except
// that its slices have old's arrays as capacity. Every per-index array
// of the solver grows only by append (NewVar, NewNode, growLits) and
// never by reslicing past its length, so what lies past a length is never
// read; the lists of lists (watches, edgesOf, out, in, cand, candIn) take
// the list an index had in old, emptied, when one is there, and each
// index owned its own list in old (carved apart or grown by append), so
// no two indexes of the new solver share an array. The search is
// deterministic, so a recycled solver answers every call as a fresh one
// would: the same statuses, models, orders, cores and statistics
// (TestRecycleMatchesFresh).
//
// old must not be used again: Recycle zeroes it, so that a stale use
// fails at once instead of reading the new solver's state.

// Recycle returns New(opts) built on old's arrays (nil: New(opts)).
func Recycle(old *Solver, opts Options) *Solver {
	s := New(opts)
	if old == nil {
		return s
	}
	s.val = old.val[:0]
	s.watches = old.watches[:0]
	s.level = old.level[:0]
	s.reason = old.reason[:0]
	s.trailPos = old.trailPos[:0]
	s.activity = old.activity[:0]
	s.phase = old.phase[:0]
	s.userPh = old.userPh[:0]
	s.seen = old.seen[:0]
	s.retired = old.retired[:0]
	s.tReason = old.tReason[:0]
	s.freeVars = old.freeVars[:0]
	s.pendingRet = old.pendingRet[:0]
	s.heap.heap = old.heap.heap[:0]
	s.heap.idx = old.heap.idx[:0]
	s.trail = old.trail[:0]
	s.trailLim = old.trailLim[:0]
	s.arena = old.arena[:0]
	s.clauses = old.clauses[:0]
	s.learnts = old.learnts[:0]
	s.detached = old.detached[:0]
	s.conflict = old.conflict[:0]
	s.model = old.model[:0]
	s.order = old.order[:0]
	s.learntBuf = old.learntBuf[:0]
	s.toClear = old.toClear[:0]
	s.stack = old.stack[:0]
	s.lvlStamp = append(old.lvlStamp[:0], 0)
	s.tmpLits = old.tmpLits[:0]
	s.occ = old.occ[:0]

	t, ot := &s.th, &old.th
	t.edges = ot.edges[:0]
	t.edgesOf = ot.edgesOf[:0]
	t.out, t.in = ot.out[:0], ot.in[:0]
	t.cand, t.candIn = ot.cand[:0], ot.candIn[:0]
	t.ord, t.pos = ot.ord[:0], ot.pos[:0]
	t.removed = ot.removed[:0]
	t.free = ot.free[:0]
	t.pendingNodes = ot.pendingNodes[:0]
	t.active = ot.active[:0]
	t.fmark, t.bmark = ot.fmark[:0], ot.bmark[:0]
	t.stack = ot.stack[:0]
	t.deltaF, t.deltaB = ot.deltaF[:0], ot.deltaB[:0]
	t.ords = ot.ords[:0]
	t.parent, t.dist = ot.parent[:0], ot.dist[:0]
	t.q0, t.q1 = ot.q0[:0], ot.q1[:0]
	t.confl, t.expl = ot.confl[:0], ot.expl[:0]
	// What is left of old's slabs was never carved: new nodes' lists may
	// start there.
	t.edgeSlab, t.candSlab = ot.edgeSlab, ot.candSlab
	*old = Solver{}
	return s
}

// appendList appends an empty list to l: the array l held past its
// length at that index (a recycled solver's, R1) when there is one, else
// fresh (nil).
func appendList[T any](l [][]T) [][]T {
	if n := len(l); n < cap(l) {
		return append(l, l[:n+1][n][:0])
	}
	return append(l, nil)
}

// appendCarved is appendList for the node lists that start in a slab.
func appendCarved[T any](l [][]T, slab *[]T) [][]T {
	if n := len(l); n < cap(l) {
		if old := l[:n+1][n]; cap(old) > 0 {
			return append(l, old[:0])
		}
	}
	return append(l, carve(slab, 2))
}
