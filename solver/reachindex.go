package solver

import "github.com/streamcheck/streamcheck/closure"

// The pruning index (doc.go, T5; docs/SEMANTICS.md §3, "P1: the
// solver's pruning index over permanent edges").
//
// addEdge prunes an edge whose reverse direction is already a path of
// permanent edges (base edges and edges present at level 0). The bounded
// search that decides it walks the order interval between the edge's
// ends; on checker instances without client time most backward edges do
// close such a cycle, and the walk to prove it visited hundreds of edges
// each (generated 10K at strong session SI: 145K proofs, 99M edge
// visits, 79% of the check). The index answers most of them at once from
// a snapshot of the permanent graph in closure.Static (Vbox's compact
// closure over a topological order).
//
// Soundness is all that pruning needs, and the snapshot gives it:
// permanent edges are never removed at level 0 (T2), so a path of the
// snapshot is a path of the current permanent graph. Edges added since
// the snapshot are not in it, so a "no" is only "not proven": the bounded
// search still runs then. RemoveNode and Compact (which may rewrite edges
// and recycle node ids) drop the snapshot; nodes created after it are not
// in it and get "not proven".
//
// Cost: a rebuild reads every present edge and costs O(n·W) words
// (closure.NewStatic); it happens when the permanent edges have doubled
// since the last one, so rebuilds cost at most twice the last one over an
// encoding. Solve drops the snapshot (search never asks it; it is a few
// hundred bytes per node), and the next rebuild again waits for a
// doubling, so incremental callers that alternate small additions and
// solves fall back to the bounded search as before.
type reachIndex struct {
	idx   *closure.Static
	nodes int // nodes when idx was built: later ids are not in it
	perm  int // permanent edge count at the last build (or drop)
	// min is the least permanent edge count worth an index
	// (reachIndexMin; tests lower it to reach the index on tiny
	// instances).
	min int
}

// reachIndexMin: below this many permanent edges the bounded search is
// cheap and an index is not worth its build.
const reachIndexMin = 4096

// permanent is the number of permanent edges at level 0: base edges and
// every present literal edge (at level 0 all of them are level-0 facts).
// It is a trigger for rebuilds, not an exact count: bridges and Compact's
// rewrites may make it drift, which only moves a rebuild.
func (t *theory) permanent() int { return t.nBase + len(t.active) }

// permanentReaches reports a path x ~> y over permanent edges proven by
// the snapshot, rebuilding it first when the permanent graph has doubled.
// The caller is at level 0. False means "not proven".
func (t *theory) permanentReaches(x, y Node) bool {
	ri := &t.rix
	min := ri.min
	if min == 0 {
		min = reachIndexMin
	}
	if perm := t.permanent(); perm >= min && perm >= 2*ri.perm {
		t.buildReachIndex(perm)
	}
	if ri.idx == nil || int(x) >= ri.nodes || int(y) >= ri.nodes {
		return false
	}
	if ri.idx.Reaches(int32(x), int32(y)) {
		t.rixHits++
		return true
	}
	return false
}

// buildReachIndex snapshots the present edges (all permanent: level 0).
func (t *theory) buildReachIndex(perm int) {
	ri := &t.rix
	edges := make([][2]int32, 0, perm)
	for u := range t.out {
		for _, e := range t.out[u] {
			edges = append(edges, [2]int32{int32(u), int32(t.edges[e].to)})
		}
	}
	// NewStatic returns nil on a cycle; at level 0 the present graph is
	// acyclic (T1) unless the solver is already inconsistent.
	ri.idx = closure.NewStatic(len(t.ord), edges)
	ri.nodes = len(t.ord)
	ri.perm = perm
}

// dropReachIndex forgets the snapshot. With rebuild, the next query may
// build a new one at once (node ids or edges changed under it); without,
// the next build waits for the permanent edges to double.
func (t *theory) dropReachIndex(rebuild bool) {
	ri := &t.rix
	ri.idx = nil
	if rebuild {
		ri.perm = 0
	}
}
