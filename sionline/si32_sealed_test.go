package sionline

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/window"
)

// appendedReadHistory is the history the schedule differential found at
// seed 3 (snapshot-isolation, history 47165), reduced: T2 and T3
// overlap and both append to z, T3 reads z as [3] after its own append
// (its snapshot misses T2's 4), T5 reads [4 3] (T2's append committed
// first). T2's commit falls between T3's begin and T3's commit: two
// concurrent appenders, invalid at every SI level. T1 and T4 (no ops)
// set the times at which the window releases the others.
func appendedReadHistory() *history.History {
	ab := txn("T1", "c2", 11, 30)
	ab.Status = history.Aborted
	return &history.History{Txns: []history.Txn{
		ab,
		txn("T2", "c3", 23, 38, appendOp("z", "4")),
		txn("T3", "c4", 29, 33, appendOp("z", "3"), listRead("z", "3")),
		txn("T4", "c2", 39, 59),
		txn("T5", "c2", 59, 85, listRead("z", "4", "3")),
	}}
}

// TestAppendedReadSealsNothing (docs/SEMANTICS.md §5 "A list read after
// its own appends reads the snapshot too (si32)"): the screen's witness
// ran T3 before T2, and with T3's read of z, which follows T3's own
// append, not counted as a read of the snapshot, the prefix {T1, T2}
// passed as sealed: T2 left into the ghost (z = [4]), the next screen
// had no T2 against T3 and T5, and the stream's one anomaly was never
// alerted (WaitWindow 2, segments of 2). Every wait, segment size, tick
// and restart tried must alert.
func TestAppendedReadSealsNothing(t *testing.T) {
	h := appendedReadHistory()
	opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 4, InitialState: history.InitialEmpty}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check says %s", res.Verdict)
	}
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	evicted := false
	for _, restart := range []int{4, -1} {
		for _, wait := range []int{0, 2, 128} {
			for _, seg := range []int{2, 8, 256} {
				for _, tick := range []int64{1, 5} {
					WaitWindow, segTxns = wait, seg
					desc := fmt.Sprintf("restart %d wait %d seg %d tick %d", restart, wait, seg, tick)
					wcfg := window.Config{Partitions: 1, Lateness: 41, InDoubt: opts.InDoubt}
					fired, eng := feed(t, h, opts, wcfg, arrival{order: []int{0, 1, 2, 3, 4}, batch: 1, tick: tick, restart: restart})
					if len(fired) == 0 {
						t.Fatalf("%s: no alert (evicted %d)", desc, eng.Stats().Evicted)
					}
					evicted = evicted || eng.Stats().Evicted > 0
				}
			}
		}
	}
	if !evicted {
		t.Fatal("nothing was evicted: the case does not reach the rule")
	}
}

// TestExternalRead: which reads see the snapshot.
func TestExternalRead(t *testing.T) {
	app := history.Op{Kind: history.Append, Key: "l", Value: "1"}
	rl := history.Op{Kind: history.Read, Key: "l", IsList: true}
	wx := history.Op{Kind: history.Write, Key: "x", Value: "1"}
	rx := history.Op{Kind: history.Read, Key: "x", Value: "1"}
	for _, c := range []struct {
		ops  []history.Op
		j    int
		want bool
	}{
		{[]history.Op{rl}, 0, true},
		{[]history.Op{app, rl}, 1, true},
		{[]history.Op{app, app, rx, rl}, 3, true},
		{[]history.Op{rl, app, rl}, 2, false}, // the first read saw the snapshot
		{[]history.Op{rx}, 0, true},
		{[]history.Op{wx, rx}, 1, false}, // reads its own write
		{[]history.Op{rx, rx}, 1, false},
	} {
		if got := externalRead(c.ops, c.j, newFirsts(c.ops)); got != c.want {
			t.Errorf("%v at %d: %t, want %t", c.ops, c.j, got, c.want)
		}
	}
}

// writerOrderHistory is the history the schedule differential found at
// seed 4 (strong-snapshot-isolation, history 21305), reduced: T3 and T5
// overlap and write y blindly, T7 (after both in real time) reads T3's
// y4, T8 (after T7) reads T5's y1: the versions' order flips between two
// reads, invalid at strong SI. T4 (no ops) sets the times at which the
// window releases the others.
func writerOrderHistory() *history.History {
	return &history.History{Txns: []history.Txn{
		txn("T3", "c3", 34, 57, w("y", "4")),
		txn("T4", "c2", 37, 49),
		txn("T5", "c1", 44, 66, w("y", "1")),
		txn("T7", "c1", 85, 115, r("y", "4")),
		txn("T8", "c1", 127, 149, r("y", "1")),
	}}
}

// TestChunksKeepTheVersionOrder (docs/SEMANTICS.md §5 "A version order
// the chunks keep (si32)"): the screen's witness ran T5 before T3 and T7
// read T3's y4. Cut into the chunks {T3, T4} and {T5, T7}, the second
// was replayed from a ghost holding y4 with T5's commit before T7's
// begin, so T7's read no longer held there and the ghost ended at y1,
// which T8's read then matched: no alert (WaitWindow 128, segments of
// 2, tick 13). Every wait, segment size and tick tried must alert; with
// NoWriterOrder (the third kind of interval left out) it fails.
func TestChunksKeepTheVersionOrder(t *testing.T) {
	h := writerOrderHistory()
	opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 0, InitialState: history.InitialEmpty}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check says %s", res.Verdict)
	}
	defer func(w, s int, n bool) { WaitWindow, segTxns, NoWriterOrder = w, s, n }(WaitWindow, segTxns, NoWriterOrder)
	run := func() (missed string) {
		for _, restart := range []int{2, -1} {
			for _, wait := range []int{0, 2, 128} {
				for _, seg := range []int{2, 8, 256} {
					for _, tick := range []int64{1, 5, 13} {
						WaitWindow, segTxns = wait, seg
						wcfg := window.Config{Partitions: 1, Lateness: 47, InDoubt: opts.InDoubt}
						fired, _ := feed(t, h, opts, wcfg, arrival{order: []int{0, 1, 2, 3, 4}, batch: 1, tick: tick, restart: restart})
						if len(fired) == 0 && missed == "" {
							missed = fmt.Sprintf("restart %d wait %d seg %d tick %d", restart, wait, seg, tick)
						}
					}
				}
			}
		}
		return missed
	}
	if missed := run(); missed != "" {
		t.Fatalf("%s: no alert", missed)
	}
	NoWriterOrder = true
	if run() == "" {
		t.Fatal("without the third kind of interval every schedule alerts too: the case does not show the rule")
	}
}
