package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unsafe"

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
//
// It is check's whole reading of a peer's 1M-transaction history (10M
// lines), so it allocates little per line: a transaction's consecutive
// lines are decoded straight into a shared slab of ops and handed to it
// as one slice, keys are interned, values (and ids) below smallValues
// are made once and shared, larger ones cut from a shared byte slab
// (textValues), the transactions are sized once from the first lines,
// and a line of the transaction before it looks nothing up. Decoding
// this format took 1.6x the native decoder's CPU at 1M transactions
// (BENCHMARKS "weak5"); gathering lines in a buffer and copying them to
// the slab, and growing the transactions by doubling, were half of
// what was left (BENCHMARKS "weak26 (issue 26 acceptance 4)").
func readText(all []byte, source string, st *Stats) (*history.History, error) {
	h := &history.History{}
	var byTxn txnIndex             // txn number -> index in h.Txns
	aborted := make(map[int64]int) // session -> index of its aborted txn
	zeroWrites := make(map[int]int)
	var sessOf []int64 // per transaction, its session's number
	var vals textValues
	var keys textKeys
	// The ops of consecutive lines of transaction at (-1: none) are
	// decoded straight into slab, from run on; flush hands them to it.
	// Once handed over they are never written again.
	at, atTxn := -1, int64(0)
	var slab []history.Op
	run := 0
	flush := func() {
		if at < 0 || len(slab) == run {
			return
		}
		t := &h.Txns[at]
		// Full slice expression: a later append to these ops copies
		// them rather than overwrite the next transaction's.
		ops := slab[run:len(slab):len(slab)]
		if t.Ops == nil {
			t.Ops = ops
		} else {
			t.Ops = append(t.Ops, ops...)
		}
		run = len(slab)
	}
	// push adds op to the current run, moving the run to a new slab when
	// this one is full.
	push := func(op history.Op) {
		if len(slab) == cap(slab) {
			n := len(slab) - run
			next := make([]history.Op, n, max(textSlabOps, 2*n))
			copy(next, slab[run:])
			slab, run = next, 0
		}
		slab = append(slab, op)
	}
	line := 0
	lines := 0 // all's lines, counted once the first estimateAfter are read
	for len(all) > 0 {
		line++
		if line == estimateAfter && len(h.Txns) > 0 {
			// Size the transactions once from the first lines' ratio of
			// transactions to lines, rather than double and copy a
			// million of them (a tenth of decoding).
			lines = line + bytes.Count(all, []byte{'\n'})
			if est := int(int64(lines)*int64(len(h.Txns))/int64(line)) + len(h.Txns)/8 + 16; est > cap(h.Txns) {
				h.Txns = slices.Grow(h.Txns, est-len(h.Txns))
			}
		}
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
		kind, nums, field, err := parseTextLine(l)
		if err != nil {
			return nil, &history.Error{Pos: history.Pos{Source: source, Line: line}, Field: field, Err: err}
		}
		key, val, sess, txn := nums[0], nums[1], nums[2], nums[3]
		k := keys.of(key)
		op := history.Op{Kind: kind, Key: k, Value: history.Null}
		if kind != history.Read || val != 0 {
			op.Value = vals.of(val)
		}
		if txn < 0 {
			if kind == history.Read {
				st.SetAside++
				continue
			}
			i, ok := aborted[sess]
			if !ok {
				i = len(h.Txns)
				aborted[sess] = i
				h.Txns = append(h.Txns, history.Txn{ID: "aborted-" + strconv.FormatInt(sess, 10), Status: history.Aborted, Pos: history.Pos{Source: source, Line: line}})
				sessOf = append(sessOf, sess)
			}
			h.Txns[i].Ops = append(h.Txns[i].Ops, op)
			continue
		}
		if at < 0 || txn != atTxn {
			flush()
			i, ok := byTxn.get(txn)
			if !ok {
				i = len(h.Txns)
				byTxn.set(txn, i)
				h.Txns = append(h.Txns, history.Txn{ID: string(vals.of(txn)), Session: string(vals.of(sess)), HasSession: true, Pos: history.Pos{Source: source, Line: line}})
				sessOf = append(sessOf, sess)
			}
			at, atTxn = i, txn
		}
		if sessOf[at] != sess {
			return nil, &history.Error{Pos: history.Pos{Source: source, Line: line}, ID: h.Txns[at].ID, Field: "session", Err: fmt.Errorf("transaction %d is in session %s (line %d), not %d", txn, h.Txns[at].Session, h.Txns[at].Pos.Line, sess)}
		}
		if kind == history.Write && val == 0 {
			zeroWrites[at]++
		}
		push(op)
	}
	flush()
	return dropInitialStates(h, zeroWrites, st)
}

