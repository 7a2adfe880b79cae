package online

import (
	"encoding/binary"
	"errors"

	"github.com/streamcheck/streamcheck/history"
)

// The spill's record format: a body in varints and length-prefixed
// strings. JSON cost an eighth of the evicting engine's time. Checkpoints
// store released bodies in it too, after a leading bodyCodec byte
// (snapshot.go): the encoding of statuses and op kinds is durable, and a
// change to it needs a new leading byte.

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendTxn(b []byte, t *history.Txn) []byte {
	b = appendTxnHead(b, t)
	for n := range t.Ops {
		op := &t.Ops[n]
		b = appendOpKind(b, op)
		b = appendStr(b, string(op.Key))
		b = appendOpValues(b, op)
	}
	return b
}

// appendTxnHead writes everything of t before its ops, and their count:
// the part every record kind shares (appendTxn, AppendBodyKeyed).
func appendTxnHead(b []byte, t *history.Txn) []byte {
	b = appendStr(b, t.ID)
	b = appendStr(b, t.Session)
	b = binary.AppendVarint(b, t.Start)
	b = binary.AppendVarint(b, t.End)
	var flags byte
	if t.HasSession {
		flags |= 1
	}
	if t.HasTime {
		flags |= 2
	}
	b = append(b, flags, byte(t.Status))
	b = appendStr(b, t.Pos.Source)
	b = binary.AppendVarint(b, int64(t.Pos.Line))
	b = binary.AppendVarint(b, t.Pos.Offset)
	return binary.AppendUvarint(b, uint64(len(t.Ops)))
}

func appendOpKind(b []byte, op *history.Op) []byte {
	isList := byte(0)
	if op.IsList {
		isList = 1
	}
	return append(b, byte(op.Kind), isList)
}

// appendOpValues writes op's value and list: 0 for a nil list, n+1 and
// the values for n of them.
func appendOpValues(b []byte, op *history.Op) []byte {
	b = appendStr(b, string(op.Value))
	if op.List == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(op.List))+1)
	for _, v := range op.List {
		b = appendStr(b, string(v))
	}
	return b
}

var errSpillRecord = errors.New("malformed spill record")

type spillReader struct {
	b   []byte
	err error
}

func (r *spillReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errSpillRecord, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *spillReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errSpillRecord, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *spillReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errSpillRecord
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// head reads a record's leading fields: what a stub keeps (stubOf).
func (r *spillReader) head() history.Txn {
	var t history.Txn
	t.ID = r.str()
	t.Session = r.str()
	t.Start = r.varint()
	t.End = r.varint()
	flags := r.byte()
	t.HasSession, t.HasTime = flags&1 != 0, flags&2 != 0
	t.Status = history.Status(r.byte())
	return t
}

// decodeStub reads record b's stub (stubOf of its transaction) without
// its ops; its strings are copies.
func decodeStub(b []byte) (history.Txn, error) {
	r := &spillReader{b: b}
	t := r.head()
	return t, r.err
}

func (r *spillReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errSpillRecord, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func decodeTxn(b []byte) (history.Txn, error) {
	r := &spillReader{b: b}
	t, err := r.headAndOps()
	if err != nil {
		return t, err
	}
	for i := range t.Ops {
		op := &t.Ops[i]
		r.opKind(op)
		op.Key = history.Key(r.str())
		if err := r.opValues(op); err != nil {
			return t, err
		}
	}
	if r.err != nil {
		return t, r.err
	}
	return t, nil
}

// headAndOps reads what appendTxnHead wrote and makes t's ops.
func (r *spillReader) headAndOps() (history.Txn, error) {
	t := r.head()
	t.Pos.Source = r.str()
	t.Pos.Line = int(r.varint())
	t.Pos.Offset = r.varint()
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		return t, errSpillRecord
	}
	if n > 0 {
		t.Ops = make([]history.Op, n)
	}
	return t, nil
}

func (r *spillReader) opKind(op *history.Op) {
	op.Kind = history.Kind(r.byte())
	op.IsList = r.byte() == 1
}

// opValues reads what appendOpValues wrote.
func (r *spillReader) opValues(op *history.Op) error {
	op.Value = history.Value(r.str())
	if m := r.uvarint(); m > 0 {
		if m-1 > uint64(len(r.b)) {
			return errSpillRecord
		}
		op.List = make([]history.Value, m-1)
		for j := range op.List {
			op.List[j] = history.Value(r.str())
		}
	}
	return nil
}
