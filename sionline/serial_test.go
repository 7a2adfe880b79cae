package sionline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// serialTaken counts the serial witnesses the tests' screens took (each
// one replayed by the oracle, TestMain).
var serialTaken atomic.Int64

// TestMain replays every serial witness a screen takes, in every test of
// the package, against the oracle's rules (internal/oracle.ReplayWitness:
// its own replay, sharing nothing with the sweep): a witness the sweep
// gets wrong fails the test that produced it. STREAMCHECK_SIONLINE_SERIAL=off
// turns the sweep off, so the same tests run on the search alone;
// =unchecked skips the replay (profiles of BenchmarkRMW).
func TestMain(m *testing.M) {
	serialCheck = func(h *history.History, opts history.Options, w []string) {
		serialTaken.Add(1)
		if err := oracle.ReplayWitness(h, opts, w); err != nil {
			panic("sionline: a serial witness the oracle rejects: " + err.Error())
		}
	}
	switch os.Getenv("STREAMCHECK_SIONLINE_SERIAL") {
	case "off":
		NoSerialWitness = true
	case "unchecked":
		serialCheck = nil // BenchmarkRMW's profiles: the engine's time alone
	}
	os.Exit(m.Run())
}

// tinyMixed is tiny (harness_test.go) with a list key beside the
// registers: appends of fresh values and list reads of a prefix of the
// values appended so far, sometimes out of order, so that both verdicts
// occur on lists too.
func tinyMixed(rng *rand.Rand) *history.History {
	h := tiny(rng)
	next := 1
	for i := range h.Txns {
		t := &h.Txns[i]
		switch rng.IntN(3) {
		case 0:
			t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: "l", Value: history.Value(strconv.Itoa(next))})
			next++
		case 1:
			l := make([]history.Value, 0, next)
			for v := 1; v < 1+rng.IntN(next); v++ {
				l = append(l, history.Value(strconv.Itoa(v)))
			}
			if len(l) > 1 && rng.IntN(4) == 0 {
				l[0], l[1] = l[1], l[0]
			}
			t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: "l", IsList: true, List: l})
		}
	}
	return h
}

// TestSerialWitnessAgainstOracle holds the sweep to the brute-force
// oracle on tiny histories, registers and lists, Δ of 0 and 1, with and
// without a ghost first (docs/SEMANTICS.md §5 "A serial witness for the
// screen"): every order it returns is a witness the oracle's replay
// accepts at strong snapshot isolation (P1-P3), so it returns none on a
// history the oracle finds invalid; and it orders most valid ones, or it
// would settle nothing.
func TestSerialWitnessAgainstOracle(t *testing.T) {
	serialAgainstOracle(t, history.InitialEmpty, 2828)
}

// TestSerialWitnessUnknownInit is TestSerialWitnessAgainstOracle under
// an unknown initial state (docs/SEMANTICS.md §5 "The serial witness
// under an unknown initial state"): the first read of a key nothing
// wrote fixes its initial value or list, every later read must agree,
// and the ghost's pins fix some of them from the start. Mutations it
// catches: a second read of the initial value not held to the first
// (tent), a list's initial prefix not held to the first read's, pins
// ignored.
func TestSerialWitnessUnknownInit(t *testing.T) {
	serialAgainstOracle(t, history.InitialUnknown, 2829)
}

