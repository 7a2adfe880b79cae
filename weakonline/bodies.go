package weakonline

import (
	"fmt"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// Bodies of closed transactions in a body file (docs/SEMANTICS.md §5
// "Bodies at read atomic and causal leave the heap"). At read atomic and
// causal nothing retires (§5 "Retirement at read atomic and causal"),
// but once a member is closed and in the fast path's graph, the fast
// path keeps what it needs of it (its finals and reads, parsed at
// release); the ops themselves are read again only by the exact check
// (the instance), an alert, a rebuild of the fast path and a snapshot.
// So the ops go to an online.BodyFile (the serializable engine's, on
// disk in `run`), in online.AppendBody's encoding, and the transaction
// in memory keeps its ID, session, times and status (what the fast path
// reads of a writer). Moving a body changes no instance, so no alert,
// core or id: every reader of the ops goes through Engine.txn.

// flushBodiesAt is the buffered size at which bodies are written out.
const flushBodiesAt = 1 << 16

// bodyStore is where the engine's spilled bodies are.
type bodyStore struct {
	file online.BodyFile
	// buf holds records not yet written; size counts the bytes written
	// before it, so a record's offset is the same buffered or written.
	buf  []byte
	size int64
	// off and n are, per engine index, its record's offset and length
	// (off -1: its ops are on the heap).
	off []int64
	n   []int32
	// started: the file was emptied for this engine (Start is called
	// on the first spill, so that an engine that never spills never
	// opens a file).
	started bool
	err     error
	// flushAt is the buffered size at which records are written out
	// (flushBodiesAt; tests set 1, every record at once).
	flushAt int
}

// put appends t's record and returns its offset and length.
func (s *bodyStore) put(t *history.Txn) (int64, int32) {
	off := s.size + int64(len(s.buf))
	s.buf = online.AppendBody(s.buf, t)
	n := int32(s.size + int64(len(s.buf)) - off)
	if len(s.buf) >= s.flushAt {
		s.flush()
	}
	return off, n
}

// flush writes the buffered records out.
func (s *bodyStore) flush() {
	if s.err != nil || len(s.buf) == 0 {
		return
	}
	w, err := s.file.Write(s.buf)
	if err != nil {
		// Nothing is lost: the records stay buffered (size counts none
		// of them, so their offsets still read from buf), and no more
		// bodies leave the heap (spills).
		s.err = fmt.Errorf("weakonline: write %s: %w", s.file.Name(), err)
		return
	}
	s.size += int64(w)
	s.buf = s.buf[:0]
}

// ops reads back the ops of the record at off, n bytes long.
func (s *bodyStore) ops(off int64, n int32) ([]history.Op, error) {
	var rec []byte
	if off >= s.size {
		rec = s.buf[off-s.size : off-s.size+int64(n)]
	} else {
		rec = make([]byte, n)
		if _, err := s.file.ReadAt(rec, off); err != nil {
			return nil, fmt.Errorf("weakonline: read %s at %d: %w", s.file.Name(), off, err)
		}
	}
	t, err := online.DecodeBody(rec)
	if err != nil {
		return nil, fmt.Errorf("weakonline: %s at %d: %w", s.file.Name(), off, err)
	}
	return t.Ops, nil
}

// spills reports whether the engine moves closed bodies to its body
// file: with the fast path on (without it every step's exact check
// would read every body back).
func (e *Engine) spills() bool {
	return e.store != nil && e.store.err == nil && e.fast != nil
}

// spillsAtClose reports whether member i's body goes to the body file
// when it closes: at the levels where nothing retires, and at read
// committed for a member with a list op, which is held (R8); the other
// members at read committed mostly retire soon, and go to the file only
// when a pass finds them unsettled (retire), or when they close after a
// pass that let none go (spillAll: on a list stream, R8).
func (e *Engine) spillsAtClose(i int) bool {
	return !e.retirable() || e.flags[i]&fList != 0 || e.spillAll
}

// spill moves closed member i's ops to the body file (after the fast
// path took the reads it needs); a pass that retires it reads them back.
func (e *Engine) spill(i int) {
	s := e.store
	if !e.spills() || s.off[i] >= 0 || e.flags[i]&(fUnchecked|fQuarantined) != 0 || len(e.txns[i].Ops) == 0 {
		return
	}
	if !s.started {
		if err := s.file.Start(); err != nil {
			s.err = fmt.Errorf("weakonline: %s: %w", s.file.Name(), err)
			return
		}
		s.started = true
	}
	s.off[i], s.n[i] = s.put(&e.txns[i])
	e.txns[i].Ops = nil
}

// txn is transaction i whole: its ops read back from the body file if
// they were spilled.
func (e *Engine) txn(i int) (history.Txn, error) {
	t := e.txns[i]
	if s := e.store; s != nil && s.off[i] >= 0 {
		ops, err := s.ops(s.off[i], s.n[i])
		if err != nil {
			return t, err
		}
		t.Ops = ops
	}
	return t, nil
}

// unspill brings every spilled body back to the heap: when the fast
// path is given up every step's exact check reads them all, so holding
// them in the file would cost a read of the whole file per step.
func (e *Engine) unspill() error {
	s := e.store
	if s == nil {
		return nil
	}
	for i, off := range s.off {
		if off < 0 {
			continue
		}
		ops, err := s.ops(off, s.n[i])
		if err != nil {
			return err
		}
		e.txns[i].Ops, s.off[i], s.n[i] = ops, -1, 0
	}
	return nil
}

// Spilled says how many transactions have their ops in the body file,
// and its size (buffered bytes included).
func (e *Engine) Spilled() (txns int, bytes int64) {
	s := e.store
	if s == nil {
		return 0, 0
	}
	for _, o := range s.off {
		if o >= 0 {
			txns++
		}
	}
	return txns, s.size + int64(len(s.buf))
}

// SpillError is why bodies stopped leaving the heap (a failed write of
// the body file; nothing is lost, they stay in memory), nil if they
// did not.
func (e *Engine) SpillError() error {
	if e.store == nil {
		return nil
	}
	return e.store.err
}
