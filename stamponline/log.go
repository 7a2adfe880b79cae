package stamponline

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
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
// snapshot text) then the body in online.AppendBody's encoding.
const (
	recRelease byte = 1 + iota
	recClose
	recCloseAll
	recUnchecked
	recStep
)

// flushAt is the buffered size at which the log is written out.
const flushAt = 1 << 16

type callLog struct {
	file online.BodyFile
	buf  []byte // not yet written
	size int64  // bytes written to file
	rec  []byte // scratch payload
	err  error
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

func (l *callLog) release(t *history.Txn, f *history.Facts) {
	l.rec = appendRelease(l.rec[:0], t, f)
	l.put(recRelease, l.rec)
}

// appendRelease appends a release's payload: t's facts, then its body
// (readRelease reads it back).
func appendRelease(b []byte, t *history.Txn, f *history.Facts) []byte {
	b = appendFacts(b, f)
	return online.AppendBody(b, t)
}

// readRelease reads what appendRelease wrote.
func readRelease(b []byte) (history.Txn, history.Facts, error) {
	f, b, err := readFacts(b)
	if err != nil {
		return history.Txn{}, f, err
	}
	t, err := online.DecodeBody(b)
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
		case recRelease:
			if c.txn, c.facts, err = readRelease(payload); err != nil {
				return off, l.corrupt(err)
			}
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