// textSlabOps is the size of one slab of ops (a transaction's run of
// lines longer than that gets a slab of twice its length).
const textSlabOps = 1 << 14

// estimateAfter is the line after which readText sizes its
// transactions from the ratio seen so far.
const estimateAfter = 1 << 12

// txnIndex maps a text history's txn numbers to their transactions:
// numbers below denseTxns (peers number transactions from 0) by index,
// in a slice as long as the largest such number seen, others by map (a
// map of a million entries was a quarter of the decoding).
type txnIndex struct {
	dense []int32 // index + 1; 0: none
	other map[int64]int
}

// denseTxns bounds the txn numbers found by index (64 MB at most).
const denseTxns = 1 << 24

func (x *txnIndex) get(txn int64) (int, bool) {
	if 0 <= txn && txn < denseTxns {
		if txn < int64(len(x.dense)) && x.dense[txn] != 0 {
			return int(x.dense[txn]) - 1, true
		}
		return 0, false
	}
	i, ok := x.other[txn]
	return i, ok
}

func (x *txnIndex) set(txn int64, i int) {
	if 0 <= txn && txn < denseTxns {
		if txn >= int64(len(x.dense)) {
			x.dense = slices.Grow(x.dense, int(txn)+1-len(x.dense))[:txn+1]
		}
		x.dense[txn] = int32(i) + 1
		return
	}
	if x.other == nil {
		x.other = map[int64]int{}
	}
	x.other[txn] = i
}

// textKeys interns the keys of a text history: one string per key,
// shared by its ops (the online engines and check's key numbering hash
// its pointer); keys below denseKeys are found by index, others by map.
type textKeys struct {
	dense []history.Value
	other map[int64]history.Value
}

// denseKeys bounds the keys found by index (a slice of at most 16 MB).
const denseKeys = 1 << 20

func (x *textKeys) of(key int64) history.Value {
	if 0 <= key && key < denseKeys {
		if key >= int64(len(x.dense)) {
			x.dense = append(x.dense, make([]history.Value, int(key)+1-len(x.dense))...)
		}
		k := x.dense[key]
		if k == "" {
			k = history.IntValue(key)
			x.dense[key] = k
		}
		return k
	}
	k, ok := x.other[key]
	if !ok {
		if x.other == nil {
			x.other = map[int64]history.Value{}
		}
		k = history.IntValue(key)
		x.other[key] = k
	}
	return k
}

// textValues makes the text of decoded integer values without an
// allocation each: the digits go to a shared slab, never written again
// once a value names them, so a value is a string over them (a small
// integer is strconv's constant). A history keeps every value it reads,
// so the slab lives as long as they do and holds nothing else.
type textValues struct {
	slab []byte
	// small holds the text of each value below smallValues once made:
	// a generated history's values are per-key counters, each read and
	// written many times, so most are made once and then shared.
	small []history.Value
}

// smallValues bounds the values textValues makes once and shares.
const smallValues = 1 << 16

// slabSize is the size of one slab of value text.
const slabSize = 1 << 16

func (x *textValues) of(v int64) history.Value {
	if 0 <= v && v < 100 {
		return history.IntValue(v) // strconv's constant, no allocation
	}
	if v < smallValues && v >= 0 {
		if x.small == nil {
			x.small = make([]history.Value, smallValues)
		}
		if s := x.small[v]; s != "" {
			return s
		}
		s := x.make(v)
		x.small[v] = s
		return s
	}
	return x.make(v)
}

// make writes v's digits to the slab.
func (x *textValues) make(v int64) history.Value {
	if cap(x.slab)-len(x.slab) < 20 {
		x.slab = make([]byte, 0, slabSize)
	}
	n := len(x.slab)
	x.slab = strconv.AppendInt(x.slab, v, 10)
	d := x.slab[n:]
	return history.Value(unsafe.String(unsafe.SliceData(d), len(d)))
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
		var v int64
		for i < len(l) && l[i] >= '0' && l[i] <= '9' {
			v = v*10 + int64(l[i]-'0')
			i++
		}
		if d := l[start:i]; len(d) == 0 || len(d) > 18 || d[0] == '-' {
			// Eighteen digits cannot overflow the sum above; anything
			// else (a sign, more digits, none) is strconv's to judge.
			var err error
			v, err = strconv.ParseInt(string(d), 10, 64)
			if err != nil {
				return 0, nums, names[n], fmt.Errorf("want a decimal integer at byte %d, got %q", start+1, clip(l[start:]))
			}
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
