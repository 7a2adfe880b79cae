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
	x := newKeyIndex()
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

// keyIndex numbers keys densely. Decoders intern keys (one string per
// key, shared by every op that names it), so most lookups hit the table
// keyed by the string's data pointer and length: an open-addressing
// table with a multiplicative hash of the pointer, a few instructions
// and one cache line, where a Go map hashes both words with aeshash. A
// miss falls back to the key's text. A pointer identifies the bytes while
// the history holds them (strings are immutable, the history keeps them
// alive and Go's heap does not move), so equal pointers and lengths mean
// equal keys; equal keys with different pointers meet in the text map.
type keyIndex struct {
	slots []ptrSlot
	used  int
	shift uint
	byStr map[history.Key]int32
}

type ptrSlot struct {
	p  uintptr // 0: empty
	n  int     // the key's length (substrings share a pointer)
	id int32
}

func newKeyIndex() *keyIndex {
	return &keyIndex{slots: make([]ptrSlot, 1<<8), shift: 64 - 8, byStr: map[history.Key]int32{}}
}

func (x *keyIndex) get(k history.Key) int32 {
	p := uintptr(unsafe.Pointer(unsafe.StringData(string(k))))
	if p == 0 {
		return x.text(k) // the empty key has no data pointer
	}
	mask := len(x.slots) - 1
	for s := int((uint64(p) * 0x9E3779B97F4A7C15) >> x.shift); ; s = (s + 1) & mask {
		e := &x.slots[s]
		if e.p == p && e.n == len(k) {
			return e.id
		}
		if e.p == 0 {
			id := x.text(k)
			*e = ptrSlot{p: p, n: len(k), id: id}
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
		i = int32(len(x.byStr))
		x.byStr[k] = i
	}
	return i
}

func (x *keyIndex) grow() {
	old := x.slots
	x.slots = make([]ptrSlot, 2*len(old))
	x.shift--
	mask := len(x.slots) - 1
	for _, e := range old {
		if e.p == 0 {
			continue
		}
		s := int((uint64(e.p) * 0x9E3779B97F4A7C15) >> x.shift)
		for x.slots[s].p != 0 {
			s = (s + 1) & mask
		}
		x.slots[s] = e
	}
}

func (x *keyIndex) len() int { return len(x.byStr) }
