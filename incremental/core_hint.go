package incremental

// sizeHint is the size of a guarded instance: its edges and its version
// order pairs.
type sizeHint struct {
	edges, pairs int
}

// noSizeHint turns the hint off, so that tests can hold the instances
// built with it to those built without.
var noSizeHint = false

// newCoreFinderHinted is newCoreFinderWith with the solver's edge array
// and the encoder's pair map sized from *hint, the size of the last
// guarded instance the localizer built, which it then records. The
// localizer builds one per core, of a window or of all that is left,
// and after the first core that is the rest of the last one less its
// core: nearly the same size. Without the hint the arrays grew by
// doubling, and the copies and the garbage were a third of the CPU of
// ten anomalies on the PostgreSQL REPEATABLE READ write-skew recording
// once the shrink was on small instances (C3). Capacity only: the
// literals, clauses, edges and their order are the same, so is every
// solve's answer and failed set, and so are the cores.
func newCoreFinderHinted(p *prepared, noPrune bool, hint *sizeHint) *coreFinder {
	g := newEncoder(p, encodeConfig{guarded: true, dropUnobserved: true, noPrune: noPrune})
	if !noSizeHint && hint.edges > 0 {
		g.s.Reserve(0, hint.edges)
		g.pairs = make(map[[2]int32]*pairVar, hint.pairs)
	}
	g.encode()
	hint.edges, hint.pairs = g.s.NumEdges(), len(g.pairs)
	return &coreFinder{p: p, g: g, noPrune: noPrune}
}
