package sionline

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// The ghost before a segment as undo records (docs/SEMANTICS.md §5 "The
// ghost costs what changes, not the stream").
//
// A segment used to carry the whole ghost before it, written at its
// opening: the ghost holds each key the stream wrote and every element
// of each list, so each segment cost the stream so far, and each
// re-admission decoded the whole of it (BENCHMARKS.md, si28: 16% of the
// 100K stream's CPU, growing with it). Now the ghost before segment s is
// found from the ghost in memory, going back: while segment s is the
// last one, a journal records, for each key the ghost changes on, the
// key's entry as it was when s opened (its first change only), and the
// ghost's time and companions then; when the next segment opens, the
// journal is written as an undo record of s. Re-admitting segments j..
// applies, to the ghost in memory, the journal, then the undo records of
// the segments from the newest back to j, each segment's records newest
// first: each record takes the ghost at its end back to the ghost at its
// start, so the last one gives the ghost before segment j, entry for
// entry. A step writes and reads what the ghost changed, not the ghost.

// keyEntry is one key's entry in a ghost: which of Reg, List and Pin
// hold it (has: 1, 2, 4) and what they hold.
type keyEntry struct {
	has  uint8
	reg  history.Value
	list []history.Value
	pin  history.Op
}

func (g *ghost) entry(k history.Key) keyEntry {
	var x keyEntry
	if v, ok := g.Reg[k]; ok {
		x.has, x.reg = x.has|1, v
	}
	if l, ok := g.List[k]; ok {
		x.has, x.list = x.has|2, l
	}
	if p, ok := g.Pin[k]; ok {
		x.has, x.pin = x.has|4, p
	}
	return x
}

func (g *ghost) setEntry(k history.Key, x keyEntry) {
	if x.has&1 != 0 {
		g.Reg[k] = x.reg
	} else {
		delete(g.Reg, k)
	}
	if x.has&2 != 0 {
		g.List[k] = x.list
	} else {
		delete(g.List, k)
	}
	if x.has&4 != 0 {
		g.Pin[k] = x.pin
	} else {
		delete(g.Pin, k)
	}
}

// journal is the undo of the ghost's changes since the last segment
// opened: the ghost then (none: noGhost; else its time and companions)
// and, per key changed since, its entry then.
type journal struct {
	noGhost bool
	time    int64
	comp    []companion
	keys    map[history.Key]keyEntry
}

// newJournal starts a journal at ghost g (nil: no ghost).
func newJournal(g *ghost) *journal {
	j := &journal{keys: map[history.Key]keyEntry{}}
	if g == nil {
		j.noGhost = true
		return j
	}
	j.time, j.comp = g.Time, slices.Clone(g.Comp)
	return j
}

// touch records k's entry before the ghost changes it, once per
// journal. Every change of a key's entry in the engine's ghost goes
// through it (replayInto, absorb); a ghost with no journal (a copy,
// clone or restrict) records nothing.
func (g *ghost) touch(k history.Key) {
	if g.jr == nil {
		return
	}
	if _, ok := g.jr.keys[k]; !ok {
		g.jr.keys[k] = g.entry(k)
	}
}

// undo applies j to g, giving the ghost at j's start (nil: none). g is
// changed in place.
func (j *journal) undo(g *ghost) *ghost {
	for k, x := range j.keys {
		g.setEntry(k, x)
	}
	if j.noGhost {
		return nil
	}
	g.Time, g.Comp = j.time, slices.Clone(j.comp)
	return g
}

// undoCodec is the first byte of an undo record's body.
const undoCodec = 1

// encodeJournal writes j: the codec byte, a flag byte (1: no ghost), the
// time, the companions (as encodeGhost writes them) and the keys, sorted,
// each with its entry: has, then the register value, the list (count,
// values) and the pin (a one-op transaction record), as has says.
func encodeJournal(j *journal) []byte {
	out := []byte{undoCodec, 0}
	if j.noGhost {
		out[1] = 1
	}
	out = binary.AppendVarint(out, j.time)
	out = binary.AppendUvarint(out, uint64(len(j.comp)))
	for _, c := range j.comp {
		rec := appendCompanion(nil, c)
		out = binary.AppendUvarint(out, uint64(len(rec)))
		out = append(out, rec...)
	}
	out = binary.AppendUvarint(out, uint64(len(j.keys)))
	str := func(s history.Value) {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
	}
	for _, k := range sortedKeys(j.keys) {
		x := j.keys[k]
		str(k)
		out = append(out, x.has)
		if x.has&1 != 0 {
			str(x.reg)
		}
		if x.has&2 != 0 {
			out = binary.AppendUvarint(out, uint64(len(x.list)))
			for _, v := range x.list {
				str(v)
			}
		}
		if x.has&4 != 0 {
			rec := online.AppendTxnRecord(nil, &history.Txn{Ops: []history.Op{x.pin}})
			out = binary.AppendUvarint(out, uint64(len(rec)))
			out = append(out, rec...)
		}
	}
	return out
}

// decodeJournal reads what encodeJournal wrote.
func decodeJournal(b []byte) (*journal, error) {
	bad := func(what string) (*journal, error) { return nil, fmt.Errorf("undo record: %s", what) }
	if len(b) < 2 || b[0] != undoCodec || b[1] > 1 {
		return bad("codec")
	}
	j := &journal{noGhost: b[1] == 1, keys: map[history.Key]keyEntry{}}
	b = b[2:]
	uv := func() (uint64, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 {
			return 0, false
		}
		b = b[w:]
		return n, true
	}
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || uint64(len(b)) < n {
			return nil, false
		}
		s := b[:n]
		b = b[n:]
		return s, true
	}
	t, w := binary.Varint(b)
	if w <= 0 {
		return bad("time")
	}
	j.time, b = t, b[w:]
	nc, ok := uv()
	if !ok || nc > uint64(len(b)) {
		return bad("companions")
	}
	for range nc {
		rec, ok := bytesOf()
		if !ok {
			return bad("a companion")
		}
		c, err := decodeCompanion(rec)
		if err != nil {
			return nil, err
		}
		j.comp = append(j.comp, c)
	}
	nk, ok := uv()
	if !ok || nk > uint64(len(b)) {
		return bad("keys")
	}
	for range nk {
		k, ok := bytesOf()
		if !ok || len(b) == 0 {
			return bad("a key")
		}
		x := keyEntry{has: b[0]}
		b = b[1:]
		if x.has > 7 {
			return bad("an entry")
		}
		if x.has&1 != 0 {
			v, ok := bytesOf()
			if !ok {
				return bad("a register value")
			}
			x.reg = history.Value(v)
		}
		if x.has&2 != 0 {
			n, ok := uv()
			if !ok || n > uint64(len(b)) {
				return bad("a list")
			}
			x.list = make([]history.Value, 0, n)
			for range n {
				v, ok := bytesOf()
				if !ok {
					return bad("a list element")
				}
				x.list = append(x.list, history.Value(v))
			}
		}
		if x.has&4 != 0 {
			rec, ok := bytesOf()
			if !ok {
				return bad("a pin")
			}
			t, err := online.DecodeTxnRecord(rec)
			if err != nil || len(t.Ops) != 1 {
				return bad("a pin")
			}
			x.pin = t.Ops[0]
		}
		j.keys[history.Key(k)] = x
	}
	if len(b) != 0 {
		return bad(fmt.Sprintf("%d bytes after the keys", len(b)))
	}
	return j, nil
}
