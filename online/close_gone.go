package online

import (
	"context"
	"strings"

	"github.com/streamcheck/streamcheck/incremental"
)

// Transactions that leave the index open (docs/SEMANTICS.md §5 "Close
// reaches a transaction that left open").
//
// stub takes an evicted transaction's ID out of the index, which Close
// looks IDs up in. Most members leave time-closed, but a voided unknown
// (evict_unknown_void.go: decided not to commit, for instance by its own
// reads) and an aborted member leave at once, open. Without an entry
// their Close found nothing, the closed flag stayed false for good, and
// the alert path, which drops the reads of every transaction that is not
// time-closed (O2), could confirm no violation resting on such a
// transaction's reads until the end of input: on a stream that does not
// end, never. openGone keeps those IDs until their Close, so it holds at
// most the transactions evicted while open, each until its horizon.

// keepGone notes that released transaction i, with id, left the index;
// if it is open its Close must still find it.
func (o *Online) keepGone(id string, i int) {
	if o.closed.get(i) {
		return
	}
	if o.openGone == nil {
		o.openGone = map[string]int{}
	}
	// A copy: the log's ID may share a decoder's larger buffer.
	o.openGone[strings.Clone(id)] = i
}

// closeGone resolves a Close of an ID the index no longer holds.
func (o *Online) closeGone(id string) (int, bool) {
	i, ok := o.openGone[id]
	if ok {
		delete(o.openGone, id)
	}
	return i, ok
}

// restoreGone rebuilds openGone after a restore: every released
// transaction that is open, not a member, and whose ID the index does not
// hold. (A snapshot's index names in-memory transactions only, and a
// restore's spilled bodies never enter it.) The scan asks two flags of
// each position and reads the ID of the open ones only.
func (o *Online) restoreGone() {
	o.openGone = nil
	for i := range o.log.len() {
		if o.closed.get(i) || o.ev.Member.get(i) || o.gone(i) {
			continue
		}
		id, ok := o.idAt(i)
		if !ok {
			continue
		}
		if j, indexed := o.index[id]; indexed && j >= i {
			continue
		}
		o.keepGone(id, i)
	}
}

// idAt is released transaction i's ID: from the log when its chunk is in
// memory (a body or a stub), else from its spilled body.
func (o *Online) idAt(i int) (string, bool) {
	if o.log.inMemory(i) {
		return o.log.at(i).ID, true
	}
	t, err := o.spill.get(i)
	if err != nil {
		return "", false
	}
	return t.ID, true
}

// waitsOnGone tells a disagreement that is no bug from one that is: the
// reduced instance found a violation the bodies, with the reads of open
// transactions dropped (O2), do not prove. The instance takes the reads
// of an unknown closed by its session while it is still in doubt, and
// what they decide outlives the step: a commit decision (an unknown
// decided not to commit leaves open, voided), a kept order between
// members, a fixed initial value. A violation may rest on such a fact,
// which the alert path can confirm only once the unknown time-closes
// (§5 "A decision that rests on the reads of an unknown in doubt"). If
// the bodies prove a violation with the reads of those unknowns and of
// every transaction that left open kept, the alert waits for their
// horizon: the caller rebuilds the instance from the bodies, which drops
// the facts, and the held build then holds the steps until they close.
// Otherwise it is a disagreement. The check runs only on this path,
// which a valid stream never takes.
func (o *Online) waitsOnGone(ctx context.Context) (bool, error) {
	var open []int
	for _, i := range o.openGone {
		open = append(open, i)
	}
	for _, i := range o.doubt.held {
		if !o.closed.get(i) {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return false, nil
	}
	for _, i := range open {
		o.closed.set(i, true)
	}
	h, _, err := o.alertHistory()
	for _, i := range open {
		o.closed.set(i, false)
	}
	if err != nil || len(h.Txns) == 0 {
		return false, err
	}
	res, err := incremental.Check(ctx, h, o.opts, incremental.Config{})
	if err != nil {
		return false, err
	}
	return res.Verdict == incremental.Invalid, nil
}
