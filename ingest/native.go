package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// NativeDecoder decodes native events, one JSON object per line (or per
// Kafka message), into history.Txn. It is reusable and not safe for
// concurrent use: give each decoding goroutine its own. It keeps a bounded
// intern table for keys and sessions, which repeat from event to event, so
// that they are allocated once and shared by every Txn that mentions them.
//
// The zero value is ready to use.
type NativeDecoder struct {
	s scanner
	// short and keys are Decode's intern table of keys, for texts of up
	// to 16 bytes (most keys) and for longer ones; shortVals is the one
	// of short values (pg32_intern.go).
	short     shortIntern
	shortVals shortIntern
	keys      map[string]history.Value
	sessions  map[string]string
	ops       []history.Op // scratch for the current event's ops
	// slab, when batch is set, is where ops are carved from: a whole
	// history read at once lives and dies together, so one allocation per
	// few thousand ops replaces one per transaction.
	slab  []history.Op
	batch bool
	vals  []history.Value // scratch for the current list read
	// scratch: the ops (and list reads) of a decoded event stay in the
	// decoder's buffers, valid until the next Decode (ScanNative: the
	// caller copies what it keeps, in its own compact form, so that a
	// whole history is never held as []history.Op).
	scratch bool
	lists   []history.Value // scratch mode: the current event's list reads
	// ids, in scratch mode, numbers every key and value text densely
	// (textIDs): equal ids are equal texts, so a caller compares ints and
	// never hashes a key again (ScanNative's Event).
	ids textIDs
	// Per op of the current event in scratch mode: the key's id, the
	// value's (a list read: the offset of its elements' ids in listIDs).
	keyIDs, valIDs, listIDs []int32
	lastID                  int32 // the id internKey gave, -1: none yet
	// pending, in scratch mode on the fast path, are the line's texts
	// still to be numbered (resolve).
	pending []pendingID
	touch   uint32 // resolve's loads ahead, summed

	// facts are the database facts of the event just decoded (Facts).
	facts history.Facts

	// elle: reading Elle JSON micro-ops, whose functions may keep
	// Clojure's keyword spelling (":r").
	elle bool

	// slow turns decodeFast off: every line takes the general decoder
	// (the tests' reference for the fast one).
	slow bool
}

// internLimit bounds each intern table; a full table is cleared, which only
// costs allocations later (a stream of ever-new UUID keys must not grow it
// without bound).
const internLimit = 1 << 16

// opSlab is the batch decoder's slab size in ops.
const opSlab = 4096

func (d *NativeDecoder) internKey(b []byte) history.Value {
	if d.scratch {
		id := d.ids.of(b)
		d.lastID = id
		return d.ids.text[id]
	}
	if len(b) > 0 && len(b) <= 16 {
		return d.short.get(b)
	}
	if v, ok := d.keys[string(b)]; ok {
		return v
	}
	if d.keys == nil || len(d.keys) >= internLimit {
		d.keys = make(map[string]history.Value, 256)
	}
	v := history.Value(b)
	d.keys[string(v)] = v
	return v
}

func (d *NativeDecoder) internSession(b []byte) string {
	if v, ok := d.sessions[string(b)]; ok {
		return v
	}
	if d.sessions == nil || len(d.sessions) >= internLimit {
		d.sessions = make(map[string]string, 64)
	}
	v := string(b)
	d.sessions[v] = v
	return v
}

// Native field bits, for duplicate detection.
const (
	fSession = 1 << iota
	fID
	fStart
	fEnd
	fStatus
	fOps
	fCommitTS
	fStartTS
	fXid
	fSnapshot
)

var nativeFields = [...]struct {
	name string
	bit  int
}{
	{"session", fSession}, {"id", fID}, {"start", fStart}, {"end", fEnd}, {"status", fStatus}, {"ops", fOps},
	{"commit_ts", fCommitTS}, {"start_ts", fStartTS}, {"xid", fXid}, {"snapshot", fSnapshot},
}

// decodeError is a decoding failure before it is placed (history.Error).
type decodeError struct {
	field string
	col   int // 1-based byte column in the line; 0 when not useful
	err   error
}

// Decode decodes one native event. pos says where the line came from; the
// Txn carries it, and errors name it (a *history.Error with the field and
// the byte column; with pos.Line > 0, pos.Offset is taken to be the line's
// byte offset and the error's Pos.Offset is the offending byte's). line must hold exactly one JSON object; surrounding
// whitespace is allowed. Decode copies what it keeps: line may be reused
// after it returns.
//
// Rules (doc.go, "Native format", has the reasons): status and ops are
// required; session and id are strings or integers; start and end are
// int64 nanoseconds, both or neither, end >= start; a micro-op is
// [f, key, value] with f r, w or append; keys are integers or strings;
// values are any JSON scalar, null only for a read; a read's value may be an
// array of scalars (a list read). Unknown fields are skipped (but must be
// well-formed JSON); a known field given twice is an error.
func (d *NativeDecoder) Decode(line []byte, pos history.Pos) (history.Txn, error) {
	t, derr := d.decode(line, pos)
	if derr != nil {
		return history.Txn{}, nativeError(pos, t.ID, derr)
	}
	return t, nil
}

