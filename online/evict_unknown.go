package online

import (
	"context"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// Unknown outcomes in doubt, closed by their session (docs/SEMANTICS.md
// §5 "Unknown outcomes: closed by the session").
//
// An unknown transaction U stays time-open for the whole in-doubt
// horizon (its end is End+D), and while it was open R3 kept every closed
// transaction sharing a key with it: on read-modify-write streams with a
// few percent of client timeouts that was nearly the whole window. At a
// level with session order and real time, U precedes every later member
// of its session whenever it commits (the session edge is guarded by
// U's commit only), so once a later member K of U's session is committed
// and time-closed, every transaction still to come follows K in real
// time and so follows U in every completion in which U commits; in the
// others U constrains nothing. Such a U is *closed by its session*:
//
//   - its reads enter the reduced instance (windowOps): the writers they
//     may read from in a completion that commits U are all released;
//   - R3 no longer counts it as an open neighbour (closedFor);
//   - K, its anchor, stays in the instance while U is in doubt, so that
//     U -> K -> (every later transaction) stays in the instance's order
//     (R3: K's session predecessor is open);
//   - U itself stays until it is time-closed (R1 is unchanged).
//
// Alerts are unchanged: the alert path (projectAlert) still drops the
// reads of every transaction that is not time-closed, so a violation that
// needs U's reads is held (solveHeld) until U closes, without eviction,
// and is then alerted as before.

// doubtState is the step's set of unknown members closed by their
// session, derived from the window at every build (not in a snapshot).
type doubtState struct {
	// closedBy maps the released index of each unknown member closed by
	// its session to its anchor's; anchor is the set of anchors.
	closedBy map[int]int
	anchor   map[int]bool
	// off leaves their reads out of the instance: solveHeld's second
	// build.
	off bool
	// held are closedBy's unknowns when solveHeld last built without
	// their reads (that build clears closedBy): waitsOnGone's.
	held []int
	// ends are the session ends of unknowns decided committed, by
	// released index (rmw31_sessend.go): facts of the bodies, kept across
	// steps and rewinds (not in a snapshot: sessEndsBuilt finds them
	// again); ended are the step's members sessEnded holds for that are
	// not time-closed, solveHeld's too.
	ends      map[int]sessEnd
	endsBuilt bool
	ended     []int
	// tied are the unknown members that share their session and start
	// with a member ranked after them (markTies, lead34_sesstie.go):
	// sessEnded leaves them their own end. tiesBuilt: tied is this
	// build's.
	tied      map[int]bool
	tiesBuilt bool
}

// markInDoubt computes the step's unknowns closed by their session among
// the window's members (released indexes, in release order; ghosts are
// never in doubt and anchor nothing).
func (o *Online) markInDoubt(members []int) {
	d := &o.doubt
	clear(d.closedBy)
	clear(d.anchor)
	d.ended = d.ended[:0]
	d.tiesBuilt = false // lead34_sesstie.go: asked again this build
	lv := o.opts.Level
	if d.off || !lv.SessionOrder() || !lv.RealTime() {
		return
	}
	o.sessEndsBuilt()       // rmw31_sessend.go
	defer o.pruneSessEnds() // rmw31_sessend.go
	any := false
	for _, i := range members {
		if o.inDoubtCandidate(i) {
			any = true
			break
		}
	}
	if !any {
		return
	}
	// A session's window members in release order (start order).
	sessions := map[string][]int{}
	for _, i := range members {
		if o.ev.GhostKeys[i] != nil || o.quar.get(i) {
			continue
		}
		t := o.log.at(i)
		if t.HasSession && t.HasTime {
			sessions[t.Session] = append(sessions[t.Session], i)
		}
	}
	if d.closedBy == nil {
		d.closedBy, d.anchor = map[int]int{}, map[int]bool{}
	}
	for _, ms := range sessions {
		for a, i := range ms {
			if !o.inDoubtCandidate(i) {
				continue
			}
			if _, ok := o.sessEnded(i); ok {
				// Decided committed, its session closed: it ends with
				// its session and needs no anchor (rmw31_sessend.go).
				o.noteEnded(i)
				continue
			}
			u := o.log.at(i)
			// The first later member that commits and is time-closed:
			// session order is start order (prepare's rankSessions), and
			// a later member of the session follows U whether or not
			// those between commit (the session's point chain).
			for _, j := range ms[a+1:] {
				k := o.log.at(j)
				if k.Start > u.Start && k.Status == history.Committed && o.closed.get(j) {
					if o.noteSessEnd(i, j); o.ended(i) { // rmw31_sessend.go
						o.noteEnded(i)
						break
					}
					d.closedBy[i] = j
					d.anchor[j] = true
					break
				}
			}
		}
	}
	// Every member, ghosts too: their bodies hold reads the instance
	// dropped.
	o.markUnobservable(o.ev.memberList()) // evict_unknown_void.go
}

// inDoubtCandidate: released member i is an unknown transaction that is
// not time-closed, in the window with its body.
func (o *Online) inDoubtCandidate(i int) bool {
	if o.closed.get(i) || o.quar.get(i) || o.ev.GhostKeys[i] != nil {
		return false
	}
	t := o.log.at(i)
	return t.Status == history.Unknown && t.HasSession && t.HasTime
}

// closedBySession reports whether released member i is an unknown in
// doubt closed by its session at this step.
func (o *Online) closedBySession(i int) bool {
	_, ok := o.doubt.closedBy[i]
	return ok || o.ended(i)
}

// solveHeld is called on an unsatisfiable instance. If the instance holds
// the reads of unknowns closed by their session, the violation may rest
// on them, and the alert path (which drops the reads of every transaction
// not time-closed) would not confirm it: the instance is built again
// without them and solved. Satisfiable, the step is held: it returns the
// new instance with held set, and the caller evicts nothing this step
// (the violation is alerted once those unknowns time-close and their
// reads count for the alert path too). Otherwise it returns the instance
// to go on with and its status.
func (o *Online) solveHeld(ctx context.Context, r *reduced, st solver.Status) (*reduced, solver.Status, bool) {
	o.doubt.held = o.doubt.held[:0]
	if st != solver.Unsat || len(o.doubt.closedBy) == 0 && len(o.doubt.ended) == 0 {
		return r, st, false
	}
	for u := range o.doubt.closedBy {
		o.doubt.held = append(o.doubt.held, u)
	}
	// The unknowns that end with their session (rmw31_sessend.go), whose
	// reads the alert path drops too until they time-close.
	o.doubt.held = append(o.doubt.held, o.doubt.ended...)
	o.drop(r)
	o.doubt.off = true
	r = o.build()
	o.doubt.off = false
	o.checks++
	st = r.solve(ctx)
	o.conflicts += r.e.Solver().Stats().Conflicts
	if st == solver.Sat {
		o.held++
		return r, st, true
	}
	return r, st, false
}

// anchorOf is the position of the anchor of position a, an unknown
// member closed by its session at this step, or -1.
func (s *evictStep) anchorOf(a int32) int32 {
	if i := s.r.pos[a]; i >= 0 {
		if k, ok := s.o.doubt.closedBy[i]; ok {
			if at, in := s.r.at[k]; in {
				return at
			}
		}
	}
	return -1
}

// succBound bounds the starts r5Remove visits for the real-time
// successors b of an evicted t that pred a needs kept orders to (a -> t
// -> b, b not after a in real time). For an unknown a in doubt that is
// the rest of the window (its end is e + D): each eviction behind it
// kept an order from it to every later member, which was most of a
// step's CPU at the default horizon and grew with the stream. When a is
// closed by its session, every b that follows a's anchor K in real time
// needs none: a -> K -> b is in the instance in every completion that
// commits a (the session edge; K stays while a is in doubt), and in the
// others a has no outgoing edge (anchorBefore).
func (s *evictStep) succBound(a int32) int64 {
	hi := earliestStartAfter(s.p, a)
	if k := s.anchorOf(a); k >= 0 {
		hi = min(hi, earliestStartAfter(s.p, k))
	}
	return hi
}

// anchorBefore: a is an unknown closed by its session whose anchor
// precedes b in real time, so a -> b needs no kept order (succBound).
func (s *evictStep) anchorBefore(a, b int32) bool {
	k := s.anchorOf(a)
	return k >= 0 && s.p.RealTimeBefore(k, b)
}

// behindAnchor: u is an unknown in doubt closed by its session whose
// anchor precedes t (session or real time), so an edge between u and t
// is decided for R2 without a probe (docs/SEMANTICS.md §5 "Edges behind
// an anchor"): in every completion that commits u, u -> K -> t, so an
// edge u -> t holds or not alongside that path and t -> u holds in
// none; in every other u has no edge (I1). Without it each such edge
// pinned t for the unknown's whole horizon (r2-edge): its literal is
// free in the completions that do not commit u, so no probe decides it.
// The path outlives t: K stays while u is in doubt, and R5 keeps K's
// orders to t's successors when t leaves.
func (s *evictStep) behindAnchor(u, t int32) bool {
	return s.o.behindAnchor(s.r, u, t)
}

// behindAnchor is evictStep.behindAnchor on an instance r (tests ask it
// outside a step).
func (o *Online) behindAnchor(r *reduced, u, t int32) bool {
	return r.h.Txns[u].Status == history.Unknown && o.anchoredBefore(r, u, t)
}

// undecidedAgainst: w, an unknown member writer that t overtakes, has
// a commit still open at level 0, and neither real time nor w's anchor
// orders it before or after the live version prev. R4 then keeps t
// without probing the order of w and prev: a probe has a model in which
// w does not commit, and comes back undecided (docs/SEMANTICS.md §5
// "Edges behind an anchor"); at 64K transactions of a read-modify-write
// stream those probes were 1,401 of a step's 8 x 256 and all came back
// undecided.
func (s *evictStep) undecidedAgainst(w, prev int32) bool {
	if s.r.h.Txns[w].Status != history.Unknown {
		return false
	}
	if _, fixed := fixedLit(s.e.Solver(), s.e.Act()[w]); fixed {
		return false
	}
	return !s.p.Before(prev, w) && !s.o.behindAnchor(s.r, w, prev)
}
