package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamcheck/streamcheck/history"
)

// oracleDecode is a second, deliberately naive implementation of the
// native rules on top of encoding/json (numbers as json.Number, so exact).
// It shares no code with the hand-written scanner; the differential tests
// and FuzzNativeDecode require both to accept the same lines and produce
// the same Txn.
func oracleDecode(line []byte, pos history.Pos) (history.Txn, error) {
	var t history.Txn
	t.Pos = pos
	if err := oracleDuplicates(line); err != nil {
		return t, err
	}
	if err := oracleUTF8(line); err != nil {
		return t, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return t, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return t, errors.New("trailing data")
	}
	obj, ok := top.(map[string]any)
	if !ok {
		return t, errors.New("not an object")
	}
	name := func(v any) (string, bool, error) {
		switch v := v.(type) {
		case nil:
			return "", false, nil
		case string:
			if v == "" {
				return "", false, errors.New("empty")
			}
			return v, true, nil
		case json.Number:
			if strings.ContainsAny(string(v), ".eE") {
				return "", false, errors.New("not an integer")
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return "", false, err
			}
			return strconv.FormatInt(n, 10), true, nil
		}
		return "", false, errors.New("bad type")
	}
	integer := func(v any) (int64, bool, error) {
		switch v := v.(type) {
		case nil:
			return 0, false, nil
		case json.Number:
			if strings.ContainsAny(string(v), ".eE") {
				return 0, false, errors.New("not an integer")
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil, err
		}
		return 0, false, errors.New("bad type")
	}
	var err error
	if v, ok := obj["session"]; ok {
		if t.Session, t.HasSession, err = name(v); err != nil {
			return t, err
		}
	}
	if v, ok := obj["id"]; ok {
		if t.ID, _, err = name(v); err != nil {
			return t, err
		}
	}
	var start, end int64
	var hasStart, hasEnd bool
	if v, ok := obj["start"]; ok {
		if start, hasStart, err = integer(v); err != nil {
			return t, err
		}
	}
	if v, ok := obj["end"]; ok {
		if end, hasEnd, err = integer(v); err != nil {
			return t, err
		}
	}
	if hasStart != hasEnd {
		return t, errors.New("start without end")
	}
	if hasStart {
		if end < start {
			return t, errors.New("end < start")
		}
		t.Start, t.End, t.HasTime = start, end, true
	}
	st, ok := obj["status"].(string)
	if !ok {
		return t, errors.New("status")
	}
	if t.Status, ok = history.ParseStatus(st); !ok {
		return t, errors.New("status value")
	}
	ops, ok := obj["ops"].([]any)
	if !ok {
		return t, errors.New("ops")
	}
	scalar := func(v any) (history.Value, string) {
		switch v := v.(type) {
		case nil:
			return history.Null, "null"
		case bool:
			return history.Value(strconv.FormatBool(v)), "bool"
		case string:
			return history.StringValue(v), "string"
		case json.Number:
			if strings.ContainsAny(string(v), ".eE") {
				return history.Value(v), "number"
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil {
				return "", "range"
			}
			return history.IntValue(n), "int"
		}
		return "", "container"
	}
	for _, o := range ops {
		mop, ok := o.([]any)
		if !ok || len(mop) != 3 {
			return t, errors.New("micro-op shape")
		}
		var op history.Op
		switch mop[0] {
		case "r":
			op.Kind = history.Read
		case "w":
			op.Kind = history.Write
		case "append":
			op.Kind = history.Append
		default:
			return t, errors.New("micro-op f")
		}
		k, kk := scalar(mop[1])
		if kk != "int" && kk != "string" {
			return t, errors.New("key")
		}
		op.Key = k
		if l, isList := mop[2].([]any); isList && op.Kind == history.Read {
			op.IsList = true
			for _, e := range l {
				v, vk := scalar(e)
				if vk == "null" || vk == "container" || vk == "range" {
					return t, errors.New("list element")
				}
				op.List = append(op.List, v)
			}
		} else {
			v, vk := scalar(mop[2])
			if vk == "container" || vk == "range" || vk == "null" && op.Kind != history.Read {
				return t, errors.New("value")
			}
			op.Value = v
		}
		t.Ops = append(t.Ops, op)
	}
	if t.ID == "" {
		if t.HasSession {
			t.ID = t.Session + "-" + strconv.Itoa(pos.Line)
		} else {
			t.ID = strconv.Itoa(pos.Line)
		}
	}
	if _, err := oracleFacts(obj, &t); err != nil {
		return t, err
	}
	return t, nil
}

// oracleDuplicates rejects a top-level object that names a known field
// twice (encoding/json would keep the last silently).
func oracleDuplicates(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil // the main decode reports it
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		k, _ := tok.(string)
		switch k {
		case "session", "id", "start", "end", "status", "ops", "commit_ts", "start_ts", "xid", "snapshot":
			if seen[k] {
				return fmt.Errorf("duplicate %s", k)
			}
			seen[k] = true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// oracleUTF8 rejects what encoding/json would replace by U+FFFD: bytes
// that are not UTF-8 anywhere in the line, and \u escapes of surrogates
// that do not form a pair. It walks the text on its own: a backslash
// outside a string is a syntax error encoding/json reports anyway.
func oracleUTF8(line []byte) error {
	if !utf8.Valid(line) {
		return errors.New("invalid UTF-8")
	}
	hex := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		n, err := strconv.ParseUint(string(b[:4]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(line); i++ {
		if line[i] != '\\' || i+1 >= len(line) {
			continue
		}
		if line[i+1] != 'u' {
			i++ // an escaped backslash or quote: skip its second byte
			continue
		}
		r, ok := hex(line[i+2:])
		if !ok {
			continue // encoding/json rejects it
		}
		switch {
		case 0xd800 <= r && r < 0xdc00:
			if i+7 < len(line) && line[i+6] == '\\' && line[i+7] == 'u' {
				if r2, ok := hex(line[i+8:]); ok && 0xdc00 <= r2 && r2 < 0xe000 {
					i += 11
					continue
				}
			}
			return errors.New("unpaired high surrogate")
		case 0xdc00 <= r && r < 0xe000:
			return errors.New("unpaired low surrogate")
		}
		i += 5
	}
	return nil
}
