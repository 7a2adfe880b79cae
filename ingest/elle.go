package ingest

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// elleType is an operation's :type.
type elleType uint8

const (
	eNone elleType = iota // absent or not one of the four
	eInvoke
	eOK
	eFail
	eInfo
)

func parseElleType(s string) elleType {
	switch s {
	case "invoke":
		return eInvoke
	case "ok":
		return eOK
	case "fail":
		return eFail
	case "info":
		return eInfo
	}
	return eNone
}

// elleOp is one Jepsen operation, as read from EDN or JSON, before
// invocations and completions are paired into transactions.
type elleOp struct {
	typ      elleType
	typeText string // for messages when typ is eNone
	hasType  bool

	// isTxn: :f is :txn, or absent (Elle's own test histories leave it
	// out).
	isTxn bool

	process    string
	hasProcess bool
	nemesis    bool

	time    int64
	hasTime bool

	index    int64
	hasIndex bool

	ops      []history.Op
	hasValue bool // :value present and not nil

	// lazyValue is an EDN invocation's :value, not yet read (see body and
	// shape).
	lazyValue []byte

	pos     history.Pos
	ordinal int // 1-based position among all operations of the input
}

// Stats counts what ReadHistoryStats read and what it set aside.
type Stats struct {
	Records        int // events (native) or operations (Elle) read
	Txns           int // transactions produced
	IgnoredNemesis int // Elle: operations of the :nemesis process
	IgnoredNonTxn  int // Elle: operations whose :f is not :txn
	Unfinished     int // Elle: invocations with no completion (unknown)
	// SetAside counts records of the peers' formats that say nothing
	// about the database: dbcop events that did not run, reads of
	// aborted transactions (text), exported initial states (doc.go).
	SetAside int
}

// pairElle turns Jepsen operations into transactions (doc.go, "Elle
// pairing"). A history with at least one :txn invocation is paired by
// process; one with none is a completions-only history whose completions
// are the transactions, without timestamps.
func pairElle(ops []elleOp, st *Stats) (*history.History, error) {
	st.Records = len(ops)
	txnOps := ops[:0:0]
	hasInvoke, allIndexed := false, true
	maxTime := int64(math.MinInt64)
	for i := range ops {
		op := &ops[i]
		if op.hasTime {
			maxTime = max(maxTime, op.time)
		}
		switch {
		case op.nemesis:
			st.IgnoredNemesis++
			continue
		case !op.isTxn:
			st.IgnoredNonTxn++
			continue
		}
		if op.typ == eNone {
			if !op.hasType {
				return nil, &history.Error{Pos: op.pos, Field: "type", Err: errors.New("missing")}
			}
			return nil, &history.Error{Pos: op.pos, Field: "type", Err: fmt.Errorf("unknown type %q (want invoke, ok, fail or info)", op.typeText)}
		}
		if op.typ == eInvoke {
			hasInvoke = true
		}
		if !op.hasIndex {
			allIndexed = false
		}
		txnOps = append(txnOps, *op)
	}
	id := func(op *elleOp) string {
		if allIndexed {
			return strconv.FormatInt(op.index, 10)
		}
		return strconv.Itoa(op.ordinal)
	}
	h := &history.History{}
	if !hasInvoke {
		// Completions only: each completion is a transaction; its
		// :time is when it completed, not an interval, so no timestamps.
		for i := range txnOps {
			op := &txnOps[i]
			t := history.Txn{ID: id(op), Session: op.process, HasSession: op.hasProcess, Pos: op.pos}
			t.Status = statusOf(op.typ)
			t.Ops = completedOps(op.ops, t.Status)
			h.Txns = append(h.Txns, t)
		}
		st.Txns = len(h.Txns)
		return h, nil
	}
	// pending maps a process to the index in h.Txns of its open
	// invocation, and to that invocation.
	type open struct {
		txn int
		op  *elleOp
	}
	pending := make(map[string]open)
	for i := range txnOps {
		op := &txnOps[i]
		if op.typ == eInvoke {
			if prev, ok := pending[op.process]; ok {
				return nil, &history.Error{Pos: op.pos, Field: "process", Err: fmt.Errorf("process %s invokes again while its invocation at %s has no completion", processName(op), prev.op.pos)}
			}
			t := history.Txn{ID: id(op), Session: op.process, HasSession: op.hasProcess, Pos: op.pos}
			pending[op.process] = open{txn: len(h.Txns), op: op}
			h.Txns = append(h.Txns, t)
			continue
		}
		inv, ok := pending[op.process]
		if !ok {
			return nil, &history.Error{Pos: op.pos, Field: "type", Err: fmt.Errorf("%s completion of process %s with no invocation", op.typeText, processName(op))}
		}
		delete(pending, op.process)
		t := &h.Txns[inv.txn]
		t.Status = statusOf(op.typ)
		t.Pos = op.pos
		body := op.ops
		if !op.hasValue {
			var err error
			if body, err = inv.op.body(); err != nil {
				return nil, err
			}
		} else if op.typ == eOK {
			if err := sameShape(inv.op, op); err != nil {
				return nil, err
			}
		}
		t.Ops = completedOps(body, t.Status)
		if inv.op.hasTime && op.hasTime {
			if op.time < inv.op.time {
				return nil, &history.Error{Pos: op.pos, ID: t.ID, Field: "time", Err: fmt.Errorf("completion time %d is before invocation time %d", op.time, inv.op.time)}
			}
			t.Start, t.End, t.HasTime = inv.op.time, op.time, true
		}
	}
	// Invocations never completed: the client never learned the outcome.
	for _, p := range pending {
		st.Unfinished++
		t := &h.Txns[p.txn]
		t.Status = history.Unknown
		body, err := p.op.body()
		if err != nil {
			return nil, err
		}
		t.Ops = completedOps(body, history.Unknown)
		if p.op.hasTime {
			// The history's last instant is the latest the outcome was
			// still unknown; the checker treats its end as +∞ anyway
			// unless an in-doubt horizon is given.
			t.Start, t.End, t.HasTime = p.op.time, max(maxTime, p.op.time), true
		}
	}
	st.Txns = len(h.Txns)
	return h, nil
}

