package ingest

import (
	"encoding/binary"
	"math"
	"math/bits"
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
// (or the line ends first). Eight bytes at a time (specialByte), then
// byte by byte: as plainEndBytes, which the tests hold it to.
func plainEnd(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := specialByte(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			k := i + bits.TrailingZeros64(m)>>3
			if b[k] == '"' {
				return k
			}
			return -1
		}
	}
	return plainEndBytes(b, i)
}

// plainEndBytes is plainEnd one byte at a time.
func plainEndBytes(b []byte, i int) int {
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

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialByte flags, in the high bit of its byte, the first byte of the
// little-endian word w that is not plainByte (a quote, a backslash, a
// byte below 0x20, 0x7f or above): 0 when there is none. Bytes above
// the first may be flagged wrongly (a borrow or a carry out of the first
// one), so only the lowest flag is read. Each term flags exactly the
// bytes of its class up to its own first one: a quote or a backslash is
// a zero byte of w xor its repetition (the zero-byte test), a control
// byte is below 0x20 with its high bit clear, 0x7f is the byte that
// adding 1 gives a high bit, and a byte above 0x7f has it already.
func specialByte(w uint64) uint64 {
	q := w ^ '"'*ones
	s := w ^ '\\'*ones
	return ((q-ones)&^q | (s-ones)&^s | (w-0x20*ones)&^w | w | (w + ones)) & highs
}

// uintLit returns the literal of a canonical non-negative integer that
// fits int64 starting at b[i], its value and the index after it; ok false
// when b[i] is not a digit or the integer does not fit. The caller checks
// the byte after it: a fraction, an exponent, or a digit after a leading
// 0 is not structural there, and so declines. Eight digits at a time
// (eightDigits: the start and end times are 19), then one at a time: as
// uintLitBytes, which the tests hold it to.
func uintLit(b []byte, i int) (lit []byte, v int64, next int, ok bool) {
	j, n := i, uint64(0)
	if j < len(b) && b[j] == '0' {
		j++
	} else {
		for j+8 <= len(b) {
			d, all := eightDigits(binary.LittleEndian.Uint64(b[j:]))
			if !all {
				break
			}
			n = n*1e8 + d // wraps past 19 digits, which are refused below
			j += 8
		}
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

// uintLitBytes is uintLit one digit at a time.
func uintLitBytes(b []byte, i int) (lit []byte, v int64, next int, ok bool) {
	j, n := i, uint64(0)
	if j < len(b) && b[j] == '0' {
		j++
	} else {
		for j < len(b) && b[j]-'0' <= 9 {
			n = n*10 + uint64(b[j]-'0')
			j++
		}
	}
	if j == i || j-i > 19 || j-i == 19 && n > math.MaxInt64 {
		return nil, 0, 0, false
	}
	return b[i:j], int64(n), j, true
}

// eightDigits is the value of the little-endian word w read as eight
// decimal digits, first byte most significant; all false when a byte is
// not a digit. A digit is 0x30 to 0x39: its high nibble is 3, and still
// is after adding 6 (a carry out of a byte needs a byte of 0xfa or more,
// which the first test refuses). The value: pairs, quads, then the
// eight, each step a multiply that adds the higher-place part times 10,
// 100, 10000 (the parse of simdjson's parse_eight_digits_unrolled).
func eightDigits(w uint64) (v uint64, all bool) {
	if w&(0xf0*ones) != 0x30*ones || (w+0x06*ones)&(0xf0*ones) != 0x30*ones {
		return 0, false
	}
	w -= 0x30 * ones
	w = (w * (10<<8 + 1)) >> 8 & 0x00ff00ff00ff00ff
	w = (w * (100<<16 + 1)) >> 16 & 0x0000ffff0000ffff
	w = (w * (10000<<32 + 1)) >> 32
	return w, true
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
		d.pending = d.pending[:0]
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
	if d.scratch {
		d.resolve()
	}
	return t, true
}

// pendingID is a text of the line whose id the scratch mode looks up
// once the line is accepted (resolve): text, or the small integer n
// when text is nil; the id goes to keyIDs, valIDs or listIDs (dst) at
// index at.
type pendingID struct {
	text []byte
	n    int32
	dst  uint8
	at   int32
	// a, c and h are a short text's words and hash (shortKey), from
	// resolve's first pass.
	a, c, h uint64
}

const (
	pendKey = iota
	pendVal
	pendList
)

// pend numbers text (nil: the small integer n) once the line is read.
func (d *NativeDecoder) pend(text []byte, n int32, dst uint8, at int) {
	d.pending = append(d.pending, pendingID{text: text, n: n, dst: dst, at: int32(at)})
}

// resolve gives each pending text of an accepted line its id, in the
// order the line names them, which is the order decodeSlow numbers them
// in (ids are dense in order of first sight, textIDs): the same ids.
//
// Why not one at a time as the line is read: the short table's slot of a
// key is a cache miss (the table of a 1M history is a few MB, its hot
// keys one per cache line), and between two keys the parsing of an op
// is too long for the processor to reach the next key's load while the
// last one waits. Here the lookups follow each other with nothing else
// between them, so their misses overlap (docs/SEMANTICS.md §10 "The
// scan's ids, looked up after the line").
//
// The first pass hashes the short texts and loads each one's home slot,
// loads that depend on nothing but the line, so that the processor has
// many of them in flight at once; the second pass then finds the slots
// in the cache. The first pass decides nothing: a slot it loaded may
// change before the second pass reads it (a new text of the same line
// taking it), and the second pass reads it then.
func (d *NativeDecoder) resolve() {
	ids := &d.ids
	if ids.short == nil {
		ids.initShort()
	}
	var touch uint32
	for k := range d.pending {
		p := &d.pending[k]
		if n := len(p.text); n > 0 && n <= 16 {
			p.a, p.c, p.h = shortKey(p.text)
			touch += ids.short[p.h>>ids.shift].n
		}
	}
	d.touch = touch // kept, so that the loads are not dropped
	dsts := [3][]int32{d.keyIDs, d.valIDs, d.listIDs}
	for k := range d.pending {
		p := &d.pending[k]
		var id int32
		switch n := len(p.text); {
		case p.text == nil:
			id = ids.smallN(int(p.n), smallInts[p.n])
		case n <= 16:
			id = ids.shortHashed(p.text, p.a, p.c, p.h)
		default:
			id = ids.ofMap(p.text)
		}
		dsts[p.dst][p.at] = id
	}
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
	var text []byte
	switch c := b[i]; {
	case c == '"':
		j := plainEnd(b, i+1)
		if j < 0 {
			return 0, false
		}
		text, i = b[i:j+1], j+1
	case '0' <= c && c <= '9':
		lit, _, j, ok := uintLit(b, i)
		if !ok || j >= len(b) || b[j] != ',' {
			return 0, false // as fastScalar: the whole key, or nothing interned
		}
		text, i = lit, j
	default:
		return 0, false
	}
	if d.scratch {
		// The line's own bytes, which ScanNative's callers may read
		// during their call only (as they may the ID): equal text to
		// the table's. Its id is looked up once the line is read
		// (resolve).
		op.Key = history.Value(unsafe.String(unsafe.SliceData(text), len(text)))
		d.keyIDs = append(d.keyIDs, 0)
		d.pend(text, 0, pendKey, len(d.keyIDs)-1)
	} else {
		op.Key = d.internKey(text)
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
				var v history.Value
				j, ok := 0, false
				if d.scratch {
					// The common element, a small integer numbered
					// before (the counters of gen's lists), without the
					// general scalar's call: fastScalar would read it
					// alike.
					if n, k := smallLit(b, i); k > 0 {
						if id := d.ids.smallKnown(n); id >= 0 {
							v, j, ok = smallInts[n], k, true
							d.listIDs = append(d.listIDs, id)
						}
					}
				}
				if !ok {
					if v, j, ok = d.fastScalar(b, i, pendList); !ok || v == history.Null {
						return 0, false
					}
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
		v, j, ok := d.fastScalar(b, i, pendVal)
		if !ok || v == history.Null && op.Kind != history.Read {
			return 0, false
		}
		op.Value, i = v, j
	}
	if i >= len(b) || b[i] != ']' {
		return 0, false
	}
	return i + 1, true
}

// fastScalar reads a value at b[i] as value() does, and, in scratch
// mode, appends its id (as idOf gives it) to valIDs or listIDs (dst),
// now or once the line is read (resolve): null, a plain string, a
// canonical non-negative integer; ok false for anything else.
func (d *NativeDecoder) fastScalar(b []byte, i int, dst uint8) (v history.Value, next int, ok bool) {
	if i >= len(b) {
		return "", 0, false
	}
	var text []byte
	switch c := b[i]; {
	case c == 'n':
		if len(b)-i >= 4 && string(b[i:i+4]) == "null" {
			d.fastID(NullID, dst)
			return history.Null, i + 4, true
		}
		return "", 0, false
	case c == '"':
		j := plainEnd(b, i+1)
		if j < 0 {
			return "", 0, false
		}
		text, next = b[i:j+1], j+1
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
			// "01"): declined before it is numbered, so that no text
			// the general decoder never sees takes an id (textIDs are
			// dense in order of first sight).
			return "", 0, false
		}
		if n < uint64(len(smallInts)) {
			// smallInt's case: canonical and below 1024.
			v = smallInts[n]
			if d.scratch {
				if id := d.ids.smallKnown(int(n)); id >= 0 {
					d.fastID(id, dst)
				} else {
					d.fastID(0, dst)
					d.pend(nil, int32(n), dst, d.lastAt(dst))
				}
			}
			return v, j, true
		}
		if d.scratch && j-i <= 9 {
			// plainInt's case: numbered by itself.
			d.fastID(IntID(int32(n)), dst)
			return history.Value(unsafe.String(unsafe.SliceData(b[i:j]), j-i)), j, true
		}
		text, next = b[i:j], j
	default:
		return "", 0, false
	}
	if d.scratch {
		// As the key's text (fastOp): the line's bytes, numbered once
		// the line is read.
		d.fastID(0, dst)
		d.pend(text, 0, dst, d.lastAt(dst))
		return history.Value(unsafe.String(unsafe.SliceData(text), len(text))), next, true
	}
	if len(text) <= shortValue {
		return d.internValue(text), next, true
	}
	return history.Value(text), next, true
}

// smallLit reads a canonical integer below len(smallInts) at b[i] that
// a ',' or a ']' follows (fastScalar's small case), and returns it and the
// index after it; next 0 when b[i] starts anything else.
func smallLit(b []byte, i int) (n, next int) {
	j := i
	for ; j < len(b) && j-i < 5; j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		n = n*10 + int(c)
	}
	if j == i || j-i > 1 && b[i] == '0' || n >= len(smallInts) || j >= len(b) || b[j] != ',' && b[j] != ']' {
		return 0, 0
	}
	return n, j
}

// fastID appends id to valIDs or listIDs (dst) in scratch mode.
func (d *NativeDecoder) fastID(id int32, dst uint8) {
	if !d.scratch {
		return
	}
	if dst == pendVal {
		d.valIDs = append(d.valIDs, id)
	} else {
		d.listIDs = append(d.listIDs, id)
	}
}

// lastAt is the index of the id fastID appended last to dst.
func (d *NativeDecoder) lastAt(dst uint8) int {
	if dst == pendVal {
		return len(d.valIDs) - 1
	}
	return len(d.listIDs) - 1
}
