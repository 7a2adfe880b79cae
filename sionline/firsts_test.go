package sionline

import (
	"math/rand"
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
