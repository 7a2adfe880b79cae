package online

import (
	"fmt"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/solver"
)

// The irrelevance rule's graph H, read from the solver once per step
// (docs/SEMANTICS.md §5 "H read once, filtered per round").
//
// fixIrrelevant drops the orientations whose edges close a cycle of H
// and recomputes H until none does: about half of the steps on
// read-modify-write streams take a second round. Each round read every
// node's fixed and literal edges from the solver and every open member's
// reads again, though nothing the rounds do changes the solver (no
// clause, no edge, no solve between them) or the instance: only the map
// chosen shrinks. So the graph is split once per call:
//
//   - H1, what does not depend on chosen: fixed edges, the edges on no
//     variable chosen held at the first round, and the edges to and from
//     the node that stands for the future;
//   - H2, the literal edges on a variable chosen held at the first round,
//     each with what decides it besides chosen (whether its literals are
//     fixed false, and whether it runs against the level's own order).
//
// A round's H is H1 plus the edges of H2 that componentsUnder's test
// keeps under the round's chosen. chosen only loses entries between
// rounds (never gains one), so an edge on no variable of the first
// round's chosen is on none of any later one, and its test, which reads
// chosen only through its variables, gives the first round's answer.
// The strongly connected components of a graph do not depend on the
// order of its adjacency lists, so the partition is componentsUnder's
// (numbers may differ; cyclic compares numbers of one numbering only).

// hEdge is an edge of H2: from -> to on literals a (and b when two),
// okA and okB whether each may hold by what the solver fixed, against
// whether it runs against the level's order (dropped unless on a chosen
// literal).
type hEdge struct {
	from, to int32
	a, b     solver.Lit
	two      bool
	okA, okB bool
	against  bool
}

// hScratch holds the split graph of one fixIrrelevant call, its arrays
// reused from one step to the next (nothing in them outlives a call).
type hScratch struct {
	fixed [][]int32 // H1, per node (the future node last)
	vary  []hEdge   // H2
	adj   [][]int32 // a round's H: H1's lists, copied where H2 adds
	built bool
}

// hReuse turns the cache off (tests: the naive round that reads the
// solver again, as componentsUnder does).
var hReuse = true

// hRounds counts the rounds answered from the split graph (a test says
// with it that its streams had second rounds).
var hRounds atomic.Int64

// reset empties the split graph for a new call.
func (hs *hScratch) reset() { hs.built = false }

// split reads H1 and H2 from the solver and the instance: one pass, as
// one componentsUnder round made.
func (o *Online) split(hs *hScratch, r *reduced, chosen map[solver.Var]solver.Lit) {
	p, e := r.p, r.e
	s := e.Solver()
	n := s.NumNodes()
	future := int32(n)
	for len(hs.fixed) < n+1 {
		hs.fixed = append(hs.fixed, nil)
	}
	hs.fixed = hs.fixed[:n+1]
	for u := range hs.fixed {
		hs.fixed[u] = hs.fixed[u][:0]
	}
	hs.vary = hs.vary[:0]
	mayHold := func(q solver.Lit) bool {
		v, fixed := s.Fixed(q)
		return !fixed || v
	}
	var buf []solver.Node
	for u := 0; u < n; u++ {
		from := e.NodeTxn()[u]
		buf = s.FixedEdges(solver.Node(u), true, buf[:0])
		for _, m := range buf {
			hs.fixed[u] = append(hs.fixed[u], int32(m))
		}
		s.IncidentEdges(solver.Node(u), func(other solver.Node, out bool, a, b solver.Lit, two bool) {
			if !out {
				return
			}
			against := false
			if to := e.NodeTxn()[other]; from >= 0 && to >= 0 && (p.Before(to, from) || o.anchoredBefore(r, to, from)) {
				against = true
			}
			ed := hEdge{from: int32(u), to: int32(other), a: a, b: b, two: two, okA: mayHold(a), okB: !two || mayHold(b), against: against}
			_, on := chosen[a.Var()]
			if two {
				_, onB := chosen[b.Var()]
				on = on || onB
			}
			if on {
				hs.vary = append(hs.vary, ed)
				return
			}
			// On no chosen variable, now or in a later round.
			if ed.okA && ed.okB && !ed.against {
				hs.fixed[u] = append(hs.fixed[u], int32(other))
			}
		})
	}
	o.addFutureEdges(hs.fixed, r, future) // evict.go
	hs.built = true
}

// componentsRound is componentsUnder for one round of fixIrrelevant:
// the same partition, from the split graph (built at the call's first
// round).
func (o *Online) componentsRound(hs *hScratch, r *reduced, chosen map[solver.Var]solver.Lit) []int32 {
	if !hReuse {
		return o.componentsUnder(r, chosen)
	}
	if !hs.built {
		o.split(hs, r, chosen)
	} else {
		hRounds.Add(1)
	}
	n := len(hs.fixed)
	for len(hs.adj) < n {
		hs.adj = append(hs.adj, nil)
	}
	adj := hs.adj[:n]
	// A round's lists are H1's, capped: an edge of H2 appended to one
	// copies that list into a new array, so H1 is never written and no
	// round copies the whole graph (a burst's instance is the stream).
	for u := range adj {
		f := hs.fixed[u]
		adj[u] = f[:len(f):len(f)]
	}
	possible := func(q solver.Lit, ok bool) bool {
		if c, in := chosen[q.Var()]; in {
			return q == c
		}
		return ok
	}
	for _, ed := range hs.vary {
		if !possible(ed.a, ed.okA) || (ed.two && !possible(ed.b, ed.okB)) {
			continue
		}
		_, on := chosen[ed.a.Var()]
		if ed.two {
			_, onB := chosen[ed.b.Var()]
			on = on || onB
		}
		if !on && ed.against {
			continue
		}
		adj[ed.from] = append(adj[ed.from], ed.to)
	}
	comp := o.ev.scc.components(adj)
	if selfCheck.Load() {
		// The partition must be the one a fresh read of H gives.
		mine := append([]int32(nil), comp...)
		fresh := o.componentsUnder(r, chosen)
		if err := samePartition(mine, fresh); err != nil {
			panic("engine self-check: the irrelevance rule's H from the split graph: " + err.Error())
		}
		return fresh
	}
	return comp
}

// samePartition reports whether two numberings of the same nodes number
// the same classes.
func samePartition(a, b []int32) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d nodes, fresh %d", len(a), len(b))
	}
	ab, ba := map[int32]int32{}, map[int32]int32{}
	for i := range a {
		if x, ok := ab[a[i]]; ok && x != b[i] {
			return fmt.Errorf("node %d: component %d holds fresh components %d and %d", i, a[i], x, b[i])
		}
		if y, ok := ba[b[i]]; ok && y != a[i] {
			return fmt.Errorf("node %d: fresh component %d holds components %d and %d", i, b[i], y, a[i])
		}
		ab[a[i]], ba[b[i]] = b[i], a[i]
	}
	return nil
}
