package driver

import (
	"math/bits"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// noteKinds records what t uses its keys as; if t uses a key as a list
// and as a register (against an earlier event or within itself), it
// records nothing and returns the input error check gives for the same
// history.
//
// State.Kinds is the record; kindCache answers most lookups before it
// (docs/SEMANTICS.md §5 "The key kinds' cache (issue 29)"): a key seen before is
// usually the very string the decoder interned for it, and the cache
// finds it by its address instead of hashing its text.
func (d *Driver) noteKinds(t *history.Txn) error {
	if d.st.Kinds == nil {
		d.st.Kinds = map[history.Key]bool{}
	}
	added := d.kindScratch[:0]
	for i := range t.Ops {
		op := &t.Ops[i]
		var list bool
		switch {
		case op.Kind == history.Append || (op.Kind == history.Read && op.IsList):
			list = true
		case op.Kind == history.Write:
		default:
			continue // not decided (history.Op.KeyKind)
		}
		prev, ok := d.kinds.get(op.Key)
		if !ok {
			prev, ok = d.st.Kinds[op.Key]
			if ok {
				d.kinds.put(op.Key, prev, len(d.st.Kinds))
			}
		}
		if ok {
			if prev != list {
				// Undo this event's first uses: it is set aside whole.
				for _, k := range added {
					delete(d.st.Kinds, k)
				}
				// A key this event added and then used again entered
				// the cache: it goes with them (the cache holds only
				// what Kinds holds). Clearing it all costs nothing
				// that matters at an input error.
				d.kinds.reset()
				d.kindScratch = added[:0]
				return history.KindClash(t, op.Key, "")
			}
			continue
		}
		d.st.Kinds[op.Key] = list
		added = append(added, op.Key)
	}
	d.kindScratch = added[:0]
	return nil
}

// kindCache is a direct-mapped cache of State.Kinds keyed by a key's
// string header, its bytes' address and length. A hit is exact: the
// slot holds the string itself, so its bytes stay alive and cannot be
// reused for another text, and Go strings are immutable, so the same
// address and length are the same text, which Kinds maps to the kind
// the slot holds (an entry enters only from Kinds, and the one removal
// from Kinds, noteKinds' undo, clears the cache). A miss (another copy of
// the same text, a slot taken by another key) falls back to Kinds.
type kindCache struct {
	slots []kindSlot
	shift uint // 64 - log2(len(slots))
}

type kindSlot struct {
	key  history.Key
	list bool
}

// The cache grows to four slots per key in Kinds, from minKindSlots up to
// maxKindSlots (1.5 MB).
const (
	minKindSlots = 1 << 10
	maxKindSlots = 1 << 16
)

func (c *kindCache) slot(k history.Key) *kindSlot {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(string(k)))))
	h := (p ^ uint64(len(k))*0xff51afd7ed558ccd) * 0x9e3779b97f4a7c15
	return &c.slots[h>>c.shift]
}

func (c *kindCache) get(k history.Key) (list, ok bool) {
	if len(c.slots) == 0 || len(k) == 0 {
		return false, false
	}
	s := c.slot(k)
	if len(s.key) != len(k) || unsafe.StringData(string(s.key)) != unsafe.StringData(string(k)) {
		return false, false
	}
	return s.list, true
}

// put caches k's kind; keys is the number of keys in Kinds, which sizes
// the cache.
func (c *kindCache) put(k history.Key, list bool, keys int) {
	if len(k) == 0 {
		return
	}
	if n := len(c.slots); n < maxKindSlots && 4*keys > n || n == 0 {
		c.resize(max(minKindSlots, min(maxKindSlots, 1<<bits.Len(uint(4*keys)))))
	}
	*c.slot(k) = kindSlot{key: k, list: list}
}

// resize empties the cache into n slots (a power of two).
func (c *kindCache) resize(n int) {
	c.slots = make([]kindSlot, n)
	c.shift = uint(64 - bits.TrailingZeros(uint(n)))
}

func (c *kindCache) reset() {
	clear(c.slots)
}
