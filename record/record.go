package record

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

// ErrDone is returned by an end method called on a transaction that has
// already ended: each transaction is emitted exactly once.
var ErrDone = errors.New("record: transaction already ended")

// Options configure a Recorder. The zero value is ready to use.
type Options struct {
	// Clock returns the current wall-clock time in nanoseconds since the
	// Unix epoch. nil uses the wall clock read once at New and advanced by
	// the monotonic clock (invariant R3 in doc.go says why).
	Clock func() int64

	_ struct{}
}

// Recorder hands out transactions and emits each finished one to its
// sink. It is safe for concurrent use by many goroutines.
type Recorder struct {
	sink  Sink
	clock func() int64

	mu  sync.Mutex
	seq map[string]uint64 // per session: the number of the last Begin
}

// New returns a Recorder that emits to sink.
func New(sink Sink, opts Options) *Recorder {
	if sink == nil {
		panic("record: nil sink")
	}
	clock := opts.Clock
	if clock == nil {
		// time.Time carries a monotonic reading; Since uses it, so clock
		// steps after New never reorder one process's timestamps.
		t0 := time.Now()
		wall0 := t0.UnixNano()
		clock = func() int64 { return wall0 + int64(time.Since(t0)) }
	}
	return &Recorder{sink: sink, clock: clock, seq: make(map[string]uint64)}
}

// Begin starts recording a transaction of session and takes its start
// time. Call it before the first statement of the transaction (BEGIN
// included) is sent. session names one sequential client: it must not be
// empty, must be unique among every recorder whose events end up in one
// history (add a host name or process id), and a session must not begin a
// transaction before its previous one has ended (session order is the order
// of start times, docs/SEMANTICS.md §1). The id is "<session>-<n>", n counting
// this recorder's transactions of the session from 1.
func (r *Recorder) Begin(session string) *Tx {
	if session == "" {
		panic("record: empty session name")
	}
	r.mu.Lock()
	r.seq[session]++
	n := r.seq[session]
	r.mu.Unlock()
	tx := &Tx{rec: r}
	tx.t.ID = session + "-" + strconv.FormatUint(n, 10)
	tx.t.Session, tx.t.HasSession = session, true
	// The clock is read last, as close to the first statement as possible.
	tx.t.Start = r.clock()
	return tx
}

// Tx records one transaction's micro-operations. Its methods are safe for
// concurrent use, although a transaction normally belongs to one goroutine.
//
// Record an operation only once the database has answered it: a read with
// the value it returned, a write once its statement succeeded. Keys and
// values are integers (int, int8 ... int64, uint8 ... uint64 up to
// math.MaxInt64) or strings; a read value may also be nil (absent),
// sql.NullInt64, sql.NullString, *int64 or *string (nil or !Valid: absent).
// Any other type, or an operation on an ended transaction, panics: both are
// bugs in the recording code that would otherwise corrupt the history.
type Tx struct {
	rec  *Recorder
	mu   sync.Mutex
	t    history.Txn
	done bool
	// facts: what the database said about it (facts.go).
	facts history.Facts
}

// ID returns the transaction's id.
func (tx *Tx) ID() string { return tx.t.ID }

// Read records a register read; value nil means the key was absent.
func (tx *Tx) Read(key, value any) {
	tx.add(history.Op{Kind: history.Read, Key: mustKey(key), Value: mustValue(value, true)})
}

// ReadList records a list read returning list, which may be nil or empty
// (the empty list). list is a slice of integers or strings of a type Read
// accepts for values, or []any of them; nil elements are not allowed.
func (tx *Tx) ReadList(key any, list any) {
	vals := mustList(list)
	tx.add(history.Op{Kind: history.Read, Key: mustKey(key), IsList: true, List: vals})
}

// Write records a register write.
func (tx *Tx) Write(key, value any) {
	tx.add(history.Op{Kind: history.Write, Key: mustKey(key), Value: mustValue(value, false)})
}

// Append records an append of elem to the list at key.
func (tx *Tx) Append(key, elem any) {
	tx.add(history.Op{Kind: history.Append, Key: mustKey(key), Value: mustValue(elem, false)})
}

func (tx *Tx) add(op history.Op) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		panic("record: operation on ended transaction " + tx.t.ID)
	}
	tx.t.Ops = append(tx.t.Ops, op)
}

// Commit ends the transaction as committed: call it after the database
// confirmed the COMMIT.
func (tx *Tx) Commit() error { return tx.Finish(history.Committed) }

