package oracle

import (
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// The weak levels, each from its own definition (docs/SEMANTICS.md §1
// "The weaker levels"), by enumeration: nothing here follows the
// checkers' saturation algorithms.
//
//   - read-committed (Adya PL-2): for some choice of read-from (a read
//     sees a committed transaction's final write of its value, or the
//     initial state) and some version order of every key (a permutation of
//     its committed writers after the initial version), the graph of ww
//     (version order) and wr edges has no cycle.
//   - read-atomic, causal (Biswas & Enea's axioms): for some choice of
//     read-from and some permutation co of the committed transactions that
//     contains session order and read-from, every t3 that reads x from t2,
//     and every t1 ≠ t2 that writes x and precedes t3 by session order or
//     read-from (read atomic) or by their transitive closure (causal),
//     t1 comes before t2 in co; the initial state comes before all.
//
// Both quantify, as the serial-order oracle does, over the subsets of
// unknown writing transactions taken as committed; a read after its own
// transaction's write of the key must return that write (it has no
// read-from). List keys (weak_lists.go, docs/SEMANTICS.md §1 "Lists at
// the weak levels") add a version order per key, enumerated too: a list
// read shows a prefix of it and reads from the last appender it shows.

// isWeak reports whether the level is one this file defines.
func isWeak(l history.Level) bool {
	return l == history.ReadCommitted || l == history.ReadAtomic || l == history.Causal || isPL(l) // weak_pl.go
}

type wRead struct {
	key  history.Key
	val  history.Value
	srcs []int // candidate indices into cand; -1 the initial state
	// list is set for a read of a list key: the list as read without
	// the reader's own appends so far (its source is fixed by the key's
	// version order, weak_lists.go, not chosen from srcs).
	list   []history.Value
	isList bool
}

type wTxn struct {
	idx    int
	writes map[history.Key]history.Value // final write per register key
	// apps are the transaction's appends per list key, in op order: its
	// version of the key adds them all (only the final state of a
	// transaction is visible to others).
	apps  map[history.Key][]history.Value
	reads []wRead // external reads
	bad   bool    // an internal read disagrees
}

// writesKey reports whether the candidate writes (or appends to) x.
func (c *wTxn) writesKey(x history.Key) bool {
	if _, ok := c.writes[x]; ok {
		return true
	}
	_, ok := c.apps[x]
	return ok
}

func checkWeakLevel(h *history.History, opts history.Options) (bool, []string, error) {
	lists := h.ListKeys()
	rank := sessionRanks(h)
	var cand []wTxn
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status == history.Committed || (t.Status == history.Unknown && t.Writes()) {
			cand = append(cand, wTxn{idx: i})
		}
	}
	if len(cand) > MaxTxns {
		return false, nil, fmt.Errorf("%w: %d candidate transactions (max %d)", ErrTooLarge, len(cand), MaxTxns)
	}
	for ci := range cand {
		c := &cand[ci]
		t := &h.Txns[c.idx]
		c.writes = map[history.Key]history.Value{}
		c.apps = map[history.Key][]history.Value{}
		own := map[history.Key]history.Value{}
		for _, op := range t.Ops {
			switch {
			case op.Kind == history.Append:
				c.apps[op.Key] = append(c.apps[op.Key], op.Value)
			case op.Kind == history.Read && lists[op.Key]:
				// The list as read ends with the reader's own appends
				// so far; what comes before them is the version read.
				read, mine := readsList(op), c.apps[op.Key]
				if len(read) < len(mine) || !slices.Equal(read[len(read)-len(mine):], mine) {
					c.bad = true
					continue
				}
				c.reads = append(c.reads, wRead{key: op.Key, list: read[:len(read)-len(mine)], isList: true})
			case op.Kind == history.Write:
				own[op.Key] = op.Value
				c.writes[op.Key] = op.Value
			case op.Kind == history.Read:
				if v, ok := own[op.Key]; ok {
					c.bad = c.bad || v != op.Value
					continue
				}
				c.reads = append(c.reads, wRead{key: op.Key, val: op.Value})
			}
		}
	}
	for ci := range cand {
		for ri := range cand[ci].reads {
			r := &cand[ci].reads[ri]
			if r.isList {
				continue // its source follows from the key's version order
			}
			if r.val == history.Null || opts.InitialState == history.InitialUnknown {
				r.srcs = append(r.srcs, -1)
			}
			for wi := range cand {
				if v, ok := cand[wi].writes[r.key]; ok && wi != ci && v == r.val {
					r.srcs = append(r.srcs, wi)
				}
			}
		}
	}
	var unknown []int
	for ci, c := range cand {
		if h.Txns[c.idx].Status == history.Unknown {
			unknown = append(unknown, ci)
		}
	}
	w := &weakWorld{h: h, opts: opts, rank: rank, cand: cand}
	for m := 0; m < 1<<len(unknown); m++ {
		w.taken = make([]bool, len(cand))
		for ci, c := range cand {
			w.taken[ci] = h.Txns[c.idx].Status == history.Committed
		}
		for j, ci := range unknown {
			if m&(1<<j) != 0 {
				w.taken[ci] = true
			}
		}
		if order, ok := w.run(); ok {
			ids := make([]string, len(order))
			for i, ci := range order {
				ids[i] = h.Txns[cand[ci].idx].ID
			}
			return true, ids, nil
		}
	}
	return false, nil, nil
}

