package ingest

import (
	"bytes"
	"errors"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// lineCounter turns increasing byte offsets into 1-based line numbers in
// time linear in the input.
type lineCounter struct {
	b    []byte
	off  int
	line int
}

func (c *lineCounter) lineAt(off int) int {
	if c.line == 0 {
		c.line = 1
	}
	if off < c.off { // not expected: offsets only grow
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.b[c.off:off], []byte{'\n'})
	c.off = off
	return c.line
}

// readElleJSON reads a Jepsen history in JSON: one array of operation
// objects, or a sequence of objects (one per line, as JSON Lines).
func readElleJSON(b []byte, source string, st *Stats) (*history.History, error) {
	d := NativeDecoder{elle: true} // its scanner reads :value, the outer one the rest
	o := &scanner{b: b}
	lines := lineCounter{b: b}
	var ops []elleOp
	syntax := func() error {
		return &history.Error{Pos: history.Pos{Source: source, Line: lines.lineAt(o.at), Offset: int64(o.at)}, Err: o.err}
	}
	parse := func() error {
		o.ws()
		pos := history.Pos{Source: source, Line: lines.lineAt(o.i), Offset: int64(o.i)}
		op, err := parseElleJSONOp(o, &d, pos)
		if err != nil {
			return err
		}
		op.ordinal = len(ops) + 1
		ops = append(ops, op)
		return nil
	}
	if o.peek() == '[' {
		if o.open('[', ']') {
			for {
				if err := parse(); err != nil {
					return nil, err
				}
				if !o.more(']') {
					break
				}
			}
		}
		if o.err == nil && o.peek() != 0 {
			o.fail(o.i, "data after the history array")
		}
		if o.err != nil {
			return nil, syntax()
		}
	} else {
		for o.peek() != 0 {
			if err := parse(); err != nil {
				return nil, err
			}
		}
	}
	return pairElle(ops, st)
}

// Elle JSON field bits, for duplicate detection.
var elleJSONFields = [...]string{"type", "f", "value", "process", "time", "index"}

// parseElleJSONOp reads one operation object at o.
func parseElleJSONOp(o *scanner, d *NativeDecoder, pos history.Pos) (elleOp, error) {
	op := elleOp{pos: pos, isTxn: true}
	field := ""
	syntax := func() error {
		pos.Offset = int64(o.at)
		return &history.Error{Pos: pos, Field: field, Err: o.err}
	}
	if o.peek() != '{' {
		o.unexpected("'{' (an operation object)")
		return op, syntax()
	}
	valStart, valEnd := -1, -1
	var seen [len(elleJSONFields)]bool
	if o.open('{', '}') {
		for {
			field = ""
			// Converters that keep Clojure's spelling write ":type".
			name := strings.TrimPrefix(o.str(), ":")
			if o.err != nil {
				return op, syntax()
			}
			for i, f := range elleJSONFields {
				if f == name {
					if seen[i] {
						return op, &history.Error{Pos: pos, Field: name, Err: errors.New("given twice")}
					}
					seen[i] = true
					field = name
				}
			}
			if !o.expect(':') {
				return op, syntax()
			}
			o.ws()
			at := o.i
			switch field {
			case "type":
				if o.peek() == '"' {
					op.typeText = strings.TrimPrefix(o.str(), ":")
					op.typ, op.hasType = parseElleType(op.typeText), true
				} else {
					o.skip(0)
					op.typeText, op.hasType = string(o.b[at:o.i]), true
				}
			case "f":
				if o.peek() == '"' {
					op.isTxn = strings.TrimPrefix(o.str(), ":") == "txn"
				} else {
					o.skip(0)
					op.isTxn = false
				}
			case "process":
				switch c := o.peek(); {
				case c == '"':
					op.process, op.hasProcess = o.str(), true
					if op.process == "" {
						o.fail(at, "empty process")
					}
					if strings.TrimPrefix(op.process, ":") == "nemesis" {
						op.nemesis = true
					}
				case c == 'n':
					o.literal()
				default:
					lit, kind := o.number()
					if o.err == nil {
						if kind != numInt {
							o.fail(at, "process %s is not an integer or a string", lit)
						} else if v, err := intValue(lit); err != nil {
							o.fail(at, "process %s is %v", lit, err)
						} else {
							op.process, op.hasProcess = string(v), true
						}
					}
				}
			case "time":
				op.time, op.hasTime = o.int64Field()
			case "index":
				op.index, op.hasIndex = o.int64Field()
			case "value":
				valStart = at
				o.skip(0)
				valEnd = o.i
			default:
				o.skip(0)
			}
			if o.err != nil {
				return op, syntax()
			}
			if !o.more('}') {
				break
			}
		}
	}
	field = ""
	if o.err != nil {
		return op, syntax()
	}
	if valStart >= 0 && op.isTxn && !op.nemesis {
		v := o.b[valStart:valEnd]
		if !(len(v) == 4 && string(v) == "null") {
			d.s.reset(v)
			ops, de := d.decodeOps("value")
			if de != nil {
				p := pos
				p.Offset = int64(valStart + de.col - 1)
				return op, &history.Error{Pos: p, Field: de.field, Err: de.err}
			}
			op.ops, op.hasValue = ops, true
		}
	}
	return op, nil
}
