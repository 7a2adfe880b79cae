package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"unicode"
	"unicode/utf8"

	"olympos.io/encoding/edn"

	"github.com/streamcheck/streamcheck/history"
)

// EDN is parsed by olympos.io/encoding/edn. This file only finds where each
// top-level form begins and ends (so that errors name a line, which the
// library cannot report) and reads scalars from the library's raw tokens
// (so that number literals keep their exact text, which the library's
// float64 conversion would lose).

// ednForms splits EDN text into forms. It understands just enough of the
// lexical syntax to find a form's end (strings, characters, comments,
// brackets, #_ discards, tags); the library validates each form's content.
type ednForms struct {
	b     []byte
	i     int
	lines lineCounter
}

func isEDNSpace(r rune) bool { return r == ',' || unicode.IsSpace(r) }

func isEDNDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', ',', '(', ')', '[', ']', '{', '}', '"', ';':
		return true
	}
	return false
}

// skipSpace skips whitespace, commas and comments.
func (f *ednForms) skipSpace() {
	for f.i < len(f.b) {
		c := f.b[f.i]
		switch {
		case c == ';':
			for f.i < len(f.b) && f.b[f.i] != '\n' {
				f.i++
			}
		case c < utf8.RuneSelf:
			if !isEDNSpace(rune(c)) {
				return
			}
			f.i++
		default:
			r, size := utf8.DecodeRune(f.b[f.i:])
			if !isEDNSpace(r) {
				return
			}
			f.i += size
		}
	}
}

var errUnbalanced = errors.New("unbalanced brackets")

// next returns the extent of the next form, skipping #_ discards, or
// start == len(b) at the end of input. A closing bracket where a form
// should begin is returned as a one-byte form for the caller to judge. A
// tagged form (#inst "...", #jepsen.history.Op{...}) is one form, tag
// included. It loops rather than recursing, so that a long run of #_ or
// tags cannot exhaust the stack.
func (f *ednForms) next() (start, end int, err error) {
	pending := 0 // discards waiting for their form
	start = -1   // where a tagged form began
	for {
		f.skipSpace()
		if f.i >= len(f.b) {
			if pending > 0 || start >= 0 {
				return f.i, f.i, errors.New("#_ or a tag with no form after it")
			}
			return f.i, f.i, nil
		}
		c := f.b[f.i]
		switch {
		case c == '#' && f.i+1 < len(f.b) && f.b[f.i+1] == '_':
			f.i += 2
			pending++
			continue
		case c == '#' && f.i+1 < len(f.b) && f.b[f.i+1] != '{':
			if start < 0 {
				start = f.i
			}
			f.atom() // the tag; its form follows
			continue
		case c == ')' || c == ']' || c == '}':
			if pending > 0 || start >= 0 {
				return f.i, f.i, errors.New("#_ or a tag with no form after it")
			}
			f.i++
			return f.i - 1, f.i, nil
		}
		if start < 0 {
			start = f.i
		}
		if err := f.form(); err != nil {
			return start, f.i, err
		}
		if pending > 0 {
			pending--
			start = -1
			continue
		}
		return start, f.i, nil
	}
}

// atom skips a token up to the next delimiter.
func (f *ednForms) atom() {
	if f.i < len(f.b) && f.b[f.i] == '\\' {
		// A character: the byte after the backslash belongs to it even
		// when it is a delimiter (\( \" \space).
		f.i++
		if f.i < len(f.b) {
			_, size := utf8.DecodeRune(f.b[f.i:])
			f.i += size
		}
	}
	for f.i < len(f.b) && !isEDNDelim(f.b[f.i]) {
		f.i++
	}
}

