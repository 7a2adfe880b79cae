package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// listOrderHistory: a [10,100] appends 1 to the list x, b [20,50]
// appends 2, committed and blind, then 90 fillers on keys of their own,
// then the readers given, then 20 more fillers. extraA and extraB are
// further ops of a and b. Valid at strong SI in the order the readers
// say, which check confirms first.
func listOrderHistory(t *testing.T, aStart int64, extraA, extraB []history.Op, readers ...history.Txn) (*history.History, history.Options) {
	t.Helper()
	txns := []history.Txn{
		txn("a", "a", aStart, 100, append([]history.Op{{Kind: history.Append, Key: "x", Value: "1"}}, extraA...)...),
		txn("b", "b", 20, 50, append([]history.Op{{Kind: history.Append, Key: "x", Value: "2"}}, extraB...)...),
	}
	for s := int64(200); s < 2000; s += 20 {
		txns = append(txns, txn(fmt.Sprint("f", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, readers...)
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

func listRead(k string, vs ...string) history.Op {
	op := history.Op{Kind: history.Read, Key: history.Key(k), IsList: true, List: []history.Value{}}
	for _, v := range vs {
		op.List = append(op.List, history.Value(v))
	}
	return op
}

// runListOrder streams h with the sweep ordering by end alone
// (NoValueOrder: b, which ends first, runs first and the witness holds
// x = [2 1]), every witness the eviction takes replayed by the oracle
// (its errors returned, not a panic), and returns the engine.
func runListOrder(t *testing.T, h *history.History, opts history.Options) (*Engine, []error) {
	t.Helper()
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	defer func(v bool) { NoValueOrder = v }(NoValueOrder)
	NoValueOrder = true
	var errs []error
	defer func(f func(*history.History, history.Options, []string)) { serialCheck = f }(serialCheck)
	serialCheck = func(h *history.History, opts history.Options, w []string) {
		if err := oracle.ReplayWitness(h, opts, w); err != nil {
			errs = append(errs, err)
		}
	}
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(28, 28)), 1000, 1, -1)
	if len(fired) > 0 {
		t.Fatalf("false alarm: %v", fired[0].Core)
	}
	return eng, errs
}

// TestListRepairFollowsValues (docs/SEMANTICS.md §5 "Two appenders no
// read has ordered: the witness follows their values"): v, long after a
// and b and past the window, reads x as [1 2]. The sweep by end leaves
// [2 1] in the witness; nothing in the screen reads x, so the repair
// moves a before b, the ghost keeps [1 2] and nothing comes back.
// Without the repair (NoListRepair, the model before) v's screen fails
// and segments come back.
func TestListRepairFollowsValues(t *testing.T) {
	defer func(v bool) { NoListRepair = v }(NoListRepair)
	for _, naive := range []bool{false, true} {
		NoListRepair = naive
		h, opts := listOrderHistory(t, 10, nil, nil, txn("v", "d", 2100, 2101, listRead("x", "1", "2")))
		eng, errs := runListOrder(t, h, opts)
		if len(errs) > 0 {
			t.Fatalf("naive %v: a witness the oracle rejects: %v", naive, errs[0])
		}
		back := eng.readmits+eng.resets+eng.diagnosed+eng.failedScreens > 0
		if back != naive || (eng.listRepairs > 0) == naive {
			t.Errorf("naive %v: %d repairs, %d re-admissions, %d resets, %d diagnosed, %d failed screens", naive, eng.listRepairs, eng.readmits, eng.resets, eng.diagnosed, eng.failedScreens)
		}
	}
}

// TestListRepairKeepsWhatTheScreenDecided: two histories in which the
// screen itself orders b before a, so that moving a before b would
// leave a sequence that is no completion (the oracle's replay says so),
// and a ghost [1 2] where the stream has [2 1]:
//   - y [120,121], in the same screen as a and b, reads x as [2 1]
//     (the readers-after-u test keeps it);
//   - b reads z, which a writes, as null: b's snapshot must not hold a
//     (the begins-in-the-range test keeps it);
//   - a begins at 60, after b ended: real time puts b first (the
//     must-precede test keeps it).
//
// In both the repair must move nothing.
func TestListRepairKeepsWhatTheScreenDecided(t *testing.T) {
	cases := []struct {
		name           string
		aStart         int64
		extraA, extraB []history.Op
		readers        []history.Txn
	}{
		{"reader", 10, nil, nil, []history.Txn{txn("y", "e", 120, 121, listRead("x", "2", "1")), txn("v", "d", 2100, 2101, listRead("x", "2", "1"))}},
		{"realtime", 60, nil, nil, []history.Txn{txn("v", "d", 2100, 2101, listRead("x", "2", "1"))}},
		{"snapshot", 10, []history.Op{w("z", "1")}, []history.Op{r("z", string(history.Null))}, []history.Txn{txn("v", "d", 2100, 2101, listRead("x", "2", "1"))}},
	}
	for _, tc := range cases {
		h, opts := listOrderHistory(t, tc.aStart, tc.extraA, tc.extraB, tc.readers...)
		eng, errs := runListOrder(t, h, opts)
		if len(errs) > 0 || eng.listRepairs > 0 {
			t.Errorf("%s: %d repairs, oracle: %v", tc.name, eng.listRepairs, errs)
		}
	}
}
