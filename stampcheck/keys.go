package stampcheck

import (
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// keyed numbers a history's keys densely, once: kid[off[i]+n] is the id
// of op n of txn i. The checks then index per-key arrays by id in their
// hot loops and never hash a key again (at 1M transactions, numbering
// keys through a map in each pass was a third of the snapshot check).
type keyed struct {
	off  []int32       // off[i]: txn i's first op in kid; off[len] = len(kid)
	kid  []int32       // per op, in history order
	name []history.Key // id -> key
	list []bool        // id -> used as a list (an append or a list read anywhere, as history.ListKeys)
}

// of returns the id of op n of txn i.
func (k *keyed) of(i int32, n int) int32 { return k.kid[int(k.off[i])+n] }

// numberKeys numbers h's keys in one pass over its operations.
func numberKeys(h *history.History) *keyed {
	total := 0
	for i := range h.Txns {
		total += len(h.Txns[i].Ops)
	}
	k := &keyed{off: make([]int32, len(h.Txns)+1), kid: make([]int32, total)}
	x := NewKeyIndex()
	p := 0
	for i := range h.Txns {
		k.off[i] = int32(p)
		for _, op := range h.Txns[i].Ops {
			id := x.get(op.Key)
			if int(id) == len(k.name) {
				k.name = append(k.name, op.Key)
				k.list = append(k.list, false)
			}
			if op.Kind == history.Append || op.Kind == history.Read && op.IsList {
				k.list[id] = true
			}
			k.kid[p] = id
			p++
		}
	}
	k.off[len(h.Txns)] = int32(p)
	return k
}

// KeyIndex numbers keys densely. Decoders intern keys (one string per
// key, shared by every op that names it), so most lookups hit the table
// keyed by the string's data pointer and length: an open-addressing
// table with a multiplicative hash of the pointer, a few instructions
// and one cache line, where a Go map hashes both words with aeshash. A
// miss falls back to the key's text. A slot is 16 bytes (the pointer,
// the length, the id): the index is probed for every op, offline and
// in stamponline's replay, where with the keys' states it is most of
// the cache misses (BENCHMARKS.md "stampsrun29"). The slot holds the
// data pointer as an unsafe.Pointer, which keeps those bytes alive as
// long as the index (and Go's heap does not move them): equal pointers
// and lengths mean equal keys, also online, where the transactions that
// brought a key are long gone; equal keys with different pointers meet
// in the text map, each pointer then getting a slot of its own for the
// same id.
type KeyIndex struct {
	slots []ptrSlot
	used  int
	shift uint
	byStr map[history.Key]int32
}

type ptrSlot struct {
	p  unsafe.Pointer // nil: empty
	n  uint32
	id int32
}

// NewKeyIndex returns an empty index.
func NewKeyIndex() *KeyIndex {
	return &KeyIndex{slots: make([]ptrSlot, 1<<8), shift: 64 - 8, byStr: map[history.Key]int32{}}
}

// Get returns k's id: 0, 1, 2, ... in order of first sight.
func (x *KeyIndex) Get(k history.Key) int32 { return x.get(k) }

func (x *KeyIndex) get(k history.Key) int32 {
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
			*e = ptrSlot{p: p, n: uint32(len(k)), id: id}
			if x.used++; 2*x.used > len(x.slots) {
				x.grow()
			}
			return id
		}
	}
}

func (x *KeyIndex) text(k history.Key) int32 {
	i, ok := x.byStr[k]
	if !ok {
		i = int32(len(x.byStr))
		x.byStr[k] = i
	}
	return i
}

func (x *KeyIndex) grow() {
	old := x.slots
	x.slots = make([]ptrSlot, 2*len(old))
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
func (x *KeyIndex) Len() int { return len(x.byStr) }

// Keys returns the keys numbered, indexed by id (a checkpoint stores
// them in that order, and a new index numbers them alike).
func (x *KeyIndex) Keys() []history.Key {
	out := make([]history.Key, len(x.byStr))
	for k, id := range x.byStr {
		out[id] = k
	}
	return out
}
