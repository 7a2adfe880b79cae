package ingest

import (
	"errors"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/streamcheck/streamcheck/history"
)

// scanner is a small JSON (RFC 8259) reader over one byte slice. It does not
// build a tree: callers walk objects and arrays themselves and read scalars
// straight into history.Value canonical text, which is what makes native
// decoding cheap (see doc.go, "Why a hand-written scanner"). Every method
// either advances past a well-formed item or records the first error (err,
// at) and returns a zero result; callers check s.err once per item.
type scanner struct {
	b   []byte
	i   int
	err error
	at  int // byte offset of err in b

	// scratch is reused for unescaping strings.
	scratch []byte

	// lenient is the second reading of a rejected event (RecoverNative):
	// a string that is not UTF-8 or holds an unpaired surrogate is kept
	// as its exact text (bad is set) and an integer beyond int64 as its
	// literal, each a value no accepted event can spell, instead of
	// failing.
	lenient, bad bool
}

// maxDepth bounds the nesting of skipped values, so that hostile input
// cannot exhaust the stack; encoding/json (the test oracle) has the same
// limit.
const maxDepth = 10000

func (s *scanner) reset(b []byte) {
	s.b, s.i, s.err, s.at, s.bad = b, 0, nil, 0, false
}

func (s *scanner) fail(at int, format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf(format, args...)
		s.at = at
	}
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// expect consumes byte c after optional whitespace.
func (s *scanner) expect(c byte) bool {
	if s.err != nil {
		return false
	}
	if s.peek() != c {
		s.unexpected(fmt.Sprintf("%q", c))
		return false
	}
	s.i++
	return true
}

func (s *scanner) unexpected(want string) {
	if s.i >= len(s.b) {
		s.fail(s.i, "unexpected end of input, want %s", want)
		return
	}
	s.fail(s.i, "unexpected %s, want %s", describeByte(s.b[s.i]), want)
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// more is called after an element of an array or object: it consumes a
// comma and reports true, or sees the closing byte, consumes it and reports
// false.
func (s *scanner) more(close byte) bool {
	if s.err != nil {
		return false
	}
	switch s.peek() {
	case ',':
		s.i++
		return true
	case close:
		s.i++
		return false
	}
	s.unexpected(fmt.Sprintf("',' or %q", close))
	return false
}

// open consumes an opening bracket and reports whether the container has
// at least one element (false for [] and {}; the closer is consumed).
func (s *scanner) open(openc, close byte) bool {
	if !s.expect(openc) {
		return false
	}
	if s.peek() == close {
		s.i++
		return false
	}
	return true
}

// rawString scans a string starting at the opening quote. It returns the
// bytes between the quotes and whether they hold an escape sequence. It
// validates escapes and rejects raw control characters, as RFC 8259 does,
// and rejects what encoding/json would silently turn into U+FFFD: bytes
// that are not UTF-8 and \u escapes of unpaired surrogates. JSON text
// must be UTF-8 (RFC 8259 §8.1), and a replacement would make distinct
// keys or values one (issue 20 item 5; doc.go "Canonical text").
func (s *scanner) rawString() (raw []byte, escaped bool) {
	if s.err != nil {
		return nil, false
	}
	if s.peek() != '"' {
		s.unexpected("a string")
		return nil, false
	}
	start := s.i + 1
	s.bad = false
	for i := start; i < len(s.b); i++ {
		c := s.b[i]
		switch {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped
		case c >= utf8.RuneSelf:
			// Checked in place, one rune at a time: the common case,
			// ASCII, costs the comparison above and nothing more.
			r, size := utf8.DecodeRune(s.b[i:])
			if r == utf8.RuneError && size == 1 {
				if s.lenient {
					s.bad = true
					continue
				}
				s.fail(i, "invalid UTF-8 byte 0x%02x in string (JSON text must be UTF-8)", c)
				return nil, false
			}
			i += size - 1
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				s.fail(i, "unterminated string")
				return nil, false
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+5 >= len(s.b) || !isHex4(s.b[i+2:i+6]) {
					s.fail(i, "invalid \\u escape in string")
					return nil, false
				}
				if r := hexVal(s.b[i+2:]); utf16.IsSurrogate(r) {
					// A high surrogate must be followed by a low one;
					// anything else is not a character.
					if r >= 0xdc00 || i+11 >= len(s.b) || s.b[i+6] != '\\' || s.b[i+7] != 'u' || !isHex4(s.b[i+8:i+12]) ||
						utf16.DecodeRune(r, hexVal(s.b[i+8:])) == utf8.RuneError {
						if !s.lenient {
							s.fail(i, "unpaired surrogate \\u%04x in string (JSON text must be UTF-8)", r)
							return nil, false
						}
						s.bad = true
					} else {
						i += 6
					}
				}
				i += 5
			default:
				s.fail(i, "invalid escape %s in string", describeByte(s.b[i+1]))
				return nil, false
			}
		case c < 0x20:
			s.fail(i, "control character %s in string", describeByte(c))
			return nil, false
		}
	}
	s.fail(s.i, "unterminated string")
	return nil, false
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !isHexDigit(c) {
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a':
			r = r<<4 | rune(c-'a'+10)
		default:
			r = r<<4 | rune(c-'A'+10)
		}
	}
	return r
}

