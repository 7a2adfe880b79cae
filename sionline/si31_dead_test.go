package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// deadHistory: u [10,20], in doubt, writes x1 and y1; m [30,40], a
// successor of u in real time, runs mOps on x; fillers on keys of their
// own push both out of the window; v, long after, reads y1, which only
// u wrote: u committed.
func deadHistory(mOps ...history.Op) *history.History {
	txns := []history.Txn{
		txn("u", "u", 10, 20, w("x", "1"), w("y", "1")),
		txn("m", "m", 30, 40, mOps...),
	}
	txns[0].Status = history.Unknown
	for s := int64(200); s < 2000; s += 10 {
		txns = append(txns, txn(fmt.Sprint("f", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, txn("v", "d", 2100, 2101, r("y", "1")))
	for s := int64(2200); s < 2400; s += 10 {
		txns = append(txns, txn(fmt.Sprint("g", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	return &history.History{Txns: txns}
}

// TestDeadVersionKeepsCompanion (docs/SEMANTICS.md §5 "A version
// overwritten before anyone reads it does not keep an in-doubt writer
// in (si31)"): m overwrites u's x blind after u ended, and nothing read
// x before: u's x is dead whether or not u committed, and u may leave
// as a companion carrying y alone; v's read of y1 then finds it, and no
// archive segment comes back. Refused as before (NoDeadAtBirth), u left
// as not committed and v's read sent the step back to its segment. When
// m reads x before it writes (null: u did not commit before m began,
// and real time says u ended first) or only reads it, u cannot have
// committed and v's read of y1 is an anomaly: the rule must not take u
// out as a companion there, or the alert is lost. check decides each.
func TestDeadVersionKeepsCompanion(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	defer func(v bool) { NoDeadAtBirth = v }(NoDeadAtBirth)
	null := history.Op{Kind: history.Read, Key: "x", Value: history.Null}
	for _, tc := range []struct {
		name   string
		mOps   []history.Op
		before bool // NoDeadAtBirth
		valid  bool
		back   bool // a re-admission expected
	}{
		{"blind", []history.Op{w("x", "2")}, false, true, false},
		{"blind-before", []history.Op{w("x", "2")}, true, true, true},
		{"read-then-write", []history.Op{null, w("x", "2")}, false, false, true},
		{"read-only", []history.Op{null}, false, false, true},
	} {
		NoDeadAtBirth = tc.before
		h := deadHistory(tc.mOps...)
		opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 5}
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Verdict == incremental.Valid) != tc.valid {
			t.Fatalf("%s: check says %s", tc.name, res.Verdict)
		}
		fired, eng := live(t, h, opts, rand.New(rand.NewPCG(31, 31)), 1000, 1, -1)
		if (len(fired) == 0) != tc.valid {
			t.Fatalf("%s: %d alerts, check says %s", tc.name, len(fired), res.Verdict)
		}
		back := eng.readmits+eng.resets+eng.diagnosed+eng.failedScreens > 0
		if back != tc.back {
			t.Errorf("%s: %d re-admissions, %d resets, %d diagnosed, %d failed screens, %d companions; want a contradiction: %v", tc.name, eng.readmits, eng.resets, eng.diagnosed, eng.failedScreens, eng.companions, tc.back)
		}
	}
}
