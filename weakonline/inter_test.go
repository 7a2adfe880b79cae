package weakonline

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// intermediate (the pass's test before fInter, kept as the reference)
// reports whether t wrote a value of a key that is not the
// key's final one (finals, from parse). A transaction with no more writes
// than final values has none, and is not looked at op by op.
func intermediate(t *history.Txn, finals []kv, kt *keyTable) bool {
	writes := 0
	for _, op := range t.Ops {
		if op.Kind != history.Read {
			writes++
		}
	}
	if writes <= len(finals) {
		return false
	}
	for _, op := range t.Ops {
		if op.Kind == history.Read {
			continue
		}
		r := kt.pair(op.Key, op.Value)
		for _, f := range finals {
			if f.k == r.k && f != r {
				return true
			}
		}
	}
	return false
}

// TestInterFlagAgrees: fInter, set from a transaction's ops when it is
// added (so that a pass need not read back a spilled body, R8), says
// what the pass's own test on the parsed finals said, on random register
// transactions.
func TestInterFlagAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 8))
	kt := newKeyTable()
	for n := 0; n < 20000; n++ {
		var tx history.Txn
		for j := rng.IntN(7); j >= 0; j-- {
			op := history.Op{Kind: history.Kind(rng.IntN(2)), Key: history.Value("k" + strconv.Itoa(rng.IntN(3))), Value: history.Value(strconv.Itoa(rng.IntN(3)))}
			tx.Ops = append(tx.Ops, op)
		}
		finals, _, ok := parse(&tx, kt)
		if !ok {
			continue // never retires: internally inconsistent
		}
		if got, want := hasIntermediate(&tx), intermediate(&tx, finals, kt); got != want {
			t.Fatalf("%+v: fInter %v, the pass's test %v", tx.Ops, got, want)
		}
	}
}
