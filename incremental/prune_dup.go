package incremental

import "github.com/streamcheck/streamcheck/history"

// Duplicate write values (docs/SEMANTICS.md §3, "Pruning the offline
// search"): the plain encoding gives a read of a value written by m
// transactions m read-from variables, and every pair of the key's writers
// an order variable with rw edges for each of their readers,
// O(readers·m²) edges for m writers of one value. Two
// rules, both exact, remove what no model needs:
//
//   - D1 (same value, no rw edge): a read of (k, v) needs no rw edge to a
//     writer whose final value of k is v. Any topological order of a model
//     puts every writer of k with another value before the chosen source or
//     after the reader; a writer of v between them leaves the read's value
//     unchanged. So two writers of one value need no order variable for k,
//     and a key all of whose writers write one value needs none at all.
//   - D2 (free source): a read of (k, v) whose candidates include a
//     committed transaction c that can have no incoming edge in any model
//     (it reads nothing, it is first in its session where the level has
//     sessions, the level has no real time, and every key it writes is
//     uniform: every writer in the instance writes the same value and every
//     read of the key reads that value) reads from c. In any model,
//     replacing the read's source by c removes an edge and adds c -> r,
//     which lies on no cycle since c has no incoming edge; on a uniform key
//     no source carries rw obligations (D1). Every model so maps to a model
//     with the choice fixed, one read after another.
//
// D1 applies to every offline encoding (fast, guarded) except the recorded
// one for explanations, whose cycles are read off the drawn edges; D2
// applies to the fast path only. Both are off with encodeConfig.noPrune.

// dupRules holds the per-key facts D1 and D2 need, computed once per
// encoder on first use.
type dupRules struct {
	// uniform[k]: every node writer of register key k writes the same final
	// value, and (ready only after readsScanned) every read of k reads it.
	writersUniform []int8 // 0 unknown, 1 yes, 2 no
	readsUniform   []bool // valid when readsScanned
	readsScanned   bool
	free           []int8 // per transaction: 0 unknown, 1 free source, 2 not
	// freeOf[k] is a free source of key k once one is found (-1: none yet).
	freeOf []int32
	// d1 and d2 count the pairs left without an order by D1 and the reads
	// fixed by D2, for tests that check the rules are exercised.
	d1, d2 int
}

func (e *encoder) dupOn() bool {
	return e.sameValue
}

func (e *encoder) dups() *dupRules {
	if e.dup == nil {
		n := len(e.p.keys)
		d := &dupRules{writersUniform: make([]int8, n), free: make([]int8, len(e.p.h.Txns)), freeOf: make([]int32, n)}
		for k := range d.freeOf {
			d.freeOf[k] = -1
		}
		e.dup = d
	}
	return e.dup
}

// sameFinal reports whether a and b write the same final value of k (D1).
func (e *encoder) sameFinal(k, a, b int32) bool {
	va, oka := e.p.txns[a].finalValue(k)
	vb, okb := e.p.txns[b].finalValue(k)
	return oka && okb && va == vb
}

// writersUniform reports whether every node writer of register key k has
// the same final value of k.
func (e *encoder) writersUniform(k int32) bool {
	d := e.dups()
	if d.writersUniform[k] == 0 {
		d.writersUniform[k] = 1
		var first history.Value
		seen := false
		for _, w := range e.p.writersOf[k] {
			if e.node[w] < 0 {
				continue
			}
			v, ok := e.p.txns[w].finalValue(k)
			if !ok || (seen && v != first) {
				d.writersUniform[k] = 2
				break
			}
			first, seen = v, true
		}
	}
	return d.writersUniform[k] == 1
}

// scanReads marks the register keys all of whose reads (of transactions
// in the instance) read one value, which is not the initial one.
func (e *encoder) scanReads() {
	d := e.dups()
	if d.readsScanned {
		return
	}
	d.readsScanned = true
	p := e.p
	d.readsUniform = make([]bool, len(p.keys))
	val := make([]history.Value, len(p.keys))
	seen := make([]bool, len(p.keys))
	for k := range d.readsUniform {
		d.readsUniform[k] = !p.isList[k]
	}
	for ti := range p.txns {
		if e.node[ti] < 0 { // not in the instance: its reads are not encoded
			continue
		}
		for ri := range p.txns[ti].reads {
			r := &p.txns[ti].reads[ri]
			switch {
			case r.isList():
			case r.val == history.Null || (seen[r.key] && val[r.key] != r.val):
				d.readsUniform[r.key] = false
			default:
				val[r.key], seen[r.key] = r.val, true
			}
		}
	}
}

// freeSource reports whether c is a free source (D2).
func (e *encoder) freeSource(c int32) bool {
	d := e.dups()
	if d.free[c] != 0 {
		return d.free[c] == 1
	}
	d.free[c] = 2
	p := e.p
	pt := &p.txns[c]
	if p.h.Txns[c].Status != history.Committed || e.node[c] < 0 || len(pt.reads) > 0 || len(pt.appends) > 0 || len(pt.finals) == 0 {
		return false
	}
	if p.opts.Level.RealTime() || len(e.kept) > 0 || p.opts.InitialState == history.InitialUnknown {
		return false
	}
	if p.opts.Level.SessionOrder() && p.sessionOf[c] >= 0 && p.sessionMembers[p.sessionOf[c]][0] != c {
		return false
	}
	for _, ia := range p.internal {
		if ia.txn == c {
			return false
		}
	}
	e.scanReads()
	for _, kv := range pt.finals {
		if !e.writersUniform(kv.key) || !d.readsUniform[kv.key] {
			return false
		}
	}
	d.free[c] = 1
	return true
}

// freeCandidate returns a free source among the writers of (k, v) that
// reader t may read from, or -1. Only a uniform key has one, and then any
// free writer of it is a candidate of every read of it (it follows no
// reader by the level's order: the level has no real time and it is first
// in its session).
func (e *encoder) freeCandidate(t int32, r *pread) int32 {
	if !e.dupOn() || e.guarded || e.record || r.isList() || r.val == history.Null {
		return -1
	}
	d := e.dups()
	if c := d.freeOf[r.key]; c >= 0 && c != t {
		d.d2++
		return c
	}
	if !e.writersUniform(r.key) {
		return -1
	}
	e.scanReads()
	if !d.readsUniform[r.key] {
		return -1
	}
	var one [1]int32
	for _, w := range e.p.writersOfValue(r.key, r.val, &one) {
		if w == t || e.node[w] < 0 {
			continue
		}
		if v, ok := e.p.txns[w].finalValue(r.key); !ok || v != r.val {
			continue
		}
		if e.freeSource(w) && !e.p.before(t, w) {
			if d.freeOf[r.key] < 0 {
				d.freeOf[r.key] = w
			}
			d.d2++
			return w
		}
	}
	return -1
}
