package ingest

import (
	"math"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// The fast path of the native decoder (docs/SEMANTICS.md §10 "The native
// decoder's fast path").
//
// Recorders and `streamcheck gen` write one spelling of each event: no
// whitespace, field names and strings in printable ASCII with no escape,
// integers in canonical decimal, nothing but the known fields. decodeFast
// reads that spelling in one pass over the line with no general JSON
// machinery (no whitespace skipping between tokens, no escape or UTF-8
// handling, no per-token error bookkeeping), and declines a line the
// moment it sees anything else: whitespace, an escape, a byte outside
// printable ASCII in a string, a negative or non-integer number, true or
// false, null where the general decoder would read it as absent, an
// unknown or repeated field, any error at all. A declined line is read
// again from its start by decodeSlow, which decides it; so every error,
// its field and its column, is the general decoder's, and what decodeFast
// accepts it must read exactly as decodeSlow would (same Txn, same facts,
// same ids, same scratch slices). It shares with decodeSlow what decides
// a result's text: the intern tables, smallInt, plainInt, parseInt and
// finish.
//
// Its state changes on a declined line are undone or harmless: the ops it
// carved from the batch slab are cleared and the slab cut back; the
// scratch slices are reset by decodeSlow; a key or value it interned is
// one decodeSlow interns again, in the same order of first sight (it read
// the same prefix of the line, and decodeSlow fails no earlier on a prefix
// decodeFast accepted), so the dense ids (textIDs) come out the same.

// plainByte marks the bytes a string may hold on the fast path: printable
// ASCII but the quote and the backslash. Such a string is canonical as
// written (history.AppendJSONString would write it back byte for byte).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainEnd returns the index of the quote that closes a string whose
// contents start at b[i], or -1 when a byte before it is not plainByte
// (or the line ends first).
func plainEnd(b []byte, i int) int {
	for ; i < len(b); i++ {
		c := b[i]
		if !plainByte[c] {
			if c == '"' {
				return i
			}
			return -1
		}
	}
	return -1
}

// uintLit returns the literal of a canonical non-negative integer that
// fits int64 starting at b[i], its value and the index after it; ok false
// when b[i] is not a digit or the integer does not fit. The caller checks
// the byte after it: a fraction, an exponent, or a digit after a leading
// 0 is not structural there, and so declines.
func uintLit(b []byte, i int) (lit []byte, v int64, next int, ok bool) {
	j, n := i, uint64(0)
	if j < len(b) && b[j] == '0' {
		j++
	} else {
		for j < len(b) && b[j]-'0' <= 9 {
			n = n*10 + uint64(b[j]-'0')
			j++
		}
	}
	// 19 digits fit a uint64 (parseInt's argument), not always an int64.
	if j == i || j-i > 19 || j-i == 19 && n > math.MaxInt64 {
		return nil, 0, 0, false
	}
	return b[i:j], int64(n), j, true
}

// decodeFast reads line if it has the common spelling (see above) and
// is a valid event; ok false otherwise, and then the caller reads it
// with decodeSlow.
func (d *NativeDecoder) decodeFast(line []byte, pos history.Pos) (t history.Txn, ok bool) {
	b := line
	t.Pos = pos
	d.facts = history.Facts{}
	if d.scratch {
		d.lists, d.keyIDs, d.valIDs, d.listIDs = d.lists[:0], d.keyIDs[:0], d.valIDs[:0], d.listIDs[:0]
	}
	// slabAt is where this line's ops start in the batch slab, -1 while
	// it has none there: a declined line gives them back.
	slabAt := -1
	decline := func() (history.Txn, bool) {
		if slabAt >= 0 {
			clear(d.slab[slabAt:])
			d.slab = d.slab[:slabAt]
		}
		return history.Txn{}, false
	}
	var seen int
	var start, end int64
	var hasStart, hasEnd bool
	if len(b) < 2 || b[0] != '{' {
		return decline()
	}
	i := 1
	for {
		// "name":
		if i >= len(b) || b[i] != '"' {
			return decline()
		}
		j := plainEnd(b, i+1)
		if j < 0 || j+1 >= len(b) || b[j+1] != ':' {
			return decline()
		}
		bit := 0
		switch string(b[i+1 : j]) { // no allocation
		case "session":
			bit = fSession
		case "id":
			bit = fID
		case "start":
			bit = fStart
		case "end":
			bit = fEnd
		case "status":
			bit = fStatus
		case "ops":
			bit = fOps
		case "commit_ts":
			bit = fCommitTS
		case "start_ts":
			bit = fStartTS
		case "xid":
			bit = fXid
		case "snapshot":
			bit = fSnapshot
		}
		if bit == 0 || seen&bit != 0 {
			return decline() // unknown (skipped, validated) or an error
		}
		seen |= bit
		i = j + 2
		if i >= len(b) {
			return decline()
		}
		switch bit {
		case fSession, fID, fStatus, fSnapshot:
			// A plain non-empty string (null, an integer, an escape:
			// the general decoder's).
			if b[i] != '"' {
				return decline()
			}
			j := plainEnd(b, i+1)
			if j <= i+1 {
				return decline()
			}
			raw := b[i+1 : j]
			i = j + 1
			switch bit {
			case fSession:
				t.Session, t.HasSession = d.internSession(raw), true
			case fID:
				if d.scratch {
					// As nameField: the line's bytes, valid until the
					// next Decode.
					t.ID = unsafe.String(unsafe.SliceData(raw), len(raw))
				} else {
					t.ID = string(raw)
				}
			case fStatus:
				st, ok := history.ParseStatus(string(raw))
				if !ok {
					return decline()
				}
				t.Status = st
			case fSnapshot:
				snap, err := history.ParseSnapshot(string(raw))
				if err != nil {
					return decline()
				}
				d.facts.Snap, d.facts.Has = snap, d.facts.Has|history.HasSnapshot
			}
		case fStart, fEnd, fCommitTS, fStartTS, fXid:
			_, v, j, ok := uintLit(b, i)
			if !ok {
				return decline()
			}
			i = j
			switch bit {
			case fStart:
				start, hasStart = v, true
			case fEnd:
				end, hasEnd = v, true
			case fCommitTS:
				d.facts.CommitTS, d.facts.Has = v, d.facts.Has|history.HasCommitTS
			case fStartTS:
				d.facts.StartTS, d.facts.Has = v, d.facts.Has|history.HasStartTS
			case fXid:
				d.facts.Xid, d.facts.Has = uint64(v), d.facts.Has|history.HasXid
			}
		case fOps:
			var ok bool
			if t.Ops, i, slabAt, ok = d.fastOps(b, i); !ok {
				return decline()
			}
		}
		if i >= len(b) {
			return decline()
		}
		if b[i] == ',' {
			i++
			continue
		}
		if b[i] != '}' {
			return decline()
		}
		i++
		break
	}
	for ; i < len(b); i++ { // the line end, as ScanNative passes it
		switch b[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return decline()
		}
	}
	if d.finish(&t, seen, start, end, hasStart, hasEnd, pos) != nil {
		return decline()
	}
	return t, true
}

// fastOps reads the ops array at b[i] like decodeOps (and its slab
// variant), storing the ops where they store them. slabAt is where the
// ops start in the batch slab (-1: not there); on ok false nothing is
// left in the slab.
func (d *NativeDecoder) fastOps(b []byte, i int) (ops []history.Op, next, slabAt int, ok bool) {
	if b[i] != '[' {
		return nil, 0, -1, false
	}
	i++
	if i < len(b) && b[i] == ']' {
		return nil, i + 1, -1, true
	}
	// Each op is read in place, in its slot, not returned and copied
	// (an op is 56 bytes: the copies were a sixth of the fast path).
	if d.batch {
		at := len(d.slab)
		for {
			if len(d.slab) == cap(d.slab) {
				// As decodeOpsSlab: the transaction's ops so far move
				// to a new slab.
				n := len(d.slab) - at
				slab := make([]history.Op, n, max(opSlab, 2*n))
				copy(slab, d.slab[at:])
				clear(d.slab[at:])
				d.slab, at = slab, 0
			}
			d.slab = d.slab[:len(d.slab)+1]
			op := &d.slab[len(d.slab)-1]
			*op = history.Op{} // decodeOpsSlab may leave a failed line's ops past the end
			j, ok := d.fastOp(op, b, i)
			if ok {
				if i = j; i < len(b) && b[i] == ',' {
					i++
					continue
				}
				if i < len(b) && b[i] == ']' {
					return d.slab[at:len(d.slab):len(d.slab)], i + 1, at, true
				}
			}
			clear(d.slab[at:])
			d.slab = d.slab[:at]
			return nil, 0, -1, false
		}
	}
	d.ops = d.ops[:0]
	for {
		if len(d.ops) == cap(d.ops) {
			d.ops = append(d.ops, history.Op{})
		} else {
			d.ops = d.ops[:len(d.ops)+1]
			d.ops[len(d.ops)-1] = history.Op{}
		}
		j, ok := d.fastOp(&d.ops[len(d.ops)-1], b, i)
		if !ok {
			return nil, 0, -1, false
		}
		if i = j; i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == ']' {
			i++
			break
		}
		return nil, 0, -1, false
	}
	if d.scratch {
		return d.ops, i, -1, true
	}
	// One exact allocation per transaction, as decodeOps.
	return append([]history.Op(nil), d.ops...), i, -1, true
}

// fastOp reads one micro-op ["f",key,value] at b[i] into *op (zero) as
// decodeOp does.
func (d *NativeDecoder) fastOp(op *history.Op, b []byte, i int) (next int, ok bool) {
	if len(b)-i < 8 || b[i] != '[' || b[i+1] != '"' {
		return 0, false
	}
	i += 2
	switch {
	case b[i] == 'r' && b[i+1] == '"':
		op.Kind, i = history.Read, i+2
	case b[i] == 'w' && b[i+1] == '"':
		op.Kind, i = history.Write, i+2
	case len(b)-i >= 7 && string(b[i:i+7]) == `append"`:
		op.Kind, i = history.Append, i+7
	default:
		return 0, false
	}
	if i+1 >= len(b) || b[i] != ',' {
		return 0, false
	}
	i++
	// The key: as key(), a string's text with its quotes, an integer's
	// literal; interned.
	d.lastID = -1
	switch c := b[i]; {
	case c == '"':
		j := plainEnd(b, i+1)
		if j < 0 {
			return 0, false
		}
		op.Key = d.fastKey(b[i : j+1])
		i = j + 1
	case '0' <= c && c <= '9':
		lit, _, j, ok := uintLit(b, i)
		if !ok || j >= len(b) || b[j] != ',' {
			return 0, false // as fastScalar: the whole key, or nothing interned
		}
		op.Key = d.fastKey(lit)
		i = j
	default:
		return 0, false
	}
	if d.scratch {
		d.keyIDs = append(d.keyIDs, d.lastID) // internKey's id
	}
	if i+1 >= len(b) || b[i] != ',' {
		return 0, false
	}
	i++
	if b[i] == '[' {
		// A list read: elements are non-null scalars.
		if op.Kind != history.Read {
			return 0, false
		}
		i++
		op.IsList = true
		if d.scratch {
			d.valIDs = append(d.valIDs, int32(len(d.listIDs)))
		}
		// The elements go straight to where the op's List will be:
		// ScanNative's list space, or d.vals to be copied once.
		vals, base := d.vals[:0], 0
		if d.scratch {
			vals, base = d.lists, len(d.lists)
		}
		if i < len(b) && b[i] == ']' {
			i++
		} else {
			for {
				v, id, j, ok := d.fastScalar(b, i)
				if !ok || v == history.Null {
					return 0, false
				}
				if d.scratch {
					d.listIDs = append(d.listIDs, id)
				}
				vals = append(vals, v)
				if i = j; i < len(b) && b[i] == ',' {
					i++
					continue
				}
				if i < len(b) && b[i] == ']' {
					i++
					break
				}
				return 0, false
			}
		}
		if d.scratch {
			d.lists = vals
			if len(vals) > base {
				op.List = vals[base:len(vals):len(vals)]
			}
		} else if d.vals = vals; len(vals) > 0 {
			op.List = append([]history.Value(nil), vals...)
		}
	} else {
		v, id, j, ok := d.fastScalar(b, i)
		if !ok || v == history.Null && op.Kind != history.Read {
			return 0, false
		}
		if d.scratch {
			d.valIDs = append(d.valIDs, id)
		}
		op.Value, i = v, j
	}
	if i >= len(b) || b[i] != ']' {
		return 0, false
	}
	return i + 1, true
}

// fastKey is internKey for a key text read from the line as it stands.
// In scratch mode the op's Key is the line's own bytes, which ScanNative's
// callers may read during their call only (as they may the ID): equal
// text to the table's, without a load of the table's entry, a cache miss
// per op on a history of many keys.
func (d *NativeDecoder) fastKey(text []byte) history.Value {
	if d.scratch {
		d.lastID = d.ids.of(text)
		return history.Value(unsafe.String(unsafe.SliceData(text), len(text)))
	}
	return d.internKey(text)
}

// fastScalar reads a value at b[i] as value() does, and, in scratch mode,
// its id as idOf gives it: null, a plain string, a canonical non-negative
// integer; ok false for anything else.
func (d *NativeDecoder) fastScalar(b []byte, i int) (v history.Value, id int32, next int, ok bool) {
	if i >= len(b) {
		return "", 0, 0, false
	}
	switch c := b[i]; {
	case c == 'n':
		if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
			return history.Null, NullID, i + 4, true
		}
	case c == '"':
		j := plainEnd(b, i+1)
		if j < 0 {
			return "", 0, 0, false
		}
		text := b[i : j+1]
		if len(text) <= shortValue {
			v = d.internKey(text)
			return v, d.lastID, j + 1, true
		}
		v = history.Value(text)
		if d.scratch {
			id = d.ids.of(text)
		}
		return v, id, j + 1, true
	case '0' <= c && c <= '9':
		// The digits and their value in one pass (uintLit's rules).
		j, n := i+1, uint64(c-'0')
		if c != '0' {
			for j < len(b) && b[j]-'0' <= 9 {
				n = n*10 + uint64(b[j]-'0')
				j++
			}
		}
		if j-i > 19 || j-i == 19 && n > math.MaxInt64 || j >= len(b) || b[j] != ',' && b[j] != ']' {
			// Beyond int64, or not the whole number ("1.5", "1e3",
			// "01"): declined before it is interned, so that no text
			// the general decoder never sees takes an id (textIDs are
			// dense in order of first sight).
			return "", 0, 0, false
		}
		lit := b[i:j]
		if n < uint64(len(smallInts)) {
			// smallInt's case: canonical and below 1024.
			v = smallInts[n]
			if d.scratch {
				id = d.ids.smallN(int(n), v)
			}
			return v, id, j, true
		}
		if d.scratch && j-i <= 9 {
			// plainInt's case: numbered by itself.
			return history.Value(lit), IntID(int32(n)), j, true
		}
		if len(lit) <= shortValue {
			v = d.internKey(lit)
			return v, d.lastID, j, true
		}
		v = history.Value(lit)
		if d.scratch {
			id = d.ids.of(lit)
		}
		return v, id, j, true
	}
	return "", 0, 0, false
}
