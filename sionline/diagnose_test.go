package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestReadNamesItsSegment (docs/SEMANTICS.md §5 "Re-admitting the
// segment a read names"): the history of TestInDoubtChoiceContradicted,
// with u's segment not the newest (more fillers after it). When v's read
// of x1, which only the archived u wrote, reaches the screen, the step
// re-admits from u's segment before any check: no screen fails, one
// suffix is re-admitted, nothing resets, no alert. Without the
// diagnosis (diagnose returning -1) the screen fails first; with the
// newest segment named instead of u's (segmentOf), the first re-admitted
// screen fails.
func TestReadNamesItsSegment(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	u := txn("u", "a", 1500, 1510, r("x", "0"), w("x", "1"))
	u.Status = history.Unknown
	txns := []history.Txn{txn("i", "a", 0, 10, w("x", "0"))}
	for s := int64(20); s < 1500; s += 10 {
		txns = append(txns, txn(fmt.Sprint("e", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, u)
	for s := int64(1600); s < 2000; s += 5 {
		txns = append(txns, txn(fmt.Sprint("f", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, txn("v", "c", 2100, 2101, r("x", "1")))
	for s := int64(2200); s < 2400; s += 10 {
		txns = append(txns, txn(fmt.Sprint("g", s), "b", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	h := &history.History{Txns: txns}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 1000}
	if res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1}); err != nil || res.Verdict != incremental.Valid {
		t.Fatalf("the history should be valid (u committed): %v %v", res.Verdict, err)
	}
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(28, 28)), 2000, 1, -1)
	if len(fired) > 0 {
		t.Fatalf("false alarm: %v", fired[0].Core)
	}
	t.Logf("diagnosed %d, failed screens %d, readmits %d, resets %d, checks %d", eng.diagnosed, eng.failedScreens, eng.readmits, eng.resets, eng.checks)
	switch {
	case eng.diagnosed == 0:
		t.Fatal("no step named a segment: v's read of the archived u's x1 went unnoticed")
	case eng.failedScreens > 0:
		t.Fatalf("%d screens failed: the step should have re-admitted u's segment before checking", eng.failedScreens)
	case eng.readmits != 1 || eng.resets > 0:
		t.Fatalf("%d suffixes re-admitted, %d full resets: want one suffix", eng.readmits, eng.resets)
	}
}
