package incremental

import (
	"slices"
	"sort"
)

// readerIndex maps (key, writer) to the register reads that may read the
// writer's version of the key, in the order they were added. It replaces
// a map keyed by the pair (one entry and one slice per pair cost a
// quarter of the encoding's allocations at 100K transactions): entries
// are bucketed by key with a counting sort and sorted by writer within
// the key, and a lookup is a binary search in the key's bucket.
type readerIndex struct {
	pending []readerEntry
	start   []int32 // per key: first entry; start[k+1] ends it
	ws      []int32
	refs    []readerRef
}

type readerEntry struct {
	key, w int32
	ref    readerRef
}

func newReaderIndex(keys int) *readerIndex {
	return &readerIndex{start: make([]int32, keys+1)}
}

func (x *readerIndex) add(key, w int32, ref readerRef) {
	x.pending = append(x.pending, readerEntry{key, w, ref})
	x.start[key+1]++
}

// build must run after the last add and before the first get.
func (x *readerIndex) build() {
	for k := 1; k < len(x.start); k++ {
		x.start[k] += x.start[k-1]
	}
	n := len(x.pending)
	x.ws = make([]int32, n)
	x.refs = make([]readerRef, n)
	next := append([]int32(nil), x.start[:len(x.start)-1]...)
	for _, en := range x.pending {
		i := next[en.key]
		next[en.key]++
		x.ws[i], x.refs[i] = en.w, en.ref
	}
	x.pending = nil
	for k := 0; k+1 < len(x.start); k++ {
		lo, hi := x.start[k], x.start[k+1]
		switch {
		case hi-lo > 12:
			sort.Stable(byWriter{x.ws[lo:hi], x.refs[lo:hi]})
		case hi-lo > 1:
			// Most keys have a few readers: an insertion sort, stable
			// like sort.Stable and so the same order, without the
			// interface calls.
			ws, refs := x.ws[lo:hi], x.refs[lo:hi]
			for i := 1; i < len(ws); i++ {
				for j := i; j > 0 && ws[j] < ws[j-1]; j-- {
					ws[j], ws[j-1] = ws[j-1], ws[j]
					refs[j], refs[j-1] = refs[j-1], refs[j]
				}
			}
		}
	}
}

func (x *readerIndex) get(key, w int32) []readerRef {
	lo, hi := int(x.start[key]), int(x.start[key+1])
	ws := x.ws[lo:hi]
	i, _ := slices.BinarySearch(ws, w)
	j := i
	for j < len(ws) && ws[j] == w {
		j++
	}
	return x.refs[lo+i : lo+j]
}

type byWriter struct {
	ws   []int32
	refs []readerRef
}

func (b byWriter) Len() int           { return len(b.ws) }
func (b byWriter) Less(i, j int) bool { return b.ws[i] < b.ws[j] }
func (b byWriter) Swap(i, j int) {
	b.ws[i], b.ws[j] = b.ws[j], b.ws[i]
	b.refs[i], b.refs[j] = b.refs[j], b.refs[i]
}
