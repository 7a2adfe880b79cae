package online

import (
	"encoding/binary"

	"github.com/streamcheck/streamcheck/history"
)

// AppendBody appends t in the body file's record encoding (spillcodec.go)
// and DecodeBody reads it back: exported for another engine that keeps
// released transactions in a BodyFile (stamponline's call log), so that
// there is one codec for bodies, not two.
func AppendBody(b []byte, t *history.Txn) []byte { return appendTxn(b, t) }

// DecodeBody reads a record AppendBody wrote.
func DecodeBody(b []byte) (history.Txn, error) { return decodeTxn(b) }

// AppendBodyKeyed is AppendBody with each op's key written as a number,
// ids[n] for op n, where AppendBody writes its text; DecodeBodyKeyed
// reads it back with the numbering's keys. It is for a log that numbers
// its keys once (stamponline's call log): copying each op's key text
// into every record read the text's bytes, a cache miss per op at a few
// thousand keys scattered over the heap, and made the record a third
// longer on the 1M stamped streams (BENCHMARKS.md "stampsrun29 (issue
// 29): the call log by key ids"). Every other field is AppendBody's, in
// its order.
func AppendBodyKeyed(b []byte, t *history.Txn, ids []int32) []byte {
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
	b = binary.AppendUvarint(b, uint64(len(t.Ops)))
	for n := range t.Ops {
		op := &t.Ops[n]
		isList := byte(0)
		if op.IsList {
			isList = 1
		}
		b = append(b, byte(op.Kind), isList)
		b = binary.AppendUvarint(b, uint64(ids[n]))
		b = appendStr(b, string(op.Value))
		// 0: a nil list; n+1: n values.
		if op.List == nil {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(op.List))+1)
		for _, v := range op.List {
			b = appendStr(b, string(v))
		}
	}
	return b
}

// DecodeBodyKeyed reads a record AppendBodyKeyed wrote, keys[id] being
// key id's text; an id out of keys' range makes the record malformed.
func DecodeBodyKeyed(b []byte, keys []history.Key) (history.Txn, error) {
	r := &spillReader{b: b}
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
	for i := range t.Ops {
		op := &t.Ops[i]
		op.Kind = history.Kind(r.byte())
		op.IsList = r.byte() == 1
		id := r.uvarint()
		if id >= uint64(len(keys)) {
			return t, errSpillRecord
		}
		op.Key = keys[id]
		op.Value = history.Value(r.str())
		if m := r.uvarint(); m > 0 {
			if m-1 > uint64(len(r.b)) {
				return t, errSpillRecord
			}
			op.List = make([]history.Value, m-1)
			for j := range op.List {
				op.List[j] = history.Value(r.str())
			}
		}
	}
	if r.err != nil {
		return t, r.err
	}
	return t, nil
}
