package online

import (
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// The taint index as a cache (docs/SEMANTICS.md §5 "The taint index as a
// cache").
//
// The taint rule drops a read that a quarantined or unchecked writer
// could explain; the reduced instance learns of those writers through
// ev.Taint and their stubs' times. Both stayed in memory for every
// transaction ever quarantined: in an anomaly storm a tenth of the
// stream, so the engine's memory grew with the stream. The truth they
// cache is on disk: the write index has every write, and the quarantine
// flags say which writers are quarantined. The engine now holds the taint
// of the newest taintKept quarantined writers (by release position) and
// drops the rest, with their stubs; unchecked writers (dead letters,
// wildcards) stay.
//
// Why a dropped entry cannot cost an anomaly or raise a false alarm.
// Without w's entry, a read of (k, v) that w wrote keeps its other
// possible writers in the instance, or none (a garbage read): the
// instance has that read's constraints besides the ones it had with the
// entry, so whatever it found unsatisfiable with the entry it finds
// unsatisfiable without (nothing missed). A violation is a trigger that
// is confirmed on the bodies (localHistory: every possible writer from
// the write index, the quarantined ones projected out), which drop that
// read as the projection says (no false alarm). When the bodies do not
// confirm a violation of the instance, retaint takes back the entries of
// every quarantined writer of what the window reads, and the step judges
// the instance again before anything else (a heal or a rebuild): the
// instance is then the one the full index would have given.
//
// Which entries are held is a function of ev.Taint alone (its writers,
// by position), and ev.Taint is in the snapshot: a restored engine holds,
// drops and takes back exactly what the running one does.

// taintKept is how many quarantined writers' entries the engine keeps at
// least; it drops the oldest once it holds twice as many (a variable for
// the tests).
var taintKept = 4096

// taintHolds reports whether quarantined writer i's taint is held (its
// stub stays in memory past its chunk's drop: txnLog.keep).
func (o *Online) taintHolds(i int) bool {
	_, ok := o.taintHeld[i]
	return ok
}

// noteTainted records that writer i's writes are in ev.Taint; sticky
// says it has a wildcard write (an unchecked writer's), which the write
// index cannot find again by a read's value, so its entries stay.
func (o *Online) noteTainted(i int, sticky bool) {
	if o.taintHeld == nil {
		o.taintHeld = map[int]bool{}
	}
	o.taintHeld[i] = o.taintHeld[i] || sticky
}

// taintedWriters rebuilds tainted from ev.Taint (a restore).
func (o *Online) taintedWriters() {
	o.taintHeld = map[int]bool{}
	for k, ws := range o.ev.Taint {
		wild := strings.HasSuffix(k, "\x00"+string(Wild))
		for _, w := range ws {
			o.noteTainted(w, wild)
		}
	}
}

// trimTaint drops the entries and stubs of all but the newest taintKept
// quarantined writers once more than twice as many are held. Only an
// evicting engine with a write index drops any: retaint finds the
// writers again through the index.
func (o *Online) trimTaint() {
	if !o.evicting || !o.widx.on || len(o.taintHeld)-o.uncheckedTainted() <= 2*taintKept {
		return
	}
	var ws []int
	for w, sticky := range o.taintHeld {
		// A quarantined ghost (alert_inplace.go) is a writer of the
		// instance: its entries stay, so its reads stay dropped.
		if !sticky && !o.ev.Member.get(w) {
			ws = append(ws, w)
		}
	}
	if len(ws) <= taintKept {
		return
	}
	slices.Sort(ws)
	drop := make(map[int]bool, len(ws)-taintKept)
	for _, w := range ws[:len(ws)-taintKept] {
		drop[w] = true
		delete(o.taintHeld, w)
	}
	for k, list := range o.ev.Taint {
		list = slices.DeleteFunc(list, func(w int) bool { return drop[w] })
		if len(list) == 0 {
			delete(o.ev.Taint, k)
		} else {
			o.ev.Taint[k] = list
		}
	}
	for w := range drop {
		// A stub held loose only for the taint rule goes; one in a
		// chunk stays with its chunk, and a body not spilled (open,
		// waiting for Close) stays.
		if !o.log.keep(w) && o.log.chunks[w>>logChunkBits] == nil && o.spill.spilled(w) {
			delete(o.log.loose, w)
		}
	}
	o.taintDropped += len(drop)
}

// uncheckedTainted counts the unchecked writers among tainted.
func (o *Online) uncheckedTainted() int {
	n := 0
	for _, u := range o.taintHeld {
		if u {
			n++
		}
	}
	return n
}

// retaint takes back the taint of every quarantined writer that may have
// written what the members of r read and whose entries were dropped, and
// reports whether it took any: then the caller judges the instance again.
func (o *Online) retaint(r *reduced) (bool, error) {
	if !o.evicting || !o.widx.on {
		return false, nil
	}
	keys := map[history.Key]bool{}
	type keyVal struct {
		k history.Key
		v history.Value
	}
	values := map[keyVal]bool{}
	for _, i := range r.pos {
		if i < 0 || o.quar.get(i) || !o.log.inMemory(i) || o.spill.spilled(i) {
			// Not a member with its body (a ghost has no reads).
			continue
		}
		for _, op := range o.log.at(i).Ops {
			if op.Kind == history.Read {
				keys[op.Key] = true
				if !op.IsList {
					values[keyVal{op.Key, op.Value}] = true
				}
			}
		}
	}
	qs := o.widx.queries(keys, func(yield func(history.Key, history.Value)) {
		for kv := range values {
			yield(kv.k, kv.v)
		}
	})
	cand, err := o.lookupWrites(qs)
	if err != nil {
		return false, err
	}
	took := false
	for _, w := range cand {
		if w >= o.log.len() || !o.quar.get(w) || o.taintHolds(w) || o.gone(w) {
			continue
		}
		if err := o.addTaint(w); err != nil {
			return took, err
		}
		o.retaken++
		took = true
	}
	return took, nil
}

// addTaint puts quarantined writer i's writes in ev.Taint and its stub in
// memory (retaint).
func (o *Online) addTaint(i int) error {
	t, err := o.body(i)
	if err != nil {
		return err
	}
	o.addTaintOf(i, &t)
	return nil
}

// addTaintOf puts the writes of t, quarantined writer i, in ev.Taint and
// its stub in memory: what the taint rule reads of it.
func (o *Online) addTaintOf(i int, t *history.Txn) {
	if !o.log.inMemory(i) {
		o.log.put(i, stubOf(t))
	}
	sticky := false
	for _, op := range t.Ops {
		if op.Kind != history.Read {
			k := taintKey(op.Key, op.Value)
			o.ev.Taint[k] = append(o.ev.Taint[k], i)
			if op.Value == Wild {
				o.wild++
				sticky = true
			}
		}
	}
	o.noteTainted(i, sticky)
}