// form skips one form starting at f.i (not a discard or tag).
func (f *ednForms) form() error {
	depth := 0
	for f.i < len(f.b) {
		c := f.b[f.i]
		switch {
		case c == '(' || c == '[' || c == '{':
			depth++
			f.i++
			if depth > maxDepth {
				// The library recurses per level; a stack overflow
				// would be fatal, not an error.
				return fmt.Errorf("nesting deeper than %d", maxDepth)
			}
		case c == ')' || c == ']' || c == '}':
			if depth == 0 {
				return errUnbalanced
			}
			depth--
			f.i++
		case c == '"':
			f.i++
			for f.i < len(f.b) && f.b[f.i] != '"' {
				if f.b[f.i] == '\\' {
					f.i++
				}
				f.i++
			}
			if f.i >= len(f.b) {
				return errors.New("unterminated string")
			}
			f.i++
		case c == ';':
			for f.i < len(f.b) && f.b[f.i] != '\n' {
				f.i++
			}
		case isEDNDelim(c):
			f.i++
		default:
			f.atom()
		}
		if depth == 0 {
			return nil
		}
	}
	return errors.New("unexpected end of input inside a form")
}

// readElleEDN reads a Jepsen history in EDN: one vector (or list) of
// operation maps, or a sequence of maps (one per line, as Jepsen's
// history.edn).
func readElleEDN(b []byte, source string, st *Stats) (*history.History, error) {
	f := &ednForms{b: b, lines: lineCounter{b: b}}
	posAt := func(off int) history.Pos {
		return history.Pos{Source: source, Line: f.lines.lineAt(off), Offset: int64(off)}
	}
	var ops []elleOp
	add := func(start, end int) error {
		op, err := parseEDNOp(b[start:end], posAt(start))
		if err != nil {
			return err
		}
		op.ordinal = len(ops) + 1
		ops = append(ops, op)
		return nil
	}
	f.skipSpace()
	if start := f.i; start < len(b) && (b[start] == '[' || b[start] == '(') {
		// One collection of operations: walk its elements.
		closer := byte(']')
		if b[start] == '(' {
			closer = ')'
		}
		f.i++
		for {
			s, e, err := f.next()
			if err != nil {
				return nil, &history.Error{Pos: posAt(s), Err: err}
			}
			if s == len(b) {
				return nil, &history.Error{Pos: posAt(start), Err: errors.New("history vector is not closed")}
			}
			if e == s+1 && b[s] == closer {
				break
			}
			if err := add(s, e); err != nil {
				return nil, err
			}
		}
		if s, _, err := f.next(); err != nil || s != len(b) {
			if err == nil {
				err = errors.New("data after the history vector")
			}
			return nil, &history.Error{Pos: posAt(s), Err: err}
		}
	} else {
		for {
			s, e, err := f.next()
			if err != nil {
				return nil, &history.Error{Pos: posAt(s), Err: err}
			}
			if s == len(b) {
				break
			}
			if err := add(s, e); err != nil {
				return nil, err
			}
		}
	}
	return pairElle(ops, st)
}

// ednUnmarshal calls the library and turns a panic into an error: the
// library recovers its own errors but re-panics runtime errors, and
// malformed input must never crash the daemon.
func ednUnmarshal(b []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed EDN (%v)", r)
		}
	}()
	return edn.Unmarshal(b, v)
}

// trimEDN strips the whitespace and commas that raw values may carry.
func trimEDN(b []byte) []byte {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if !isEDNSpace(r) {
			break
		}
		b = b[size:]
	}
	for len(b) > 0 {
		r, size := utf8.DecodeLastRune(b)
		if !isEDNSpace(r) {
			break
		}
		b = b[:len(b)-size]
	}
	return b
}

