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
// When: a build reads every present edge and ORs a row of up to
// closure's band per edge, about (edges + nodes)·reachIndexCost edge
// visits' worth of work. The snapshot is (re)built at a backward edge
// once the bounded searches since the last build have visited that many
// edges and the permanent graph has changed since: the builds never cost
// more than the searches they replace, so an instance whose searches are
// cheap (the serializable fast path, where V1 decided most pairs before
// they were drawn) builds nothing, and one where they are not (the
// snapshot-isolation levels without timestamps) rebuilds as the misses
// of a stale snapshot accumulate. Solve frees the snapshot (search never
// asks it; it is a few hundred bytes per node).
type reachIndex struct {
	idx   *closure.Static
	nodes int // nodes when idx was built: later ids are not in it
	perm  int // permanent edge count at the last build
	work  int // edge visits of bounded searches since the last build
	// eager builds at every backward edge the permanent graph changed
	// before (tests: it reaches the index on tiny instances).
	eager bool
}

// reachIndexCost is the work of a build per edge and node, in edge
// visits of the bounded search: a row OR is a few words of sequential
// memory, a visit a random access.
const reachIndexCost = 8

// permanent is the number of permanent edges at level 0: base edges and
// every present literal edge (at level 0 all of them are level-0 facts).
// It sizes a build and tells whether the graph changed since the last
// one; bridges and Compact's rewrites may make it drift, which only moves
// a build.
func (t *theory) permanent() int { return t.nBase + len(t.active) }

// permanentReaches reports a path x ~> y over permanent edges proven by
// the snapshot, (re)building it first when the searches since the last
// build have paid for one. The caller is at level 0. False means "not
// proven".
func (t *theory) permanentReaches(x, y Node) bool {
	ri := &t.rix
	if perm := t.permanent(); perm != ri.perm || ri.idx == nil {
		if ri.eager || ri.work >= (perm+len(t.ord))*reachIndexCost {
			t.buildReachIndex(perm)
		}
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
	ri.work = 0
	t.rixBuilds++
}

// dropReachIndex forgets the snapshot; the next build waits for the
// searches to pay for it again.
func (t *theory) dropReachIndex() {
	ri := &t.rix
	ri.idx = nil
	ri.work = 0
}
