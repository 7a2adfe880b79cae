package history

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParseCompact reads the compact notation docs/SEMANTICS.md uses for small
// histories, so that tests can quote its histories verbatim:
//
//	W[0,100] w x1, w y7 · T[10,20] r x1 (session c) · U[30,40] w x2 (unknown)
//
// Transactions are separated by newlines or " · ". Each is
// ID[start,end] (the bracket is optional: no timestamps), then
// comma-separated micro-ops, then optional parenthesized annotations
// "aborted", "unknown", "session NAME". A micro-op is "KIND KEY VALUE" or,
// as in the notes, "KIND KV" where the first character of KV is the key and
// the rest the value (x1, xa, xnull). Values: integers, null, [a b c] lists
// for reads, anything else a string. Lines starting with # are comments.
func ParseCompact(text string) (*History, error) {
	h := &History{}
	text = strings.ReplaceAll(text, "·", "\n")
	for lineNo, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseCompactTxn(line)
		if err != nil {
			return nil, fmt.Errorf("compact history: %q: %w", line, err)
		}
		t.Pos = Pos{Source: "compact", Line: lineNo + 1}
		h.Txns = append(h.Txns, t)
	}
	return h, nil
}

var compactHead = regexp.MustCompile(`^([A-Za-z0-9_\-]+)(?:\[(-?\d+),(-?\d+)\])?\s*(.*)$`)

func parseCompactTxn(line string) (Txn, error) {
	var t Txn
	m := compactHead.FindStringSubmatch(line)
	if m == nil {
		return t, fmt.Errorf("want ID[start,end] ops")
	}
	t.ID = m[1]
	if m[2] != "" {
		s, err1 := strconv.ParseInt(m[2], 10, 64)
		e, err2 := strconv.ParseInt(m[3], 10, 64)
		if err1 != nil || err2 != nil {
			return t, fmt.Errorf("bad timestamps")
		}
		t.Start, t.End, t.HasTime = s, e, true
	}
	rest := m[4]
	// Annotations in parentheses at the end.
	for {
		rest = strings.TrimSpace(rest)
		if !strings.HasSuffix(rest, ")") {
			break
		}
		open := strings.LastIndex(rest, "(")
		if open < 0 {
			return t, fmt.Errorf("unbalanced parenthesis")
		}
		for _, ann := range strings.Split(rest[open+1:len(rest)-1], ",") {
			ann = strings.TrimSpace(ann)
			switch {
			case ann == "aborted":
				t.Status = Aborted
			case ann == "unknown":
				t.Status = Unknown
			case ann == "committed":
				t.Status = Committed
			case strings.HasPrefix(ann, "session "):
				t.Session = strings.TrimSpace(strings.TrimPrefix(ann, "session "))
				t.HasSession = true
			default:
				return t, fmt.Errorf("unknown annotation %q", ann)
			}
		}
		rest = rest[:open]
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return t, nil
	}
	for _, opText := range splitOps(rest) {
		op, err := parseCompactOp(strings.TrimSpace(opText))
		if err != nil {
			return t, err
		}
		t.Ops = append(t.Ops, op)
	}
	return t, nil
}

// splitOps splits on commas outside brackets.
func splitOps(s string) []string {
	var out []string
	depth, last := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}

func parseCompactOp(s string) (Op, error) {
	var op Op
	f := strings.Fields(s)
	if len(f) == 0 {
		return op, fmt.Errorf("empty micro-op")
	}
	switch f[0] {
	case "r":
		op.Kind = Read
	case "w":
		op.Kind = Write
	case "append", "a":
		op.Kind = Append
	default:
		return op, fmt.Errorf("unknown micro-op %q", f[0])
	}
	var key, val string
	switch {
	case len(f) == 2 && len(f[1]) >= 2:
		key, val = f[1][:1], f[1][1:]
	case len(f) >= 3:
		key, val = f[1], strings.Join(f[2:], " ")
	default:
		return op, fmt.Errorf("micro-op %q: want KIND KEY VALUE", s)
	}
	op.Key = compactScalar(key)
	if strings.HasPrefix(val, "[") {
		if op.Kind != Read || !strings.HasSuffix(val, "]") {
			return op, fmt.Errorf("micro-op %q: a list is only read", s)
		}
		op.IsList = true
		for _, e := range strings.Fields(strings.Trim(val, "[]")) {
			op.List = append(op.List, compactScalar(e))
		}
		return op, nil
	}
	op.Value = compactScalar(val)
	return op, nil
}

func compactScalar(s string) Value {
	if s == "null" || s == "nil" {
		return Null
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return IntValue(i)
	}
	return StringValue(s)
}

// Compact renders a transaction in the notation ParseCompact reads.
func (t *Txn) Compact() string {
	var b strings.Builder
	b.WriteString(t.ID)
	if t.HasTime {
		fmt.Fprintf(&b, "[%d,%d]", t.Start, t.End)
	}
	for i, op := range t.Ops {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(op.Kind.String())
		b.WriteByte(' ')
		b.WriteString(unquote(op.Key))
		b.WriteByte(' ')
		if op.IsList {
			b.WriteByte('[')
			for j, e := range op.List {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(unquote(e))
			}
			b.WriteByte(']')
		} else {
			b.WriteString(unquote(op.Value))
		}
	}
	var ann []string
	if t.Status != Committed {
		ann = append(ann, t.Status.String())
	}
	if t.HasSession {
		ann = append(ann, "session "+t.Session)
	}
	if len(ann) > 0 {
		b.WriteString(" (" + strings.Join(ann, ", ") + ")")
	}
	return b.String()
}

func unquote(v Value) string {
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal([]byte(v), &s) == nil {
		return s
	}
	return string(v)
}
