package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// The probe back-off (docs/SEMANTICS.md §5, "The probe back-off (issue
// 22)").
//
// R2 probes every constraint at a member; a constraint between closed
// members that no completion decides today (two blind writers of a key
// that no read has told apart yet, a read of a duplicate value with two
// closed sources) stays undecided until a transaction still to come
// touches that key. Probed again at every step, such members spent the
// step's whole budget (on read-modify-write streams with 2% unknown
// outcomes, 1,611 of 1,657 edge probes between closed committed members),
// and the members behind them, never probed, stayed for want of budget:
// the window grew with the stream. A member whose probe came back
// undecided is now judged on level-0 facts only (no probe) until a
// transaction released after that probe touches one of its keys, or a
// wait (doubled at each undecided probe, capped) has passed.
//
// Not probing only keeps a member longer: it never lets one leave, so the
// verdicts and alerts are those of the engine without the back-off. The
// back-off is part of the reduced instance's state (evictState.Backoff):
// a snapshot and a rewind point carry it, so a restored engine or a replay
// probes at the same steps as the engine it continues.

// probeBackoff is a member whose R2 probe came back undecided with budget
// to spare.
type probeBackoff struct {
	// At is the number of released transactions when the probe came
	// back undecided: a transaction at a later index that touches one
	// of the member's keys ends the back-off.
	At int
	// Wait is how many releases after At the back-off lasts at most.
	Wait int
	// Other is the released index of the other transaction of the
	// constraint left undecided (-1: none): the keys it shares with the
	// member are those whose arrivals end the back-off, and its leaving
	// the instance ends it too.
	Other int `json:",omitempty"`
}

// backoffFirst and backoffMax bound the wait: the first is about one
// step of run's cadence on a busy stream, the cap bounds how long a
// member whose constraint some other key's arrival decided stays without
// a probe (every order a probe could prove comes through some key, but not
// always one of the member's own).
const (
	backoffFirst = 256
	backoffMax   = 4096
)

// backedOffNow marks, in evictStep.backoffSeen, a member backed off at
// this step (still backed off for the rest of it).
const backedOffNow = -2

// r2Probed is R2 under the back-off: a member backed off is judged on
// what is decided at level 0 (no probe); otherwise R2 probes, and an
// answer left undecided with budget to spare backs the member off.
func (s *evictStep) r2Probed(t int32) (committed bool, ok bool) {
	st := s.st
	i := s.r.pos[t]
	b, held := st.Backoff[i]
	if held && !s.backoffOver(t, b) {
		s.pr.noProbe = true
		committed, ok = s.r2Decided(t)
		s.pr.noProbe = false
		if ok {
			delete(st.Backoff, i)
		} else if s.backoffSeen[t] != backedOffNow {
			// Backed off at an earlier step; one backed off at an
			// earlier pass of this step keeps the rule its probe
			// failed.
			s.pin(t, PinBackoff)
		}
		return committed, ok
	}
	committed, ok = s.r2Decided(t)
	switch {
	case ok:
		delete(st.Backoff, i)
	case s.pr.budget > 0:
		w := backoffFirst
		if held {
			w = min(2*b.Wait, backoffMax)
		}
		if st.Backoff == nil {
			st.Backoff = map[int]probeBackoff{}
		}
		other := -1
		if s.r2Other >= 0 {
			other = s.r.pos[s.r2Other]
		}
		st.Backoff[i] = probeBackoff{At: s.o.log.len(), Wait: w, Other: other}
		if s.backoffSeen == nil {
			s.backoffSeen = map[int32]int8{}
		}
		s.backoffSeen[t] = backedOffNow
	}
	return committed, ok
}

// backoffOver reports whether t's back-off has ended: its wait has passed,
// the other transaction of its undecided constraint left the instance, or
// an instance member released after the back-off began touches a key t
// shares with that transaction (all of t's keys when there is none): its
// arrival may decide what the probe could not. The answer is kept for the
// step: the released set does not change within it.
func (s *evictStep) backoffOver(t int32, b probeBackoff) bool {
	if v := s.backoffSeen[t]; v != 0 {
		return v > 0 // asked at an earlier pass, or backed off now
	}
	waited := s.o.log.len() >= b.At+b.Wait
	over := waited && !isolatedBackoff
	var u int32 = -1
	if !over && b.Other >= 0 {
		var in bool
		if u, in = s.r.at[b.Other]; !in {
			over = true
		}
	}
	for _, k := range s.opKeys[t] {
		if over {
			break
		}
		if int(k) >= len(s.accessors) || u >= 0 && !slices.Contains(s.opKeys[u], k) {
			continue
		}
		for _, a := range s.accessors[k] {
			if s.r.pos[a] >= b.At {
				over = true
				break
			}
		}
	}
	if !over && waited {
		// The wait has passed and no arrival ended the back-off: it
		// lasts on, up to backoffIsolated, for a member of an isolated
		// group, whose orders only arrivals on its keys or sessions can
		// decide (isolatedGroup).
		over = s.o.log.len() >= b.At+backoffIsolated || !s.isolatedGroup(t, b.At)
	}
	if s.backoffSeen == nil {
		s.backoffSeen = map[int32]int8{}
	}
	s.backoffSeen[t] = -1
	if over {
		s.backoffSeen[t] = 1
	}
	return over
}

