package oracle

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Adya's repeatable read (PL-2.99) and PL-2+ (consistent view), each from
// its definition in Adya's thesis (§4.1, §4.2, §3.1.3-§3.1.4), by
// enumeration over weak.go's worlds (a subset of unknown writers taken as
// committed, a read-from choice per read); nothing here follows the
// checker's encoding or its lazy clauses.
//
// For each key, every permutation of its taken writers after the initial
// version is a version order. The direct serialization graph has, as the
// thesis defines them on items:
//
//   - ww  Ti -> Tj: Tj installs the version right after Ti's;
//   - wr  Ti -> Tj: Tj reads Ti's version;
//   - rw  Ti -> Tj: Ti reads a version (or the initial one) and Tj
//     installs the next one, i ≠ j.
//
// repeatable-read holds when some choice leaves the graph without a cycle
// (G0, G1c and G2-item all being cycles; without predicate reads every
// anti-dependency is an item one). pl-2+ holds when some choice leaves
// ww ∪ wr acyclic (no G0, G1c) and no cycle with exactly one rw edge
// (G-single): for no rw edge a -> b is a reachable from b by ww and wr.
// G1a and G1b are ruled out by the read-from choice itself, as at
// read-committed: a read's candidates are committed final writes.

// isPL reports whether the level is one this file defines.
func isPL(l history.Level) bool {
	return l == history.RepeatableRead || l == history.PL2Plus
}

// adyaDSG decides the chosen read-from at repeatable-read or pl-2+; the
// witness is a topological order of the graph the level keeps acyclic.
// Keys are given their version orders one at a time; each key's ww and
// rw edges are final once its order is chosen and the level's condition
// is monotone in the edges (a cycle, or an rw edge with a path back,
// stays), so a prefix of keys that already violates is not extended.
func (w *weakWorld) adyaDSG() ([]int, bool) {
	n := len(w.cand)
	var d, rw dsg // d: ww ∪ wr; rw: anti-dependencies
	for ci := range w.cand {
		if !w.taken[ci] {
			continue
		}
		for _, s := range w.rf[ci] {
			if s >= 0 {
				d[s] |= 1 << ci
			}
		}
	}
	// A list key's version order is already chosen (weak_lists.go):
	// its ww and rw edges are drawn once, the register keys' orders
	// are enumerated below.
	for _, x := range w.listKeys() {
		w.orderEdges(x, w.vo[x], &d, &rw)
	}
	keys := w.registerKeys()
	var rec func(ki int, d, rw dsg) ([]int, bool)
	rec = func(ki int, d, rw dsg) ([]int, bool) {
		if !w.admits(n, &d, &rw) {
			return nil, false
		}
		if ki == len(keys) {
			all := d
			if w.opts.Level == history.RepeatableRead {
				for v := range n {
					all[v] |= rw[v]
				}
			}
			var edges [][2]int
			for v := range n {
				for u := range n {
					if all[v]&(1<<u) != 0 {
						edges = append(edges, [2]int{v, u})
					}
				}
			}
			return topoOrder(n, w.taken, edges)
		}
		x := keys[ki]
		var writers []int
		for ci, c := range w.cand {
			if _, ok := c.writes[x]; ok && w.taken[ci] {
				writers = append(writers, ci)
			}
		}
		var found []int
		ok := permuteWeak(writers, func(p []int) bool {
			d2, rw2 := d, rw
			w.orderEdges(x, p, &d2, &rw2)
			var ok bool
			found, ok = rec(ki+1, d2, rw2)
			return ok
		})
		return found, ok
	}
	return rec(0, d, rw)
}

// dsg is an adjacency matrix over the candidates (at most MaxTxns).
type dsg [MaxTxns]uint16

// admits reports whether the edges so far are allowed at the level:
// repeatable-read, no cycle in ww ∪ wr ∪ rw; pl-2+, no cycle in ww ∪ wr
// and no rw edge a -> b with a reachable from b by ww ∪ wr.
func (w *weakWorld) admits(n int, d, rw *dsg) bool {
	g := *d
	if w.opts.Level == history.RepeatableRead {
		for v := range n {
			g[v] |= rw[v]
		}
	}
	reach := closure(n, g)
	for v := range n {
		if reach[v]&(1<<v) != 0 {
			return false // a cycle: G0, G1c (or G2-item at repeatable-read)
		}
	}
	if w.opts.Level == history.PL2Plus {
		for a := range n {
			for b := range n {
				if rw[a]&(1<<b) != 0 && reach[b]&(1<<a) != 0 {
					return false // G-single
				}
			}
		}
	}
	return true
}

// closure is the transitive closure of g (Warshall on bit rows).
func closure(n int, g dsg) dsg {
	for k := range n {
		for v := range n {
			if g[v]&(1<<k) != 0 {
				g[v] |= g[k]
			}
		}
	}
	return g
}

// orderEdges adds the ww and rw edges of key x under version order p
// (its writers, first to last).
func (w *weakWorld) orderEdges(x history.Key, p []int, d, rw *dsg) {
	// ww: each version to the next (Adya's direct edges).
	for i := 0; i+1 < len(p); i++ {
		d[p[i]] |= 1 << p[i+1]
	}
	// rw: a reader of a version (or of the initial one) to the
	// installer of the next version, itself excluded.
	for ci := range w.cand {
		if !w.taken[ci] {
			continue
		}
		for ri, s := range w.rf[ci] {
			if w.cand[ci].reads[ri].key != x {
				continue
			}
			nx := 0
			if s >= 0 {
				nx = slices.Index(p, s) + 1
			}
			if nx < len(p) && p[nx] != ci {
				rw[ci] |= 1 << p[nx]
			}
		}
	}
}
