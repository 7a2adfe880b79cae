package incremental

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// testValues are the values the index is held to a map on: short ones
// (confirmed in the slot, packShort) and ones of seven and eight bytes
// and more, empty included (confirmed by reading the operation back),
// which the weak hashes below make collide with each other.
var testValues = []history.Value{"0", "1", "2", "3", "4", "5", "6", "7", "", "1234567", "12345678", "\"a long string value\"", "\"a long string valuf\"", "8"}

// TestValueIndexAgainstMap holds the hashed index to a plain map of slices,
// with hashes so weak that most values collide.
func TestValueIndexAgainstMap(t *testing.T) {
	// buckets 0: the index's own hash.
	for _, buckets := range []uint64{0, 1, 3, 1 << 62} {
		t.Run(fmt.Sprint(buckets), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(buckets, 1))
			type write struct {
				txn, op int32
				kv      keyVal
			}
			keys := []history.Value{"a", "b", "c", "d", "e", "f"}
			var writes []write
			var ops [][]history.Op
			for txn := int32(0); txn < 200; txn++ {
				ops = append(ops, nil)
				for i := range int32(rng.IntN(5)) {
					kv := keyVal{int32(rng.IntN(5)), testValues[rng.IntN(len(testValues)-1)]}
					writes = append(writes, write{txn, i, kv})
					ops[txn] = append(ops[txn], history.Op{Kind: history.Write, Key: keys[kv.key], Value: kv.val})
				}
			}
			x := newValueIndex(0, &keys, func(t, i int32) *history.Op { return &ops[t][i] })
			if buckets > 0 {
				x.weakHash = func(kv keyVal) uint64 {
					h := uint64(kv.key)*31 + uint64(len(kv.val))*7
					if len(kv.val) > 0 {
						h += uint64(kv.val[0])
					}
					return h % buckets
				}
			}
			want := map[keyVal][]int32{}
			for i, w := range writes {
				x.add(w.kv, w.txn, w.op)
				if ws := want[w.kv]; len(ws) == 0 || ws[len(ws)-1] != w.txn {
					want[w.kv] = append(ws, w.txn)
				}
				if i%5 == 0 {
					// A get among the adds sees every add before it
					// (the pending ones are done first).
					kv := keyVal{int32(rng.IntN(6)), testValues[rng.IntN(len(testValues))]}
					var one [1]int32
					if got := x.get(kv, &one); !slices.Equal(got, want[kv]) {
						t.Fatalf("after %d adds, %v: got %v, want %v", i+1, kv, got, want[kv])
					}
				}
			}
			for k := range int32(6) {
				for _, v := range testValues {
					kv := keyVal{k, v}
					var one [1]int32
					if got := x.get(kv, &one); !slices.Equal(got, want[kv]) {
						t.Fatalf("%v: got %v, want %v", kv, got, want[kv])
					}
				}
			}
		})
	}
}