// ednElems decodes a vector or list into its elements' raw text.
func ednElems(raw []byte) ([]edn.RawMessage, error) {
	raw = trimEDN(raw)
	if len(raw) == 0 || raw[0] != '[' && raw[0] != '(' {
		return nil, fmt.Errorf("%s is not a vector", abbrev(raw))
	}
	var elems []edn.RawMessage
	if err := ednUnmarshal(raw, &elems); err != nil {
		return nil, err
	}
	for i := range elems {
		elems[i] = trimEDN(elems[i])
	}
	return elems, nil
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// parseEDNOp reads one operation map (a record tag such as
// #jepsen.history.Op is accepted and ignored).
func parseEDNOp(form []byte, pos history.Pos) (elleOp, error) {
	op := elleOp{pos: pos, isTxn: true}
	fail := func(field string, err error) (elleOp, error) {
		return op, &history.Error{Pos: pos, Field: field, Err: err}
	}
	if len(form) > 1 && form[0] == '#' && form[1] != '{' {
		i := 1
		for i < len(form) && !isEDNDelim(form[i]) {
			i++
		}
		form = trimEDN(form[i:])
	}
	if len(form) < 2 || form[0] != '{' || form[len(form)-1] != '}' {
		return fail("", fmt.Errorf("%s is not an operation map", abbrev(form)))
	}
	// Split the map body into its forms with the form splitter: keys and
	// scalars need no library call (each costs a buffered reader and
	// reflection), and duplicate keys stay visible (the library's maps keep
	// the last silently; Clojure's reader rejects them). Fields other than
	// the six below are skipped unparsed: they need only balanced brackets.
	body := form[1 : len(form)-1]
	split := &ednForms{b: body}
	var kvs [][]byte
	for {
		s, e, err := split.next()
		if err != nil {
			return fail("", err)
		}
		if s == len(body) {
			break
		}
		if e == s+1 && (body[s] == ')' || body[s] == ']' || body[s] == '}') {
			return fail("", errUnbalanced)
		}
		kvs = append(kvs, body[s:e])
	}
	if len(kvs)%2 != 0 {
		return fail("", errors.New("map has an odd number of forms"))
	}
	var raw struct{ typ, f, process, time, index, value []byte }
	seen := map[string]bool{}
	for i := 0; i < len(kvs); i += 2 {
		k, v := string(kvs[i]), []byte(kvs[i+1])
		if seen[k] {
			return fail(k, errors.New("given twice"))
		}
		seen[k] = true
		switch k {
		case ":type":
			raw.typ = v
		case ":f":
			raw.f = v
		case ":process":
			raw.process = v
		case ":time":
			raw.time = v
		case ":index":
			raw.index = v
		case ":value":
			raw.value = v
		}
	}
	if raw.typ != nil {
		op.hasType = true
		op.typeText = strings.TrimPrefix(string(raw.typ), ":")
		if raw.typ[0] == ':' {
			op.typ = parseElleType(op.typeText)
		}
	}
	if raw.f != nil {
		op.isTxn = string(raw.f) == ":txn"
	}
	if raw.process != nil && string(raw.process) != "nil" {
		v, k, err := ednScalar(raw.process)
		switch {
		case err != nil:
			return fail(":process", err)
		case k == kInt:
			op.process = string(v)
		case string(raw.process) == ":nemesis":
			op.nemesis = true
			op.process = "nemesis"
		case k == kString && v[0] == '"':
			op.process = unquoteValue(v)
			if op.process == "" {
				return fail(":process", errors.New("empty process"))
			}
			op.nemesis = op.process == "nemesis"
		case k == kString:
			op.process = string(raw.process) // another keyword
		default:
			return fail(":process", fmt.Errorf("%s is not an integer, keyword or string", abbrev(raw.process)))
		}
		op.hasProcess = true
	}
	var err2 error
	if raw.time != nil {
		if op.time, op.hasTime, err2 = ednInt(raw.time); err2 != nil {
			return fail(":time", err2)
		}
	}
	if raw.index != nil {
		if op.index, op.hasIndex, err2 = ednInt(raw.index); err2 != nil {
			return fail(":index", err2)
		}
	}
	if raw.value != nil && op.isTxn && !op.nemesis && string(raw.value) != "nil" {
		op.hasValue = true
		if op.typ == eInvoke {
			// Usually only the shape of an invocation is needed (its
			// completion carries the data); read it when asked
			// (elleOp.body), sparing the library half the work.
			op.lazyValue = raw.value
		} else {
			ops, field, err := ednMicroOpsFast(raw.value)
			if err != nil {
				return fail(field, err)
			}
			op.ops = ops
		}
	}
	return op, nil
}

// ednMicroOpsSplit reads :value with the form splitter and ednScalar, no
// library call: the shape check of an invocation against its completion
// uses it. It reads every well-formed vector the library reads the same
// way (TestEDNFastSlowAgree) and may accept some malformed ones, which is
// harmless for a shape check.
func ednMicroOpsSplit(raw []byte) ([]history.Op, string, error) {
	raw = trimEDN(raw)
	elems := func(coll []byte) ([][]byte, error) {
		if len(coll) < 2 || coll[0] != '[' && coll[0] != '(' {
			return nil, fmt.Errorf("%s is not a vector", abbrev(coll))
		}
		body := coll[1 : len(coll)-1]
		f := &ednForms{b: body}
		var out [][]byte
		for {
			s, e, err := f.next()
			if err != nil {
				return nil, err
			}
			if s == len(body) {
				return out, nil
			}
			out = append(out, body[s:e])
		}
	}
	mops, err := elems(raw)
	if err != nil {
		return nil, ":value", err
	}
	ops := make([]history.Op, 0, len(mops))
	for i, m := range mops {
		field := fmt.Sprintf(":value[%d]", i)
		el, err := elems(m)
		if err != nil {
			return nil, field, err
		}
		if len(el) != 3 {
			return nil, field, fmt.Errorf("micro-op has %d elements, want 3 [f key value]", len(el))
		}
		var op history.Op
		switch string(el[0]) {
		case ":r", `"r"`:
			op.Kind = history.Read
		case ":w", `"w"`:
			op.Kind = history.Write
		case ":append", `"append"`:
			op.Kind = history.Append
		default:
			return nil, field, fmt.Errorf("unknown micro-op function %s", abbrev(el[0]))
		}
		k, kk, err := ednScalar(el[1])
		if err != nil || kk != kInt && kk != kString {
			return nil, field, fmt.Errorf("bad key %s", abbrev(el[1]))
		}
		op.Key = k
		if v := el[2]; op.Kind == history.Read && (v[0] == '[' || v[0] == '(') {
			l, err := elems(v)
			if err != nil {
				return nil, field, err
			}
			op.IsList = true
			for _, e := range l {
				x, xk, err := ednScalar(e)
				if err != nil || xk == kNull {
					return nil, field, fmt.Errorf("bad list element %s", abbrev(e))
				}
				op.List = append(op.List, x)
			}
		} else {
			x, xk, err := ednScalar(v)
			if err != nil || xk == kNull && op.Kind != history.Read {
				return nil, field, fmt.Errorf("bad value %s", abbrev(v))
			}
			op.Value = x
		}
		ops = append(ops, op)
	}
	return ops, "", nil
}

func unquoteValue(v history.Value) string {
	s, _ := strUnquote(v)
	return s
}

// strUnquote decodes canonical string text (valid JSON by construction).
func strUnquote(v history.Value) (string, bool) {
	var sc scanner
	sc.reset([]byte(v))
	s := sc.str()
	return s, sc.err == nil
}

// validUTF8 replaces each invalid byte with U+FFFD, as JSON decoding does,
// so that a string has one canonical text whichever format carried it
// (history.StringValue spells an invalid byte as the escape \ufffd, but a
// decoded U+FFFD as the character itself).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r) // RuneError for an invalid byte
		i += size
	}
	return string(b)
}

