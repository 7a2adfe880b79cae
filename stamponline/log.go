package stamponline

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// The call log: every call the driver made, in order, so that the
// black-box engine can be given the same calls when the stamps stop
// vouching (catchUp), and the whole history with its facts can be
// rebuilt for the inconsistency set at the end of the input. Records go
// to an online.BodyFile (on disk in `run`), so the engine's memory holds
// the window and the per-key state, not the stream.
//
// Record: one kind byte, a uvarint payload length, the payload. A
// release's payload is its facts (facts bits, commit_ts, start_ts, xid,
// snapshot text) then the body: in online.AppendBodyKeyed's encoding
// (recReleaseKeyed), each op's key a number of the log's key numbering
// (keyIDs), or in online.AppendBody's (recRelease, what logs written
// before the numbering hold; still read, never written).
//
// The numbering is not in the log: it is the log's in memory (names),
// which a checkpoint stores (snapshot.go, LogKeys) beside the log's
// length, and which only grows, so every record up to that length names
// keys the checkpoint holds, whatever came before a restart
// (docs/SEMANTICS.md §10 "The call log by key ids").
const (
	recRelease byte = 1 + iota
	recClose
	recCloseAll
	recUnchecked
	recStep
	recReleaseKeyed
)

// flushAt is the buffered size at which the log is written out.
const flushAt = 1 << 16

type callLog struct {
	file online.BodyFile
	buf  []byte // not yet written
	size int64  // bytes written to file
	rec  []byte // scratch payload
	err  error

	// kx numbers the keys of the released bodies, names[id] being key
	// id's text: the fast path's numbering too (Engine.kx), so that a key
	// is looked up once per op, at its release, and the replay indexes
	// its state by the id the log wrote. It outlives the fast path: the
	// log is written until the end.
	kx    *stampcheck.KeyIndex
	names []history.Key
	ids   []int32 // keyIDs' scratch
}

func (l *callLog) start() error {
	if err := l.file.Start(); err != nil {
		return fmt.Errorf("stamponline: %s: %w", l.file.Name(), err)
	}
	return nil
}

// resume opens a durable log as a checkpoint left it: end bytes, what
// was written after them cut off (state.FileBodies.Resume).
func (l *callLog) resume(end int64) error {
	if err := l.file.Resume(end); err != nil {
		return fmt.Errorf("stamponline: %s: %w", l.file.Name(), err)
	}
	l.size, l.buf = end, l.buf[:0]
	return nil
}

// end writes out what is buffered and returns the log's length: what a
// checkpoint counts on (the file must be synced before the checkpoint is
// stored).
func (l *callLog) end() (int64, error) {
	l.flush()
	return l.size, l.err
}

func (l *callLog) put(kind byte, payload []byte) {
	l.buf = append(l.buf, kind)
	l.buf = binary.AppendUvarint(l.buf, uint64(len(payload)))
	l.buf = append(l.buf, payload...)
	if len(l.buf) >= flushAt {
		l.flush()
	}
}

func (l *callLog) flush() {
	if l.err != nil || len(l.buf) == 0 {
		return
	}
	n, err := l.file.Write(l.buf)
	l.size += int64(n)
	if err != nil {
		l.err = fmt.Errorf("stamponline: write %s: %w", l.file.Name(), err)
	}
	l.buf = l.buf[:0]
}

// release logs a release and returns the ids of t's ops' keys (valid
// until the next call).
func (l *callLog) release(t *history.Txn, f *history.Facts) []int32 {
	ids := l.keyIDs(t)
	l.rec = appendFacts(l.rec[:0], f)
	l.rec = online.AppendBodyKeyed(l.rec, t, ids)
	l.put(recReleaseKeyed, l.rec)
	return ids
}

// keyIDs numbers t's ops' keys, new keys at the end of names; the slice
// is the log's scratch, valid until the next call.
func (l *callLog) keyIDs(t *history.Txn) []int32 {
	ids := l.ids[:0]
	for n := range t.Ops {
		k := t.Ops[n].Key
		id := l.kx.Get(k)
		if int(id) == len(l.names) {
			l.names = append(l.names, k)
		}
		ids = append(ids, id)
	}
	l.ids = ids
	return ids
}

// restoreKeys numbers keys in order (a checkpoint's LogKeys, or an older
// checkpoint's fast-path keys): key i must get id i, which it does on
// an empty log numbering and keys without repeats.
func (l *callLog) restoreKeys(keys []history.Key) error {
	for i, k := range keys {
		if got := l.kx.Get(k); int(got) != i || len(l.names) != i {
			return fmt.Errorf("%w: key %s numbered %d, the snapshot says %d", ErrCorrupt, k, got, i)
		}
		l.names = append(l.names, k)
	}
	return nil
}

