package sionline

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/window"
)

// TestGhostPrecedesMembersUnderSkew (docs/SEMANTICS.md §5 "The ghost
// precedes the members by 2Δ (si31)"): the lost alert the schedule
// differential found at seed 2, reduced. Δ = 2, in-doubt horizon 1. a
// [19,26] reads x as [] and appends 1; u [22,52], in doubt, appends 3;
// r [55,70] reads x as [3 1]: u committed before a, which did not see
// it, so the two appenders were concurrent (invalid at SI and strong
// SI). a leaves for the ghost while u is still open; the ghost stood at
// a's start, 19, which real time puts before u (start 22) only when
// 19+Δ <= 22-Δ: not with Δ = 2. The screen then ran u before the ghost,
// x = [3 1] fitted r's read, and a's read of [] was gone with a: no
// alert. With the ghost 2Δ earlier it precedes u, and the step alerts.
func TestGhostPrecedesMembersUnderSkew(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 256
	h := &history.History{Txns: []history.Txn{
		txn("a", "c3", 19, 26, listRead("x"), appendOp("x", "1")),
		txn("u", "c1", 22, 52, appendOp("x", "3")),
		txn("r", "c3", 55, 70, listRead("x", "3", "1")),
		txn("f", "c3", 80, 90),
	}}
	h.Txns[1].Status = history.Unknown
	opts := history.Options{Level: history.SnapshotIsolation, Skew: 2, InDoubt: 1, InitialState: history.InitialEmpty}
	checked := opts
	checked.Level = Checked(opts.Level)
	res, err := incremental.Check(context.Background(), h, checked, incremental.Config{MaxAnomalies: 1})
	if err != nil || res.Verdict != incremental.Invalid {
		t.Fatalf("check says %v %v, want invalid", res.Verdict, err)
	}
	for _, serial := range []bool{false, true} {
		defer func(v bool) { NoSerialWitness = v }(NoSerialWitness)
		NoSerialWitness = serial
		fired, _ := feed(t, h, opts, window.Config{Partitions: 1, Lateness: 61, Skew: 2, InDoubt: 1}, arrival{order: []int{0, 1, 2, 3}, batch: 2, tick: 1, restart: -1})
		if len(fired) == 0 {
			t.Errorf("search only %t: no alert (a lost alert), check says invalid", serial)
		}
	}
}