// ednInt reads an integer (nil is absent).
func ednInt(raw []byte) (int64, bool, error) {
	if string(raw) == "nil" {
		return 0, false, nil
	}
	v, k, err := ednScalar(raw)
	if err != nil {
		return 0, false, err
	}
	if k != kInt {
		return 0, false, fmt.Errorf("%s is not an integer", abbrev(raw))
	}
	n, err := parseInt([]byte(v))
	return n, true, err
}

// ednMicroOpsFast reads :value with one library call into generic values.
// The library turns floats into float64, losing their literal text (1.0
// would become 1), so a transaction holding a float is read again by
// ednMicroOps, which keeps raw tokens; both paths must agree otherwise
// (TestEDNFastSlowAgree).
func ednMicroOpsFast(raw []byte) ([]history.Op, string, error) {
	raw = trimEDN(raw)
	if len(raw) == 0 || raw[0] != '[' && raw[0] != '(' {
		return nil, ":value", fmt.Errorf("%s is not a vector of micro-ops", abbrev(raw))
	}
	var mops []any
	if err := ednUnmarshal(raw, &mops); err != nil {
		return ednMicroOps(raw) // for a worded error
	}
	if len(mops) == 0 {
		return nil, "", nil
	}
	ops := make([]history.Op, 0, len(mops))
	for _, m := range mops {
		el, ok := m.([]any)
		if !ok || len(el) != 3 {
			// Let the slow path word the error.
			return ednMicroOps(raw)
		}
		var op history.Op
		switch el[0] {
		case edn.Keyword("r"), "r":
			op.Kind = history.Read
		case edn.Keyword("w"), "w":
			op.Kind = history.Write
		case edn.Keyword("append"), "append":
			op.Kind = history.Append
		default:
			return ednMicroOps(raw)
		}
		k, kk, ok := ednGeneric(el[1])
		if !ok || kk != kInt && kk != kString {
			return ednMicroOps(raw)
		}
		op.Key = k
		if l, isList := el[2].([]any); isList && op.Kind == history.Read {
			op.IsList = true
			if len(l) > 0 {
				op.List = make([]history.Value, len(l))
			}
			for j, e := range l {
				x, xk, ok := ednGeneric(e)
				if !ok || xk == kNull {
					return ednMicroOps(raw)
				}
				op.List[j] = x
			}
		} else {
			x, xk, ok := ednGeneric(el[2])
			if !ok || xk == kNull && op.Kind != history.Read {
				return ednMicroOps(raw)
			}
			op.Value = x
		}
		ops = append(ops, op)
	}
	return ops, "", nil
}