// readRelease reads a release's payload: its facts, then its body,
// keyed (recReleaseKeyed, with names the numbering) or not.
func readRelease(b []byte, keyed bool, names []history.Key) (history.Txn, history.Facts, error) {
	f, b, err := readFacts(b)
	if err != nil {
		return history.Txn{}, f, err
	}
	var t history.Txn
	if keyed {
		t, err = online.DecodeBodyKeyed(b, names)
	} else {
		t, err = online.DecodeBody(b)
	}
	return t, f, err
}

// appendFacts appends f: its bits, commit_ts, start_ts, xid and the
// snapshot's text (readFacts reads it back; the engine's snapshot keeps
// the facts it holds in this encoding too, snapshot.go).
func appendFacts(b []byte, f *history.Facts) []byte {
	b = append(b, byte(f.Has))
	b = binary.AppendVarint(b, f.CommitTS)
	b = binary.AppendVarint(b, f.StartTS)
	b = binary.AppendUvarint(b, f.Xid)
	snap := ""
	if f.Snap != nil {
		snap = f.Snap.String()
	}
	b = binary.AppendUvarint(b, uint64(len(snap)))
	return append(b, snap...)
}

func (l *callLog) txn(kind byte, t *history.Txn) {
	l.rec = online.AppendBody(l.rec[:0], t)
	l.put(kind, l.rec)
}

// call is one logged call, read back.
type call struct {
	kind  byte
	txn   history.Txn
	facts history.Facts
	id    string
}

// each reads the log back in order.
func (l *callLog) each(fn func(c *call) error) error {
	_, err := l.eachFrom(0, func(c *call) (bool, error) { return false, fn(c) })
	return err
}

// eachFrom reads the log back in order from byte off, a record boundary,
// until fn says stop or the log ends; it returns the offset after the last
// record read (where the next call resumes).
func (l *callLog) eachFrom(off int64, fn func(c *call) (stop bool, err error)) (int64, error) {
	l.flush()
	if l.err != nil {
		return off, l.err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(l.file, off, l.size-off), 1<<16)
	var payload []byte
	for {
		kind, err := r.ReadByte()
		if err == io.EOF {
			return off, nil
		}
		if err != nil {
			return off, l.corrupt(err)
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return off, l.corrupt(err)
		}
		if uint64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return off, l.corrupt(err)
		}
		c := call{kind: kind}
		switch kind {
		case recClose:
			c.id = string(payload)
		case recRelease, recReleaseKeyed:
			if c.txn, c.facts, err = readRelease(payload, kind == recReleaseKeyed, l.names); err != nil {
				return off, l.corrupt(err)
			}
			c.kind = recRelease // one kind for the callers, keyed or not
		case recUnchecked:
			if c.txn, err = online.DecodeBody(payload); err != nil {
				return off, l.corrupt(err)
			}
		case recCloseAll, recStep:
		default:
			return off, l.corrupt(fmt.Errorf("record kind %d", kind))
		}
		off += 1 + int64(uvarintLen(n)) + int64(n)
		stop, err := fn(&c)
		if err != nil || stop {
			return off, err
		}
	}
}

// uvarintLen is the length of n's uvarint encoding.
func uvarintLen(n uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], n)
}

func (l *callLog) corrupt(err error) error {
	return fmt.Errorf("stamponline: %s: the call log is unreadable: %w", l.file.Name(), err)
}

var errShort = errors.New("short facts record")

func readFacts(b []byte) (history.Facts, []byte, error) {
	var f history.Facts
	if len(b) == 0 {
		return f, nil, errShort
	}
	f.Has, b = history.FactBits(b[0]), b[1:]
	var n int
	if f.CommitTS, n = binary.Varint(b); n <= 0 {
		return f, nil, errShort
	}
	b = b[n:]
	if f.StartTS, n = binary.Varint(b); n <= 0 {
		return f, nil, errShort
	}
	b = b[n:]
	if f.Xid, n = binary.Uvarint(b); n <= 0 {
		return f, nil, errShort
	}
	b = b[n:]
	ln, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < ln {
		return f, nil, errShort
	}
	snap := string(b[n : n+int(ln)])
	b = b[n+int(ln):]
	if f.Has&history.HasSnapshot != 0 {
		s, err := history.ParseSnapshot(snap)
		if err != nil {
			return f, nil, err
		}
		f.Snap = s
	}
	return f, b, nil
}