// unescape decodes the contents of a validated JSON string into dst the way
// encoding/json does: invalid UTF-8 and unpaired surrogates become U+FFFD.
func unescape(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c != '\\' {
			if c < utf8.RuneSelf {
				dst = append(dst, c)
				i++
				continue
			}
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, raw[i:i+size]...)
			}
			i += size
			continue
		}
		e := raw[i+1]
		i += 2
		switch e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hexVal(raw[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hexVal(raw[i+2:])); r2 != utf8.RuneError {
						dst = utf8.AppendRune(dst, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
	}
	return dst
}

// plainASCII reports whether raw (string contents without escapes) is
// already canonical: printable ASCII needs no escaping and no UTF-8 repair.
func plainASCII(raw []byte) bool {
	for _, c := range raw {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// str reads a string and returns its decoded Go value.
func (s *scanner) str() string {
	raw, esc := s.rawString()
	if s.err != nil {
		return ""
	}
	if !esc && (plainASCII(raw) || utf8.Valid(raw)) {
		return string(raw)
	}
	s.scratch = unescape(s.scratch[:0], raw)
	return string(s.scratch)
}

// strValue reads a string as a history.Value (canonical JSON text). The
// common case, a string with no escapes and valid UTF-8, is already
// canonical (history.AppendJSONString escapes only what cannot occur raw),
// so it is copied once.
func (s *scanner) strValue() history.Value {
	s.ws()
	start := s.i
	raw, esc := s.rawString()
	if s.err != nil {
		return ""
	}
	if s.bad {
		return history.Value(s.b[start:s.i])
	}
	if !esc && (plainASCII(raw) || utf8.Valid(raw)) {
		return history.Value(s.b[start:s.i])
	}
	s.scratch = unescape(s.scratch[:0], raw)
	return history.Value(history.AppendJSONString(nil, string(s.scratch)))
}

// numKind says what a number literal is.
type numKind uint8

const (
	numInt   numKind = iota // no fraction, no exponent
	numOther                // a fraction or an exponent
)

// number scans a JSON number literal and returns its bytes.
func (s *scanner) number() ([]byte, numKind) {
	if s.err != nil {
		return nil, 0
	}
	s.ws()
	start, i, b := s.i, s.i, s.b
	kind := numInt
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		s.i = i
		s.unexpected("a digit")
		return nil, 0
	}
	if i < len(b) && b[i] == '.' {
		kind = numOther
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.i = i
			s.unexpected("a digit after the decimal point")
			return nil, 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		kind = numOther
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			s.i = i
			s.unexpected("a digit in the exponent")
			return nil, 0
		}
	}
	s.i = i
	return b[start:i], kind
}

var errRange = errors.New("out of int64 range")

// parseInt parses a validated integer literal exactly (no float64 on the
// way, docs/SEMANTICS.md §1).
func parseInt(lit []byte) (int64, error) {
	neg := lit[0] == '-'
	digits := lit
	if neg {
		digits = lit[1:]
	}
	if len(digits) > 19 {
		return 0, errRange
	}
	var u uint64
	for _, c := range digits {
		u = u*10 + uint64(c-'0')
	}
	// 19 digits fit in a uint64 (max 9999999999999999999 < 2^64).
	if neg {
		if u > 1<<63 {
			return 0, errRange
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, errRange
	}
	return int64(u), nil
}

// intValue is the canonical text of a validated integer literal: the
// literal itself, except "-0", the one JSON integer spelling that is not
// strconv.FormatInt's.
func intValue(lit []byte) (history.Value, error) {
	if _, err := parseInt(lit); err != nil {
		return "", err
	}
	if len(lit) == 2 && lit[0] == '-' && lit[1] == '0' {
		return "0", nil
	}
	return history.Value(lit), nil
}

// literal consumes the keyword true, false or null (whichever word starts
// at the current byte) and returns it.
func (s *scanner) literal() string {
	for _, w := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
			s.i += len(w)
			return w
		}
	}
	s.unexpected("a JSON value")
	return ""
}

