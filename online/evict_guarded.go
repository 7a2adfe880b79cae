package online

import (
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// Reads guarded by their reader's commit (docs/SEMANTICS.md §5 "Reads
// guarded by their reader's commit").
//
// An unknown transaction u whose commit no completion fixes stays in
// the window past its in-doubt horizon: nothing to come need decide it
// (an append on a list nobody reads, a write on a key nobody
// overwrites). Its read of a version with one candidate has the
// read-from literal u's own commit: it holds in every completion that
// commits u, and in every other there is no read. R4 asked every read
// of the version a writer t overwrites to be decided, and such a read
// never is: t stayed, then every later writer of the key, for good
// (r4-version-order, most of the mixed stream's window at a 1 s
// horizon).
//
// Such a read is now replaced like a decided one (the source before u,
// u before every writer that follows the source), and the orders out of
// u that the engine keeps are encoded as edges guarded by u's commit
// (incremental/encode.go, keptGuard): in every completion that commits
// u they are exactly the edges the read implied, in every other u has
// no outgoing edge (I1), as without the read.

// guardedReads switches the rule (tests break it on purpose to see a
// history fail).
var guardedReads = true

// guardedRead: rf, the read-from literal of u's read ri of from's
// version of register key k, is u's commit literal, and that commit is
// open: u is an unknown transaction, the read has that one candidate
// (an unguarded register read's literal is then its reader's commit,
// incremental/encode.go chooseOne), and no level-0 unit fixes it.
//
// Of the initial version (from < 0) under an unknown initial state, the
// read also names k's initial value when u commits, and the replacement
// forgets it. That is safe when every read of the initial version of k
// in the instance names the same value (initialAgrees): the reads to
// come follow the writer that overwrites it (R3) and read it in no
// completion, so only the instance's own reads could contradict it.
func (s *evictStep) guardedRead(u, ri int32, rf incremental.Lit, k, from int32) bool {
	rv := &s.e.Reads()[ri]
	if s.r.h.Txns[u].Status != history.Unknown || s.r.pos[u] < 0 || s.p.Txns()[u].Dropped() {
		return false
	}
	act := s.e.Act()[u]
	if rf != act || len(s.e.Cands(rv)) != 1 {
		return false
	}
	rd := &s.p.Txns()[u].Reads()[rv.Read()]
	if rd.IsList() {
		return false
	}
	if _, fixed := fixedLit(s.e.Solver(), act); fixed {
		return false
	}
	return from >= 0 || s.o.opts.InitialState != history.InitialUnknown || s.initialAgrees(k, rd.Val())
}

// initialAgrees: every register read of k's initial version in the
// instance (a read with the initial version as a candidate) reads v.
func (s *evictStep) initialAgrees(k int32, v history.Value) bool {
	e, p := s.e, s.p
	for _, ri := range s.readsOfVersion(k, -1) {
		rv := &e.Reads()[ri]
		rd := &p.Txns()[rv.Txn()].Reads()[rv.Read()]
		if rd.IsList() || rd.Val() != v {
			return false
		}
	}
	return true
}

// guardedEdge: an edge between u and another member, on the one literal
// a, holds exactly when u commits (a is u's commit literal), and u is an
// unknown whose commit is open. R2 counts it as decided: in every
// completion that commits u it holds, in every other u has no outgoing
// edge and an edge into u lies on no cycle (I1); R5 keeps it through the
// member that leaves (guardedNeighbours).
func (s *evictStep) guardedEdge(u int32, a solver.Lit, two bool) bool {
	if !guardedReads || two || u < 0 || s.r.h.Txns[u].Status != history.Unknown || s.r.pos[u] < 0 || s.p.Txns()[u].Dropped() {
		return false
	}
	act := s.e.Act()[u]
	if incremental.Lit(a) != act {
		return false
	}
	_, fixed := fixedLit(s.e.Solver(), act)
	return !fixed
}

// guardedNeighbours adds to R5's predecessors and successors of t the
// unknowns u with a guarded edge (guardedEdge) into or out of t: the
// orders kept through t are then a -> b for a and b among them too.
// Each holds in every completion that commits t, a and b (a -> t -> b),
// and is kept as an edge that holds if its first end commits (an
// unknown whose commit is open: incremental/encode.go, keptGuard); an
// order into an unknown that does not commit lies on no cycle.
func (s *evictStep) guardedNeighbours(t int32, preds, succs []int32) ([]int32, []int32) {
	n := s.e.Node()[t]
	if !guardedReads || n < 0 || len(s.to.unknown) == 0 {
		return preds, succs
	}
	s.e.Solver().IncidentEdges(n, func(other solver.Node, out bool, a, _ solver.Lit, two bool) {
		u := s.e.NodeTxn()[other]
		if u < 0 || !s.guardedEdge(u, a, two) {
			return
		}
		if out {
			succs = append(succs, u)
		} else {
			preds = append(preds, u)
		}
	})
	return preds, succs
}

// staleForUnknown switches the stale ghost for an overtaken unknown
// past its horizon (r4LiveVersion; docs/SEMANTICS.md §5 "Reads guarded
// by their reader's commit"): tests break it on purpose.
var staleForUnknown = true

// staleInitial switches G5 (docs/SEMANTICS.md §5 "Reads guarded by
// their reader's commit"): a writer that overwrites the initial version
// of k while a read of it is not decided leaves all the same, and the
// first ghost after the initial version keeps its version of k while
// such a read stays. Tests break it on purpose.
var staleInitial = true

// firstAfterInitial: ghost g, k's live version, is the only ghost that
// holds k, and a read of k's initial version in the instance is not
// decided at level 0 (its reader is not removed). Then g keeps its
// version of k when a writer overwrites it (G5): g is the first
// writer of k after the initial version in the instance, and the
// anti-dependency from such a reader, if it read the initial version,
// runs to g; with g gone it would run to the next writer, and the
// orders out of g that the reader also precedes would be lost.
func (s *evictStep) firstAfterInitial(k, g int32) bool {
	if !s.initialGhostIs(k, g) {
		return false
	}
	for _, ri := range s.readsOfVersion(k, -1) {
		if s.initialReadOpen(ri) {
			return true
		}
	}
	return false
}

// initialGhostIs reports whether the stale-initial rule applies to k at
// g: it is on, and k's only ghost is g's member in this step.
func (s *evictStep) initialGhostIs(k, g int32) bool {
	if !staleInitial {
		return false
	}
	hs := s.st.gx.byKey[s.p.Keys()[k]]
	if len(hs) != 1 {
		return false
	}
	at, in := s.r.at[hs[0].g]
	return in && at == g
}

// initialReadOpen reports whether read ri, of a member still here, may
// still read the initial version: one of its initial-version choices is
// not fixed at level 0.
func (s *evictStep) initialReadOpen(ri int32) bool {
	e := s.e
	rv := &e.Reads()[ri]
	if s.removed[rv.Txn()] {
		return false
	}
	for ci, c := range e.Cands(rv) {
		if c != -1 {
			continue
		}
		if _, fixed := fixedLit(e.Solver(), e.Rfs(rv)[ci]); !fixed {
			return true
		}
	}
	return false
}
