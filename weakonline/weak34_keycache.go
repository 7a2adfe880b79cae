package weakonline

import (
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/keycache"
)

// keyCache answers keyTable.id before its map (docs/SEMANTICS.md §5
// "A key's number found by its string's address (weak34)"): the map was
// 5% of run --level read-committed's profile on u300k, once per op, and
// the decoders intern keys, so a key seen before is usually the very
// string the table numbered. internal/keycache says why a hit is exact;
// here a slot is filled only from ids, with the number ids holds, and ids
// never drops or renumbers a key (keyTable only grows), so the cache is
// never reset.
type keyCache struct {
	c keycache.Cache[int32]
}

// naiveKeyCache makes every lookup ask the map (the tests' reference).
var naiveKeyCache bool

// get is k's number if the cache holds k's very string.
func (c *keyCache) get(k history.Key) (int32, bool) {
	if naiveKeyCache {
		return 0, false
	}
	return c.c.Get(k)
}

// put caches k's number id (taken from ids); keys is the number of keys
// ids holds, which sizes the cache.
func (c *keyCache) put(k history.Key, id int32, keys int) {
	c.c.Put(k, id, keys)
}
