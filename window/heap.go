package window

// One generic binary min-heap, used twice. container/heap would cost an interface
// call per comparison and swap, which is most of an Add+Release at 32
// partitions; the entries are small so sifting moves little.

// pending is a buffered transaction's place in the release heap; the body
// stays in Window.slab so that sifting moves 40 bytes, not a whole Txn.
type pending struct {
	start, end int64
	id         string
	slot       int32
}

// before is the release order: start, then end, then id. IDs are unique
// among accepted transactions, so it is a total order.
func (a *pending) before(b *pending) bool {
	if a.start != b.start {
		return a.start < b.start
	}
	if a.end != b.end {
		return a.end < b.end
	}
	return a.id < b.id
}

// open is a released transaction that has not time-closed yet.
type open struct {
	effEnd, start, end int64
	id                 string
	seq                uint64
}

// before is the closing order: effective end, then the release order.
func (a *open) before(b *open) bool {
	if a.effEnd != b.effEnd {
		return a.effEnd < b.effEnd
	}
	if a.start != b.start {
		return a.start < b.start
	}
	if a.end != b.end {
		return a.end < b.end
	}
	return a.id < b.id
}

// minHeap is a binary min-heap of small values ordered by their before
// method. The values are held inline, so sifting moves bytes, not
// pointers the GC must trace through a container/heap interface.
type minHeap[T any, P interface {
	*T
	before(*T) bool
}] []T

type pendingHeap = minHeap[pending, *pending]
type openHeap = minHeap[open, *open]

func (h *minHeap[T, P]) push(x T) {
	*h = append(*h, x)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !P(&a[i]).before(&a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *minHeap[T, P]) pop() T {
	a := *h
	top := a[0]
	n := len(a) - 1
	var zero T
	a[0] = a[n]
	a[n] = zero // drop references held by the vacated slot
	a = a[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && P(&a[r]).before(&a[l]) {
			m = r
		}
		if !P(&a[m]).before(&a[i]) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}