// Abort ends the transaction as aborted: the database refused it, the
// application rolled it back, or the connection was lost before COMMIT was
// sent (the server then rolls it back).
func (tx *Tx) Abort() error { return tx.Finish(history.Aborted) }

// Unknown ends the transaction with an unknown outcome: COMMIT was sent
// and no definite answer came back. Never guess committed or aborted
// instead; the checker treats unknown exactly (docs/SEMANTICS.md §2).
func (tx *Tx) Unknown() error { return tx.Finish(history.Unknown) }

// Finish ends the transaction with status, taking its end time now, and
// emits it to the recorder's sink, whose error it returns. Use it with the
// outcome classifiers: tx.Finish(record.PgxOutcome(err)).
func (tx *Tx) Finish(status history.Status) error {
	if status > history.Unknown {
		panic(fmt.Sprintf("record: invalid status %v", status))
	}
	tx.mu.Lock()
	if tx.done {
		tx.mu.Unlock()
		return ErrDone
	}
	tx.done = true
	end := tx.rec.clock()
	if end < tx.t.Start {
		// Only a caller-supplied clock can go back; end >= start is what
		// every reader of the history checks (history.Validate).
		end = tx.t.Start
	}
	t := tx.t
	t.End, t.HasTime, t.Status = end, true, status
	tx.t.Ops = nil
	f := tx.facts
	tx.mu.Unlock()
	return tx.emit(&t, f)
}

// Value converts a key or value of a type Tx accepts to its canonical
// text. nil (and the nullable types) convert to history.Null.
func Value(v any) (history.Value, error) {
	switch x := v.(type) {
	case nil:
		return history.Null, nil
	case int:
		return history.IntValue(int64(x)), nil
	case int8:
		return history.IntValue(int64(x)), nil
	case int16:
		return history.IntValue(int64(x)), nil
	case int32:
		return history.IntValue(int64(x)), nil
	case int64:
		return history.IntValue(x), nil
	case uint8:
		return history.IntValue(int64(x)), nil
	case uint16:
		return history.IntValue(int64(x)), nil
	case uint32:
		return history.IntValue(int64(x)), nil
	case uint:
		if uint64(x) > math.MaxInt64 {
			return "", fmt.Errorf("record: %d does not fit in int64", x)
		}
		return history.IntValue(int64(x)), nil
	case uint64:
		if x > math.MaxInt64 {
			return "", fmt.Errorf("record: %d does not fit in int64", x)
		}
		return history.IntValue(int64(x)), nil
	case string:
		return history.StringValue(x), nil
	case sql.NullInt64:
		if !x.Valid {
			return history.Null, nil
		}
		return history.IntValue(x.Int64), nil
	case sql.NullInt32:
		if !x.Valid {
			return history.Null, nil
		}
		return history.IntValue(int64(x.Int32)), nil
	case sql.NullString:
		if !x.Valid {
			return history.Null, nil
		}
		return history.StringValue(x.String), nil
	case *int64:
		if x == nil {
			return history.Null, nil
		}
		return history.IntValue(*x), nil
	case *string:
		if x == nil {
			return history.Null, nil
		}
		return history.StringValue(*x), nil
	}
	return "", fmt.Errorf("record: unsupported type %T (want an integer or a string)", v)
}

func mustKey(k any) history.Key {
	v, err := Value(k)
	if err != nil {
		panic(err)
	}
	if v == history.Null {
		panic("record: nil key")
	}
	return v
}

func mustValue(x any, read bool) history.Value {
	v, err := Value(x)
	if err != nil {
		panic(err)
	}
	if v == history.Null && !read {
		// Only reads may return absent; a write of nil would be a
		// deletion, which the model does not have.
		panic("record: nil written or appended")
	}
	return v
}

func mustList(list any) []history.Value {
	var out []history.Value
	add := func(x any) {
		v, err := Value(x)
		if err != nil {
			panic(err)
		}
		if v == history.Null {
			panic("record: nil element in a list read")
		}
		out = append(out, v)
	}
	switch l := list.(type) {
	case nil:
	case []any:
		for _, x := range l {
			add(x)
		}
	case []int:
		for _, x := range l {
			add(x)
		}
	case []int32:
		for _, x := range l {
			add(x)
		}
	case []int64:
		for _, x := range l {
			add(x)
		}
	case []string:
		for _, x := range l {
			add(x)
		}
	default:
		panic(fmt.Sprintf("record: unsupported list type %T", list))
	}
	return out
}
