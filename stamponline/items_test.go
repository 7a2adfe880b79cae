package stamponline

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// heapRef is container/heap over the same items and order, the reference
// for items' sifts: a checkpoint stores q as it is, so the layout, not
// only the order of the pops, must stay container/heap's.
type heapRef struct {
	e *Engine
	q []item
}

func (h *heapRef) Len() int           { return len(h.q) }
func (h *heapRef) Less(i, j int) bool { return h.e.less(h.q[i], h.q[j]) }
func (h *heapRef) Swap(i, j int)      { h.q[i], h.q[j] = h.q[j], h.q[i] }
func (h *heapRef) Push(x any)         { h.q = append(h.q, x.(item)) }
func (h *heapRef) Pop() any {
	x := h.q[len(h.q)-1]
	h.q = h.q[:len(h.q)-1]
	return x
}

// TestItemsAsContainerHeap drives items and container/heap with the same
// random pushes and pops, many items tied on the stamp (so the order's
// later keys decide), at both families' tie orders, and compares every
// pop and the whole array after every call.
func TestItemsAsContainerHeap(t *testing.T) {
	for _, si := range []bool{false, true} {
		for seed := uint64(1); seed <= 20; seed++ {
			rng := rand.New(rand.NewPCG(seed, 7))
			e := &Engine{si: si}
			got := items{e: e}
			ref := &heapRef{e: e}
			var seq int64
			for step := range 4000 {
				if got.Len() == 0 || rng.IntN(100) < 55 {
					seq++
					st := int64(rng.IntN(20))
					p := &pend{t: history.Txn{Start: st, End: st + int64(rng.IntN(5))}, seq: seq}
					x := item{stamp: int64(rng.IntN(30)), commit: rng.IntN(2) == 0, p: p}
					got.push(x)
					heap.Push(ref, x)
				} else {
					a, b := got.pop(), heap.Pop(ref).(item)
					if a != b {
						t.Fatalf("si=%v seed %d step %d: pop %+v, container/heap %+v", si, seed, step, a, b)
					}
				}
				if !slices.Equal(got.q, ref.q) {
					t.Fatalf("si=%v seed %d step %d: layout differs from container/heap's", si, seed, step)
				}
			}
		}
	}
}
