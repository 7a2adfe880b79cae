package sionline

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/window"
)

// laterChunkFixHistory is the history the schedule differential found at
// seed 4 (strong-snapshot-isolation, history 17689), reduced. Under an
// unknown initial state T4 reads z as [1] before appending 1, so z's
// initial list is [1]; T5, after T4 in real time, reads [1] where it must
// see [1 1]: invalid. T2, in doubt, read z as [] (a fix of the initial
// list, were it committed); T1 and T3 (no ops) set the times at which the
// window releases the others.
func laterChunkFixHistory() *history.History {
	unknown := func(x history.Txn) history.Txn { x.Status = history.Unknown; return x }
	return &history.History{Txns: []history.Txn{
		unknown(txn("T1", "c2", 19, 39)),
		unknown(txn("T2", "c1", 19, 41, listRead("z"), appendOp("z", "4"))),
		txn("T3", "c3", 29, 36),
		txn("T4", "c3", 45, 46, listRead("z", "1"), appendOp("z", "1")),
		txn("T5", "c2", 50, 52, listRead("z", "1")),
	}}
}

// TestCompanionFixHoldsForTheWitness (docs/SEMANTICS.md §5 "A
// companion's fix must hold for the whole witness (si32)"): after a
// reset the witness of the screen on every body left T2 uncommitted and
// read z's initial list as [1] (T4); the eviction's first chunk {T1, T2}
// made T2 a companion whose fix (z's initial list []) joined the ghost's
// pins, since no other member of that chunk touched z, and the second
// chunk {T3, T4} was then replayed from a ghost whose pin its own read
// contradicts: the ghost ended with the pin [] and the list [1], and T5's
// read of [1] passed (no alert; WaitWindow 0, segments of 2, a restart
// after the first accept). Every wait, segment size, tick and restart
// tried must alert.
func TestCompanionFixHoldsForTheWitness(t *testing.T) {
	h := laterChunkFixHistory()
	opts := history.Options{Level: history.StrongSnapshotIsolation, Skew: 2, InDoubt: 12, InitialState: history.InitialUnknown}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check says %s", res.Verdict)
	}
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	evicted := false
	for _, restart := range []int{0, -1} {
		for _, wait := range []int{0, 2, 128} {
			for _, seg := range []int{2, 8, 256} {
				for _, tick := range []int64{1, 2, 5} {
					WaitWindow, segTxns = wait, seg
					desc := fmt.Sprintf("restart %d wait %d seg %d tick %d", restart, wait, seg, tick)
					wcfg := window.Config{Partitions: 1, Lateness: 28, Skew: opts.Skew, InDoubt: opts.InDoubt}
					fired, eng := feed(t, h, opts, wcfg, arrival{order: []int{0, 1, 2, 3, 4}, batch: 1, tick: tick, restart: restart})
					if len(fired) == 0 {
						t.Fatalf("%s: no alert (evicted %d, companions %d)", desc, eng.Stats().Evicted, eng.companions)
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
