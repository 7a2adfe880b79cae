package sionline

import (
	"context"
	"hash/maphash"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
)

// Going straight to the segment a contradicted witness choice left in
// (docs/SEMANTICS.md §5 "Re-admitting the segment a read names").
//
// A witness choice the stream contradicts (an in-doubt writer the
// witness left uncommitted, two overlapping writers in the order no read
// had decided) shows as a read of the screen that no transaction of the
// screen can have written: its writer was archived, and the ghost holds
// another version. The screen is then invalid, and re-admitting segments
// from the newest one back finds the writer's segment after a check per
// segment tried. The engine remembers who wrote what among the newest
// archived transactions (writes), and a step whose screen has such a
// read re-admits from its writer's segment at once, before any check.
// Which segment is re-admitted is precision, never exactness: a screen
// with any suffix of the archive re-admitted is one the eviction
// argument covers (§5 "Re-admitting a suffix of the archive").

// writeKey is one version: a register value or a list element.
type writeKey struct {
	k history.Key
	v history.Value
}

// writesGen bounds the index: two generations of at most this many
// versions each (the newest archived writers'); an older writer is not
// found, and the step takes the usual path.
const writesGen = 1 << 15

// writes is the index of versions written by archived transactions: per
// version, the newest archived writer's seq. Not in snapshots: a
// restored engine starts it empty (precision only).
//
// It is a log, not a map (docs/SEMANTICS.md §5 "The archived writers'
// index is a log (si30)"): every eviction adds to it, and only a step
// whose sweep gave up asks it, so an add is one append of the version's
// hash and the writer's seq, and an ask (newest) is one pass over the
// log for the versions that step wants. A hash shared by two versions
// can name the other one's segment: which segment comes back is
// precision only.
type writes struct {
	cur, prev []writeRec
}

// writeRec is one archived write: the hash of its version (versionHash)
// and its writer's seq.
type writeRec struct {
	h, seq uint64
}

// writeSeed makes versionHash one function for the life of the process
// (the index is not in snapshots).
var writeSeed = maphash.MakeSeed()

// versionHash is k and v's hash; the separator keeps ("ab", "c") and
// ("a", "bc") apart.
func versionHash(k history.Key, v history.Value) uint64 {
	var h maphash.Hash
	h.SetSeed(writeSeed)
	h.WriteString(string(k))
	h.WriteByte(0)
	h.WriteString(string(v))
	return h.Sum64()
}

func (w *writes) add(t *history.Txn, seq uint64) {
	if t.Status == history.Aborted {
		return
	}
	for _, op := range t.Ops {
		if op.Kind == history.Read {
			continue
		}
		if len(w.cur) >= writesGen {
			// The older generation's array takes the next one: the
			// log never holds more than two generations.
			w.prev, w.cur = w.cur, w.prev[:0]
		}
		w.cur = append(w.cur, writeRec{versionHash(op.Key, op.Value), seq})
	}
}

// newest returns, for each hash in want that the index holds, the
// newest archived writer's seq: later records are later evictions (a
// re-admitted writer evicted again is recorded again, with its own
// seq), so the last record of a hash wins, as the map's last store did.
func (w *writes) newest(want map[uint64]bool) map[uint64]uint64 {
	out := map[uint64]uint64{}
	if len(want) == 0 {
		return out
	}
	for _, gen := range [2][]writeRec{w.prev, w.cur} {
		for _, r := range gen {
			if want[r.h] {
				out[r.h] = r.seq
			}
		}
	}
	return out
}

func (w *writes) reset() { w.cur, w.prev = w.cur[:0], w.prev[:0] }

