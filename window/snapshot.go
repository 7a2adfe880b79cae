package window

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// snapshotVersion is the first byte of Snapshot's and SnapshotApart's
// output. Versions 1 (whole) and 2 (IDs stored apart) remembered every ID
// of the stream without its start; they are still read, their IDs taken
// as starting at the greatest start accepted, so they are forgotten once
// W is a lateness past it.
const (
	snapshotVersionLegacy      = 1
	snapshotVersionLegacyApart = 2
	snapshotVersionNoAhead     = 3
	snapshotVersion            = 4
)

// ErrSnapshot is wrapped by Restore's errors.
var ErrSnapshot = errors.New("window: bad snapshot")

// Snapshot returns the window's whole state as bytes that Restore turns
// back into a window that behaves exactly like this one from here on: the
// same releases, closings, dead letters and counters for the same input.
// Buffered and open entries are written in their heap order, so the bytes
// depend on the window's logical state and its input order only, never on
// the heap's internal layout. O(buffered + open + remembered IDs); the
// remembered IDs are those within the lateness of W (idset.go), so the
// size follows the window, not the stream.
//
// Layout (all integers uvarint or zigzag varint, strings as length+bytes):
// version, config, W and flags, first/max start, counters, partitions,
// buffered transactions in release order, open entries in closing order,
// the number of remembered IDs and their records (ID, start) in insertion
// order.
func (w *Window) Snapshot() []byte {
	e := &enc{b: make([]byte, 0, 256+len(w.ids.arena))}
	w.snapshot(e)
	return e.b
}

// SnapshotApart is Snapshot for callers that used to store the IDs apart
// (version 2): since the remembered IDs are bounded by the window, they
// are inside snap again, ids is empty and next is mark. RestoreApart
// still reads what version 2 stored.
func (w *Window) SnapshotApart(mark int) (snap, ids []byte, next int) {
	return w.Snapshot(), nil, mark
}

// IDMark is the mark to pass to SnapshotApart after RestoreApart; marks no
// longer matter (see SnapshotApart).
func (w *Window) IDMark() int { return 0 }

func (w *Window) snapshot(e *enc) {
	e.u(snapshotVersion)
	e.i(int64(w.cfg.Partitions))
	e.i(w.cfg.Lateness)
	e.i(w.cfg.Skew)
	e.i(w.cfg.InDoubt)
	e.i(w.cfg.IdleTimeout)
	e.i(w.w)
	e.bool(w.closed)
	e.bool(w.anySeen)
	e.i(w.firstStart)
	e.i(w.maxStart)
	e.u(w.accepted)
	e.u(w.released)
	e.u(w.closedN)
	for _, d := range w.dead[:legacyReasons] {
		e.u(d)
	}
	e.u(w.idleTransitions)
	for i := range w.parts {
		p := &w.parts[i]
		e.i(p.maxStart)
		e.bool(p.seen)
		e.bool(p.marked)
		e.bool(p.idle)
	}
	buf := append(pendingHeap(nil), w.buf...)
	sort.Slice(buf, func(i, j int) bool { return buf[i].before(&buf[j]) })
	e.u(uint64(len(buf)))
	for i := range buf {
		e.txn(&w.slab[buf[i].slot])
	}
	op := append(openHeap(nil), w.open...)
	sort.Slice(op, func(i, j int) bool { return op[i].before(&op[j]) })
	e.u(uint64(len(op)))
	for _, o := range op {
		e.i(o.effEnd)
		e.i(o.start)
		e.i(o.end)
		e.s(o.id)
		e.u(o.seq)
	}
	e.u(uint64(w.ids.len()))
	w.ids.each(func(id []byte, start int64) {
		e.bytes(id)
		e.i(start)
	})
	// Version 4: the Future counter and each partition's run of Future
	// dead letters (Config.MaxAhead). MaxAhead itself is not saved: it
	// promises nothing about W, so a restart may change it.
	for _, d := range w.dead[legacyReasons:] {
		e.u(d)
	}
	for i := range w.parts {
		e.u(uint64(w.parts[i].ahead))
	}
}