// weakWorld is one subset of unknown transactions taken as committed.
type weakWorld struct {
	h     *history.History
	opts  history.Options
	rank  []int
	cand  []wTxn
	taken []bool
	// rf[ci][ri] is the chosen source of read ri of cand ci.
	rf [][]int
	// vo[k] is the version order of list key k (weak_lists.go): the
	// taken appenders, first to last.
	vo map[history.Key][]int
}

// run tries every read-from choice.
func (w *weakWorld) run() ([]int, bool) {
	for ci, c := range w.cand {
		if w.taken[ci] && c.bad {
			return nil, false
		}
	}
	w.rf = make([][]int, len(w.cand))
	for ci := range w.cand {
		w.rf[ci] = make([]int, len(w.cand[ci].reads))
	}
	return w.chooseLists(w.listKeys(), 0) // weak_lists.go, then chooseRF
}

func (w *weakWorld) chooseRF(ci, ri int) ([]int, bool) {
	if ci == len(w.cand) {
		return w.decide()
	}
	if !w.taken[ci] || ri == len(w.cand[ci].reads) {
		return w.chooseRF(ci+1, 0)
	}
	if w.cand[ci].reads[ri].isList {
		return w.chooseRF(ci, ri+1) // fixed by chooseLists
	}
	for _, s := range w.cand[ci].reads[ri].srcs {
		if s >= 0 && !w.taken[s] {
			continue
		}
		w.rf[ci][ri] = s
		if order, ok := w.chooseRF(ci, ri+1); ok {
			return order, true
		}
	}
	return nil, false
}

// decide checks the level's definition for the chosen read-from.
func (w *weakWorld) decide() ([]int, bool) {
	if w.opts.InitialState == history.InitialUnknown {
		// One initial value per key, the same for every read that sees it.
		init := map[history.Key]history.Value{}
		for ci := range w.cand {
			if !w.taken[ci] {
				continue
			}
			for ri, s := range w.rf[ci] {
				if s != -1 {
					continue
				}
				r := w.cand[ci].reads[ri]
				if r.isList {
					continue // one initial list per key: chooseLists
				}
				if v, ok := init[r.key]; ok && v != r.val {
					return nil, false
				}
				init[r.key] = r.val
			}
		}
	}
	if w.opts.Level == history.ReadCommitted {
		return w.adyaPL2()
	}
	if isPL(w.opts.Level) {
		return w.adyaDSG() // weak_pl.go
	}
	return w.axiomatic()
}

