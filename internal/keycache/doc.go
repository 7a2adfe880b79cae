// Package keycache is a direct-mapped cache keyed by a key string's
// identity, its bytes' address and length, in front of a map keyed by its
// text. The decoders intern keys, so a key seen before is usually the
// very string that was cached, and a hit costs a multiply and two
// compares where the map hashes the text and compares the bytes.
//
// Invariants. A hit is exact: the slot holds the string itself, so its
// bytes stay alive and are never reused for another text while it does,
// and Go never changes a string's bytes, so the same address and length
// are the same text. The cache holds only what its owner put from the
// map it stands in front of; an owner that removes or renumbers a map
// entry resets the cache. A miss (another copy of the text, a slot taken
// by another key, the empty key) tells nothing: the owner asks its map.
// No IO, no goroutines; a Cache is not safe for concurrent use.
//
// Users: driver (the key kinds, docs/SEMANTICS.md §5 "The key kinds'
// cache (issue 29)") and weakonline (a key's number, §5 "A key's number
// found by its string's address (weak34)").
package keycache