// ednGeneric converts one library-decoded scalar to canonical text, or
// reports !ok for anything the fast path does not handle exactly (floats,
// characters, symbols, tags, collections, integers out of int64 range),
// which sends the transaction to the slow path for an exact reading or a
// worded error.
func ednGeneric(v any) (history.Value, scalarKind, bool) {
	switch v := v.(type) {
	case nil:
		return history.Null, kNull, true
	case bool:
		if v {
			return "true", kBool, true
		}
		return "false", kBool, true
	case int64:
		return history.IntValue(v), kInt, true
	case big.Int:
		if v.IsInt64() {
			return history.IntValue(v.Int64()), kInt, true
		}
	case *big.Int:
		if v.IsInt64() {
			return history.IntValue(v.Int64()), kInt, true
		}
	case string:
		return history.StringValue(validUTF8(v)), kString, true
	case edn.Keyword:
		if utf8.ValidString(string(v)) { // else the slow path rejects it
			return history.StringValue(":" + string(v)), kString, true
		}
	}
	return "", kNull, false
}

func ednMicroOps(raw []byte) ([]history.Op, string, error) {
	raw = trimEDN(raw)
	if len(raw) == 0 || raw[0] != '[' && raw[0] != '(' {
		return nil, ":value", fmt.Errorf("%s is not a vector of micro-ops", abbrev(raw))
	}
	// One library call for the whole transaction (each call costs a
	// buffered reader); list reads are split below.
	var mops [][]edn.RawMessage
	if err := ednUnmarshal(raw, &mops); err != nil {
		return nil, ":value", fmt.Errorf("want a vector of [f key value] micro-ops: %w", err)
	}
	if len(mops) == 0 {
		return nil, "", nil
	}
	ops := make([]history.Op, 0, len(mops))
	for i, el := range mops {
		field := fmt.Sprintf(":value[%d]", i)
		if len(el) != 3 {
			return nil, field, fmt.Errorf("micro-op has %d elements, want 3 [f key value]", len(el))
		}
		for j := range el {
			el[j] = trimEDN(el[j])
		}
		var op history.Op
		switch string(el[0]) {
		case ":r", `"r"`:
			op.Kind = history.Read
		case ":w", `"w"`:
			op.Kind = history.Write
		case ":append", `"append"`:
			op.Kind = history.Append
		default:
			return nil, field, fmt.Errorf("unknown micro-op function %s (want :r, :w or :append)", abbrev(el[0]))
		}
		k, kk, err := ednScalar(el[1])
		if err != nil {
			return nil, field, fmt.Errorf("key: %w", err)
		}
		if kk != kInt && kk != kString {
			return nil, field, fmt.Errorf("key %s is not an integer, string or keyword", abbrev(el[1]))
		}
		op.Key = k
		if v := el[2]; op.Kind == history.Read && len(v) > 0 && (v[0] == '[' || v[0] == '(') {
			op.IsList = true
			elems, err := ednElems(v)
			if err != nil {
				return nil, field, err
			}
			for _, e := range elems {
				x, xk, err := ednScalar(e)
				if err != nil {
					return nil, field, fmt.Errorf("list element: %w", err)
				}
				if xk == kNull {
					return nil, field, errors.New("list element is nil")
				}
				op.List = append(op.List, x)
			}
		} else {
			x, xk, err := ednScalar(v)
			if err != nil {
				return nil, field, fmt.Errorf("value: %w", err)
			}
			if xk == kNull && op.Kind != history.Read {
				return nil, field, fmt.Errorf("%s value is nil", op.Kind)
			}
			op.Value = x
		}
		ops = append(ops, op)
	}
	return ops, "", nil
}