// diagnose returns the oldest segment holding the archived writer of a
// version some read of the screen saw and no transaction of the screen
// (the ghost included) wrote, or -1 when there is none, or none the
// index knows, or the step should take the usual path (a wildcard
// dead-lettered write, whose reads the screen drops anyway). A value
// the ghost's pin holds (the initial value or list an evicted read
// fixed) names nothing. Under an unknown initial state a list read, or
// a register read on a key the ghost does not hold, may have seen the
// key's initial value: it names a segment all the same (docs/SEMANTICS.md
// §5 "A read an unknown initial state could explain names its segment
// too"), since which suffix comes back is precision only.
func (e *Engine) diagnose() int {
	if len(e.arch.segs) < 2 || e.ghost == nil {
		return -1
	}
	written := map[writeKey]bool{}
	for i := range e.txs {
		for _, op := range e.txs[i].T.Ops {
			if op.Kind == history.Read {
				continue
			}
			if op.Value == online.Wild || op.Key == online.Wild {
				return -1
			}
			written[writeKey{op.Key, op.Value}] = true
		}
	}
	comp := map[writeKey]bool{}
	for _, c := range e.ghost.Comp {
		for _, op := range c.Writes {
			comp[writeKey{op.Key, op.Value}] = true
		}
	}
	unknownInit := e.opts.InitialState == history.InitialUnknown
	sourced := func(k history.Key, v history.Value) bool {
		if written[writeKey{k, v}] {
			return true
		}
		if gv, ok := e.ghost.Reg[k]; ok && gv == v {
			return true
		}
		if comp[writeKey{k, v}] {
			return true // a companion's version (companion.go)
		}
		if slices.Contains(e.ghost.List[k], v) {
			return true
		}
		// An initial value or element an evicted read fixed (a pin):
		// what the read may have seen, not a version to name.
		if p, ok := e.ghost.Pin[k]; ok && !NoNameInitial {
			return p.Value == v || (p.IsList && slices.Contains(p.List, v))
		}
		return false
	}
	// The versions to name are collected first and looked up in one
	// pass over the index (writes.newest).
	want := map[uint64]bool{}
	name := func(k history.Key, v history.Value) {
		want[versionHash(k, v)] = true
		if traceNamed != nil {
			traceNamed(k, v)
		}
	}
	for i := range e.txs {
		x := &e.txs[i]
		if x.Fl&(fUnchecked|fQuarantined) != 0 || !e.readsClosed(x) {
			continue
		}
		own := map[history.Key]bool{}
		for _, op := range x.T.Ops {
			if op.Kind != history.Read {
				own[op.Key] = true
				continue
			}
			if own[op.Key] {
				continue // an internal read
			}
			switch {
			case op.IsList:
				if unknownInit && NoNameInitial {
					continue
				}
				for _, v := range op.List {
					if !sourced(op.Key, v) {
						name(op.Key, v)
					}
				}
			case op.Value == history.Null:
				// The initial state, or a null written: never diagnosed.
			default:
				_, held := e.ghost.Reg[op.Key]
				if (!unknownInit || held || !NoNameInitial) && !sourced(op.Key, op.Value) {
					name(op.Key, op.Value)
				}
			}
		}
	}
	j := -1
	for _, seq := range e.writes.newest(want) {
		if s := e.arch.segmentOf(seq); s >= 1 && (j < 0 || s < j) {
			j = s
		}
	}
	return j
}

// NoNameInitial is the rule before docs/SEMANTICS.md §5 "A read an
// unknown initial state could explain names its segment too": under an
// unknown initial state, diagnose named nothing for a list read, nor for
// a register read of a key the ghost does not hold, and a pin's value
// was not a source (the tests compare).
var NoNameInitial = false

// readmitFrom re-admits the archive's segments from top back, the
// screen checked after each (docs/SEMANTICS.md §5 "Re-admitting a
// suffix of the archive"): a valid one decides the step (and evicts
// again); ok is false when none was, having brought back at most half
// the archive, so that a step that needs all of it (an anomaly, whose
// alert only the full A_t may raise) costs at most about twice a full
// check.
func (e *Engine) readmitFrom(ctx context.Context, top int) (ok bool, err error) {
	total := e.arch.txns()
	before := make([]int, len(e.arch.segs)+1) // before[j]: txns in segments before j
	for j, s := range e.arch.segs {
		before[j+1] = before[j] + s.Txns
	}
	for j := min(top, len(e.arch.segs)-1); j >= 1; j-- {
		if 2*(total-before[j]) > total {
			return false, nil
		}
		if err := e.readmit(j); err != nil {
			return false, err
		}
		e.inReadmit = true
		v, err := e.screenAfterReadmit(ctx)
		e.inReadmit = false
		if err != nil || v == incremental.Valid {
			return v == incremental.Valid, err
		}
		if v == incremental.Unknown {
			return false, nil
		}
	}
	return false, nil
}