func serialAgainstOracle(t *testing.T, init history.InitialState, seed uint64) {
	count := 3000
	if testing.Short() {
		count = 500
	}
	found, valid := 0, 0
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), seed))
		h := tinyMixed(rng)
		if init == history.InitialUnknown {
			// A second read of the list in some transactions, the same
			// list or one element short: both reads of one transaction
			// must agree on the initial list.
			for i := range h.Txns {
				tx := &h.Txns[i]
				for _, op := range tx.Ops {
					if op.IsList && rng.IntN(3) == 0 {
						l := op.List
						if len(l) > 0 && rng.IntN(2) == 0 {
							l = l[:len(l)-1]
						}
						tx.Ops = append(tx.Ops, history.Op{Kind: history.Read, Key: "l", IsList: true, List: l})
						break
					}
				}
			}
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 3, Skew: rng.Int64N(2), InitialState: init}
		var g *ghost
		if rng.IntN(3) == 0 {
			// A ghost: committed, at or before every start, as
			// instance(true) puts it (last, as the engine does, or
			// first); its versions are ones the members may read.
			g = &ghost{Reg: map[history.Key]history.Value{"k0": "1"}, List: map[history.Key][]history.Value{"l": {"0"}}, Pin: map[history.Key]history.Op{}, Time: h.Txns[0].Start}
			if init == history.InitialUnknown && rng.IntN(2) == 0 {
				// Pins: no versions, k1's initial value and l's
				// initial list fixed.
				delete(g.Reg, "k0")
				delete(g.List, "l")
				g.Pin["k1"] = history.Op{Kind: history.Read, Key: "k1", Value: history.Value(strconv.Itoa(rng.IntN(3)))}
				g.Pin["l"] = history.Op{Kind: history.Read, Key: "l", IsList: true, List: []history.Value{"1"}[:rng.IntN(2)]}
			}
			if rng.IntN(2) == 0 {
				h.Txns = append([]history.Txn{g.txn(nil)}, h.Txns...)
			} else {
				h.Txns = append(h.Txns, g.txn(nil))
			}
		}
		e, err := New(opts, Config{})
		if err != nil {
			t.Fatal(err)
		}
		ok, _, err := oracle.Check(h, opts)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			valid++
		}
		lean := h
		if g != nil && rng.IntN(2) == 0 {
			// The ghost without its ops, as the engine's screen gives
			// it to the sweep: its versions come from g.
			lean = &history.History{Txns: slices.Clone(h.Txns)}
			for i := range lean.Txns {
				if lean.Txns[i].ID == ghostName {
					lean.Txns[i].Ops = nil
				}
			}
		}
		w := e.serialWitness(lean, g)
		if w == nil {
			continue
		}
		found++
		if err := oracle.ReplayWitness(h, opts, w); err != nil {
			t.Fatalf("history %d (Δ=%d): the sweep's order %v: %v\n%s", i, opts.Skew, w, err, dump(h))
		}
		if !ok {
			t.Fatalf("history %d: the sweep ordered a history the oracle finds invalid\n%s", i, dump(h))
		}
		if g != nil && w[0] != "begin "+ghostName {
			t.Fatalf("history %d: the ghost is not first in %v", i, w)
		}
	}
	t.Logf("%d histories, %d valid, %d ordered by the sweep", count, valid, found)
	if valid < count/10 || found < valid/2 {
		t.Errorf("%d valid of %d, %d ordered: the test would say nothing", valid, count, found)
	}
}

// TestUnknownInitSweepMatchesSearch streams generated read-modify-write
// streams (unknown outcomes, lists, injected anomalies) under an unknown
// initial state twice, in the same arrivals: with the sweep fixing
// initial values, and with the sweep off there (SerialEmptyOnly, the
// search deciding every screen, as before). The alert ids and their
// order are the same, the first verdict is check's, and the sweep
// settles some screens (or the test would compare the search with
// itself). Every serial witness taken is replayed by the oracle
// (TestMain).
func TestUnknownInitSweepMatchesSearch(t *testing.T) {
	count := 6
	if testing.Short() {
		count = 2
	}
	defer func(w, s int, o bool) { WaitWindow, segTxns, SerialEmptyOnly = w, s, o }(WaitWindow, segTxns, SerialEmptyOnly)
	WaitWindow = 0
	serial := 0
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 2831))
		h, cfg := mixedStream(t, i, rng, 200, 300, []float64{0.05, 0.1, 0.2})
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialUnknown}
		segTxns = []int{2, 8, 256}[i%3]
		tick, batch := 100_000+rng.Int64N(2_000_000), 1+rng.IntN(8)
		seed := rng.Uint64()
		t.Run(fmt.Sprintf("%d/unknown=%.2f/inject=%v/seg=%d", i, cfg.UnknownRatio, cfg.Inject, segTxns), func(t *testing.T) {
			_, eng := sameAlertsSwitched(t, h, opts, seed, tick, batch, func(emptyOnly bool) { SerialEmptyOnly = emptyOnly },
				"alerts %v with the sweep under an unknown initial state, %v without")
			serial += eng.serialScreens
		})
	}
	t.Logf("%d streams: %d screens settled by the sweep", count, serial)
	if serial == 0 {
		t.Errorf("no screen settled by the sweep: the test compares the search with itself")
	}
}
