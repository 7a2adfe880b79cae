package online

import (
	"github.com/streamcheck/streamcheck/history"
)

// Unknown outcomes nobody can observe, fixed not committed
// (docs/SEMANTICS.md §5 "Unknown outcomes: unobservable, fixed not
// committed").
//
// An unknown U closed by its session (evict_unknown.go) whose writes no
// read in the window reads, and whose every written key has a committed,
// time-closed writer W that U's anchor K precedes (K itself, a later
// member of the session, or one that K precedes in real time), is read
// by no completion of any extension of the stream: a read to come
// follows W in real time, and U -> K -> W puts U's version before W's.
// So every completion that commits U stays one without it, and "U does
// not commit" is fixed (an exchange argument, like the irrelevance
// rule's): it goes into Decided, a level-0 unit of every later instance.
// A member whose commit is decided false is then no node in any
// completion, and leaves as an aborted one does, time-closed or not
// (voided): on streams with client timeouts that is the unknowns that
// did not commit, and their anchors, which otherwise stayed for the
// whole in-doubt horizon.

// markUnobservable fixes "does not commit" for every unknown member
// closed by its session (o.doubt.closedBy, this step) that no read can
// observe. The result of one unknown does not depend on another's, so
// the map's order does not matter.
func (o *Online) markUnobservable(members []int) {
	d, st := &o.doubt, &o.ev
	var cands []int
	keys := map[history.Key]bool{}
	for u := range d.closedBy {
		if _, decided := st.Decided[u]; decided {
			continue
		}
		t := o.log.at(u)
		ok := t.Writes()
		for _, op := range t.Ops {
			if op.Kind == history.Append {
				// A list read shows every append before it: no writer
				// overwrites an append (list keys are evict_list.go's).
				// U's own list reads, as its register reads, are
				// guarded by its commit and vanish with it.
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		cands = append(cands, u)
		for _, op := range t.Ops {
			if op.Kind == history.Write {
				keys[op.Key] = true
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	// The reads of every member, open ones and ghosts included (their
	// bodies hold the reads the instance dropped), of the keys the
	// candidates write; and those keys' committed, time-closed writers.
	type keyVal struct {
		k history.Key
		v history.Value
	}
	read := map[keyVal]bool{}
	writers := map[history.Key][]int{}
	// Only the members with an op on those keys do anything below: the
	// index kept across steps names them (build22_keyidx.go).
	for _, i := range o.unobservableScope(members, keys) {
		t := o.log.at(i)
		writer := t.Status == history.Committed && o.closed.get(i) && !o.quar.get(i) && t.HasTime
		for _, op := range t.Ops {
			if !keys[op.Key] {
				continue
			}
			switch {
			case op.Kind == history.Read:
				read[keyVal{op.Key, op.Value}] = true
			case op.Kind == history.Write && writer:
				if ws := writers[op.Key]; len(ws) == 0 || ws[len(ws)-1] != i {
					writers[op.Key] = append(ws, i)
				}
			}
		}
	}
	for _, u := range cands {
		t := o.log.at(u)
		k := o.log.at(d.closedBy[u])
		observable := false
		for _, op := range t.Ops {
			if op.Kind != history.Write {
				continue
			}
			if read[keyVal{op.Key, op.Value}] {
				observable = true // a member reads one of U's values
				break
			}
			overwritten := false
			for _, w := range writers[op.Key] {
				if w != u && o.anchorPrecedes(k, o.log.at(w)) {
					overwritten = true
					break
				}
			}
			if !overwritten {
				observable = true // a read to come may see U's version
				break
			}
		}
		if !observable {
			st.Decided[u] = false
		}
	}
}

// anchorPrecedes: anchor k precedes committed writer w in every
// completion (both commit): w is k, a later member of k's session, or
// follows k in real time.
func (o *Online) anchorPrecedes(k, w *history.Txn) bool {
	if k == w {
		return true
	}
	if k.HasSession && w.HasSession && k.Session == w.Session && w.Start > k.Start {
		return true
	}
	return o.opts.Precedes(k, w)
}

// voided: released member i is an unknown transaction decided not to
// commit (Decided; a fact of every completion, or fixed by
// markUnobservable). It is no node in any completion, never a source and
// never a neighbour, and leaves as an aborted member does, whether or
// not it is time-closed.
func (o *Online) voided(i int) bool {
	if i < 0 {
		return false
	}
	c, ok := o.ev.Decided[i]
	return ok && !c && o.log.at(i).Status == history.Unknown
}