func nativeError(pos history.Pos, id string, de *decodeError) error {
	err := de.err
	if de.col > 0 {
		err = fmt.Errorf("column %d: %w", de.col, err)
		if pos.Line > 0 {
			// A file: Offset is the line's byte offset; make it the
			// error's. Without lines (Kafka) Offset is the message's
			// offset and stays.
			pos.Offset += int64(de.col - 1)
		}
	}
	return &history.Error{Pos: pos, ID: id, Field: de.field, Err: err}
}

// Facts returns the database facts (commit_ts, start_ts, xid, snapshot;
// docs/SEMANTICS.md §10) of the event the last successful Decode returned;
// zero Has when it carried none. They are not fields of history.Txn (see
// history.History.Facts), so the caller that keeps them stores them.
func (d *NativeDecoder) Facts() history.Facts { return d.facts }

func (d *NativeDecoder) decode(line []byte, pos history.Pos) (history.Txn, *decodeError) {
	if !d.slow && !d.elle {
		if t, ok := d.decodeFast(line, pos); ok {
			return t, nil
		}
	}
	return d.decodeSlow(line, pos)
}

// decodeSlow is the general decoder: every spelling JSON allows, every
// error with its field and column. decodeFast hands it every line it
// does not read to the end itself, and tests hold the two to the same
// results (native_fast_test.go).
func (d *NativeDecoder) decodeSlow(line []byte, pos history.Pos) (history.Txn, *decodeError) {
	var t history.Txn
	t.Pos = pos
	d.facts = history.Facts{}
	if d.scratch {
		// The previous event's are the caller's no more.
		d.lists, d.keyIDs, d.valIDs, d.listIDs = d.lists[:0], d.keyIDs[:0], d.valIDs[:0], d.listIDs[:0]
	}
	s := &d.s
	s.reset(line)
	var seen int
	var start, end int64
	var hasStart, hasEnd bool
	field := ""
	fail := func() *decodeError {
		return &decodeError{field: field, col: s.at + 1, err: s.err}
	}
	if s.peek() != '{' {
		s.unexpected("'{' (a native event is one JSON object)")
		return t, fail()
	}
	if s.open('{', '}') {
		for {
			field = ""
			name, esc := s.rawString()
			if s.err != nil {
				return t, fail()
			}
			if esc { // "st\u0061tus" is "status", as for encoding/json
				s.scratch = unescape(s.scratch[:0], name)
				name = s.scratch
			}
			bit := 0
			for _, f := range nativeFields {
				if string(name) == f.name { // no allocation
					bit = f.bit
					field = f.name
				}
			}
			if bit != 0 && seen&bit != 0 {
				return t, &decodeError{field: field, err: errors.New("given twice")}
			}
			seen |= bit
			if !s.expect(':') {
				return t, fail()
			}
			switch bit {
			case fSession:
				t.Session, t.HasSession = d.nameField(true)
			case fID:
				t.ID, _ = d.nameField(false)
			case fStart:
				start, hasStart = s.int64Field()
			case fEnd:
				end, hasEnd = s.int64Field()
			case fStatus:
				if s.peek() != '"' {
					s.unexpected("a string: committed, aborted or unknown")
					return t, fail()
				}
				c := s.i
				st := s.str()
				if s.err != nil {
					return t, fail()
				}
				var ok bool
				if t.Status, ok = history.ParseStatus(st); !ok {
					return t, &decodeError{field: field, col: c + 1, err: fmt.Errorf("unknown status %q (want committed, aborted or unknown)", st)}
				}
			case fOps:
				var de *decodeError
				if t.Ops, de = d.decodeOps("ops"); de != nil {
					return t, de
				}
			case fCommitTS, fStartTS, fXid:
				if de := d.stampField(bit, field); de != nil {
					return t, de
				}
			case fSnapshot:
				if s.peek() == 'n' {
					s.literal()
					break
				}
				if s.peek() != '"' {
					s.unexpected(`a string "xmin:xmax:xip,..." (pg_current_snapshot())`)
					return t, fail()
				}
				c := s.i
				text := s.str()
				if s.err != nil {
					return t, fail()
				}
				snap, err := history.ParseSnapshot(text)
				if err != nil {
					return t, &decodeError{field: field, col: c + 1, err: err}
				}
				d.facts.Snap, d.facts.Has = snap, d.facts.Has|history.HasSnapshot
			default:
				// Named in errors too: an unknown field must still be
				// well-formed UTF-8 JSON.
				field = string(name)
				s.skip(0)
			}
			if s.err != nil {
				return t, fail()
			}
			if !s.more('}') {
				break
			}
		}
	}
	field = ""
	if s.err != nil {
		return t, fail()
	}
	if s.peek() != 0 {
		s.fail(s.i, "data after the event object")
		return t, fail()
	}
	return t, d.finish(&t, seen, start, end, hasStart, hasEnd, pos)
}

// finish applies the rules that span fields once every field is read:
// status and ops required, start and end together and in order, the
// default id, the facts against the transaction. Both decoders end with
// it, so that they cannot differ there.
func (d *NativeDecoder) finish(t *history.Txn, seen int, start, end int64, hasStart, hasEnd bool, pos history.Pos) *decodeError {
	if seen&fStatus == 0 {
		return &decodeError{field: "status", err: errors.New("missing (want committed, aborted or unknown)")}
	}
	if seen&fOps == 0 {
		return &decodeError{field: "ops", err: errors.New("missing")}
	}
	switch {
	case hasStart && hasEnd:
		if end < start {
			return &decodeError{field: "end", err: fmt.Errorf("end %d is before start %d", end, start)}
		}
		t.Start, t.End, t.HasTime = start, end, true
	case hasStart:
		return &decodeError{field: "end", err: errors.New("missing (start and end come together)")}
	case hasEnd:
		return &decodeError{field: "start", err: errors.New("missing (start and end come together)")}
	}
	if t.ID == "" { // absent or null
		t.ID = defaultID(t, pos)
	}
	if d.facts.Has != 0 {
		if err := d.facts.Validate(t); err != nil {
			var he *history.Error
			if errors.As(err, &he) {
				return &decodeError{field: he.Field, err: he.Err}
			}
			return &decodeError{err: err}
		}
	}
	return nil
}