// skip consumes one JSON value of any kind, validating it.
func (s *scanner) skip(depth int) {
	if s.err != nil {
		return
	}
	if depth > maxDepth {
		s.fail(s.i, "nesting deeper than %d", maxDepth)
		return
	}
	switch c := s.peek(); {
	case c == '"':
		s.rawString()
	case c == '-' || '0' <= c && c <= '9':
		s.number()
	case c == '[':
		if s.open('[', ']') {
			for {
				s.skip(depth + 1)
				if !s.more(']') {
					break
				}
			}
		}
	case c == '{':
		if s.open('{', '}') {
			for {
				s.rawString()
				s.expect(':')
				s.skip(depth + 1)
				if !s.more('}') {
					break
				}
			}
		}
	default:
		s.literal()
	}
}

// scalarKind classifies a scalar read by scalar.
type scalarKind uint8

const (
	kInt scalarKind = iota
	kNumber
	kString
	kBool
	kNull
	kArray  // not consumed: the caller reads it
	kObject // not consumed
)

func (k scalarKind) String() string {
	return [...]string{"an integer", "a non-integer number", "a string", "a boolean", "null", "an array", "an object"}[k]
}

// scalar reads one scalar as canonical text (docs/SEMANTICS.md §1): integers
// exactly as int64 (out of range is an error), other numbers as their
// literal text, strings JSON-quoted, true/false/null as themselves. At an
// array or object it consumes nothing and reports kArray or kObject.
func (s *scanner) scalar() (history.Value, scalarKind) {
	if s.err != nil {
		return "", kNull
	}
	switch c := s.peek(); {
	case c == '"':
		return s.strValue(), kString
	case c == '-' || '0' <= c && c <= '9':
		at := s.i
		lit, kind := s.number()
		if s.err != nil {
			return "", kNull
		}
		if kind == numInt {
			v, err := intValue(lit)
			if err != nil {
				if s.lenient {
					// Its literal: no int64 has that text, so it stays
					// a value of its own.
					return history.Value(lit), kNumber
				}
				s.fail(at, "integer %s is %v", lit, err)
				return "", kNull
			}
			return v, kInt
		}
		return history.Value(lit), kNumber
	case c == '[':
		return "", kArray
	case c == '{':
		return "", kObject
	case c == 't':
		s.literal()
		return "true", kBool
	case c == 'f':
		s.literal()
		return "false", kBool
	default:
		s.literal()
		return history.Null, kNull
	}
}

// int64Field reads an integer that must fit int64, or null (ok false).
func (s *scanner) int64Field() (v int64, present bool) {
	if s.err != nil {
		return 0, false
	}
	at := s.i
	switch c := s.peek(); {
	case c == 'n':
		s.literal()
		return 0, false
	case c == '-' || '0' <= c && c <= '9':
	default:
		s.unexpected("an integer")
		return 0, false
	}
	lit, kind := s.number()
	if s.err != nil {
		return 0, false
	}
	if kind != numInt {
		s.fail(at, "%s is not an integer", lit)
		return 0, false
	}
	n, err := parseInt(lit)
	if err != nil {
		s.fail(at, "integer %s is %v", lit, err)
		return 0, false
	}
	return n, true
}

// lineOf turns a byte offset into a 1-based line (counting from the slice
// start) for messages about multi-line inputs.
func lineOf(b []byte, off int) int {
	n := 1
	for _, c := range b[:min(off, len(b))] {
		if c == '\n' {
			n++
		}
	}
	return n
}
