package sionline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// listOrderHistory: a [10,100] appends 1 to the list x, b [20,50]
// appends 2, committed and blind, then 90 fillers on keys of their own,
// then the readers given, then 20 more fillers. extraA and extraB are
// further ops of a and b. Valid at strong SI in the order the readers
// say, which check confirms first.
func listOrderHistory(t *testing.T, aStart int64, extraA, extraB []history.Op, readers ...history.Txn) (*history.History, history.Options) {
	t.Helper()
	txns := []history.Txn{
		txn("a", "a", aStart, 100, append([]history.Op{{Kind: history.Append, Key: "x", Value: "1"}}, extraA...)...),
		txn("b", "b", 20, 50, append([]history.Op{{Kind: history.Append, Key: "x", Value: "2"}}, extraB...)...),
	}
	for s := int64(200); s < 2000; s += 20 {
		txns = append(txns, txn(fmt.Sprint("f", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	txns = append(txns, readers...)
	for s := int64(2200); s < 2400; s += 10 {
		txns = append(txns, txn(fmt.Sprint("g", s), "c", s, s+1, w(fmt.Sprint("k", s), "1")))
	}
	h := &history.History{Txns: txns}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InitialState: history.InitialEmpty, InDoubt: 1000}
	if res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1}); err != nil || res.Verdict != incremental.Valid {
		t.Fatalf("the history should be valid: %v %v", res.Verdict, err)
	}
	return h, opts
}

func listRead(k string, vs ...string) history.Op {
	op := history.Op{Kind: history.Read, Key: history.Key(k), IsList: true, List: []history.Value{}}
	for _, v := range vs {
		op.List = append(op.List, history.Value(v))
	}
	return op
}

// runListOrder streams h with the sweep ordering by end alone
// (NoValueOrder: b, which ends first, runs first and the witness holds
// x = [2 1]), every witness the eviction takes replayed by the oracle
// (its errors returned, not a panic), and returns the engine.
func runListOrder(t *testing.T, h *history.History, opts history.Options) (*Engine, []error) {
	t.Helper()
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	defer func(v bool) { NoValueOrder = v }(NoValueOrder)
	NoValueOrder = true
	var errs []error
	defer func(f func(*history.History, history.Options, []string)) { serialCheck = f }(serialCheck)
	serialCheck = func(h *history.History, opts history.Options, w []string) {
		if err := oracle.ReplayWitness(h, opts, w); err != nil {
			errs = append(errs, err)
		}
	}
	fired, eng := live(t, h, opts, rand.New(rand.NewPCG(28, 28)), 1000, 1, -1)
	if len(fired) > 0 {
		t.Fatalf("false alarm: %v", fired[0].Core)
	}
	return eng, errs
}

// TestListRepairFollowsValues (docs/SEMANTICS.md §5 "Two appenders no
// read has ordered: the witness follows their values"): v, long after a
// and b and past the window, reads x as [1 2]. The sweep by end leaves
// [2 1] in the witness; nothing in the screen reads x, so the repair
// moves a before b, the ghost keeps [1 2] and nothing comes back.
// Without the repair (NoListRepair, the model before) v's screen fails
// and segments come back.
func TestListRepairFollowsValues(t *testing.T) {
	defer func(v bool) { NoListRepair = v }(NoListRepair)
	for _, naive := range []bool{false, true} {
		NoListRepair = naive
		h, opts := listOrderHistory(t, 10, nil, nil, txn("v", "d", 2100, 2101, listRead("x", "1", "2")))
		eng, errs := runListOrder(t, h, opts)
		if len(errs) > 0 {
			t.Fatalf("naive %v: a witness the oracle rejects: %v", naive, errs[0])
		}
		back := eng.readmits+eng.resets+eng.diagnosed+eng.failedScreens > 0
		if back != naive || (eng.listRepairs > 0) == naive {
			t.Errorf("naive %v: %d repairs, %d re-admissions, %d resets, %d diagnosed, %d failed screens", naive, eng.listRepairs, eng.readmits, eng.resets, eng.diagnosed, eng.failedScreens)
		}
	}
}

// TestListRepairKeepsWhatTheScreenDecided: two histories in which the
// screen itself orders b before a, so that moving a before b would
// leave a sequence that is no completion (the oracle's replay says so),
// and a ghost [1 2] where the stream has [2 1]:
//   - y [120,121], in the same screen as a and b, reads x as [2 1]
//     (the readers-after-u test keeps it);
//   - b reads z, which a writes, as null: b's snapshot must not hold a
//     (the begins-in-the-range test keeps it);
//   - a begins at 60, after b ended: real time puts b first (the
//     must-precede test keeps it).
//
// In both the repair must move nothing.
func TestListRepairKeepsWhatTheScreenDecided(t *testing.T) {
	cases := []struct {
		name           string
		aStart         int64
		extraA, extraB []history.Op
		readers        []history.Txn
	}{
		{"reader", 10, nil, nil, []history.Txn{txn("y", "e", 120, 121, listRead("x", "2", "1")), txn("v", "d", 2100, 2101, listRead("x", "2", "1"))}},
		{"realtime", 60, nil, nil, []history.Txn{txn("v", "d", 2100, 2101, listRead("x", "2", "1"))}},
		{"snapshot", 10, []history.Op{w("z", "1")}, []history.Op{r("z", string(history.Null))}, []history.Txn{txn("v", "d", 2100, 2101, listRead("x", "2", "1"))}},
	}
	for _, tc := range cases {
		h, opts := listOrderHistory(t, tc.aStart, tc.extraA, tc.extraB, tc.readers...)
		eng, errs := runListOrder(t, h, opts)
		if len(errs) > 0 || eng.listRepairs > 0 {
			t.Errorf("%s: %d repairs, oracle: %v", tc.name, eng.listRepairs, errs)
		}
	}
}

// TestListRepairAgainstOracle holds the repair to the oracle's replay
// on tiny histories with a list key (repairTiny, the values appended
// shuffled so that witnesses put appenders against their values), Δ of
// 0 and 1, both initial states: for every valid history, the witness
// the search gives, repaired, is replayed by internal/oracle.ReplayWitness
// at strong snapshot isolation (a completion, whatever moved). The run
// must move appenders both ways (before and after), or it tests nothing.
func TestListRepairAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 5))
	n := 3000
	if testing.Short() {
		n = 600
	}
	var before, after int
	for i := 0; i < n; i++ {
		h := repairTiny(rng)
		// Shuffle the appended values among the appenders.
		var at []int
		for j := range h.Txns {
			for o, op := range h.Txns[j].Ops {
				if op.Kind == history.Append {
					at = append(at, j*100+o)
				}
			}
		}
		for a := len(at) - 1; a > 0; a-- {
			b := rng.IntN(a + 1)
			x, y := &h.Txns[at[a]/100].Ops[at[a]%100], &h.Txns[at[b]/100].Ops[at[b]%100]
			x.Value, y.Value = y.Value, x.Value
		}
		opts := history.Options{Level: history.StrongSnapshotIsolation, Skew: int64(rng.IntN(2)), InitialState: history.InitialEmpty, InDoubt: 100}
		if rng.IntN(2) == 0 {
			opts.InitialState = history.InitialUnknown
		}
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != incremental.Valid || len(res.Witness) == 0 {
			continue
		}
		byName := map[string]*history.Txn{}
		for j := range h.Txns {
			byName[h.Txns[j].ID] = &h.Txns[j]
		}
		e := &Engine{opts: opts}
		w := res.Witness
		for m := 0; m < maxListRepairs; m++ {
			u, v, aft, ok := e.listPairAgainstValues(w, byName)
			if !ok {
				break
			}
			if aft {
				after++
			} else {
				before++
			}
			w, _ = move(w, u, v, aft)
			if err := oracle.ReplayWitness(h, opts, w); err != nil {
				t.Fatalf("history %d: moving %s and %s (after %v) leaves no completion: %v\n%v\nwitness %v", i, u, v, aft, err, h.Txns, res.Witness)
			}
		}
		if got := e.repairListOrder(byName, res.Witness); oracle.ReplayWitness(h, opts, got) != nil {
			t.Fatalf("history %d: the repaired witness is no completion", i)
		}
	}
	if before == 0 || after == 0 {
		t.Fatalf("moves before %d, after %d: the histories exercise too little", before, after)
	}
	t.Logf("moves: before %d, after %d", before, after)
}

