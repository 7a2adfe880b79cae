package record

import (
	"sync"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// FactsSink is a Sink that also keeps the database's own facts about a
// transaction (docs/SEMANTICS.md §10): its commit and snapshot stamps, or
// PostgreSQL's xid and snapshot. A Tx with facts (SetFacts) is emitted
// with EmitFacts to a sink that has it, with Emit otherwise.
type FactsSink interface {
	Sink
	EmitFacts(t *history.Txn, f history.Facts) error
}

// SetFacts records what the database said about the transaction: call it
// once the statement that returned them has been answered (for
// PostgreSQL, "SELECT pg_current_xact_id(), pg_current_snapshot()" as
// the transaction's first statement, so that the snapshot is the
// transaction's own at REPEATABLE READ and SERIALIZABLE). Facts are not
// emitted with an aborted transaction: the database gives none to what it
// rolled back (history.Facts.Validate).
func (tx *Tx) SetFacts(f history.Facts) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		panic("record: facts on ended transaction " + tx.t.ID)
	}
	tx.facts = f
}

// emit sends the finished t to the sink, with its facts where the sink
// keeps them.
func (tx *Tx) emit(t *history.Txn, f history.Facts) error {
	if fs, ok := tx.rec.sink.(FactsSink); ok && f.Has != 0 && t.Status != history.Aborted {
		return fs.EmitFacts(t, f)
	}
	return tx.rec.sink.Emit(t)
}

// EmitFacts writes t as one line with its facts (ingest.AppendNativeFacts).
func (s *JSONLinesSink) EmitFacts(t *history.Txn, f history.Facts) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(ingest.AppendNativeFacts(s.buf[:0], t, &f), '\n')
	_, err := s.w.Write(s.buf)
	return err
}

// FactsSliceSink is SliceSink that keeps the facts too: History returns
// them as the history's side table.
type FactsSliceSink struct {
	mu    sync.Mutex
	txns  []history.Txn
	facts []history.Facts
	any   bool
}

// Emit appends t without facts.
func (s *FactsSliceSink) Emit(t *history.Txn) error {
	return s.EmitFacts(t, history.Facts{})
}

// EmitFacts appends t with f.
func (s *FactsSliceSink) EmitFacts(t *history.Txn, f history.Facts) error {
	s.mu.Lock()
	s.txns = append(s.txns, *t)
	s.facts = append(s.facts, f)
	s.any = s.any || f.Has != 0
	s.mu.Unlock()
	return nil
}

// History returns a copy of what was emitted so far.
func (s *FactsSliceSink) History() *history.History {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &history.History{Txns: append([]history.Txn(nil), s.txns...)}
	if s.any {
		h.Facts = append([]history.Facts(nil), s.facts...)
	}
	return h
}
