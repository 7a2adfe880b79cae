package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// The text format of PolySI (amnore/PolySI TextHistoryLoader), Plume
// (TextHistoryLoader) and IsoVista (history/loader/TextHistoryLoader), one
// micro-operation a line:
//
//	r(key,value,session,txn)
//	w(key,value,session,txn)
//
// all decimal integers, matched by the regular expression
// ([rw])\((\d++),(\d++),(\d++),(-?\d++)\). A transaction is every line with
// its txn number, in a session (the session of its first line), ordered in
// the session by first appearance. Every key holds 0 before its first
// write. IsoVista and AWDIT write aborted writes with txn -1; their reads
// with txn -1 are never written. There are no timestamps and no outcomes
// other than committed and (txn -1) aborted.

// readText decodes a whole text-format history. Sessions and ids are the
// decimal numbers of the input. Writes of txn -1 of one session become one
// aborted transaction "aborted-<session>" (without a session: an aborted
// transaction orders nothing); reads of txn -1 are set aside. A read of 0
// is the model's initial state (null). A transaction all of whose
// operations write 0 is the initial state written out (PolySI's and
// AWDIT's dumpers write one) and is set aside; any other write of 0 is an
// error, as it could not be told from the initial value.
func readText(all []byte, source string, st *Stats) (*history.History, error) {
	h := &history.History{}
	byTxn := make(map[int64]int)   // txn number -> index in h.Txns
	aborted := make(map[int64]int) // session -> index of its aborted txn
	zeroWrites := make(map[int]int)
	line := 0
	for len(all) > 0 {
		line++
		var l []byte
		if nl := bytes.IndexByte(all, '\n'); nl >= 0 {
			l, all = all[:nl], all[nl+1:]
		} else {
			l, all = all, nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'})
		if blank(l) {
			continue
		}
		st.Records++
		pos := history.Pos{Source: source, Line: line}
		kind, nums, field, err := parseTextLine(l)
		if err != nil {
			return nil, &history.Error{Pos: pos, Field: field, Err: err}
		}
		key, val, sess, txn := nums[0], nums[1], nums[2], nums[3]
		op := history.Op{Kind: kind, Key: history.IntValue(key), Value: history.IntValue(val)}
		if kind == history.Read && val == 0 {
			op.Value = history.Null
		}
		session := strconv.FormatInt(sess, 10)
		if txn < 0 {
			if kind == history.Read {
				st.SetAside++
				continue
			}
			i, ok := aborted[sess]
			if !ok {
				i = len(h.Txns)
				aborted[sess] = i
				h.Txns = append(h.Txns, history.Txn{ID: "aborted-" + session, Status: history.Aborted, Pos: pos})
			}
			h.Txns[i].Ops = append(h.Txns[i].Ops, op)
			continue
		}
		i, ok := byTxn[txn]
		if !ok {
			i = len(h.Txns)
			byTxn[txn] = i
			h.Txns = append(h.Txns, history.Txn{ID: strconv.FormatInt(txn, 10), Session: session, HasSession: true, Pos: pos})
		} else if h.Txns[i].Session != session {
			return nil, &history.Error{Pos: pos, ID: h.Txns[i].ID, Field: "session", Err: fmt.Errorf("transaction %d is in session %s (line %d), not %s", txn, h.Txns[i].Session, h.Txns[i].Pos.Line, session)}
		}
		if kind == history.Write && val == 0 {
			zeroWrites[i]++
		}
		h.Txns[i].Ops = append(h.Txns[i].Ops, op)
	}
	return dropInitialStates(h, zeroWrites, st)
}

// dropInitialStates removes the transactions that only write 0 (the
// initial state written out by a peer's dumper) and rejects any other
// write of 0.
func dropInitialStates(h *history.History, zeroWrites map[int]int, st *Stats) (*history.History, error) {
	if len(zeroWrites) == 0 {
		st.Txns += len(h.Txns)
		return h, nil
	}
	out := h.Txns[:0]
	for i := range h.Txns {
		t := h.Txns[i]
		if n := zeroWrites[i]; n > 0 {
			if n < len(t.Ops) || t.Status != history.Committed {
				return nil, &history.Error{Pos: t.Pos, ID: t.ID, Field: "value", Err: errors.New("a write of 0 cannot be told from the implicit initial value 0")}
			}
			st.SetAside++
			continue
		}
		out = append(out, t)
	}
	h.Txns = out
	st.Txns += len(out)
	return h, nil
}

// parseTextLine parses r(k,v,s,t) or w(k,v,s,t); t may be negative.
func parseTextLine(l []byte) (history.Kind, [4]int64, string, error) {
	var nums [4]int64
	if len(l) < 2 || (l[0] != 'r' && l[0] != 'w') || l[1] != '(' {
		return 0, nums, "op", fmt.Errorf("want r(key,value,session,txn) or w(...), got %q", clip(l))
	}
	kind := history.Read
	if l[0] == 'w' {
		kind = history.Write
	}
	names := [4]string{"key", "value", "session", "txn"}
	i := 2
	for n := range nums {
		start := i
		if n == 3 && i < len(l) && l[i] == '-' {
			i++
		}
		for i < len(l) && l[i] >= '0' && l[i] <= '9' {
			i++
		}
		v, err := strconv.ParseInt(string(l[start:i]), 10, 64)
		if err != nil {
			return 0, nums, names[n], fmt.Errorf("want a decimal integer at byte %d, got %q", start+1, clip(l[start:]))
		}
		nums[n] = v
		want := byte(',')
		if n == 3 {
			want = ')'
		}
		if i >= len(l) || l[i] != want {
			return 0, nums, names[n], fmt.Errorf("want %q at byte %d of %q", want, i+1, clip(l))
		}
		i++
	}
	if i != len(l) {
		return 0, nums, "txn", fmt.Errorf("text after ')' at byte %d: %q", i+1, clip(l[i:]))
	}
	if nums[3] < -1 {
		return 0, nums, "txn", fmt.Errorf("txn %d: want a number >= 0, or -1 for an aborted write", nums[3])
	}
	return kind, nums, "", nil
}

// clip shortens input quoted in an error.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// AppendText appends h in the text format. It fails, naming the
// transaction and operation, on what the format cannot say: lists, values
// other than non-negative integers, the value 0 (the initial value; a read
// of null is written as 0), unknown outcomes. Keys are kept when all are
// non-negative integers, else renamed (peerKeys). Sessions and
// ids are kept when they are all non-negative integers, else numbered by
// first appearance from 0; an aborted transaction's writes are written
// with txn -1 and its reads left out (the format has no aborted reads).
// Transactions with no operations cannot be written and are left out.
func AppendText(dst []byte, h *history.History) ([]byte, error) {
	sessions := peerSessions(h)
	keys := peerKeys(h)
	keepIDs := true
	for i := range h.Txns {
		if _, ok := peerInt(history.Value(h.Txns[i].ID)); !ok {
			keepIDs = false
		}
	}
	keepSessions := true
	for _, s := range sessions {
		if _, ok := peerInt(history.Value(s[0].Session)); !ok || !s[0].HasSession {
			keepSessions = false
		}
	}
	next := 0
	for si, s := range sessions {
		sess := strconv.Itoa(si)
		if keepSessions {
			sess = s[0].Session
		}
		for _, t := range s {
			if t.Status == history.Unknown {
				return nil, cannotSay("text", t, "status", "has no unknown outcome")
			}
			id := strconv.Itoa(next)
			next++
			if keepIDs {
				id = t.ID
			}
			if t.Status == history.Aborted {
				id = "-1"
			}
			for j := range t.Ops {
				k, v, err := peerOp("text", t, j, keys)
				if err != nil {
					return nil, err
				}
				c := byte('r')
				if t.Ops[j].Kind == history.Write {
					c = 'w'
				} else if t.Status == history.Aborted {
					continue
				}
				dst = append(dst, c, '(')
				dst = strconv.AppendUint(dst, k, 10)
				dst = append(dst, ',')
				dst = strconv.AppendUint(dst, v, 10)
				dst = append(dst, ',')
				dst = append(dst, sess...)
				dst = append(dst, ',')
				dst = append(dst, id...)
				dst = append(dst, ")\n"...)
			}
		}
	}
	return dst, nil
}
