package stampcheck

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestKeyIndexModel holds KeyIndex to a naive model, a map from the
// key's text numbering keys in first-use order, step by step: the same
// texts under many pointers (fresh copies, as a decoder whose intern
// table was reset makes), prefixes of one string (one pointer, several
// lengths), the empty key, and enough keys to grow the table several
// times. Mutations seen to fail it: the slot matched on the pointer
// alone (prefixes of one string take one id), a new slot given the
// newest id instead of its text's (a copy numbered as another key). A
// slot lost in a growth costs a text lookup, never an id, so the model
// cannot see it.
func TestKeyIndexModel(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 11))
		x := NewKeyIndex()
		model := map[string]int32{}
		var order []history.Key
		base := strings.Repeat("abcdefghij", 4)
		texts := []string{""}
		for i := range 300 + rng.IntN(3000) {
			texts = append(texts, fmt.Sprintf("k%d", i))
		}
		for step := range 20000 {
			var k string
			switch r := rng.IntN(10); {
			case r == 0:
				k = base[:rng.IntN(len(base)+1)] // one pointer, several lengths
			case r < 4:
				k = strings.Clone(texts[rng.IntN(len(texts))]) // a fresh pointer
			default:
				k = texts[rng.IntN(len(texts))] // the interned one
			}
			want, ok := model[k]
			if !ok {
				want = int32(len(model))
				model[k] = want
				order = append(order, history.Key(k))
			}
			if got := x.Get(history.Key(k)); got != want {
				t.Fatalf("seed %d step %d: key %q numbered %d, the model says %d", seed, step, k, got, want)
			}
		}
		if x.Len() != len(model) || !slices.Equal(x.Keys(), order) {
			t.Fatalf("seed %d: %d keys in id order %v, the model has %d", seed, x.Len(), len(x.Keys()), len(model))
		}
	}
}
