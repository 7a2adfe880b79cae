package sionline

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/window"
)

// TestAppendedListReadPins (docs/SEMANTICS.md §5 "A list read after its
// own appends fixes the initial list (si31)"): the two lost alerts the
// schedule differential found at seeds 1 and 2, reduced. Under an
// unknown initial state a's read of x after its own append of 1 shows
// [1]: x's initial list is empty. a leaves for the archive, and a later
// read of x with an element no one appended before a's ([3 1 4], [1 2 2
// 1 4]) is then an anomaly. The eviction pinned an initial list only
// from a read that is its transaction's first op on the key, so the
// ghost took x's initial list as unknown and explained the later read
// by it: no alert, where check finds one.
func TestAppendedListReadPins(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	for _, tc := range []struct {
		name      string
		txns      []history.Txn
		opts      history.Options
		wait, seg int
		wcfg      window.Config
		a         arrival
	}{
		{"seed1", []history.Txn{
			txn("a", "c1", 16, 22, appendOp("x", "1"), listRead("x", "1"), appendOp("x", "4")),
			txn("b", "c1", 26, 42, listRead("x", "3", "1", "4")),
		}, history.Options{Level: history.SnapshotIsolation, Skew: 2, InDoubt: 0, InitialState: history.InitialUnknown},
			0, 8, window.Config{Partitions: 1, Lateness: 35, Skew: 2}, arrival{order: []int{0, 1}, batch: 1, tick: 13, restart: -1}},
		{"seed2", []history.Txn{
			txn("a", "c1", 67, 68, appendOp("x", "2"), listRead("x", "2"), appendOp("x", "1")),
			txn("b", "c1", 71, 85, appendOp("x", "4")),
			txn("c", "c1", 125, 127, listRead("x", "1", "2", "2", "1", "4")),
		}, history.Options{Level: history.StrongSessionSnapshotIsolation, InDoubt: history.NoInDoubt, InitialState: history.InitialUnknown},
			2, 2, window.Config{Partitions: 1, Lateness: 30, InDoubt: history.NoInDoubt}, arrival{order: []int{0, 1, 2}, batch: 4, tick: 2, restart: -1}},
	} {
		h := &history.History{Txns: tc.txns}
		checked := tc.opts
		checked.Level = Checked(tc.opts.Level)
		res, err := incremental.Check(context.Background(), h, checked, incremental.Config{MaxAnomalies: 1})
		if err != nil || res.Verdict != incremental.Invalid {
			t.Fatalf("%s: check says %v %v, want invalid", tc.name, res.Verdict, err)
		}
		WaitWindow, segTxns = tc.wait, tc.seg
		fired, _ := feed(t, h, tc.opts, tc.wcfg, tc.a)
		if len(fired) == 0 {
			t.Errorf("%s: no alert (a lost alert), check says invalid", tc.name)
		}
	}
}
