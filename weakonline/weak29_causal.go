package weakonline

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Causal retirement of the fast path's graph (docs/SEMANTICS.md §5
// "The causal graph lets its settled past go (issue 26)"). A pass puts
// into the retired set R the nodes that are committed, closed, settled
// (no open ancestor: their pasts are final), released at least margin
// nodes before the last one, whose every final write was overwritten by
// a node released at least margin nodes before the last one, whose
// every in-neighbour is in R, and whose every closed reader is settled.
// A retired node keeps its index, order, session position and writes'
// entries (keyWriters, vals); its edges, reads, sources and (once no
// live node computes its clock from it) its clock leave the heap. The
// argument: no edge enters R from outside it, then or later (edge fails
// on one: trouble, F2), so no cycle touches R and the graph without R
// is acyclic exactly when the whole one is; a read that would take a
// retired source is trouble too (its clock may be gone).

// noteWrite records, at causal, that node i wrote key k (a final
// write): the key's previous last writer has one write fewer still
// current, and when it has none left, i is what overwrote it last.
func (f *fast) noteWrite(kw *keyWriters, i int32) {
	if len(kw.log) == 0 {
		return
	}
	p := kw.log[len(kw.log)-1].t
	if p == i || int(p) >= len(f.left) {
		return
	}
	if f.left[p]--; f.left[p] == 0 {
		f.over[p] = i
	}
}

// retireCausal runs one pass with the nodes released at or after lo
// held whatever they are. It does nothing when the graph is in trouble,
// has list ops, or is mid-rebuild.
func (f *fast) retireCausal(lo int32, txns []history.Txn) (retired int) {
	if f.lv != history.Causal || f.trouble || f.sawList || f.batch {
		return 0
	}
	if f.retired == nil {
		f.retired = make([]bool, len(f.node), cap(f.node))
	}
	// The live nodes in topological order: every in-neighbour of a node
	// is decided before it (in-lists hold live nodes only).
	live := f.live[:0]
	for _, n := range f.live {
		if !f.retired[n] {
			live = append(live, n)
		}
	}
	f.live = live
	byOrd := slices.Clone(live)
	slices.SortFunc(byOrd, func(a, b int32) int { return int(f.ord[a]) - int(f.ord[b]) })
	f.epoch++
	if f.epoch == 0 {
		clear(f.mark)
		f.epoch = 1
	}
	settled := f.epoch
	for _, n := range byOrd {
		if !f.closed[n] {
			continue
		}
		ok := true
		for _, p := range f.nl(int(n)).in {
			if !f.retired[p] && f.mark[p] != settled {
				ok = false
				break
			}
		}
		if ok {
			f.mark[n] = settled
		}
	}
	var fresh []int32
next:
	for _, n := range byOrd {
		if f.mark[n] != settled || n >= lo || f.over[n] < 0 || f.over[n] >= lo || txns[n].Status != history.Committed {
			continue
		}
		for _, p := range f.nl(int(n)).in {
			if !f.retired[p] {
				continue next // R is closed under in-neighbours
			}
		}
		for _, s := range f.nl(int(n)).succ {
			if f.closed[s] && f.mark[s] != settled {
				continue next // a reader whose past may still grow
			}
		}
		f.retired[n] = true
		fresh = append(fresh, n)
	}
	// The live nodes' in-lists lose the retired ones (an edge out of R is
	// in no cycle); the retired nodes' lists leave.
	for _, r := range fresh {
		for _, v := range f.nl(int(r)).out {
			if !f.retired[v] {
				f.nl(int(v)).in = slices.DeleteFunc(f.nl(int(v)).in, func(u int32) bool { return u == r })
			}
		}
	}
	// Each (key, session) list of writers keeps its first entry and its
	// live ones: a search of it (lastIn) that found a retired writer
	// now finds that first one, retired too and at or before the same
	// position, and a retired writer only ever stands for "some writer
	// in the past" (a read of the initial state after it: trouble) or
	// gives an edge out of R, which edge drops.
	for _, r := range fresh {
		s := f.sessOf[r]
		for _, w := range f.nl(int(r)).finals {
			kw := f.keyWriters(w.k)
			if kw == nil {
				continue
			}
			j := kw.find(s)
			if j < 0 || len(kw.lists[j]) < 2 || kw.lists[j][1].t != r && !f.retired[kw.lists[j][1].t] {
				continue // nothing to drop (or dropped already)
			}
			l := kw.lists[j]
			k := 1
			for k < len(l) && f.retired[l[k].t] {
				k++ // the retired ones are a prefix (session order)
			}
			// A new array: the old one's dropped entries are the
			// memory this is for.
			nl := make([]posTxn, 1, 1+len(l)-k+firstWriters/2)
			nl[0] = l[0]
			kw.lists[j] = append(nl, l[k:]...)
		}
	}
	for _, r := range fresh {
		l := f.nl(int(r))
		*l = nodeLists{clock: l.clock, succ: l.succ}
		f.kept = append(f.kept, r)
	}
	// A retired node's clock stays while a live node computes its own
	// from it (its session successor, a reader) or one may (the last of
	// its session).
	kept := f.kept[:0]
	for _, r := range f.kept {
		need := f.sessLast[f.sessOf[r]] == r
		for _, s := range f.nl(int(r)).succ {
			if !f.retired[s] {
				need = true
				break
			}
		}
		if need {
			kept = append(kept, r)
			continue
		}
		l := f.nl(int(r))
		l.clock, l.succ = nil, nil
		f.listsGone(r)
	}
	f.kept = kept
	f.nRetired += len(fresh)
	// The live list without them: its length spaces the passes.
	live = f.live[:0]
	for _, n := range f.live {
		if !f.retired[n] {
			live = append(live, n)
		}
	}
	f.live = live
	return len(fresh)
}

// isRetired reports whether node n is in R.
func (f *fast) isRetired(n int32) bool { return f.retired != nil && f.retired[n] }

// whyRetiredRead is the trouble of a read whose source was retired.
const whyRetiredRead = "a read from a retired writer"

// maybeRetireCausal runs a causal pass after a step the fast path
// vouched for, when as many nodes as it held live were released since
// the last one (O(1) per transaction amortized).
func (e *Engine) maybeRetireCausal() {
	f := e.fast
	if f == nil || f.trouble || e.deferred || e.undecided || len(e.txns) < e.nextRetire {
		return
	}
	lo := int32(len(f.node) - e.causalMargin)
	if lo > 0 {
		e.causalRetired += f.retireCausal(lo, e.txns)
	}
	e.nextRetire = len(e.txns) + max(e.retireMin, len(f.live))
}
