package ingest

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// AWDIT's test format (lassemoldrup/AWDIT src/formats.rs
// parse_test_history; written by the Display of its History in
// src/checker.rs), one event a line, sessions separated by a line of '='
// and transactions of a session by a line of '-':
//
//	w 0 0
//	w 1 0
//	=====
//	r 0 0
//	w 0 1
//	-----
//	r 1 0
//
// Keys and values are unsigned integers. Unlike dbcop and the text format
// there is no implicit initial write: the published tests write the
// initial values in a session of their own, so a value is taken as it is
// (0 is the integer 0). Every transaction committed; no timestamps.

// readAWDIT decodes a whole AWDIT test history. Sessions are numbered from
// 0 in file order and a transaction's id is "<session>-<position>",
// 0-based (AWDIT's TransactionId). AWDIT splits on every '=' and '-', so a
// separator is any line of them; empty sessions and transactions vanish,
// as there.
func readAWDIT(all []byte, source string, st *Stats) (*history.History, error) {
	h := &history.History{}
	sess, pos := 0, 0 // current session and position in it
	open := false     // a transaction of (sess, pos) has an op
	sessUsed := false // the current session has a transaction
	line := 0
	for len(all) > 0 {
		line++
		var l []byte
		if nl := bytes.IndexByte(all, '\n'); nl >= 0 {
			l, all = all[:nl], all[nl+1:]
		} else {
			l, all = all, nil
		}
		l = bytes.TrimSpace(l)
		switch {
		case len(l) == 0:
			continue
		case l[0] == '=' && allByte(l, '='):
			if sessUsed || open {
				sess++
			}
			pos, open, sessUsed = 0, false, false
			continue
		case l[0] == '-' && allByte(l, '-'):
			if open {
				pos++
			}
			open = false
			continue
		}
		st.Records++
		p := history.Pos{Source: source, Line: line}
		f := bytes.Fields(l)
		if len(f) != 3 || len(f[0]) != 1 || (f[0][0] != 'r' && f[0][0] != 'w') {
			return nil, &history.Error{Pos: p, Field: "event", Err: fmt.Errorf("want \"r KEY VALUE\" or \"w KEY VALUE\", got %q", clip(l))}
		}
		var nums [2]int64
		for i, name := range [2]string{"key", "value"} {
			v, err := strconv.ParseUint(string(f[i+1]), 10, 63)
			if err != nil {
				return nil, &history.Error{Pos: p, Field: name, Err: fmt.Errorf("want an unsigned integer below 2^63, got %q", clip(f[i+1]))}
			}
			nums[i] = int64(v)
		}
		if !open {
			h.Txns = append(h.Txns, history.Txn{ID: strconv.Itoa(sess) + "-" + strconv.Itoa(pos), Session: strconv.Itoa(sess), HasSession: true, Pos: p})
			open, sessUsed = true, true
		}
		kind := history.Read
		if f[0][0] == 'w' {
			kind = history.Write
		}
		t := &h.Txns[len(h.Txns)-1]
		t.Ops = append(t.Ops, history.Op{Kind: kind, Key: history.IntValue(nums[0]), Value: history.IntValue(nums[1])})
	}
	st.Txns = len(h.Txns)
	return h, nil
}

func allByte(b []byte, c byte) bool {
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}
