package weakonline

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// naiveCompact makes a retirement pass rebuild the fast path from every
// held transaction, as before compactInPlace (the tests' reference).
var naiveCompact bool

// compactInPlace drops the retired nodes from the fast path after a
// retirement pass and renumbers the rest by at (an engine index's new
// index, -1: retired; k held), in place of a rebuild from every held
// transaction (docs/SEMANTICS.md §5 "The fast path compacted in place
// at a pass"). It applies at read committed to an untroubled graph
// without list ops, and reports whether it did; otherwise the caller
// rebuilds.
//
// What stays is the old graph's subgraph on the held nodes: each held
// node's writes as writers, in release order; its chosen sources and
// read-from edges where the source is held. A read whose chosen source
// retired loses its edge: the source's final writes are in the summary,
// so the instance drops that read (R3), and at read committed read-from
// edges are the only edges. The subgraph of an acyclic graph is acyclic,
// its order a topological order renumbered densely. Everything else a
// close derives is recomputed from what stays: chosen from the held
// sources, the initial values taken from the held closes' initial reads.
func (f *fast) compactInPlace(at []int, k int) bool {
	if f.lv != history.ReadCommitted || f.trouble || f.batch || len(f.chain) > 0 || len(f.pending) > 0 || len(f.writersOf) > 0 {
		return false
	}
	if f.rank != nil {
		// Built from a witness (F3): its unknowns the witness left out
		// are not nodes, which a rebuild from the held transactions
		// would make nodes again. Compacting would keep the witness's
		// choice past the witness (docs/SEMANTICS.md §5 "A graph built
		// from a witness is rebuilt at a pass"): the pass rebuilds.
		return false
	}
	n := len(f.ord)
	for i := range min(n, len(at)) {
		if f.appendsOf(i) != nil || f.lreadsOf(i) != nil {
			return false
		}
	}
	if n > len(at) {
		return false // a node the engine does not hold: not ours to renumber
	}
	keepList := func(l []int32) []int32 {
		out := l[:0]
		for _, x := range l {
			if y := at[x]; y >= 0 {
				out = append(out, int32(y))
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	// The engine holds k; the fast path's arrays cover the first n of
	// the engine's old indices (an unchecked writer given after its last
	// node is no node), the first k of the new ones.
	k = 0
	for i := range n {
		if at[i] >= 0 {
			k = at[i] + 1
		}
	}
	// Each session's last held node, and each held node's held
	// predecessor in its session, from the old links.
	oldPrev := slices.Clone(f.prev[:n])
	for s, last := range f.sessLast {
		f.sessLast[s] = lastHeld(last, oldPrev, at)
	}
	// The sessions with a held node keep a number, renumbered in their
	// order; the others leave (a rebuild knew only the held ones, and
	// a stream of short sessions would otherwise keep one entry per
	// session it ever saw).
	renum := make([]int32, len(f.sessLast))
	kept := 0
	for s, last := range f.sessLast {
		renum[s] = -1
		if last >= 0 {
			renum[s] = int32(kept)
			f.sessLast[kept] = last
			kept++
		}
	}
	f.sessLast = f.sessLast[:kept]
	for name, s := range f.sessions {
		if renum[s] < 0 {
			delete(f.sessions, name)
		} else {
			f.sessions[name] = renum[s]
		}
	}
	// The held nodes, by their old index, in the order ord gives them.
	held := make([]int32, 0, k)
	for i := range n {
		if at[i] >= 0 && f.node[i] {
			held = append(held, int32(i))
		}
	}
	slices.SortFunc(held, func(a, b int32) int { return int(f.ord[a]) - int(f.ord[b]) })
	rank := make([]int32, n)
	for r, i := range held {
		rank[i] = int32(r)
	}
	for i := range n {
		j := at[i]
		if j < 0 {
			continue
		}
		f.ord[j] = rank[i]
		f.nl(int(j)).out, f.nl(int(j)).in = keepList(f.nl(int(i)).out), keepList(f.nl(int(i)).in)
		f.nl(int(j)).finals, f.nl(int(j)).reads = f.nl(int(i)).finals, f.nl(int(i)).reads
		f.node[j], f.usable[j] = f.node[i], f.usable[i]
		so := f.sessOf[i]
		if so >= 0 {
			so = renum[so]
		}
		f.sessOf[j], f.pos[j], f.prev[j] = so, f.pos[i], lastHeld(oldPrev[i], oldPrev, at)
		f.nl(int(j)).clock, f.nl(int(j)).succ, f.closed[j] = f.nl(int(i)).clock, f.nl(int(i)).succ, f.closed[i]
		f.nl(int(j)).srcs, f.nl(int(j)).froms, f.nl(int(j)).initReads = keepList(f.nl(int(i)).srcs), f.nl(int(i)).froms, f.nl(int(i)).initReads
		if j < len(f.appends) {
			f.appends[j], f.lreads[j] = nil, nil
		}
	}
	// Unordered (not a node) entries carry -1, as grow fills them.
	for j := range k {
		if !f.node[j] {
			f.ord[j] = -1
		}
	}
	for _, s := range []func(){
		func() { clear(f.ord[k:]); f.ord = f.ord[:k] },
		func() { f.truncLists(k) },
		func() { f.node = f.node[:k] },
		func() { f.usable = f.usable[:k] },
		func() { f.chosen = f.chosen[:k]; clear(f.chosen) },
		func() { f.sessOf = f.sessOf[:k] },
		func() { f.pos = f.pos[:k] },
		func() { f.prev = f.prev[:k] },
		func() { f.closed = f.closed[:k] },
		func() { clear(f.appends[min(k, len(f.appends)):]); f.appends = f.appends[:min(k, len(f.appends))] },
		func() { clear(f.lreads[min(k, len(f.lreads)):]); f.lreads = f.lreads[:min(k, len(f.lreads))] },
		func() { f.mark = f.mark[:k]; clear(f.mark) },
	} {
		s()
	}
	f.epoch = 0
	// The held nodes' orders are 0..len(held)-1, in their old order.
	f.nextOrd = int32(len(held))
	f.rank = nil
	// chosen and the initial values, from the held closes.
	for j := range k {
		for _, s := range f.nl(int(j)).srcs {
			f.chosen[s] = true
		}
	}
	if f.opts.InitialState == history.InitialUnknown {
		clear(f.initVal)
		for j := range k {
			for _, r := range f.nl(int(j)).initReads {
				f.initVal[r.k] = r
			}
		}
	}
	// Writers: the held ones, in release order. A key's window of
	// integer values is emptied, its held single writers moved to vals
	// as when the window moves on (slot): a window held a slot per value
	// since it opened, and the early values a held reader of the
	// initial state wrote would keep every key's window as long as the
	// stream; it opens again at the next value written.
	multi := f.valsMulti
	f.valsMulti = nil
	for r, x := range f.vals {
		if x >= 0 {
			if y := at[x]; y >= 0 {
				f.vals[r] = int32(y)
			} else {
				delete(f.vals, r)
			}
			continue
		}
		ws := keepList(multi[-x-1])
		switch len(ws) {
		case 0:
			delete(f.vals, r)
		case 1:
			f.vals[r] = ws[0]
		default:
			f.vals[r] = -int32(len(f.valsMulti)) - 1
			f.valsMulti = append(f.valsMulti, ws)
		}
	}
	for key := range f.dense {
		d := &f.dense[key]
		for j, x := range d.slots {
			switch {
			case x >= 0 && at[x] >= 0:
				v := d.base + int64(j)
				f.vals[kv{k: int32(key), n: v}] = int32(at[x])
				d.spill(v)
			case x == slotMap:
				// vals holds its writers (remapped above); the range
				// says so already.
			}
		}
		d.slots = d.slots[:0]
	}
	for r, ws := range f.taint {
		for j := range ws {
			ws[j].t = int32(at[ws[j].t]) // outside the instance: never retired
		}
		f.taint[r] = ws
	}
	return true
}

// lastHeld is the new index of the last held node at or before last in
// its session (-1: none), by the old prev links.
func lastHeld(last int32, prev []int32, at []int) int32 {
	for last >= 0 {
		if at[last] >= 0 {
			return int32(at[last])
		}
		last = prev[last]
	}
	return -1
}
