// Package history owns streamcheck's data model of a transaction history:
// transactions, micro-operations, outcomes, the isolation levels checked and
// the options that change what a history means (clock-skew bound, in-doubt
// horizon, initial state). Decoders in ingest/ produce it; the checkers in
// incremental/ and the test oracles consume it. It does no IO.
//
// Values and keys are kept as canonical text so that distinct spellings stay
// distinct (docs/SEMANTICS.md §1): the integer 1 is "1", the float 1.0 is "1.0",
// the string "1" is `"1"` (JSON-quoted), and absent is "null". Decoders of
// every format produce the same text for the same datum, so a history read
// from Elle EDN and from native JSON compare equal.
package history

import (
	"cmp"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Status is the outcome of a transaction as the client learned it.
type Status uint8

const (
	// Committed: the client saw the commit succeed.
	Committed Status = iota
	// Aborted: the client saw the transaction fail; none of its writes may
	// be visible.
	Aborted
	// Unknown: the client never learned the outcome (a lost connection
	// during COMMIT, a timeout). Its effects may or may not be visible
	// (docs/SEMANTICS.md §2).
	Unknown
)

func (s Status) String() string {
	switch s {
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// ParseStatus accepts the native spellings.
func ParseStatus(s string) (Status, bool) {
	switch s {
	case "committed":
		return Committed, true
	case "aborted":
		return Aborted, true
	case "unknown":
		return Unknown, true
	}
	return 0, false
}

// Kind is a micro-operation's function.
type Kind uint8

const (
	// Read returns the key's value (register) or whole list (list key).
	Read Kind = iota
	// Write sets a register.
	Write
	// Append appends one element to a list.
	Append
)

func (k Kind) String() string {
	switch k {
	case Read:
		return "r"
	case Write:
		return "w"
	case Append:
		return "append"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Value is the canonical text of a scalar datum (see the package comment).
type Value string

// Key is the canonical text of a key, spelled like a Value.
type Key = Value

// Null is the value of an absent key.
const Null Value = "null"

// IntValue is the canonical text of an integer.
func IntValue(i int64) Value { return Value(strconv.FormatInt(i, 10)) }

// StringValue is the canonical text of a string datum: its JSON encoding
// (no HTML escaping), so that a Value is always valid JSON and two
// spellings of one string ("\u0041", "A") become one value.
func StringValue(s string) Value { return Value(AppendJSONString(nil, s)) }

// AppendJSONString appends s as a JSON string literal, escaping only what
// JSON requires (quote, backslash, control characters) and replacing
// invalid UTF-8 with U+FFFD.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// The character itself, not its escape: a string that
			// already holds U+FFFD must get the same text.
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// Op is one micro-operation.
type Op struct {
	Kind Kind
	// IsList marks a read that returned a list; List holds it (nil or empty
	// both mean the empty list). It sits next to Kind so that the two
	// share one word: a history holds millions of ops.
	IsList bool
	Key    Key
	// Value is the value written or appended, or the register value read
	// (Null when absent). Unused for a list read.
	Value Value
	List  []Value
}

func (o Op) String() string {
	if o.Kind == Read && o.IsList {
		return fmt.Sprintf("r %s %v", o.Key, o.List)
	}
	return fmt.Sprintf("%s %s %s", o.Kind, o.Key, o.Value)
}

// Pos says where a transaction came from, for error messages and dead
// letters.
type Pos struct {
	Source string // file name, "-", or topic
	Line   int    // 1-based line (0 when not line-oriented)
	Offset int64  // byte offset, or Kafka offset
}

func (p Pos) String() string {
	switch {
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.Source, p.Line)
	case p.Offset > 0:
		return fmt.Sprintf("%s@%d", p.Source, p.Offset)
	}
	return p.Source
}

// Txn is one finished transaction.
type Txn struct {
	// ID is unique in a history. Decoders default it to
	// "<session>-<position>" when the input names none.
	ID string
	// Session is the client session (Jepsen: process); consecutive
	// transactions of one session are ordered by session order.
	Session string
	// Start and End are client wall-clock nanoseconds (Jepsen: invoke and
	// completion times). HasTime is false when the input has none.
	Start, End int64
	// The flags share one word (field order is memory: a history holds
	// millions of transactions).
	HasSession bool
	HasTime    bool
	Status     Status
	Ops        []Op
	Pos        Pos
}

// Writes reports whether the transaction writes or appends anything.
func (t *Txn) Writes() bool {
	for _, op := range t.Ops {
		if op.Kind != Read {
			return true
		}
	}
	return false
}

// History is a set of transactions in input order.
type History struct {
	Txns []Txn
	// Facts, when not nil, holds the database's own facts about each
	// transaction, parallel to Txns (facts.go). It is a side table rather
	// than fields of Txn because a history holds millions of transactions
	// and most inputs carry no such fact: they pay one nil slice, not 40
	// bytes a transaction. Code that filters or reorders Txns must carry
	// it along (or drop it: a history without facts is checked black-box).
	Facts []Facts
}

// SessionCompare orders two timed transactions of one session as session
// order does (docs/SEMANTICS.md §1 "Session order"): by start, a tie by
// end (in a sequential session the one that ends at that instant ran
// first), then by id, so that the order does not depend on the order of
// lines and is the one the online window releases in. Transactions
// without times are ordered by input position, which only the caller
// knows.
func SessionCompare(a, b *Txn) int {
	// Not cmp.Or: its arguments are all evaluated, and the ids' string
	// comparison is needed only on a tie (sorts of every transaction call
	// this).
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.End, b.End); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