// dropBackoffs forgets the back-off of every transaction no longer a
// window member with its body (evicted, a ghost, set aside).
func (st *evictState) dropBackoffs() {
	for i, b := range st.Backoff {
		if !st.Member.get(i) || st.GhostKeys[i] != nil && (b.Other != tailBackoffOther || st.Tail[i] == nil) {
			// A tail ghost's own back-off stays while it has a tail
			// (rmw30_tailretry.go).
			delete(st.Backoff, i)
		}
	}
}

// backOffList backs member t off after the list rule left one of its
// lists unfolded on a read, or a reader's commit, that is not decided
// (docs/SEMANTICS.md §5 "The list rule backs off too"): with budget to
// spare, t gets the back-off R2's undecided probe gives (held, b: the one
// it had), with no other transaction named, so that an arrival on any of
// its keys ends it. Until then foldLists and R2 judge t on what is
// decided without a probe.
func (s *evictStep) backOffList(t int32, held bool, b probeBackoff) {
	if s.pr.budget <= 0 {
		return // for want of budget: asked again at the next step
	}
	st := s.st
	i := s.r.pos[t]
	w := backoffFirst
	if held {
		w = min(2*b.Wait, backoffMax)
	}
	if st.Backoff == nil {
		st.Backoff = map[int]probeBackoff{}
	}
	st.Backoff[i] = probeBackoff{At: s.o.log.len(), Wait: w, Other: -1}
	if s.backoffSeen == nil {
		s.backoffSeen = map[int32]int8{}
	}
	s.backoffSeen[t] = backedOffNow
}

// isolatedBackoff turns the back-off of isolated groups on (tests turn it
// off to compare).
var isolatedBackoff = true

// backoffIsolated bounds the back-off of a member of an isolated group:
// the arrivals that end it are seen only at steps that ask about the
// member (one pinned by a pending alert is not asked), so a bound, long
// against backoffMax, remains.
const backoffIsolated = 1 << 16

// isolatedGroupMax bounds the group isolatedGroup walks.
const isolatedGroupMax = 16

// isolatedGroup reports whether t's key region in this step's instance (t
// and, closed transitively, every instance transaction that touches a
// key a member touches, open members with their whole bodies) is an
// isolated group (docs/SEMANTICS.md §5 "Isolated groups stay backed
// off"): at most isolatedGroupMax window members, none a ghost, each
// released before at (no arrival since touched its keys), time-closed
// and committed, kept by prepare, with no kept order at it, alone in its
// session when the level orders sessions, with a start before its end
// when the level has real time; the initial node, which touches every
// key, precedes each in real time and is not walked; and no unknown of
// the step is closed by its session. Then the choices among the group's
// members that some completion makes are those their own sub-instance
// allows, whatever the rest decides: every edge between the group and
// the rest is one of real time, so a cycle through the rest shortens to
// one in the rest alone (the argument is in §5). Only an arrival on the
// group's keys (which joins the group) or a change of the group can
// decide what a probe found undecided.
func (s *evictStep) isolatedGroup(t int32, at int) bool {
	_, ok := s.isolatedGroupOf(t, at, false)
	return ok
}

// isolatedGroupOf is isolatedGroup returning the group too (nil when it
// is not isolated). With inner, a kept order between two members of the
// group is allowed (parkIsolated: a fact of the group's own
// sub-instance, parked with it); a kept order with one end outside the
// group never is.
func (s *evictStep) isolatedGroupOf(t int32, at int, inner bool) ([]int32, bool) {
	r, p := s.r, s.p
	if len(s.o.doubt.closedBy) > 0 {
		return nil, false
	}
	opts := p.Opts()
	lv := opts.Level
	group := []int32{t}
	var inits []int32
	for q := 0; q < len(group); q++ {
		u := group[q]
		i := r.pos[u]
		tx := &r.h.Txns[u]
		if i < 0 || r.ghost[u] || i >= at || !s.o.closed.get(i) || tx.Status != history.Committed || p.Txns()[u].Dropped() {
			return nil, false
		}
		if (len(s.keptOut[u]) > 0 || len(s.keptIn[u]) > 0) && !inner {
			return nil, false
		}
		if lv.SessionOrder() {
			if ss := p.SessionOf()[u]; ss >= 0 && len(p.SessionMembers()[ss]) > 1 {
				return nil, false
			}
		}
		if lv.RealTime() && (!tx.HasTime || tx.Start >= tx.End) {
			// Real time is what ties the group to the rest: the
			// argument needs each member's interval to have a length.
			return nil, false
		}
		for _, k := range s.opKeys[u] {
			if int(k) >= len(s.accessors) {
				return nil, false
			}
			for _, a := range s.accessors[k] {
				if r.pos[a] < 0 {
					// The initial node: first in every completion, its
					// keys are every key; asked below to precede the
					// group in real time, and not walked.
					if !slices.Contains(inits, a) {
						inits = append(inits, a)
					}
					continue
				}
				if !slices.Contains(group, a) {
					if len(group) >= isolatedGroupMax {
						return nil, false
					}
					group = append(group, a)
				}
			}
		}
	}
	if len(inits) > 0 && !lv.RealTime() {
		return nil, false
	}
	for _, a := range inits {
		for _, g := range group {
			if !opts.Precedes(&r.h.Txns[a], &r.h.Txns[g]) {
				return nil, false
			}
		}
	}
	if inner {
		// A kept order at a member must have its other end in the
		// group too.
		for _, g := range group {
			for _, l := range [][]int32{s.keptOut[g], s.keptIn[g]} {
				for _, u := range l {
					if !slices.Contains(group, u) {
						return nil, false
					}
				}
			}
		}
	}
	return group, true
}
