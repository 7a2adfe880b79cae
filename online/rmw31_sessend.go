package online

import (
	"math"

	"github.com/streamcheck/streamcheck/history"
)

// An unknown that commits ends with its session (docs/SEMANTICS.md §5
// "An unknown decided committed ends at its anchor's end").
//
// An unknown U closed by its session (evict_unknown.go) stayed in the
// window for its whole in-doubt horizon, and its anchor K with it, even
// once U was decided committed: on rmw100k nearly every unknown (1,009 of
// 1,022 at 100K transactions), their anchors, and the list folds behind
// their appends pinned most of the window. When U is decided committed,
// the session edge U -> K holds in every completion, and K is committed
// and time-closed, so every transaction still to come follows U. The
// engine's instance then gives U the end of K (its real-time successors
// are then those of K, each already after U through U -> K), marks it
// committed, and treats it as time-closed: R1 takes it, R3 counts it
// closed, its reads stay, and K is no anchor. The alert path is not
// touched: it keeps U's own end and drops U's reads until U time-closes
// (O2); a violation that rests on U's reads is held (solveHeld) or, once
// U has left, waits for U's horizon (waitsOnGone), as for every unknown
// closed by its session.

// sessEndRule switches the rule (tests break it on purpose to see a
// history fail).
var sessEndRule = true

// sessEndMut breaks one part of the rule (mutation checks, by hand): 1
// leaves the instance's copy of U with its own end and status (U and K
// still leave), 2 takes U for committed without the decision, 3 skips
// the rebuild after a restore (sessEndsBuilt). 0: none.
var sessEndMut = 0

// sessEnd is what markInDoubt found of an unknown's session: k, a later
// member of it that commits, and k's end. Both are facts of the released
// bodies, which never change; what may change (k time-closed, k
// quarantined, U decided committed) is asked at every use (sessEnded).
type sessEnd struct {
	k   int
	end int64
}

// sessEnded: released member i is an unknown decided committed (in the
// state as it stands) whose session has a later member k that commits,
// is time-closed and not quarantined; it returns k's end, which the
// instance gives i. Never in solveHeld's build (doubt.off), whose
// weaker instance only decides whether a step waits.
func (o *Online) sessEnded(i int) (int64, bool) {
	d := &o.doubt
	if !sessEndRule || d.off || len(d.ends) == 0 {
		return 0, false
	}
	e, ok := d.ends[i]
	if !ok || !o.closed.get(e.k) || o.quar.get(e.k) {
		return 0, false
	}
	if c, dec := o.ev.Decided[i]; (!dec || !c) && sessEndMut != 2 {
		return 0, false
	}
	if o.tiedNow(i) { // lead34_sesstie.go
		return 0, false
	}
	return e.end, true
}

// noteSessEnd records anchor j of unknown i once i is decided committed.
func (o *Online) noteSessEnd(i, j int) {
	if !sessEndRule {
		return
	}
	if c, dec := o.ev.Decided[i]; (!dec || !c) && sessEndMut != 2 {
		return
	}
	d := &o.doubt
	if d.ends == nil {
		d.ends = map[int]sessEnd{}
	}
	d.ends[i] = sessEnd{k: j, end: o.log.at(j).End}
}

// sessEndsBuilt finds, once in an engine's life, the session ends of the
// unknowns already in the instance and decided committed: an engine
// restored from a snapshot (which does not hold doubtState) may have one
// whose k has left the window, and markInDoubt finds k among the
// window's members only. It walks the released transactions after each
// such unknown to the first later member of its session that commits
// and is time-closed, as markInDoubt would have; only unknowns still in
// doubt qualify, so the walk is at most the in-doubt horizon of stream
// for each.
func (o *Online) sessEndsBuilt() {
	d := &o.doubt
	if d.endsBuilt || !sessEndRule {
		return
	}
	d.endsBuilt = true
	if sessEndMut == 3 {
		return
	}
	for i, c := range o.ev.Decided {
		if !c || !o.ev.Member.get(i) || o.closed.get(i) || o.quar.get(i) {
			continue
		}
		if _, ok := d.ends[i]; ok {
			continue
		}
		u, err := o.body(i)
		if err != nil || u.Status != history.Unknown || !u.HasSession || !u.HasTime {
			continue
		}
		for j := i + 1; j < o.log.len(); j++ {
			if !o.closed.get(j) || o.quar.get(j) {
				continue
			}
			k, err := o.body(j)
			if err != nil {
				break
			}
			if k.HasSession && k.Session == u.Session && k.HasTime && k.Start > u.Start && k.Status == history.Committed {
				if d.ends == nil {
					d.ends = map[int]sessEnd{}
				}
				d.ends[i] = sessEnd{k: j, end: k.End}
				break
			}
		}
	}
}

// pruneSessEnds drops the entries of unknowns that are no member of the
// state nor of any rewind point: the only way back into the instance is
// a replay that admits them again with their session, and markInDoubt
// then finds k among the members as the first time (k, an anchor, stays
// while they are in doubt).
func (o *Online) pruneSessEnds() {
	d := &o.doubt
	if len(d.ends) <= 256+2*len(o.ev.members) {
		return
	}
	for i := range d.ends {
		if o.ev.Member.get(i) {
			continue
		}
		keep := false
		for _, p := range o.rewinds {
			if p.st == nil || i < p.st.member.len() && p.st.member.get(i) {
				keep = true
				break
			}
		}
		if !keep {
			delete(d.ends, i)
		}
	}
}

// sessEndOf sets, in an instance's copy t of released member i, the end
// and commit sessEnded gives it.
func (o *Online) sessEndOf(i int, t *history.Txn) {
	if end, ok := o.sessEnded(i); ok && sessEndMut != 1 {
		t.End, t.Status = end, history.Committed
	}
}

// instanceEnd is released transaction i's effective end in the instance
// (t its body): its session's end when sessEnded, else its own. The
// cover (evict_cover.go) and the bypass (evict_bypass.go) reason about
// the instance's real time, so they take it too.
func (o *Online) instanceEnd(i int, t *history.Txn) int64 {
	if t.Status == history.Unknown {
		if end, ok := o.sessEnded(i); ok {
			return end
		}
	}
	if !t.HasTime {
		return math.MaxInt64
	}
	return o.opts.EffectiveEnd(t)
}

// sessEndTrace, when set (tests), is told of each window member that
// ends with its session at a step.
var sessEndTrace func(i int)

// noteEnded lists window member i, not time-closed, among the step's
// members that end with their session (markInDoubt).
func (o *Online) noteEnded(i int) {
	o.doubt.ended = append(o.doubt.ended, i)
	if sessEndTrace != nil {
		sessEndTrace(i)
	}
}

// ended is sessEnded's answer alone.
func (o *Online) ended(i int) bool {
	_, ok := o.sessEnded(i)
	return ok
}
