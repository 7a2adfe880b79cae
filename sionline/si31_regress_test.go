package sionline

import (
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/window"
)

func appendOp(k, v string) history.Op {
	return history.Op{Kind: history.Append, Key: history.Key(k), Value: history.Value(v)}
}

// TestRecheckCountsQuarantinedWriters: the history the schedule
// differential found (docs/SEMANTICS.md §5 "The promise's re-check
// counts every released writer"). At strong SI, checked for Adya SI,
// {q1, q2} is the first alert (q2 read z before q1's write, which ended
// before q2 began: a stale snapshot) and is quarantined; then {a, r}
// (r began after a ended and does not see a's append; at strong SI q2,
// which began when a ended, cannot be the source of a's read [1], so
// the read is kept). Under SI, which has no real time, q2's append of
// the same element may be what a read: the read leaves the core's
// projection at the promise, and {a, r} alone satisfies SI (r before
// a). The alert must say needs_realtime. Re-checked on the step's
// instance, which was projected at strong SI and holds q2 no more, it
// did not.
func TestRecheckCountsQuarantinedWriters(t *testing.T) {
	h := &history.History{Txns: []history.Txn{
		txn("a", "s1", 16, 28, appendOp("l", "1"), listRead("l", "1")),
		txn("q1", "s2", 20, 24, w("z", "3")),
		txn("q2", "s3", 28, 39, r("z", "null"), appendOp("l", "1")),
		txn("r", "s3", 45, 51, listRead("l"), appendOp("l", "2")),
	}}
	h.Txns[2].Ops[0].Value = history.Null
	opts := history.Options{Level: history.SnapshotIsolation, InDoubt: 0, InitialState: history.InitialEmpty}
	for _, tick := range []int64{1, 5, 100} {
		fired, _ := feed(t, h, opts, window.Config{Partitions: 1, Lateness: 26}, inOrder(h, tick))
		found := false
		for _, al := range fired {
			if slices.Equal(al.Core, []string{"a", "r"}) {
				found = true
				if !al.NeedsRealtime {
					t.Errorf("tick %d: alert %v without needs_realtime", tick, al.Core)
				}
			}
			if !al.NeedsRealtime {
				if ok, _, _ := oracle.Check(oracle.Project(released(h, al.Watermark), opts, al.Core), opts); ok {
					t.Errorf("tick %d: core %v without needs_realtime satisfies %s on the released stream", tick, al.Core, opts.Level)
				}
			}
		}
		if !found {
			t.Errorf("tick %d: alerts %v, none with the core [a r]", tick, alertIDs(fired))
		}
	}
}
