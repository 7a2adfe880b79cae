package weakonline

import (
	"math/bits"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// keyCache answers keyTable.id before its map (docs/SEMANTICS.md §5
// "A key's number found by its string's address (weak34)"): a
// direct-mapped table keyed by a key string's header, its bytes'
// address and length, as driver's kindCache is. The decoders intern
// keys, so a key seen before is usually the very string the table
// numbered, and a hit costs a multiply and two compares where the map
// hashed the text (aeshash), probed a group and compared the bytes: the
// map was 5% of run --level read-committed's profile on u300k, once per
// op.
//
// A hit is exact: the slot holds the string itself, so its bytes stay
// alive and are never reused for another text while it does, and Go
// never changes a string's bytes, so the same address and length are the
// same text. A slot is filled only from ids, with the number ids holds,
// and ids never drops or renumbers a key (keyTable only grows). A miss
// (another copy of the text, a slot taken by another key, the empty key)
// asks the map as before.
type keyCache struct {
	slots []keySlot
	shift uint // 64 - log2(len(slots))
}

type keySlot struct {
	key history.Key
	id  int32
}

// The cache grows to four slots per numbered key, from minKeySlots up to
// maxKeySlots (1.5 MB).
const (
	minKeySlots = 1 << 10
	maxKeySlots = 1 << 16
)

// naiveKeyCache makes every lookup ask the map (the tests' reference).
var naiveKeyCache bool

func (c *keyCache) slot(k history.Key) *keySlot {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(string(k)))))
	h := (p ^ uint64(len(k))*0xff51afd7ed558ccd) * 0x9e3779b97f4a7c15
	return &c.slots[h>>c.shift]
}

// get is k's number if the cache holds k's very string.
func (c *keyCache) get(k history.Key) (int32, bool) {
	if len(c.slots) == 0 || len(k) == 0 || naiveKeyCache {
		return 0, false
	}
	s := c.slot(k)
	if len(s.key) != len(k) || unsafe.StringData(string(s.key)) != unsafe.StringData(string(k)) {
		return 0, false
	}
	return s.id, true
}

// put caches k's number id (taken from ids); keys is the number of keys
// ids holds, which sizes the cache.
func (c *keyCache) put(k history.Key, id int32, keys int) {
	if len(k) == 0 {
		return
	}
	if n := len(c.slots); n < maxKeySlots && 4*keys > n || n == 0 {
		n = max(minKeySlots, min(maxKeySlots, 1<<bits.Len(uint(4*keys))))
		c.slots = make([]keySlot, n)
		c.shift = uint(64 - bits.TrailingZeros(uint(n)))
	}
	*c.slot(k) = keySlot{key: k, id: id}
}
