package sionline

import (
	"math/rand"
	randv2 "math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestFirstsMatchMap holds firsts, which replaced a map per transaction
// in the sweep, summarize, sealedPrefixes and replayInto, to the map it
// replaced: on random transactions of few and of many ops (the scan and
// the precomputed path either side of smallTxn), over few keys so that
// keys repeat, each op's answer is whether no op before it has its key.
func TestFirstsMatchMap(t *testing.T) {
	rng := rand.New(rand.NewSource(28))
	for n := 0; n < 400; n++ {
		size := rng.Intn(2 * smallTxn)
		ops := make([]history.Op, size)
		for j := range ops {
			ops[j] = history.Op{Kind: history.Read, Key: history.Key(strconv.Itoa(rng.Intn(1 + size/3)))}
		}
		fs := newFirsts(ops)
		seen := map[history.Key]bool{}
		// Asked out of order (sealedPrefixes asks only for reads).
		want := make([]bool, size)
		for j := range ops {
			want[j] = !seen[ops[j].Key]
			seen[ops[j].Key] = true
		}
		for _, j := range rng.Perm(size) {
			if got := fs.first(j); got != want[j] {
				t.Fatalf("%d ops, op %d on key %s: first %v, want %v", size, j, ops[j].Key, got, want[j])
			}
		}
	}
}

// TestSweepScanMatchesMap runs the sweep on TestSerialWitnessAgainstOracle's
// tiny histories twice, scanning each participant's ops (the default)
// and with smallTxn 0 (the maps, as for transactions of many ops): the
// orders are the same, element for element.
func TestSweepScanMatchesMap(t *testing.T) {
	defer func(n int) { smallTxn = n }(smallTxn)
	ordered := 0
	for i := 0; i < 1000; i++ {
		rng := randv2.New(randv2.NewPCG(uint64(i), 2828))
		h := tinyMixed(rng)
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 3, Skew: rng.Int64N(2), InitialState: history.InitialEmpty}
		e, err := New(opts, Config{})
		if err != nil {
			t.Fatal(err)
		}
		smallTxn = 32
		scan := e.serialWitness(h, nil)
		smallTxn = 0
		mapped := e.serialWitness(h, nil)
		if !slices.Equal(scan, mapped) {
			t.Fatalf("history %d: scan %v, map %v\n%s", i, scan, mapped, dump(h))
		}
		if scan != nil {
			ordered++
		}
	}
	if ordered == 0 {
		t.Fatal("no history ordered: the test would say nothing")
	}
}