// stampField reads commit_ts, start_ts or xid: a non-negative integer that
// fits int64, or null for absent. Negative stamps are refused: no database
// of docs/SEMANTICS.md §10 gives one, so one is a recorder's bug.
func (d *NativeDecoder) stampField(bit int, field string) *decodeError {
	s := &d.s
	at := s.i
	v, ok := s.int64Field()
	if s.err != nil {
		return &decodeError{field: field, col: s.at + 1, err: s.err}
	}
	if !ok {
		return nil
	}
	if v < 0 {
		return &decodeError{field: field, col: at + 1, err: fmt.Errorf("%d is negative (a database stamp is a non-negative integer)", v)}
	}
	switch bit {
	case fCommitTS:
		d.facts.CommitTS, d.facts.Has = v, d.facts.Has|history.HasCommitTS
	case fStartTS:
		d.facts.StartTS, d.facts.Has = v, d.facts.Has|history.HasStartTS
	case fXid:
		d.facts.Xid, d.facts.Has = uint64(v), d.facts.Has|history.HasXid
	}
	return nil
}

// defaultID names a transaction whose event has no id: "<session>-<line>"
// or the line number alone (the Kafka offset when there are no lines). Line
// numbers are unique within a file; an explicit id that collides is caught
// by History.Validate as a duplicate.
func defaultID(t *history.Txn, pos history.Pos) string {
	n := int64(pos.Line)
	if n == 0 {
		n = pos.Offset
	}
	if t.HasSession {
		return t.Session + "-" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// nameField reads a session or an id: a non-empty string (its decoded
// text) or an integer (its decimal text), or null for absent. Session 1 and
// session "1" are one session: both read "1" (doc.go).
func (d *NativeDecoder) nameField(session bool) (string, bool) {
	s := &d.s
	at := s.i
	switch c := s.peek(); {
	case c == 'n':
		s.literal()
		return "", false
	case c == '"':
		raw, esc := s.rawString()
		if s.err != nil {
			return "", false
		}
		if len(raw) == 0 {
			s.fail(at, "empty string")
			return "", false
		}
		if !esc && (plainASCII(raw) || utf8.Valid(raw)) {
			if session {
				return d.internSession(raw), true
			}
			if d.scratch {
				// The line's own bytes, valid as the ops are: until
				// the next Decode (ScanNative's callers copy ids).
				return unsafe.String(unsafe.SliceData(raw), len(raw)), true
			}
			return string(raw), true
		}
		s.scratch = unescape(s.scratch[:0], raw)
		return string(s.scratch), true
	case c == '-' || '0' <= c && c <= '9':
		lit, kind := s.number()
		if s.err != nil {
			return "", false
		}
		if kind != numInt {
			s.fail(at, "%s is not an integer or a string", lit)
			return "", false
		}
		v, err := intValue(lit)
		if err != nil {
			s.fail(at, "integer %s is %v", lit, err)
			return "", false
		}
		if session {
			return d.internSession([]byte(v)), true
		}
		return string(v), true
	}
	s.unexpected("a string or an integer")
	return "", false
}

// decodeOps reads an array of micro-ops; field names the array in errors
// ("ops" for native events, "value" for Elle operations).
func (d *NativeDecoder) decodeOps(field string) ([]history.Op, *decodeError) {
	s := &d.s
	d.ops = d.ops[:0]
	if s.peek() != '[' {
		s.unexpected("an array of micro-ops")
		return nil, &decodeError{field: field, col: s.at + 1, err: s.err}
	}
	if d.batch {
		return d.decodeOpsSlab(field)
	}
	if s.open('[', ']') {
		for {
			op, de := d.decodeOp(field, len(d.ops))
			if de != nil {
				return nil, de
			}
			d.ops = append(d.ops, op)
			if !s.more(']') {
				break
			}
		}
	}
	if s.err != nil {
		return nil, &decodeError{field: field, col: s.at + 1, err: s.err}
	}
	if len(d.ops) == 0 {
		return nil, nil
	}
	if d.scratch {
		return d.ops, nil
	}
	// One exact allocation per transaction: a shared slab would let one
	// long-lived transaction pin its neighbours' ops in the online window.
	return append([]history.Op(nil), d.ops...), nil
}

// decodeOpsSlab is decodeOps for the batch decoder: the ops go straight
// into the slab, not through d.ops and a copy (at 1M transactions that
// copy, with its write barriers, was a fifth of decoding); a
// transaction whose ops outgrow the slab moves them to a new one.
func (d *NativeDecoder) decodeOpsSlab(field string) ([]history.Op, *decodeError) {
	s := &d.s
	at := len(d.slab)
	if s.open('[', ']') {
		for {
			op, de := d.decodeOp(field, len(d.slab)-at)
			if de != nil {
				d.slab = d.slab[:at]
				return nil, de
			}
			if len(d.slab) == cap(d.slab) {
				n := len(d.slab) - at
				slab := make([]history.Op, n, max(opSlab, 2*n))
				copy(slab, d.slab[at:])
				clear(d.slab[at:])
				d.slab, at = slab, 0
			}
			d.slab = append(d.slab, op)
			if !s.more(']') {
				break
			}
		}
	}
	if s.err != nil {
		d.slab = d.slab[:at]
		return nil, &decodeError{field: field, col: s.at + 1, err: s.err}
	}
	if len(d.slab) == at {
		return nil, nil
	}
	return d.slab[at:len(d.slab):len(d.slab)], nil
}

func (d *NativeDecoder) decodeOp(field string, i int) (history.Op, *decodeError) {
	s := &d.s
	var op history.Op
	fail := func() (history.Op, *decodeError) {
		return op, &decodeError{field: field + "[" + strconv.Itoa(i) + "]", col: s.at + 1, err: s.err}
	}
	bad := func(at int, format string, args ...any) (history.Op, *decodeError) {
		s.fail(at, format, args...)
		return fail()
	}
	if !s.expect('[') {
		return fail()
	}
	at := s.i
	if s.peek() != '"' {
		return bad(s.i, "micro-op function must be a string: r, w or append")
	}
	raw, esc := s.rawString()
	if s.err != nil {
		return fail()
	}
	if esc {
		raw = unescape(s.scratch[:0], raw)
	}
	if d.elle && len(raw) > 1 && raw[0] == ':' {
		raw = raw[1:]
	}
	switch string(raw) {
	case "r":
		op.Kind = history.Read
	case "w":
		op.Kind = history.Write
	case "append":
		op.Kind = history.Append
	default:
		return bad(at, "unknown micro-op function %q (want r, w or append)", raw)
	}
	if !s.expect(',') {
		return fail()
	}
	d.lastID = -1
	op.Key = d.key()
	if s.err != nil {
		return fail()
	}
	if d.scratch {
		d.keyIDs = append(d.keyIDs, d.idOf(op.Key))
	}
	if !s.expect(',') {
		return fail()
	}
	at = s.i
	s.ws()
	if op.Kind == history.Read && s.peek() == '[' {
		op.IsList = true
		d.vals = d.vals[:0]
		if d.scratch {
			d.valIDs = append(d.valIDs, int32(len(d.listIDs)))
		}
		if s.open('[', ']') {
			for {
				eat := s.i
				d.lastID = -1
				v, k := d.value()
				if s.err != nil {
					return fail()
				}
				if d.scratch {
					d.listIDs = append(d.listIDs, d.idOf(v))
				}
				switch k {
				case kArray, kObject:
					return bad(eat, "list element is %s (want a scalar)", k)
				case kNull:
					return bad(eat, "list element is null")
				}
				d.vals = append(d.vals, v)
				if !s.more(']') {
					break
				}
			}
		}
		if s.err != nil {
			return fail()
		}
		if len(d.vals) > 0 {
			if d.scratch {
				at := len(d.lists)
				d.lists = append(d.lists, d.vals...)
				op.List = d.lists[at:len(d.lists):len(d.lists)]
			} else {
				op.List = append([]history.Value(nil), d.vals...)
			}
		}
	} else {
		at = s.i
		d.lastID = -1
		v, k := d.value()
		if s.err != nil {
			return fail()
		}
		if d.scratch {
			d.valIDs = append(d.valIDs, d.idOf(v))
		}
		switch {
		case k == kArray || k == kObject:
			if op.Kind == history.Read {
				return bad(at, "read value is %s (want a scalar, null or an array)", k)
			}
			return bad(at, "%s value is %s (want a scalar)", op.Kind, k)
		case k == kNull && op.Kind != history.Read:
			return bad(at, "%s value is null", op.Kind)
		}
		op.Value = v
	}
	if !s.expect(']') {
		if s.peek() == ',' {
			s.err = nil
			return bad(s.i, "micro-op has more than 3 elements")
		}
		return fail()
	}
	return op, nil
}

// smallInts holds the canonical text of the integers below its length:
// counters and small keys dominate generated and real histories, and an
// index into this table costs less than the intern map's hash and probe
// (the map's lookups were a fifth of `run --stamps` in a profile,
// BENCHMARKS.md "stamps3"). The strings are shared, as interned ones are.
var smallInts = func() []history.Value {
	t := make([]history.Value, 1024)
	for i := range t {
		t[i] = history.Value(strconv.Itoa(i))
	}
	return t
}()

// smallInt returns the shared text of lit when it is a canonical
// non-negative integer below len(smallInts) (no sign, no leading zero).
func smallInt(lit []byte) (history.Value, bool) {
	if len(lit) == 0 || len(lit) > 4 || len(lit) > 1 && lit[0] == '0' {
		return "", false
	}
	n := 0
	for _, c := range lit {
		if c < '0' || c > '9' {
			return "", false
		}
		n = n*10 + int(c-'0')
	}
	if n >= len(smallInts) {
		return "", false
	}
	return smallInts[n], true
}

// shortValue is the longest value text interned: small integers and short
// strings repeat from event to event, long values rarely do.
const shortValue = 16

// value reads a scalar like scanner.scalar, interning short values so that
// the common ones cost no allocation and are shared in memory.
func (d *NativeDecoder) value() (history.Value, scalarKind) {
	s := &d.s
	s.ws()
	at := s.i
	switch c := s.peek(); {
	case c == '"':
		raw, esc := s.rawString()
		if s.err == nil && !esc && len(raw)+2 <= shortValue && plainASCII(raw) {
			return d.internValue(s.b[at:s.i]), kString
		}
		s.i = at
	case '0' <= c && c <= '9':
		lit, kind := s.number()
		if s.err == nil && kind == numInt {
			if v, ok := smallInt(lit); ok {
				if d.scratch {
					d.lastID = d.ids.small(lit, v)
				}
				return v, kInt
			}
		}
		if s.err == nil && kind == numInt && d.scratch {
			if n, ok := plainInt(lit); ok {
				// Numbered by itself (IntID), not looked up: on a
				// recording whose values are all distinct, each new one
				// was a slot in a table of millions, a cache miss (a
				// fifth of the 1M check, BENCHMARKS.md "check27 (issue
				// 27)", session 19). The text is the op's, the scan's
				// caller reads it during the call only.
				d.lastID = IntID(n)
				return history.Value(lit), kInt
			}
		}
		if s.err == nil && kind == numInt && len(lit) <= shortValue {
			if _, err := parseInt(lit); err == nil {
				return d.internValue(lit), kInt
			}
		}
		s.i = at
	}
	return s.scalar()
}

// key reads a micro-op key: an integer or a string, interned.
func (d *NativeDecoder) key() history.Value {
	s := &d.s
	s.ws()
	at := s.i
	switch c := s.peek(); {
	case c == '"':
		raw, esc := s.rawString()
		if s.err != nil {
			return ""
		}
		if s.bad {
			return history.Value(s.b[at:s.i]) // exact text (lenient)
		}
		if !esc && (plainASCII(raw) || utf8.Valid(raw)) {
			return d.internKey(s.b[at:s.i])
		}
		s.scratch = unescape(s.scratch[:0], raw)
		return d.internKey(history.AppendJSONString(nil, string(s.scratch)))
	case c == '-' || '0' <= c && c <= '9':
		lit, kind := s.number()
		if s.err != nil {
			return ""
		}
		if kind != numInt {
			s.fail(at, "key %s is not an integer or a string", lit)
			return ""
		}
		if _, err := intValue(lit); err != nil {
			s.fail(at, "key %s is %v", lit, err)
			return ""
		}
		if string(lit) == "-0" {
			lit = []byte("0")
		}
		return d.internKey(lit)
	case c == '[':
		s.fail(at, "key is an array (want an integer or a string)")
		return ""
	case c == '{':
		s.fail(at, "key is an object (want an integer or a string)")
		return ""
	}
	w := s.literal()
	if s.err == nil {
		s.fail(at, "key is %s (want an integer or a string)", w)
	}
	return ""
}

// AppendNative appends t as one native event (no trailing newline). Every
// field Decode reads is written, so Decode(AppendNative(t)) equals t apart
// from Pos (property-tested). The session and the id are written as strings:
// an integer session read from the input comes back as its decimal string,
// which Decode maps to the same text. Values are canonical text, which is
// valid JSON, so they are copied; an empty Value (not canonical) is written
// as null so that the line stays valid JSON.
func AppendNative(dst []byte, t *history.Txn) []byte {
	return AppendNativeFacts(dst, t, nil)
}

// AppendNativeFacts is AppendNative with the transaction's database facts
// (nil or zero Has: none), written after the times so that
// Decode(AppendNativeFacts(t, f)) gives back t and f.
func AppendNativeFacts(dst []byte, t *history.Txn, f *history.Facts) []byte {
	dst = append(dst, '{')
	if t.HasSession {
		dst = append(dst, `"session":`...)
		dst = history.AppendJSONString(dst, t.Session)
		dst = append(dst, ',')
	}
	dst = append(dst, `"id":`...)
	dst = history.AppendJSONString(dst, t.ID)
	if t.HasTime {
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendInt(dst, t.Start, 10)
		dst = append(dst, `,"end":`...)
		dst = strconv.AppendInt(dst, t.End, 10)
	}
	if f != nil {
		if f.Has&history.HasCommitTS != 0 {
			dst = append(dst, `,"commit_ts":`...)
			dst = strconv.AppendInt(dst, f.CommitTS, 10)
		}
		if f.Has&history.HasStartTS != 0 {
			dst = append(dst, `,"start_ts":`...)
			dst = strconv.AppendInt(dst, f.StartTS, 10)
		}
		if f.Has&history.HasXid != 0 {
			dst = append(dst, `,"xid":`...)
			dst = strconv.AppendUint(dst, f.Xid, 10)
		}
		if f.Has&history.HasSnapshot != 0 && f.Snap != nil {
			dst = append(dst, `,"snapshot":"`...)
			dst = append(dst, f.Snap.String()...)
			dst = append(dst, '"')
		}
	}
	dst = append(dst, `,"status":"`...)
	dst = append(dst, t.Status.String()...)
	dst = append(dst, `","ops":[`...)
	for i := range t.Ops {
		op := &t.Ops[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `["`...)
		dst = append(dst, op.Kind.String()...)
		dst = append(dst, `",`...)
		dst = appendValue(dst, op.Key)
		dst = append(dst, ',')
		if op.Kind == history.Read && op.IsList {
			dst = append(dst, '[')
			for j, v := range op.List {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendValue(dst, v)
			}
			dst = append(dst, ']')
		} else {
			dst = appendValue(dst, op.Value)
		}
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

func appendValue(dst []byte, v history.Value) []byte {
	if v == "" {
		return append(dst, "null"...)
	}
	return append(dst, v...)
}

// Recovered is what a second, lenient reading of a rejected native event
// still tells (RecoverNative). The checker keeps its writes as unchecked
// writers, so that a read it could explain is never part of an alert
// (issue 20 item 1; docs/SEMANTICS.md §5 "Dead letters").
type Recovered struct {
	// Txn holds what could be read: the id and session if readable, the
	// status (Unknown when unreadable), the micro-ops read in full (keys
	// and values as exact text: a string that is not UTF-8 keeps its raw
	// bytes, an integer beyond int64 its literal, each a value no
	// accepted event can spell). HasTime is set only when TimeTrusted.
	Txn history.Txn
	// TimeTrusted: the line is well-formed JSON and start and end are
	// int64s with end >= start, so the times mean what accepted events'
	// times mean. Otherwise the writes may lie anywhere in time.
	TimeTrusted bool
	// Wild lists the keys of micro-ops that were delimited but whose
	// effect could not be read (an unknown function, a write or append of
	// an array, of an object, a missing value): each may have written or
	// appended any value to its key. A write or append of null is kept in
	// Txn as a write of null (it claims to make the key absent), and so
	// is an unknown function's, besides its wildcard (it may be a delete,
	// which the model does not have). A wildcard is never null: no op of
	// the model makes a key absent.
	Wild []history.Key
	// WildAll: some micro-ops could not be delimited (the line is cut
	// short or not JSON, the ops field is missing or not an array, an op
	// is not an array), so any key may have been written, with any value
	// other than null.
	WildAll bool
}

// RecoverNative reads a line that Decode rejected as far as it can. It
// never fails and never panics; it copies what it keeps. The rules: a
// field whose value is wrong but well-formed is skipped and the reading
// goes on; a syntax error (or the end of a cut line) stops it, and every
// op not read by then is unknown (WildAll). A key that cannot be read
// (a float, a bool, an array, a string that is not UTF-8, an integer
// beyond int64) is a key no accepted event can name, so its op taints
// nothing.
func RecoverNative(line []byte, pos history.Pos) Recovered {
	var d NativeDecoder
	var rec Recovered
	s := &d.s
	s.reset(line)
	s.lenient = true
	t := &rec.Txn
	t.Pos, t.Status = pos, history.Unknown
	var start, end int64
	var hasStart, hasEnd, timeErr, opsRead bool
	if s.peek() == '{' && s.open('{', '}') {
		for s.err == nil {
			name, esc := s.rawString()
			if s.err != nil || !s.expect(':') {
				break
			}
			if esc {
				name = unescape(nil, name)
			}
			at := s.i
			switch string(name) {
			case "id":
				if id, ok := d.nameField(false); s.err == nil && ok {
					t.ID = id
				}
			case "session":
				if ss, ok := d.nameField(true); s.err == nil && ok {
					t.Session, t.HasSession = ss, true
				}
			case "start":
				start, hasStart = s.int64Field()
				timeErr = timeErr || s.err != nil
			case "end":
				end, hasEnd = s.int64Field()
				timeErr = timeErr || s.err != nil
			case "status":
				if st := s.str(); s.err == nil {
					if v, ok := history.ParseStatus(st); ok && v != history.Aborted {
						// Aborted is not believed: an unreadable event
						// may still have committed.
						t.Status = v
					}
				}
			case "ops":
				opsRead = d.recoverOps(&rec) || opsRead
			default:
				s.skip(0)
			}
			if s.err != nil {
				// A well-formed value of the wrong kind: skip it and go on.
				s.err, s.i = nil, at
				s.skip(0)
				if s.err != nil {
					break
				}
			}
			if !s.more('}') {
				break
			}
		}
	}
	wellFormed := s.err == nil && s.peek() == 0 && !timeErr
	if !opsRead {
		// Ops read to the end of their array are all the ops: a second
		// ops field would be an error, so a cut later is only a lost
		// field.
		rec.WildAll = true
	}
	if wellFormed && hasStart && hasEnd && end >= start {
		t.Start, t.End, t.HasTime, rec.TimeTrusted = start, end, true, true
	}
	if t.ID == "" {
		t.ID = defaultID(t, pos)
	}
	return rec
}

// recoverOps reads the ops array leniently into rec and reports whether
// every op was delimited (the array was read to its end).
func (d *NativeDecoder) recoverOps(rec *Recovered) bool {
	s := &d.s
	if s.peek() != '[' {
		s.skip(0) // not an array: no op can be delimited
		return false
	}
	if !s.open('[', ']') {
		return s.err == nil
	}
	for {
		at := s.i
		if op, de := d.decodeOp("ops", 0); de == nil {
			rec.Txn.Ops = append(rec.Txn.Ops, op)
		} else {
			s.err, s.i = nil, at
			if !d.recoverOp(rec) {
				return false
			}
		}
		if !s.more(']') {
			break
		}
	}
	return s.err == nil
}

// recoverOp takes a second look at an op decodeOp rejected: if it may
// write and its key is readable, the key is wild. It reports whether the
// op could be delimited (skipped to its end).
func (d *NativeDecoder) recoverOp(rec *Recovered) bool {
	s := &d.s
	if s.peek() != '[' {
		s.skip(0)
		rec.WildAll = true // not an op: no key to name
		return s.err == nil
	}
	s.i++
	fn := ""
	if s.peek() == '"' {
		fn = s.str()
	} else {
		s.skip(0)
	}
	if s.err != nil {
		return false
	}
	read := fn == "r" || d.elle && fn == ":r"
	known := read || fn == "w" || fn == "append"
	if !s.more(']') {
		if s.err != nil {
			return false
		}
		if !read {
			rec.WildAll = true // [f]: the key it meant is unknown
		}
		return true
	}
	at := s.i
	k := d.key()
	if s.err != nil {
		// A key no accepted event can name (or, at a syntax error, the
		// end of the reading).
		s.err, s.i = nil, at
		s.skip(0)
		if s.err != nil {
			return false
		}
		k = ""
	}
	null := false
	if s.more(']') {
		null = s.peek() == 'n'
		for {
			s.skip(0)
			if !s.more(']') {
				break
			}
		}
	}
	if s.err != nil {
		return false
	}
	switch {
	case read || k == "":
	case known && null:
		// A write of null claims to make k absent: kept as just that.
		rec.Txn.Ops = append(rec.Txn.Ops, history.Op{Kind: history.Write, Key: k, Value: history.Null})
	case known:
		rec.Wild = append(rec.Wild, k)
	default:
		// An unknown function may have written anything to k, or
		// removed it (a delete the model does not have).
		rec.Wild = append(rec.Wild, k)
		rec.Txn.Ops = append(rec.Txn.Ops, history.Op{Kind: history.Write, Key: k, Value: history.Null})
	}
	return true
}

// idOf is the id of v, a key or value just read: the one internKey or the
// small-integer table gave (d.lastID), or, for a text neither holds (a
// long value, null, a boolean), its number in d.ids, hashed then.
func (d *NativeDecoder) idOf(v history.Value) int32 {
	if d.lastID != -1 {
		return d.lastID
	}
	if v == history.Null {
		return NullID
	}
	return d.ids.of([]byte(v))
}

// plainInt is the value of lit when it is a canonical non-negative
// integer of at most 9 digits (no sign, no leading zero): below 10^9,
// so IntID numbers it apart from every text id and from -1.
func plainInt(lit []byte) (int32, bool) {
	if len(lit) == 0 || len(lit) > 9 || len(lit) > 1 && lit[0] == '0' {
		return 0, false
	}
	n := int32(0)
	for _, c := range lit {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int32(c-'0')
	}
	return n, true
}

// IntID is the id a scan gives a value that is a canonical non-negative
// integer n of at most 9 digits and not below 1024 (smaller ones are
// texts, numbered as such): math.MinInt32 + n, negative, so never a
// text's id. Equal ids are still exactly equal texts, since a canonical
// integer has one text; such an id has no entry in Event.Texts.
func IntID(n int32) int32 { return math.MinInt32 + n }

// NullID is the id of the text null in a scan (ScanNative's Event): the
// value of a register nobody wrote.
const NullID = 0

// textIDs numbers texts densely in order of first sight, null first: one
// hash of each key and value occurrence for a whole history (no bound: a
// scan is one history).
type textIDs struct {
	tab     map[string]int32
	text    []history.Value // id -> text, shared by every op naming it
	smallID []int32         // small integer n -> its id + 1 (0: not yet)
	// short holds the texts of 1 to 16 bytes (keys such as "x1500",
	// short values) as two words and a length, in an open-addressing
	// table hashed by a multiply: the text is compared as two integers,
	// where the map hashed it with aeshash, probed its groups and called
	// memequal (the map was a third of a scan's CPU).
	short     []shortSlot
	shortUsed int
	shift     uint
}

type shortSlot struct {
	a, b uint64
	n    uint32 // the text's length; 0: empty
	id   int32
}

// words packs a text of 1 to 16 bytes into two little-endian words,
// zero-padded: with the length, equal words are equal texts.
func words(b []byte) (a, c uint64) {
	if cap(b) >= 16 {
		// Two loads and masks instead of a loop over the bytes: the
		// bytes past the text, up to the capacity, are memory of the
		// same array (the line's, in a scan) and are masked off.
		w := b[:16]
		n := uint(len(b))
		a, c = binary.LittleEndian.Uint64(w), binary.LittleEndian.Uint64(w[8:])
		if n < 8 {
			return a & (1<<(8*n) - 1), 0
		}
		return a, c & (1<<(8*(n-8)) - 1) // n = 16: a shift by 64 is 0, the mask all ones
	}
	if len(b) >= 8 {
		a = binary.LittleEndian.Uint64(b)
		for i := len(b) - 1; i >= 8; i-- {
			c = c<<8 | uint64(b[i])
		}
		return a, c
	}
	for i := len(b) - 1; i >= 0; i-- {
		a = a<<8 | uint64(b[i])
	}
	return a, 0
}

func (t *textIDs) shortOf(b []byte) int32 {
	if t.short == nil {
		t.initShort()
	}
	a, c, h := shortKey(b)
	return t.shortHashed(b, a, c, h)
}

func (t *textIDs) initShort() {
	t.short, t.shift = make([]shortSlot, 1<<12), 64-12
}

// shortKey is a text of 1 to 16 bytes as the short table keys it: its
// words and its hash.
func shortKey(b []byte) (a, c, h uint64) {
	a, c = words(b)
	h = (a ^ c*0xC2B2AE3D27D4EB4F ^ uint64(len(b))) * 0x9E3779B97F4A7C15
	return a, c, h
}

// shortHashed is shortOf for b of 1 to 16 bytes, a, c and h its
// shortKey, the table made.
func (t *textIDs) shortHashed(b []byte, a, c, h uint64) int32 {
	n := uint32(len(b))
	mask := len(t.short) - 1
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		e := &t.short[i]
		if e.n == n && e.a == a && e.b == c {
			return e.id
		}
		if e.n == 0 {
			// Short texts live in this table alone (of sends only the
			// others to the map): a new one is a string and a slot, not
			// also a map entry (a third of the numbering's time on a
			// recording whose values are all distinct, BENCHMARKS.md
			// "check27 (issue 27)", session 19).
			id := t.add(b)
			*e = shortSlot{a: a, b: c, n: n, id: id}
			if t.shortUsed++; 2*t.shortUsed > len(t.short) {
				t.growShort()
			}
			return id
		}
	}
}

// shortIntern interns texts of 1 to 16 bytes for Decode as textIDs'
// short table numbers them for a scan: two words compared, a multiply to
// hash, where the map hashed with aeshash and called memequal (the map was
// most of the decoder's interning in a profile of run --stamps, issue
// 26/29). Bounded like the map: at internLimit texts it starts again
// empty.
type shortIntern struct {
	slots []internSlot
	used  int
	shift uint
}

type internSlot struct {
	a, b uint64
	v    history.Value // "": empty
}

func (t *shortIntern) get(b []byte) history.Value {
	if t.slots == nil || t.used >= internLimit {
		t.slots, t.shift, t.used = make([]internSlot, 1<<10), 64-10, 0
	}
	a, c := words(b)
	n := len(b)
	h := (a ^ c*0xC2B2AE3D27D4EB4F ^ uint64(n)) * 0x9E3779B97F4A7C15
	mask := len(t.slots) - 1
	for i := int(h >> t.shift); ; i = (i + 1) & mask {
		e := &t.slots[i]
		if len(e.v) == n && e.a == a && e.b == c {
			return e.v
		}
		if e.v == "" {
			v := history.Value(b)
			*e = internSlot{a: a, b: c, v: v}
			if t.used++; 2*t.used > len(t.slots) {
				t.grow()
			}
			return v
		}
	}
}

func (t *shortIntern) grow() {
	old := t.slots
	t.slots, t.shift = make([]internSlot, 2*len(old)), t.shift-1
	mask := len(t.slots) - 1
	for _, e := range old {
		if e.v == "" {
			continue
		}
		h := (e.a ^ e.b*0xC2B2AE3D27D4EB4F ^ uint64(len(e.v))) * 0x9E3779B97F4A7C15
		i := int(h >> t.shift)
		for t.slots[i].v != "" {
			i = (i + 1) & mask
		}
		t.slots[i] = e
	}
}

func (t *textIDs) growShort() {
	old := t.short
	t.short, t.shift = make([]shortSlot, 2*len(old)), t.shift-1
	mask := len(t.short) - 1
	for _, e := range old {
		if e.n == 0 {
			continue
		}
		h := (e.a ^ e.b*0xC2B2AE3D27D4EB4F ^ uint64(e.n)) * 0x9E3779B97F4A7C15
		i := int(h >> t.shift)
		for t.short[i].n != 0 {
			i = (i + 1) & mask
		}
		t.short[i] = e
	}
}

func (t *textIDs) of(b []byte) int32 {
	if len(b) > 0 && len(b) <= 16 {
		return t.shortOf(b)
	}
	return t.ofMap(b)
}

func (t *textIDs) ofMap(b []byte) int32 {
	if id, ok := t.tab[string(b)]; ok {
		return id
	}
	if t.tab == nil {
		t.tab = map[string]int32{}
	}
	id := t.add(b)
	t.tab[string(t.text[id])] = id
	return id
}

// add numbers a text not seen before (by the table its length selects):
// null keeps NullID, which it holds from the first text on.
func (t *textIDs) add(b []byte) int32 {
	if len(t.text) == 0 {
		t.text = append(t.text, history.Null)
	}
	if string(b) == string(history.Null) {
		return NullID
	}
	id := int32(len(t.text))
	t.text = append(t.text, history.Value(b))
	return id
}

// small is the id of a small integer's text (smallInts), through an
// array instead of the map.
func (t *textIDs) small(lit []byte, v history.Value) int32 {
	n := 0
	for _, c := range lit { // smallInt's canonical digits
		n = n*10 + int(c-'0')
	}
	return t.smallN(n, v)
}

// smallKnown is the id of the small integer n when it has one, -1 when
// it has not been seen yet.
func (t *textIDs) smallKnown(n int) int32 {
	if t.smallID == nil {
		return -1
	}
	return t.smallID[n] - 1
}

// smallN is small for the integer n below len(smallInts), v its text.
func (t *textIDs) smallN(n int, v history.Value) int32 {
	if t.smallID == nil {
		t.smallID = make([]int32, len(smallInts))
	}
	if id := t.smallID[n]; id > 0 {
		return id - 1
	}
	id := t.of([]byte(v))
	t.smallID[n] = id + 1
	return id
}