// Restore rebuilds a window from Snapshot's bytes. cfg must equal the
// snapshot's configuration: a different partition count, lateness, skew,
// in-doubt horizon or idle timeout would change what the saved watermark
// promised, so it is refused with an error naming the field.
func Restore(cfg Config, snap []byte) (*Window, error) {
	return restore(cfg, snap, nil, false)
}

// RestoreApart is Restore for SnapshotApart's bytes and the IDs stored
// apart by version 2. It also takes a Snapshot. IDs given apart with a
// snapshot of the current version are pieces a version-2 binary stored
// before it: the snapshot holds every one of them that is still
// remembered, so they are not read.
func RestoreApart(cfg Config, snap, ids []byte) (*Window, error) {
	return restore(cfg, snap, ids, true)
}

func restore(cfg Config, snap, ids []byte, apart bool) (*Window, error) {
	w, err := New(cfg)
	if err != nil {
		return nil, err
	}
	d := &dec{b: snap}
	v := d.u()
	switch {
	case d.err != nil:
	case v == snapshotVersionLegacyApart && !apart:
		return nil, fmt.Errorf("%w: version %d stores its IDs apart: restore it with them", ErrSnapshot, v)
	case v == snapshotVersionLegacy && len(ids) > 0:
		return nil, fmt.Errorf("%w: version %d holds its IDs, %d bytes of IDs given apart", ErrSnapshot, v, len(ids))
	case v != snapshotVersion && v != snapshotVersionNoAhead && v != snapshotVersionLegacy && v != snapshotVersionLegacyApart:
		return nil, fmt.Errorf("%w: version %d (this binary reads %d to %d)", ErrSnapshot, v, snapshotVersionLegacy, snapshotVersion)
	}
	saved := Config{Partitions: int(d.i()), Lateness: d.i(), Skew: d.i(), InDoubt: d.i(), IdleTimeout: d.i()}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, d.err)
	}
	for _, f := range []struct {
		name      string
		got, want int64
	}{
		{"partitions", int64(cfg.Partitions), int64(saved.Partitions)},
		{"lateness", cfg.Lateness, saved.Lateness},
		{"skew", cfg.Skew, saved.Skew},
		{"in-doubt", cfg.InDoubt, saved.InDoubt},
		{"idle timeout", cfg.IdleTimeout, saved.IdleTimeout},
	} {
		if f.got != f.want {
			return nil, fmt.Errorf("%w: %s is %d, the snapshot was taken with %d", ErrSnapshot, f.name, f.got, f.want)
		}
	}
	w.w = d.i()
	w.closed = d.bool()
	w.anySeen = d.bool()
	w.firstStart = d.i()
	w.maxStart = d.i()
	w.accepted = d.u()
	w.released = d.u()
	w.closedN = d.u()
	for i := range w.dead[:legacyReasons] {
		w.dead[i] = d.u()
	}
	w.idleTransitions = d.u()
	for i := range w.parts {
		p := &w.parts[i]
		p.maxStart = d.i()
		p.seen = d.bool()
		p.marked = d.bool()
		p.idle = d.bool()
	}
	n := d.count()
	for range n {
		t := d.txn()
		if d.err != nil {
			break
		}
		w.bufferTxn(t)
	}
	n = d.count()
	for range n {
		o := open{effEnd: d.i(), start: d.i(), end: d.i(), id: d.s(), seq: d.u()}
		if d.err != nil {
			break
		}
		w.open.push(o)
	}
	w.ids.advance(w.w)
	var nids int
	if v == snapshotVersion || v == snapshotVersionNoAhead {
		nids = d.count()
		for i := 0; i < nids && d.err == nil; i++ {
			id := d.s()
			start := d.i()
			if d.err == nil && !w.ids.add(id, start) {
				return nil, fmt.Errorf("%w: id %q stored twice", ErrSnapshot, id)
			}
		}
	} else {
		arena := ids
		if v == snapshotVersionLegacy {
			nids = d.count()
			arena = d.bytes()
		} else if n := d.u(); n > uint64(len(ids)) {
			d.fail("the id count")
		} else {
			nids = int(n)
		}
		for d.err == nil && len(arena) > 0 {
			l, k := binary.Uvarint(arena)
			if k <= 0 || l > uint64(len(arena)-k) {
				return nil, fmt.Errorf("%w: id set arena truncated", ErrSnapshot)
			}
			if !w.ids.add(string(arena[k:k+int(l)]), w.maxStart) {
				// Each ID is stored once: a repeat means the pieces stored
				// apart overlap, which would hide a lost one behind the count.
				return nil, fmt.Errorf("%w: id %q stored twice", ErrSnapshot, arena[k:k+int(l)])
			}
			arena = arena[k+int(l):]
		}
	}
	if v == snapshotVersion {
		for i := range w.dead[legacyReasons:] {
			w.dead[legacyReasons+i] = d.u()
		}
		for i := range w.parts {
			w.parts[i].ahead = uint32(min(d.u(), ReanchorAfter))
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSnapshot, d.err)
	}
	if w.ids.n != nids {
		return nil, fmt.Errorf("%w: id set has %d ids, header says %d", ErrSnapshot, w.ids.n, nids)
	}
	// The tree and the active count are functions of the partitions.
	w.active = 0
	for i := range w.parts {
		if !w.parts[i].idle {
			w.active++
		}
		w.update(i)
	}
	return w, nil
}

