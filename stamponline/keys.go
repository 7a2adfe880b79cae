package stamponline

import (
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// keyIndex numbers keys densely for the replay, as stampcheck.KeyIndex
// does (decoders intern keys, so most lookups find the key by its
// string's data pointer and length, and a miss falls back to its text),
// in 16-byte slots instead of 24: the index is probed for every op the
// replay places, and with the keys' states it is most of the replay's
// cache misses (BENCHMARKS.md "stampsrun29"). A slot holds the string's
// data pointer as an unsafe.Pointer, which keeps those bytes alive as
// long as the index (Go's heap does not move them), so an equal pointer
// and length are always the same text; equal texts under different
// pointers meet in the text map, each pointer then getting a slot of its
// own for the same id.
type keyIndex struct {
	slots []keySlot
	shift uint
	used  int
	byStr map[history.Key]int32
	names []history.Key // by id
}

type keySlot struct {
	p  unsafe.Pointer // nil: empty
	n  uint32
	id int32
}

func newKeyIndex() *keyIndex {
	return &keyIndex{slots: make([]keySlot, 1<<8), shift: 64 - 8, byStr: map[history.Key]int32{}}
}

// Get returns k's id, numbering it if it is new.
func (x *keyIndex) Get(k history.Key) int32 {
	p := unsafe.Pointer(unsafe.StringData(string(k)))
	if p == nil || uint64(len(k)) > 1<<32-1 {
		return x.text(k) // the empty key has no data pointer
	}
	mask := len(x.slots) - 1
	for s := int((uint64(uintptr(p)) * 0x9E3779B97F4A7C15) >> x.shift); ; s = (s + 1) & mask {
		e := &x.slots[s]
		if e.p == p && e.n == uint32(len(k)) {
			return e.id
		}
		if e.p == nil {
			id := x.text(k)
			*e = keySlot{p: p, n: uint32(len(k)), id: id}
			if x.used++; 2*x.used > len(x.slots) {
				x.grow()
			}
			return id
		}
	}
}

func (x *keyIndex) text(k history.Key) int32 {
	i, ok := x.byStr[k]
	if !ok {
		i = int32(len(x.names))
		x.byStr[k] = i
		x.names = append(x.names, k)
	}
	return i
}

func (x *keyIndex) grow() {
	old := x.slots
	x.slots = make([]keySlot, 2*len(old))
	x.shift--
	mask := len(x.slots) - 1
	for _, e := range old {
		if e.p == nil {
			continue
		}
		s := int((uint64(uintptr(e.p)) * 0x9E3779B97F4A7C15) >> x.shift)
		for x.slots[s].p != nil {
			s = (s + 1) & mask
		}
		x.slots[s] = e
	}
}

// Len is the number of keys numbered.
func (x *keyIndex) Len() int { return len(x.names) }

// Keys returns the keys numbered, indexed by id (a checkpoint stores them
// in that order, and a new index numbers them alike).
func (x *keyIndex) Keys() []history.Key { return x.names }
