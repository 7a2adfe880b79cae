package online

import "slices"

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
	over := s.o.log.len() >= b.At+b.Wait
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
	for i := range st.Backoff {
		if !st.Member.get(i) || st.GhostKeys[i] != nil {
			delete(st.Backoff, i)
		}
	}
}
