package sionline

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Companions under an unknown initial state (docs/SEMANTICS.md §5
// "Companions under an unknown initial state"): an in-doubt writer u
// whose reads see an initial value may leave as a companion only with
// that value pinned in the ghost (or read from a pin already there), and
// never by a fresh fix on a key the chunk touches.

// unknownInitCompanionHistories are, by name, histories under an unknown
// initial state in which i [0,10] writes y0, the in-doubt u [40,50]
// writes y1 and v, long after, reads y1: u committed (i precedes v, so
// v's y1 is no initial value). The valid ones must make a companion and
// fail no screen; the others are invalid and must be alerted.
func unknownInitCompanionHistories() map[string]struct {
	valid bool
	txns  []history.Txn
} {
	unknownTxn := func(x history.Txn) history.Txn { x.Status = history.Unknown; return x }
	rl := func(k string, vs ...history.Value) history.Op {
		return history.Op{Kind: history.Read, Key: history.Key(k), IsList: true, List: vs}
	}
	build := func(u history.Txn, mid []history.Txn, late ...history.Txn) []history.Txn {
		txns := append([]history.Txn{txn("i", "a", 0, 10, w("y", "0"))}, mid...)
		txns = append(txns, unknownTxn(u))
		txns = append(txns, fillers("e", 60, 1500)...)
		txns = append(txns, txn("v", "c", 2100, 2101, r("y", "1")))
		txns = append(txns, late...)
		return append(txns, fillers("g", 2300, 2500)...)
	}
	return map[string]struct {
		valid bool
		txns  []history.Txn
	}{
		// u reads x's initial value (null, nothing writes x), and so
		// does n later: valid, u's companion pins x to null.
		"fresh": {true, build(txn("u", "e", 40, 50, r("x", "null"), w("y", "1")), nil,
			txn("n", "c", 2200, 2201, r("x", "null")))},
		// The same with a list: u reads l empty, n later too.
		"freshlist": {true, build(txn("u", "e", 40, 50, rl("l"), w("y", "1")), nil,
			txn("n", "c", 2200, 2201, rl("l")))},
		// u reads x's initial value 4, which k, committed and evicted
		// with u, read too: the ghost's pin, and u's companion agrees.
		"pinned": {true, build(txn("u", "e", 40, 50, r("x", "4"), w("y", "1")),
			[]history.Txn{txn("k", "d", 20, 30, r("x", "4"))},
			txn("n", "c", 2200, 2201, r("x", "4")))},
		// u reads x's initial value as null, n later as 6: u committed,
		// so two initial values. A companion that leaves without its
		// fix pinned (or compares the read with null, as under an empty
		// initial state) lets n's screen commit it: no alert.
		"initial": {false, build(txn("u", "e", 40, 50, r("x", "null"), w("y", "1")), nil,
			txn("n", "c", 2200, 2201, r("x", "6")))},
		// The list form: u reads l empty, n later as [3], no appender.
		"initlist": {false, build(txn("u", "e", 40, 50, rl("l"), w("y", "1")), nil,
			txn("n", "c", 2200, 2201, rl("l", "3")))},
		// m, overlapping u, reads x's initial value 0 and writes x5; u
		// reads x's initial value as 7 before m's commit. The chunk's
		// pin of x is gone (m wrote x), so a fresh fix to 7 would
		// contradict m's read unseen.
		"chunkread": {false, build(txn("u", "e", 25, 50, r("x", "7"), w("y", "1")),
			[]history.Txn{txn("m", "d", 20, 30, r("x", "0"), w("x", "5"))})},
	}
}

// TestCompanionsUnknownInit streams each history above under an unknown
// initial state in four arrival orders. Valid: no alert, a companion
// made, no screen failed, nothing re-admitted (NoUnknownInitCompanions,
// the engine before the rule, fails a screen there). Invalid: alerted.
// Mutations each fails: reads compared as under an empty initial state
// (NoInitialRefusal: "initial", "initlist"), the fresh fixes not pinned
// ("initial", "initlist"), a fresh fix on a key the chunk touches
// ("chunkread").
func TestCompanionsUnknownInit(t *testing.T) {
	defer func(w, s int, c bool) { WaitWindow, segTxns, NoUnknownInitCompanions = w, s, c }(WaitWindow, segTxns, NoUnknownInitCompanions)
	WaitWindow, segTxns = 0, 4
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialUnknown, InDoubt: 1000}
	for name, c := range unknownInitCompanionHistories() {
		t.Run(name, func(t *testing.T) {
			h := &history.History{Txns: c.txns}
			res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
			if err != nil {
				t.Fatal(err)
			}
			if c.valid != (res.Verdict == incremental.Valid) {
				t.Fatalf("check says %s", res.Verdict)
			}
			for seed := range uint64(4) {
				NoUnknownInitCompanions = false
				fired, eng := live(t, h, opts, rand.New(rand.NewPCG(seed, 28)), 2000, 1, -1)
				if !c.valid {
					if len(fired) == 0 {
						t.Fatalf("seed %d: no alert (companions made %d, evicted %d)", seed, eng.companions, eng.evicted)
					}
					continue
				}
				if len(fired) > 0 {
					t.Fatalf("seed %d: false alarm %v", seed, fired[0].Core)
				}
				if eng.companions == 0 || eng.evicted == 0 {
					t.Fatalf("seed %d: companions %d, evicted %d: the case does not reach the rule", seed, eng.companions, eng.evicted)
				}
				if eng.failedScreens > 0 || eng.readmits > 0 || eng.resets > 0 || eng.diagnosed > 0 {
					t.Fatalf("seed %d: failed screens %d, readmits %d, resets %d, diagnosed %d: v's read should find u's companion",
						seed, eng.failedScreens, eng.readmits, eng.resets, eng.diagnosed)
				}
				NoUnknownInitCompanions = true
				_, neng := live(t, h, opts, rand.New(rand.NewPCG(seed, 28)), 2000, 1, -1)
				if neng.failedScreens+neng.diagnosed+neng.readmits+neng.resets == 0 {
					t.Fatalf("seed %d: without companions nothing fails either: the case does not show the rule", seed)
				}
			}
		})
	}
}
