package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// AppendBody appends t in the body file's record encoding (spillcodec.go)
// and DecodeBody reads it back: exported for another engine that keeps
// released transactions in a BodyFile (stamponline's call log), so that
// there is one codec for bodies, not two.
//
// It writes exactly appendTxn's bytes (TestAppendBodyAsAppendTxn), in one
// pass that first sizes the record and grows b once: `run --stamps` logs
// every transaction it releases, and appendTxn's per-field appends (a
// capacity check and a varint call each, about 30 a transaction) were a
// twentieth of its instructions (BENCHMARKS.md "stampsrun29").
func AppendBody(b []byte, t *history.Txn) []byte {
	n := strSize(t.ID) + strSize(t.Session) + varintSize(t.Start) + varintSize(t.End) + 2 +
		strSize(t.Pos.Source) + varintSize(int64(t.Pos.Line)) + varintSize(t.Pos.Offset) + uvarintSize(uint64(len(t.Ops)))
	for i := range t.Ops {
		op := &t.Ops[i]
		n += 2 + strSize(op.Key) + strSize(op.Value)
		if op.List == nil {
			n++
			continue
		}
		n += uvarintSize(uint64(len(op.List)) + 1)
		for _, v := range op.List {
			n += strSize(v)
		}
	}
	i := len(b)
	b = slices.Grow(b, n)[:i+n]
	i = putStr(b, i, t.ID)
	i = putStr(b, i, t.Session)
	i = putVarint(b, i, t.Start)
	i = putVarint(b, i, t.End)
	var flags byte
	if t.HasSession {
		flags |= 1
	}
	if t.HasTime {
		flags |= 2
	}
	b[i], b[i+1] = flags, byte(t.Status)
	i += 2
	i = putStr(b, i, t.Pos.Source)
	i = putVarint(b, i, int64(t.Pos.Line))
	i = putVarint(b, i, t.Pos.Offset)
	i = putUvarint(b, i, uint64(len(t.Ops)))
	for k := range t.Ops {
		op := &t.Ops[k]
		isList := byte(0)
		if op.IsList {
			isList = 1
		}
		b[i], b[i+1] = byte(op.Kind), isList
		i = putStr(b, i+2, op.Key)
		i = putStr(b, i, op.Value)
		// 0: a nil list; n+1: n values.
		if op.List == nil {
			b[i] = 0
			i++
			continue
		}
		i = putUvarint(b, i, uint64(len(op.List))+1)
		for _, v := range op.List {
			i = putStr(b, i, v)
		}
	}
	return b
}

// DecodeBody reads a record AppendBody wrote.
func DecodeBody(b []byte) (history.Txn, error) { return decodeTxn(b) }

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// varintSize is the size of binary.AppendVarint's zig-zag encoding.
func varintSize(v int64) int {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return uvarintSize(u)
}

func strSize[S ~string](s S) int { return uvarintSize(uint64(len(s))) + len(s) }

// putUvarint writes v at b[i:] as binary.AppendUvarint would append it,
// and returns the index after it; b has room (AppendBody sized it).
func putUvarint(b []byte, i int, v uint64) int {
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

func putVarint(b []byte, i int, v int64) int {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return putUvarint(b, i, u)
}

// putStr writes s length-prefixed (appendStr).
func putStr[S ~string](b []byte, i int, s S) int {
	if len(s) < 0x80 {
		b[i] = byte(len(s))
		i++
	} else {
		i = putUvarint(b, i, uint64(len(s)))
	}
	return i + copy(b[i:], s)
}
