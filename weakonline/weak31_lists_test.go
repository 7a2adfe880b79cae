package weakonline

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestListBlocksAsSlices holds the per-node lists in blocks
// (weak31_lists.go; docs/SEMANTICS.md §5 "The per-node lists in
// blocks") to a model of nine parallel slices: random growth, writes,
// truncation (as compactInPlace) and "gone" notices, some of them for
// nodes whose lists are all nil (as a causal pass gives them back) and
// some, wrongly, for nodes that still hold a list. Every node's lists
// read as the model's, and blocks are freed (the test asks for some).
func TestListBlocksAsSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 9))
	freed := 0
	for round := range 40 {
		opts := history.DefaultOptions()
		opts.Level = history.Causal
		f := newFast(opts, nil)
		var model []nodeLists
		noticed := map[int]bool{}
		for range 3000 {
			switch op := rng.IntN(20); {
			case op == 0 && len(model) > 0 && rng.IntN(8) == 0: // truncate
				k := rng.IntN(len(model) + 1)
				f.truncLists(k)
				model = model[:k]
				for i := range noticed {
					if i >= k {
						delete(noticed, i)
					}
				}
			case op < 4: // grow
				n := len(model) + rng.IntN(3*listBlock)
				f.growLists(n)
				for len(model) < n {
					model = append(model, nodeLists{})
				}
			case op < 12 && len(model) > 0: // write a list
				i := rng.IntN(len(model))
				v := []int32{int32(round), int32(i)}
				if rng.IntN(3) == 0 {
					v = nil
				}
				f.nl(i).clock = v
				model[i].clock = v
				if rng.IntN(2) == 0 {
					f.nl(i).out = v
					model[i].out = v
				}
			case len(model) > 0: // a node gives its lists back
				i := rng.IntN(len(model))
				giveBack(f, model, noticed, i, round%2 == 1 && rng.IntN(50) == 0)
			}
		}
		// At the end every node gives its lists back (once, as a
		// causal pass does), a few wrongly in odd rounds.
		for i := range model {
			giveBack(f, model, noticed, i, round%2 == 1 && rng.IntN(500) == 0)
		}
		if f.nls.n != len(model) {
			t.Fatalf("round %d: %d nodes, the model %d", round, f.nls.n, len(model))
		}
		for i := range model {
			if b := f.nls.blocks[i>>listBits]; b == nil {
				if !reflect.DeepEqual(model[i], nodeLists{}) {
					t.Fatalf("round %d: node %d's block was freed while it held %v", round, i, model[i])
				}
				continue
			}
			if !reflect.DeepEqual(*f.nl(i), model[i]) {
				t.Fatalf("round %d: node %d's lists %v, the model's %v", round, i, *f.nl(i), model[i])
			}
		}
		freed += f.nls.freed
	}
	if freed == 0 {
		t.Fatal("no block was freed: the test tests no freeing")
	}
	t.Logf("%d blocks freed", freed)
}

// giveBack is a causal pass's notice for node i, once per node: its
// lists set nil first, unless wrong (a notice for a node that still
// holds a list, which must not free its block).
func giveBack(f *fast, model []nodeLists, noticed map[int]bool, i int, wrong bool) {
	if noticed[i] {
		return
	}
	noticed[i] = true
	if !wrong {
		*f.nl(i) = nodeLists{}
		model[i] = nodeLists{}
	} else if model[i].clock == nil {
		f.nl(i).clock = []int32{-1}
		model[i].clock = []int32{-1}
	}
	f.listsGone(int32(i))
}
