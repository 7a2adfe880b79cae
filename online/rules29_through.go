package online

// Orders out of an unknown past its horizon (docs/SEMANTICS.md §5
// "Orders out of an unknown past its horizon").
//
// An unknown u whose in-doubt horizon has ended (time-closed) and whose
// commit is still open precedes, in every completion that commits it,
// each later member t of its session (the session edge, guarded by u's
// commit). When t leaves, as a skeleton (r5Remove) or a ghost
// (becomeGhost), an order u -> t -> b through t's real-time successors b
// was held by nobody: real time does not give u -> b (u's effective end
// is e + D, after t's end), u's anchor is gone (u is no longer in
// doubt), and neither a skeleton nor a ghost with keys no member touches
// is in the next instance unless a kept order names it. A read of u's
// value arriving later then found no cycle that check finds (a lost
// alert: TestOrdersOutOfAClosedUnknown). The orders are now kept out of
// u as R5 keeps them out of a predecessor, guarded by u's commit
// (incremental/encode.go, keptGuard): u -> b for each fixed or kept
// successor of t that leaves, and for each real-time successor of t in
// the window that real time does not put after u (keepAfter). A
// transaction still to come starts after the watermark, which is past
// u's effective end plus 2Δ: it follows u in real time.

// throughClosedUnknowns switches the rule (tests break it on purpose to
// see a history fail).
var throughClosedUnknowns = true

// closedOpenUnknown: u, an unknown before t, is time-closed, so the
// orders through t from it are kept as orders out of u
// (closedUnknownsBefore) rather than by a skeleton of t.
func (s *evictStep) closedOpenUnknown(u int32) bool {
	i := s.r.pos[u]
	return throughClosedUnknowns && i >= 0 && s.o.closed.get(i)
}

// closedUnknownsBefore appends to out every unknown u before t (p.Before:
// by session, or by real time), not removed, time-closed, whose commit
// commitOf leaves undecided: the unknowns whose orders through t are
// kept out of u when t leaves.
func (s *evictStep) closedUnknownsBefore(t int32, out []int32) []int32 {
	if !throughClosedUnknowns || len(s.to.unknown) == 0 {
		return out
	}
	if !closedUnknownsNaive {
		return s.closedUnknownsByIndex(t, out) // burst30_closed.go
	}
	p := s.p
	ix := s.unknownIndex()
	c := s.unknownCandidates(t, ix.buf[:0]) // burst_unknowns.go
	ix.buf = c
	for j, u := range c {
		if u == t || s.removed[u] || !p.Before(u, t) || !s.closedOpenUnknown(u) || containsBefore(c, j, u) {
			continue
		}
		if _, ok := s.commitOf(u); !ok {
			out = append(out, u)
		}
	}
	return out
}

// containsBefore: u is among c[:j].
func containsBefore(c []int32, j int, u int32) bool {
	for _, v := range c[:j] {
		if v == u {
			return true
		}
	}
	return false
}

// keepOutOfClosedUnknowns keeps, for a member t that becomes a ghost,
// the orders u -> b to t's real-time successors b for every closed
// unknown u before t whose commit is open (a ghost keeps its fixed
// edges as kept orders, which name it, so only real time is left).
func (s *evictStep) keepOutOfClosedUnknowns(t int32) {
	if !s.p.Opts().Level.RealTime() {
		return
	}
	var us []int32
	for _, u := range s.closedUnknownsBefore(t, us) {
		s.keepAfter(u, t) // evict_cover.go
	}
}
