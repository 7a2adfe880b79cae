package incremental

// Read-modify-write chains (Cobra's coalescing; docs/SEMANTICS.md §3,
// "Pruning the offline search", C1).
//
// If a read of key k by b has a single candidate a whose read-from literal
// is true (b is committed, or the read is otherwise forced), and b writes k
// too, then in every model where a, b and another writer c of k are all in
// the instance, c is not between a and b: c between them would need
// x(a, c), and b reading a's version then draws the rw edge b -> c (D1
// leaves it out only when c writes the value b read, which the rule
// excludes). So "c before b" equals "c before a", and the pair (c, b)
// takes the literal of (c, a) instead of a variable of its own. When one
// of the three is not in the instance the pair's literal constrains
// nothing (an inactive transaction has no outgoing edge; b active forces a
// active), so the equality can be imposed. Following the substitution
// along a chain, every pair of two chains' members shares one literal: the
// version order of a key written by read-modify-writes costs one variable
// per pair of chains, not per pair of writers.
//
// Only the fast path: in the guarded encoding a deselected a drops b's
// read from the projection, and then c may sit between a and b.

// noteChain records that b's read of key k is forced to a.
func (e *encoder) noteChain(k, b, a int32) {
	if !e.sameValue || e.guarded || a < 0 {
		return
	}
	if _, ok := e.p.txns[b].finalValue(k); !ok {
		return
	}
	if e.chainPred == nil {
		e.chainPred = map[[2]int32]int32{}
	}
	e.chainPred[[2]int32{k, b}] = a
}

// pairLit is the order literal of the pair (a, b) of writers of key k
// (true: a before b), substituting a chain predecessor's pair where C1
// allows.
func (e *encoder) pairLit(k, a, b int32) lit {
	if a > b {
		return e.pairLit(k, b, a).not()
	}
	if pv, ok := e.pairs[[2]int32{a, b}]; ok {
		return pv.x
	}
	if e.chainPred == nil || e.p.before(a, b) || e.p.before(b, a) || e.prune.orderedBefore(a, b) || e.prune.orderedBefore(b, a) {
		return e.pairVar(a, b)
	}
	// Forced sources can form a cycle (b reads a's write and a reads
	// b's: no model, and the solver finds that from the base edges); a
	// walk that comes back to a pair it started takes a variable.
	key := [2]int32{a, b}
	if e.chainBusy[key] {
		return e.pairVar(a, b)
	}
	if e.chainBusy == nil {
		e.chainBusy = map[[2]int32]bool{}
	}
	e.chainBusy[key] = true
	defer delete(e.chainBusy, key)
	if pv, ok := e.pairs[key]; ok { // created by the walk itself
		return pv.x
	}
	// x(a, b) = x(a, pb) when b's read of k is forced to pb and a's value
	// of k is not the value b read; symmetrically for a.
	if pb, ok := e.chainPred[[2]int32{k, b}]; ok && pb != a && !e.sameFinal(k, a, pb) {
		x := e.pairLit(k, a, pb)
		if pv, ok := e.pairs[key]; ok {
			return pv.x
		}
		e.chained++
		return e.newPair(a, b, x)
	}
	if pa, ok := e.chainPred[[2]int32{k, a}]; ok && pa != b && !e.sameFinal(k, b, pa) {
		x := e.pairLit(k, pa, b)
		if pv, ok := e.pairs[key]; ok {
			return pv.x
		}
		e.chained++
		return e.newPair(a, b, x)
	}
	return e.pairVar(a, b)
}
