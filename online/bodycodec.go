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
	b = appendTxnHead(b, t)
	for n := range t.Ops {
		op := &t.Ops[n]
		b = appendOpKind(b, op)
		b = binary.AppendUvarint(b, uint64(ids[n]))
		b = appendOpValues(b, op)
	}
	return b
}

// DecodeBodyKeyed reads a record AppendBodyKeyed wrote, keys[id] being
// key id's text; an id out of keys' range makes the record malformed.
func DecodeBodyKeyed(b []byte, keys []history.Key) (history.Txn, error) {
	r := &spillReader{b: b}
	t, err := r.headAndOps()
	if err != nil {
		return t, err
	}
	for i := range t.Ops {
		op := &t.Ops[i]
		r.opKind(op)
		id := r.uvarint()
		if id >= uint64(len(keys)) {
			return t, errSpillRecord
		}
		op.Key = keys[id]
		if err := r.opValues(op); err != nil {
			return t, err
		}
	}
	if r.err != nil {
		return t, r.err
	}
	return t, nil
}