// repairTiny: 3 to 7 transactions in three sessions, overlapping in
// time, each appending to the list l (half of them), reading it (a
// sixth), and reading or writing the registers x and y (a register op
// each with probability 1/2), some with an unknown outcome.
func repairTiny(rng *rand.Rand) *history.History {
	h := &history.History{}
	n := 3 + rng.IntN(5)
	at := [3]int64{}
	next, val := 1, 1
	for i := 0; i < n; i++ {
		s := rng.IntN(3)
		start := at[s] + rng.Int64N(6)
		end := start + 1 + rng.Int64N(10)
		at[s] = end + 1
		t := history.Txn{ID: "t" + strconv.Itoa(i), Session: "s" + strconv.Itoa(s), HasSession: true,
			Start: start, End: end, HasTime: true, Status: history.Committed}
		if rng.IntN(10) == 0 {
			t.Status = history.Unknown
		}
		if rng.IntN(2) == 0 {
			k := history.Key([]string{"x", "y"}[rng.IntN(2)])
			if rng.IntN(2) == 0 {
				t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: k, Value: regValue(rng.IntN(val))})
			} else {
				t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: k, Value: history.Value(strconv.Itoa(val))})
				val++
			}
		}
		switch rng.IntN(6) {
		case 0, 1, 2:
			t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: "l", Value: history.Value(strconv.Itoa(next))})
			next++
		case 3:
			l := []history.Value{}
			for v := 1; v < 1+rng.IntN(next); v++ {
				l = append(l, history.Value(strconv.Itoa(v)))
			}
			t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: "l", IsList: true, List: l})
		}
		h.Txns = append(h.Txns, t)
	}
	return h
}

// regValue is a register value, 0 the initial null.
func regValue(v int) history.Value {
	if v == 0 {
		return history.Null
	}
	return history.Value(strconv.Itoa(v))
}