// ednScalar reads one EDN scalar token as canonical text, the way JSON
// scalars map (doc.go): integers exactly (a trailing N is allowed, out of
// int64 range is an error), floats by their literal text when it is a JSON
// number, strings JSON-quoted, keywords as the string ":name", nil as
// null, true and false as themselves. Keywords report kString.
func ednScalar(raw []byte) (history.Value, scalarKind, error) {
	raw = trimEDN(raw)
	if len(raw) == 0 {
		return "", kNull, errors.New("empty value")
	}
	switch c := raw[0]; {
	case string(raw) == "nil":
		return history.Null, kNull, nil
	case string(raw) == "true" || string(raw) == "false":
		return history.Value(raw), kBool, nil
	case c == '"':
		// A string without escapes is its bytes (the library would say
		// the same at the cost of a buffered reader).
		if len(raw) >= 2 && raw[len(raw)-1] == '"' {
			if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && bytes.IndexByte(body, '"') < 0 {
				return history.StringValue(validUTF8(string(body))), kString, nil
			}
		}
		var s string
		if err := ednUnmarshal(raw, &s); err != nil {
			return "", kNull, err
		}
		return history.StringValue(validUTF8(s)), kString, nil
	case c == ':':
		if len(raw) == 1 || !utf8.Valid(raw) || strings.ContainsFunc(string(raw), func(r rune) bool {
			return r < utf8.RuneSelf && isEDNDelim(byte(r)) || isEDNSpace(r)
		}) {
			return "", kNull, fmt.Errorf("malformed keyword %s", abbrev(raw))
		}
		return history.StringValue(string(raw)), kString, nil
	case '0' <= c && c <= '9' || (c == '+' || c == '-') && len(raw) > 1 && '0' <= raw[1] && raw[1] <= '9':
		return ednNumber(raw)
	case c == '[' || c == '(' || c == '{' || c == '#':
		return "", kNull, fmt.Errorf("%s is not a scalar", abbrev(raw))
	case c == '\\':
		return "", kNull, fmt.Errorf("character %s is not supported as a value", abbrev(raw))
	}
	return "", kNull, fmt.Errorf("symbol %s is not supported as a value", abbrev(raw))
}

func ednNumber(raw []byte) (history.Value, scalarKind, error) {
	lit := raw
	if lit[0] == '+' {
		lit = lit[1:]
	}
	isInt := true
	for _, c := range lit {
		if c == '.' || c == 'e' || c == 'E' || c == 'M' {
			isInt = false
		}
	}
	if isInt {
		lit = []byte(strings.TrimSuffix(string(lit), "N"))
	} else if lit[len(lit)-1] == 'M' {
		return "", kNull, fmt.Errorf("decimal %s (M suffix) is not supported", abbrev(raw))
	}
	// The remaining text must be a JSON number, so that the canonical text
	// is the same whichever format spelled it ("1.0" in EDN and JSON).
	var s scanner
	s.reset(lit)
	n, kind := s.number()
	if s.err != nil || s.i != len(lit) || len(n) == 0 {
		return "", kNull, fmt.Errorf("number %s has no exact JSON spelling", abbrev(raw))
	}
	if kind == numInt != isInt {
		return "", kNull, fmt.Errorf("malformed number %s", abbrev(raw))
	}
	if isInt {
		v, err := intValue(n)
		if err != nil {
			return "", kNull, fmt.Errorf("integer %s is %v", abbrev(raw), err)
		}
		return v, kInt, nil
	}
	return history.Value(n), kNumber, nil
}
