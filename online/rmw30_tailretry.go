package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// A tail ghost's fold is asked again only once something that could
// decide it arrived (docs/SEMANTICS.md §5 "A tail ghost's retry waits
// for its key", issue 22).
//
// foldTails runs at every eviction pass of a step, and a step repeats
// its passes while one evicts. A tail ghost whose fold of list key k
// failed in one pass was asked listPrefix's whole question again in the
// next: on read-modify-write streams with 2% unknown outcomes most tail
// ghosts wait behind an unknown appender in doubt for its whole horizon,
// and those retries, each a scan of k's appenders, were a tenth of
// `run`'s CPU. Within a step the answer can only change when k's part of
// the instance does: an accessor of k leaves, becomes a ghost, folds k or
// has a read of k replaced (everything else the question asks is about
// the instance's completions, which evicting keeps, restricted to what
// stays). keyGen counts those changes per interned key; tailGen holds,
// per (tail ghost, key) whose retry failed, keyGen plus one at the
// failure. Skipping a retry never lets anything leave: at worst a fold
// waits for the next step, which asks again.

// tailRetrySkip turns the skip on (tests turn it off to compare).
var tailRetrySkip = true

// tailRetryCount (tests) is told, at each tail retry foldTails considers,
// whether it was skipped.
var tailRetryCount func(skipped bool)

// keyChanged notes that interned key k's part of the instance changed
// (an accessor left, became a ghost, folded k, or lost a read of k).
func (s *evictStep) keyChanged(k int32) {
	if k < 0 {
		return
	}
	if s.keyGen == nil {
		s.keyGen = make([]uint32, len(s.p.Keys()))
	}
	if int(k) < len(s.keyGen) {
		s.keyGen[k]++
	}
}

// keysChanged is keyChanged for every key of position t's ops in the
// instance.
func (s *evictStep) keysChanged(t int32) {
	for _, k := range s.opKeys[t] {
		s.keyChanged(k)
	}
}

// keyNameChanged is keyChanged by name.
func (s *evictStep) keyNameChanged(key history.Key) {
	if k, ok := s.p.KeyIndex()[key]; ok {
		s.keyChanged(k)
	}
}

// tailRetryWaits reports whether tail ghost t's fold of k failed earlier
// in this step and k has not changed since.
func (s *evictStep) tailRetryWaits(t, k int32) bool {
	if !tailRetrySkip || s.tailGen == nil {
		return false
	}
	g, ok := s.tailGen[[2]int32{t, k}]
	return ok && g == s.gen(k)+1
}

// tailRetryFailed records that tail ghost t's fold of k failed now.
func (s *evictStep) tailRetryFailed(t, k int32) {
	if s.tailGen == nil {
		s.tailGen = map[[2]int32]uint32{}
	}
	s.tailGen[[2]int32{t, k}] = s.gen(k) + 1
}

// gen is k's change count this step.
func (s *evictStep) gen(k int32) uint32 {
	if int(k) < len(s.keyGen) {
		return s.keyGen[k]
	}
	return 0
}

// Across steps, a tail ghost whose retry failed waits as a member whose
// R2 probe came back undecided does (evict_backoff.go, "The probe
// back-off"): an entry in evictState.Backoff, marked as a tail ghost's
// (Other = tailBackoffOther), which a snapshot and a rewind point carry.
// It ends when an instance transaction released after it began touches
// one of the ghost's tail keys (a read of the key is what orders its
// appenders), or when its wait (doubled at each failed retry, capped)
// has passed: an order may also come through other keys, and the wait
// bounds how long a fold so decided is put off. Not retrying only keeps
// a tail ghost: the instance is the same as with the retry failed.

// tailBackoffOther marks a tail ghost's back-off in evictState.Backoff.
const tailBackoffOther = -2

// tailBackoff turns the cross-step wait on (tests turn it off).
var tailBackoff = true

// tailBackedOff reports whether tail ghost t waits: backed off at an
// earlier step, its wait not passed, and no instance transaction
// released since touches one of its tail keys.
func (s *evictStep) tailBackedOff(t int32) bool {
	if !tailBackoff {
		return false
	}
	st, r := s.st, s.r
	i := r.pos[t]
	b, held := st.Backoff[i]
	n := s.o.log.len()
	if !held || b.Other != tailBackoffOther || b.At >= n || n >= b.At+b.Wait {
		return false
	}
	tail := st.Tail[i]
	for _, k := range s.opKeys[t] {
		if int(k) >= len(s.accessors) || !tailHas(tail, s.p.Keys()[k]) {
			continue
		}
		if slices.ContainsFunc(s.accessors[k], func(a int32) bool { return r.pos[a] >= b.At }) {
			return false
		}
	}
	return true
}

// tailBackOff starts or renews tail ghost t's wait after a failed retry,
// with budget to spare (a retry that failed for want of budget says
// nothing of the next), once per step.
func (s *evictStep) tailBackOff(t int32) {
	if !tailBackoff || s.pr.budget <= 0 {
		return
	}
	st := s.st
	i := s.r.pos[t]
	n := s.o.log.len()
	w := backoffFirst
	if b, held := st.Backoff[i]; held && b.Other == tailBackoffOther {
		if b.At == n {
			return
		}
		w = min(2*b.Wait, backoffMax)
	}
	if st.Backoff == nil {
		st.Backoff = map[int]probeBackoff{}
	}
	st.Backoff[i] = probeBackoff{At: n, Wait: w, Other: tailBackoffOther}
}
