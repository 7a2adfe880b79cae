package online

import (
	"context"
	"sort"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// runWithUnchecked gives the engine the unchecked writers first, then
// releases text's transactions in start order, closes them all and steps:
// the number of alerts.
func runWithUnchecked(t *testing.T, text string, unchecked ...history.Txn) int {
	t.Helper()
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrictSerializable, InDoubt: 0, InitialState: history.InitialEmpty}
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	for _, u := range unchecked {
		o.AddUnchecked(u)
	}
	sort.SliceStable(h.Txns, func(i, j int) bool { return h.Txns[i].Start < h.Txns[j].Start })
	o.Release(h.Txns...)
	o.CloseAll()
	as, err := o.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A restart keeps the taint, the wildcards' count included.
	snap, err := o.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := RestoreOnline(opts, snap); err != nil || r.wild != o.wild {
		t.Fatalf("restored: %v, %d wildcard writes, want %d", err, r.wild, o.wild)
	}
	return len(as)
}

// TestUncheckedWildcards: an unchecked writer's wildcard write on a key
// drops every read of that key that holds a value (a register read other
// than null, a list read with an element); one on Wild drops every such
// read; reads of other keys are still checked. An
// unchecked writer without times may lie anywhere in time, so a reader
// that precedes its (untrusted) stamps still counts it as a possible
// writer (docs/SEMANTICS.md §5 "Dead letters").
func TestUncheckedWildcards(t *testing.T) {
	const stale = "W1[0,10] w x1 · W2[20,30] w x2 · R[40,50] r x1"
	const staleList = "A[0,10] append l 1 · R[20,30] r l []"
	x, l := history.StringValue("x"), history.StringValue("l")
	untimed := func(ops ...history.Op) history.Txn {
		return history.Txn{ID: "d", Status: history.Committed, Ops: ops}
	}
	timed := func(start int64, ops ...history.Op) history.Txn {
		return history.Txn{ID: "d", Start: start, End: start + 5, HasTime: true, Status: history.Committed, Ops: ops}
	}
	w := func(k history.Key, v history.Value) history.Op {
		return history.Op{Kind: history.Write, Key: k, Value: v}
	}
	for _, tc := range []struct {
		name, text string
		u          []history.Txn
		alerts     int
	}{
		{"no dead letter", stale, nil, 1},
		{"wild x", stale, []history.Txn{untimed(WildWrite(x))}, 0},
		{"wild y", stale, []history.Txn{untimed(WildWrite(history.StringValue("y")))}, 1},
		{"wild any key", stale, []history.Txn{untimed(WildWrite(Wild))}, 0},
		{"x=1 untimed", stale, []history.Txn{untimed(w(x, "1"))}, 0},
		{"x=1 after the reader", stale, []history.Txn{timed(100, w(x, "1"))}, 1},
		{"x=3 untimed", stale, []history.Txn{untimed(w(x, "3"))}, 1},
		{"list: no dead letter", staleList, nil, 1},
		// No op of the model removes an element: a wildcard appender
		// cannot explain an empty list read after an append, nor a read
		// of null after a write.
		{"list: wild l, empty list read", staleList, []history.Txn{untimed(WildWrite(l))}, 1},
		{"list: wild l, a read holding an element", "A[0,10] append l 1 · R[20,30] r l [2]", []history.Txn{untimed(WildWrite(l))}, 0},
		{"list: that read, no dead letter", "A[0,10] append l 1 · R[20,30] r l [2]", nil, 1},
		{"null read: wild any key", "W1[0,10] w x1 · R[20,30] r x null", []history.Txn{untimed(WildWrite(Wild))}, 1},
		{"null read: a write of null", "W1[0,10] w x1 · R[20,30] r x null", []history.Txn{untimed(w(x, history.Null))}, 0},
		{"list: wild any key", "A[0,10] append l 1 · R[20,30] r l [2]", []history.Txn{untimed(WildWrite(Wild))}, 0},
		{"list: wild x", staleList, []history.Txn{untimed(WildWrite(x))}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runWithUnchecked(t, tc.text, tc.u...); got != tc.alerts {
				t.Errorf("%d alerts, want %d", got, tc.alerts)
			}
		})
	}
}
