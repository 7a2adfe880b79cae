package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// valueOrderHistory: a and b write x blind, committed, their client
// intervals nested (a [10,100] w x1, b [20,50] w x2), nothing reads x
// until v, long after, reads x2. Client time leaves a and b unordered;
// the stream says b committed last. Fillers on keys of their own push
// a and b out of the window before v arrives. Valid at strong SI (a
// commits before b begins), which check confirms here first.
//
// With list set, a and b append a and b to the list x instead, and v
// reads x as [a b].
func valueOrderHistory(t *testing.T, a, b string, list bool) (*history.History, history.Options) {
	t.Helper()
	txns := []history.Txn{
		txn("a", "a", 10, 100, w("x", a)),
		txn("b", "b", 20, 50, w("x", b)),
	}
	read := r("x", b)
	if list {
		txns[0].Ops[0].Kind, txns[1].Ops[0].Kind = history.Append, history.Append
		read = history.Op{Kind: history.Read, Key: "x", IsList: true, List: []history.Value{history.Value(a), history.Value(b)}}
	}
	return paddedHistory(t, txns, read)
}

// paddedHistory is txns, then fillers on keys of their own (which push
// txns out of the window), a reader v of one op, and more fillers; it
// fails unless check finds it valid at strong SI.
func paddedHistory(t *testing.T, txns []history.Txn, read history.Op) (*history.History, history.Options) {
	t.Helper()
	for s := int64(200); s < 2000; s += 10 {
		txns = append(txns, txn(fmt.Sprint("f", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, txn("v", "d", 2100, 2101, read))
	for s := int64(2200); s < 2400; s += 10 {
		txns = append(txns, txn(fmt.Sprint("g", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	h := &history.History{Txns: txns}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 1000}
	if res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1}); err != nil || res.Verdict != incremental.Valid {
		t.Fatalf("the history should be valid: %v %v", res.Verdict, err)
	}
	return h, opts
}

// TestValueOrderKeepsTheStreamsChoice (docs/SEMANTICS.md §5 "The sweep
// orders concurrent writers by their values"): by end alone the sweep
// runs b (end 50) before a (end 100), the ghost keeps a's x1 (the list
// [2 1]), and v's read of x2 ([1 2]) contradicts that choice: a screen
// fails and archive segments come back. With the values compared (1 before 2) the sweep
// runs a first, the ghost keeps x2, and nothing comes back. Values that
// say the other thing (b writes 0) make the sweep choose as by end, and
// the contradiction comes back: the preference is a guess, checked like
// every other choice of the sweep, never an alert.
func TestValueOrderKeepsTheStreamsChoice(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	defer func(v bool) { NoValueOrder = v }(NoValueOrder)
	// The sweep's rule on its own: the witness's list repair
	// (si28e_listorder.go) would settle the naive list case too.
	defer func(v bool) { NoListRepair = v }(NoListRepair)
	NoListRepair = true
	for _, tc := range []struct {
		name              string
		a, b              string
		list, naive, back bool // appends; NoValueOrder; a re-admission expected
	}{
		{"ordered", "1", "2", false, false, false},
		{"naive", "1", "2", false, true, true},
		{"against", "1", "0", false, false, true},
		{"text", "p", "q", false, false, true},
		{"list", "1", "2", true, false, false},
		{"list-naive", "1", "2", true, true, true},
		{"list-against", "3", "2", true, false, true},
	} {
		NoValueOrder = tc.naive
		h, opts := valueOrderHistory(t, tc.a, tc.b, tc.list)
		fired, eng := live(t, h, opts, rand.New(rand.NewPCG(28, 28)), 1000, 1, -1)
		if len(fired) > 0 {
			t.Fatalf("%s: false alarm: %v", tc.name, fired[0].Core)
		}
		back := eng.readmits+eng.resets+eng.diagnosed+eng.failedScreens > 0
		if back != tc.back {
			t.Errorf("%s: %d re-admissions, %d resets, %d diagnosed, %d failed screens; want a contradiction: %v", tc.name, eng.readmits, eng.resets, eng.diagnosed, eng.failedScreens, tc.back)
		}
	}
}
