package keycache

import (
	"math/bits"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// The cache grows to four slots per key of the owner's map, from
// MinSlots up to MaxSlots.
const (
	MinSlots = 1 << 10
	MaxSlots = 1 << 16
)

// Cache maps a key string, by identity, to the value its owner's map
// holds for that text.
type Cache[V any] struct {
	slots []slot[V]
	shift uint // 64 - log2(len(slots))
}

type slot[V any] struct {
	key history.Key
	v   V
}

func (c *Cache[V]) slot(k history.Key) *slot[V] {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(string(k)))))
	h := (p ^ uint64(len(k))*0xff51afd7ed558ccd) * 0x9e3779b97f4a7c15
	return &c.slots[h>>c.shift]
}

// Get returns the value cached for k's very string, if any.
func (c *Cache[V]) Get(k history.Key) (V, bool) {
	var zero V
	if len(c.slots) == 0 || len(k) == 0 {
		return zero, false
	}
	s := c.slot(k)
	if len(s.key) != len(k) || unsafe.StringData(string(s.key)) != unsafe.StringData(string(k)) {
		return zero, false
	}
	return s.v, true
}

// Put caches v, the owner's map's value for k; keys is the number of
// keys the map holds, which sizes the cache (a resize empties it).
func (c *Cache[V]) Put(k history.Key, v V, keys int) {
	if len(k) == 0 {
		return
	}
	if n := len(c.slots); n < MaxSlots && 4*keys > n || n == 0 {
		n = max(MinSlots, min(MaxSlots, 1<<bits.Len(uint(4*keys))))
		c.slots = make([]slot[V], n)
		c.shift = uint(64 - bits.TrailingZeros(uint(n)))
	}
	*c.slot(k) = slot[V]{key: k, v: v}
}

// Reset empties the cache (the owner removed or changed a map entry).
func (c *Cache[V]) Reset() {
	clear(c.slots)
}
