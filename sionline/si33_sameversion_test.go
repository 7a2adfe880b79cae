package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// sameVersionHistories are the histories of TestCompanionKeepsAVersionTheGhostHeld
// (docs/SEMANTICS.md §5 "A companion's version the chunk already holds
// (si33)"). i writes x0, y0 and z5; u, in doubt, reads x0 and writes x1,
// y1 and z5 (z's value again), and leaves as a companion; a later chunk
// touches u's keys; v, long after, reads x1, so that u committed.
//
//   - same (valid, K7e): k reads z5, the version the ghost held before
//     the chunk and u's too. u committed before k: k read u's z5. The
//     companion stays (with the rule off it leaves at k, and v's screen
//     fails);
//   - samedead (invalid, K7e's dead version): k reads z5 and writes z6,
//     then n, after k in real time, reads z5. u's effective end is before
//     k, so no z5 is the latest version at n's begin. Were u's z5 kept
//     live after k's write, n's screen would commit the companion and
//     read it;
//   - aborted (valid, K7d): b, aborted, reads y0 and writes y9 and x9;
//     it is no transaction of any completion, and the companion stays
//     (with the rule off it leaves at b);
//   - unknownreader (invalid, K7d's witness): k, in doubt, reads y0
//     after u in real time and writes q1, which n reads in the same
//     screen, so the witness commits k: k read y0 after u committed.
//     A rule that let k's touch pass because k's status is unknown
//     (not because the witness left it out) keeps the companion, and
//     v's screen commits it.
func sameVersionHistories() map[string][]history.Txn {
	unknown := func(x history.Txn) history.Txn { x.Status = history.Unknown; return x }
	aborted := func(x history.Txn) history.Txn { x.Status = history.Aborted; return x }
	tail := func(late []history.Txn, mid ...history.Txn) []history.Txn {
		out := append(append([]history.Txn{}, fillers("e", 60, 1500)...), mid...)
		out = append(out, fillers("f", 2200, 3000)...)
		out = append(out, late...)
		out = append(out, fillers("p", 3100, 3900)...)
		out = append(out, txn("v", "c", 4100, 4101, r("x", "1")))
		return append(out, fillers("g", 4200, 4400)...)
	}
	head := []history.Txn{
		txn("i", "a", 0, 10, w("x", "0"), w("y", "0"), w("z", "5")),
		unknown(txn("u", "e", 40, 50, r("x", "0"), w("x", "1"), w("y", "1"), w("z", "5"))),
	}
	return map[string][]history.Txn{
		"same": append(slices.Clone(head), tail(nil,
			txn("k", "h", 2100, 2110, r("z", "5")))...),
		"samedead": append(slices.Clone(head), tail([]history.Txn{txn("n", "d", 3050, 3060, r("z", "5"))},
			txn("k", "h", 2100, 2110, r("z", "5"), w("z", "6")))...),
		"aborted": append(slices.Clone(head), tail(nil,
			aborted(txn("b", "h", 2100, 2110, r("y", "0"), w("y", "9"), w("x", "9"))))...),
		"unknownreader": append(slices.Clone(head), tail(nil,
			unknown(txn("k", "h", 2100, 2110, r("y", "0"), w("q", "1"))),
			txn("n", "d", 2120, 2130, r("q", "1")))...),
	}
}

// TestCompanionKeepsAVersionTheGhostHeld streams each history of
// sameVersionHistories over waits, segment sizes, ticks, arrival orders
// and with and without a restart: the invalid ones are alerted every
// time; the valid ones never are, and at the eviction's most eager
// setting (wait 0, segments of 4) the companion outlives the chunk:
// no screen fails and nothing comes back, where with the rule off
// (NoSameVersion for "same", NoSi33Touch for "aborted") a screen fails.
func TestCompanionKeepsAVersionTheGhostHeld(t *testing.T) {
	defer func(w, s int, a, b bool) { WaitWindow, segTxns, NoSameVersion, NoSi33Touch = w, s, a, b }(WaitWindow, segTxns, NoSameVersion, NoSi33Touch)
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 1000}
	valid := map[string]bool{"same": true, "aborted": true}
	for name, txns := range sameVersionHistories() {
		t.Run(name, func(t *testing.T) {
			h := &history.History{Txns: txns}
			res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
			if err != nil {
				t.Fatal(err)
			}
			if valid[name] != (res.Verdict == incremental.Valid) {
				t.Fatalf("check says %s", res.Verdict)
			}
			NoSameVersion, NoSi33Touch = false, false
			for _, restart := range []int{-1, len(txns) / 2} {
				for _, wait := range []int{0, 2, 128} {
					for _, seg := range []int{2, 4, 256} {
						for _, tick := range []int64{500, 2000} {
							for seed := range uint64(2) {
								WaitWindow, segTxns = wait, seg
								desc := fmt.Sprintf("restart %d wait %d seg %d tick %d seed %d", restart, wait, seg, tick, seed)
								fired, eng := live(t, h, opts, rand.New(rand.NewPCG(seed, 33)), tick, 1, restart)
								if !valid[name] && len(fired) == 0 {
									t.Fatalf("%s: no alert (companions %d, evicted %d)", desc, eng.companions, eng.evicted)
								}
								if valid[name] && len(fired) > 0 {
									t.Fatalf("%s: false alarm %v", desc, fired[0].Core)
								}
							}
						}
					}
				}
			}
			if !valid[name] {
				return
			}
			WaitWindow, segTxns = 0, 4
			for seed := range uint64(4) {
				_, eng := live(t, h, opts, rand.New(rand.NewPCG(seed, 28)), 2000, 1, -1)
				if eng.companions == 0 || eng.evicted == 0 {
					t.Fatalf("seed %d: companions %d, evicted %d: the case does not reach the rule", seed, eng.companions, eng.evicted)
				}
				if eng.failedScreens > 0 || eng.readmits > 0 || eng.resets > 0 || eng.diagnosed > 0 {
					t.Fatalf("seed %d: failed screens %d, readmits %d, resets %d, diagnosed %d: u's companion should outlive the chunk",
						seed, eng.failedScreens, eng.readmits, eng.resets, eng.diagnosed)
				}
				NoSameVersion, NoSi33Touch = name == "same", name == "aborted"
				_, neng := live(t, h, opts, rand.New(rand.NewPCG(seed, 28)), 2000, 1, -1)
				NoSameVersion, NoSi33Touch = false, false
				if neng.failedScreens+neng.diagnosed == 0 {
					t.Fatalf("seed %d: without the rule nothing fails either: the case does not show it", seed)
				}
			}
		})
	}
}
