package weakonline

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestFastValueWriters: the fast path's value map returns every writer
// of a (key, value), in release order, whether it has one writer (held
// inline) or several (valsMulti), and nothing for a value never written.
func TestFastValueWriters(t *testing.T) {
	f := newFast(history.DefaultOptions())
	rng := rand.New(rand.NewPCG(26, 18))
	model := map[kv][]int32{}
	for i := range int32(500) {
		r := kv{history.Key("k" + strconv.Itoa(rng.IntN(20))), history.IntValue(rng.Int64N(30))}
		f.addVal(r, i)
		model[r] = append(model[r], i)
	}
	var one [1]int32
	for k := range 20 {
		for v := range int64(30) {
			r := kv{history.Key("k" + strconv.Itoa(k)), history.IntValue(v)}
			if got := f.writers(r, &one); !slices.Equal(got, model[r]) {
				t.Fatalf("writers(%v) = %v, want %v", r, got, model[r])
			}
		}
	}
}