// adyaPL2: some version order of every key makes ww ∪ wr acyclic.
func (w *weakWorld) adyaPL2() ([]int, bool) {
	n := len(w.cand)
	var wr [][2]int
	for ci := range w.cand {
		if !w.taken[ci] {
			continue
		}
		for _, s := range w.rf[ci] {
			if s >= 0 {
				wr = append(wr, [2]int{s, ci})
			}
		}
	}
	// A list key's version order is already chosen (w.vo): its ww
	// edges are fixed; register keys' orders are enumerated.
	wr = append(wr, w.voEdges()...)
	keys := w.registerKeys()
	var edges [][2]int
	var rec func(ki int) ([]int, bool)
	rec = func(ki int) ([]int, bool) {
		if ki == len(keys) {
			return topoOrder(n, w.taken, append(slices.Clone(wr), edges...))
		}
		var writers []int
		for ci, c := range w.cand {
			if _, ok := c.writes[keys[ki]]; ok && w.taken[ci] {
				writers = append(writers, ci)
			}
		}
		var found []int
		ok := false
		permuteWeak(writers, func(p []int) bool {
			mark := len(edges)
			for i := range p {
				for j := i + 1; j < len(p); j++ {
					edges = append(edges, [2]int{p[i], p[j]})
				}
			}
			found, ok = rec(ki + 1)
			edges = edges[:mark]
			return ok
		})
		return found, ok
	}
	return rec(0)
}

// axiomatic: some permutation co ⊇ so ∪ wr satisfies the level's axiom.
func (w *weakWorld) axiomatic() ([]int, bool) {
	n := len(w.cand)
	// vis[a] has bit b when a precedes b by so ∪ wr, or (causal) its
	// transitive closure.
	vis := make([]uint, n)
	for a := range n {
		for b := range n {
			if w.taken[a] && w.taken[b] && mustPrecede(w.h, &w.opts, w.rank, w.cand[a].idx, w.cand[b].idx) {
				vis[a] |= 1 << b
			}
		}
	}
	for ci := range n {
		if !w.taken[ci] {
			continue
		}
		for _, s := range w.rf[ci] {
			if s >= 0 {
				vis[s] |= 1 << ci
			}
		}
	}
	direct := slices.Clone(vis)
	if w.opts.Level == history.Causal {
		for k := range n {
			for a := range n {
				if vis[a]&(1<<k) != 0 {
					vis[a] |= vis[k]
				}
			}
		}
	}
	var nodes []int
	for ci := range n {
		if w.taken[ci] {
			nodes = append(nodes, ci)
		}
	}
	// A list key's version order is co restricted to its appenders
	// (docs/SEMANTICS.md §1 "Lists at the weak levels"): an order
	// constraint, not visibility.
	vo := w.voEdges()
	var found []int
	ok := permuteWeak(nodes, func(co []int) bool {
		pos := make([]int, n)
		for i, c := range co {
			pos[c] = i
		}
		// so ∪ wr ⊆ co.
		for _, a := range co {
			for _, b := range co {
				if direct[a]&(1<<b) != 0 && pos[a] >= pos[b] {
					return false
				}
			}
		}
		for _, e := range vo {
			if pos[e[0]] >= pos[e[1]] {
				return false
			}
		}
		// The axiom, read literally.
		for _, t3 := range co {
			for ri, t2 := range w.rf[t3] {
				x := w.cand[t3].reads[ri].key
				for _, t1 := range co {
					if !w.cand[t1].writesKey(x) || t1 == t2 || vis[t1]&(1<<t3) == 0 {
						continue
					}
					if t2 == -1 || pos[t1] >= pos[t2] {
						return false
					}
				}
			}
		}
		found = slices.Clone(co)
		return true
	})
	return found, ok
}

// topoOrder returns a topological order of the taken nodes under edges,
// or false if they have a cycle.
func topoOrder(n int, taken []bool, edges [][2]int) ([]int, bool) {
	indeg := make([]int, n)
	for _, e := range edges {
		indeg[e[1]]++
	}
	var order []int
	done := make([]bool, n)
	for {
		progress := false
		for v := range n {
			if taken[v] && !done[v] && indeg[v] == 0 {
				done[v], progress = true, true
				order = append(order, v)
				for _, e := range edges {
					if e[0] == v {
						indeg[e[1]]--
					}
				}
			}
		}
		if !progress {
			break
		}
	}
	for v := range n {
		if taken[v] && !done[v] {
			return nil, false
		}
	}
	return order, true
}

// permuteWeak calls f on every permutation of xs until f returns true.
func permuteWeak(xs []int, f func([]int) bool) bool {
	p := slices.Clone(xs)
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == len(p) {
			return f(p)
		}
		for j := i; j < len(p); j++ {
			p[i], p[j] = p[j], p[i]
			if rec(i + 1) {
				return true
			}
			p[i], p[j] = p[j], p[i]
		}
		return false
	}
	return rec(0)
}