type enc struct{ b []byte }

func (e *enc) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) bytes(v []byte) {
	e.u(uint64(len(v)))
	e.b = append(e.b, v...)
}
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *enc) txn(t *history.Txn) {
	e.s(t.ID)
	e.s(t.Session)
	e.bool(t.HasSession)
	e.i(t.Start)
	e.i(t.End)
	e.bool(t.HasTime)
	e.u(uint64(t.Status))
	e.s(t.Pos.Source)
	e.i(int64(t.Pos.Line))
	e.i(t.Pos.Offset)
	e.u(uint64(len(t.Ops)))
	for _, op := range t.Ops {
		e.u(uint64(op.Kind))
		e.s(string(op.Key))
		e.s(string(op.Value))
		e.bool(op.IsList)
		e.u(uint64(len(op.List)))
		for _, v := range op.List {
			e.s(string(v))
		}
	}
}

// dec reads enc's output; the first error sticks and later reads return
// zero values, so callers check d.err once per record.
type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("truncated at %s", what)
	}
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail("an unsigned integer")
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail("an integer")
		return 0
	}
	d.b = d.b[k:]
	return v
}

// count reads a length that must fit in what is left (every element takes
// at least one byte), so a corrupt count cannot make Restore allocate.
func (d *dec) count() int {
	n := d.u()
	if n > uint64(len(d.b)) {
		d.fail("a count")
		return 0
	}
	return int(n)
}

func (d *dec) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *dec) s() string { return string(d.bytes()) }

func (d *dec) bool() bool {
	if d.err != nil {
		return false
	}
	if len(d.b) == 0 || d.b[0] > 1 {
		d.fail("a flag")
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *dec) txn() history.Txn {
	t := history.Txn{ID: d.s(), Session: d.s(), HasSession: d.bool(), Start: d.i(), End: d.i(), HasTime: d.bool()}
	st := d.u()
	if st > uint64(history.Unknown) {
		d.fail("a status")
	}
	t.Status = history.Status(st)
	t.Pos = history.Pos{Source: d.s(), Line: int(d.i()), Offset: d.i()}
	n := d.count()
	if n > 0 {
		t.Ops = make([]history.Op, 0, n)
	}
	for range n {
		k := d.u()
		if k > uint64(history.Append) {
			d.fail("an operation kind")
		}
		op := history.Op{Kind: history.Kind(k), Key: history.Value(d.s()), Value: history.Value(d.s()), IsList: d.bool()}
		m := d.count()
		if m > 0 {
			op.List = make([]history.Value, 0, m)
		}
		for range m {
			op.List = append(op.List, history.Value(d.s()))
		}
		if d.err != nil {
			return t
		}
		t.Ops = append(t.Ops, op)
	}
	return t
}
