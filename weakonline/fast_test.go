package weakonline

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestFastValueWriters: the fast path's value map returns every writer
// of a (key, value), in release order, whether it has one writer (held
// inline, or in its key's dense window) or several (valsMulti), and
// nothing for a value never written; a map of slices is the model. The
// values are counters, values below and far past a key's window, values
// the window reaches after they were written, values just below a
// window (it grows down) and at the lowest integers, and strings; a
// key's map is asked only once it holds one of its integer values
// (denseVals.spilled).
func TestFastValueWriters(t *testing.T) {
	for round := range 200 {
		f := newFast(history.DefaultOptions(), nil)
		rng := rand.New(rand.NewPCG(26, uint64(round)))
		model := map[kv][]int32{}
		span := int64(1 + rng.IntN(300))
		val := func() history.Value {
			switch rng.IntN(10) {
			case 0:
				return history.StringValue("s" + strconv.Itoa(rng.IntN(5)))
			case 1:
				return history.IntValue(rng.Int64N(3*denseGap*span) - denseGap*span)
			case 2:
				return history.IntValue([]int64{math.MinInt64, math.MaxInt64, -1, 0, math.MinInt64 + 1, math.MinInt64 + denseGap}[rng.IntN(6)])
			case 3:
				// Just below a window opened at a counter (it grows
				// down), or just beyond how far it grows.
				return history.IntValue(rng.Int64N(span) - 1 - rng.Int64N(2*denseGap+2))
			}
			return history.IntValue(rng.Int64N(span))
		}
		var asked []kv
		for i := range int32(rng.IntN(600)) {
			r := f.kt.pair(history.Key("k"+strconv.Itoa(rng.IntN(4))), val())
			f.addVal(r, i)
			model[r] = append(model[r], i)
			asked = append(asked, r, f.kt.pair(history.Key("k"+strconv.Itoa(rng.IntN(5))), val()))
		}
		var one [1]int32
		for _, r := range asked {
			if got := f.writers(r, &one); !slices.Equal(got, model[r]) {
				t.Fatalf("round %d: writers(%v) = %v, want %v", round, r, got, model[r])
			}
		}
	}
}

// TestKVIsText: two numbered pairs are equal exactly when their keys and
// value texts are (a map keyed by kv never takes one value for another:
// "1" and "01", "-0" and "0", "1" and "\"1\"" stay apart), and a pair
// gives its value's text back.
func TestKVIsText(t *testing.T) {
	kt := newKeyTable()
	vals := []history.Value{"0", "-0", "00", "01", "1", "-1", "+1", "\"1\"", "null", "1.0", " 1", "9223372036854775807",
		"9223372036854775808", "-9223372036854775808", "-9223372036854775809", "[1]", "true", "\"\""}
	keys := []history.Key{"x", "y", "\"x\""}
	for _, k1 := range keys {
		for _, v1 := range vals {
			a := kt.pair(k1, v1)
			if kt.value(a) != v1 {
				t.Fatalf("pair(%s, %s) gives back %s", k1, v1, kt.value(a))
			}
			if l, ok := kt.lookup(k1, v1); !ok || l != a {
				t.Fatalf("lookup(%s, %s) = %v, %v; pair gave %v", k1, v1, l, ok, a)
			}
			for _, k2 := range keys {
				for _, v2 := range vals {
					b := kt.pair(k2, v2)
					if (a == b) != (k1 == k2 && v1 == v2) {
						t.Fatalf("pair(%s, %s) == pair(%s, %s): %v", k1, v1, k2, v2, a == b)
					}
				}
			}
		}
	}
	if _, ok := kt.lookup("never", "1"); ok {
		t.Fatal("a key never numbered has a pair")
	}
	if _, ok := kt.lookup("x", "\"never\""); ok {
		t.Fatal("a value never numbered has a pair")
	}
}

// naiveGrow is fast.grow as it was, one append per slice and node: the
// model the batched growth is held to.
func naiveGrow(f *fast, n int) {
	for len(f.ord) < n {
		f.ord = append(f.ord, -1)
		f.growLists(len(f.ord))
		f.node = append(f.node, false)
		f.usable = append(f.usable, false)
		f.chosen = append(f.chosen, false)
		f.sessOf = append(f.sessOf, -1)
		f.pos = append(f.pos, -1)
		f.closed = append(f.closed, false)
		f.prev = append(f.prev, -1)
		f.mark = append(f.mark, 0)
	}
}

// TestGrowAsNaive: growing the per-node slices in steps of random sizes,
// with nodes set between the steps, gives the slices one append per node
// gives, in length and content.
func TestGrowAsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 7))
	for round := range 50 {
		a, b := newFast(history.DefaultOptions(), nil), newFast(history.DefaultOptions(), nil)
		for range 40 {
			n := len(a.ord) + rng.IntN(300)
			a.grow(n)
			naiveGrow(b, n)
			if n > 0 {
				i := rng.IntN(n)
				for _, f := range []*fast{a, b} {
					f.ord[i], f.node[i], f.pos[i], f.mark[i] = int32(round), true, int32(i), 3
					f.nl(i).out = []int32{int32(i)}
					f.nl(i).clock = []int32{1, 2}
				}
			}
		}
		sl := func(f *fast) []any {
			var ls []nodeLists
			for i := range f.nls.n {
				ls = append(ls, *f.nl(i))
			}
			return []any{f.ord, ls, f.node, f.usable, f.chosen, f.sessOf, f.pos, f.closed, f.prev, f.mark}
		}
		if !reflect.DeepEqual(sl(a), sl(b)) {
			t.Fatalf("round %d: grown slices differ from one append per node", round)
		}
	}
}