// body returns the operation's micro-ops, reading a lazy EDN value with
// the library.
func (op *elleOp) body() ([]history.Op, error) {
	if op.lazyValue == nil {
		return op.ops, nil
	}
	ops, field, err := ednMicroOpsFast(op.lazyValue)
	if err != nil {
		return nil, &history.Error{Pos: op.pos, Field: field, Err: err}
	}
	return ops, nil
}

// shape returns the micro-ops for a shape check: a lazy EDN value is read
// by the form splitter, without the library.
func (op *elleOp) shape() ([]history.Op, error) {
	if op.lazyValue == nil {
		return op.ops, nil
	}
	ops, field, err := ednMicroOpsSplit(op.lazyValue)
	if err != nil {
		return nil, &history.Error{Pos: op.pos, Field: field, Err: err}
	}
	return ops, nil
}

func processName(op *elleOp) string {
	if !op.hasProcess {
		return "(none)"
	}
	return op.process
}

func statusOf(t elleType) history.Status {
	switch t {
	case eOK:
		return history.Committed
	case eFail:
		return history.Aborted
	}
	return history.Unknown
}

// completedOps returns a completion's micro-ops. In a transaction that did
// not commit for sure, a nil read is a read whose result the client never
// saw (Jepsen copies the invocation's [:r k nil]), not a read of an absent
// key, so it is dropped; reads that did return something are kept.
func completedOps(ops []history.Op, st history.Status) []history.Op {
	if st == history.Committed {
		return ops
	}
	out := ops[:0:0]
	for _, op := range ops {
		if op.Kind == history.Read && !op.IsList && op.Value == history.Null {
			continue
		}
		out = append(out, op)
	}
	return out
}

// sameShape checks that an :ok completion reports the transaction its
// invocation submitted: the same micro-ops, functions and keys in order,
// and the same written values. A mismatch means a broken history or a
// mis-pairing, which would otherwise surface as a baffling anomaly.
func sameShape(inv, ok *elleOp) error {
	if !inv.hasValue {
		return nil
	}
	invOps, err := inv.shape()
	if err != nil {
		return err
	}
	bad := func(format string, args ...any) error {
		return &history.Error{Pos: ok.pos, Field: "value", Err: fmt.Errorf("completion does not match its invocation at %s: "+format, append([]any{inv.pos}, args...)...)}
	}
	if len(invOps) != len(ok.ops) {
		return bad("%d micro-ops, invoked %d", len(ok.ops), len(invOps))
	}
	for i := range invOps {
		a, b := &invOps[i], &ok.ops[i]
		switch {
		case a.Kind != b.Kind || a.Key != b.Key:
			return bad("micro-op %d is %s %s, invoked %s %s", i, b.Kind, b.Key, a.Kind, a.Key)
		case a.Kind != history.Read && a.Value != b.Value:
			return bad("micro-op %d writes %s, invoked %s", i, b.Value, a.Value)
		}
	}
	return nil
}
