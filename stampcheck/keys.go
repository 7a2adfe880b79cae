package stampcheck

import (
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// keyIndex numbers keys densely. Decoders intern keys (one string per
// key, shared by every op that names it), so most lookups hit the map
// keyed by the string's data pointer and length, whose hash and equality
// cost a few words, not the key's bytes; a miss falls back to the key's
// text. A pointer identifies the bytes while the history holds them
// (strings are immutable and the history keeps them alive), so equal
// pointers mean equal keys; equal keys with different pointers meet in
// the text map.
type keyIndex struct {
	byPtr map[keyPtr]int32
	byStr map[history.Key]int32
}

type keyPtr struct {
	p *byte
	n int
}

func newKeyIndex() *keyIndex {
	return &keyIndex{byPtr: map[keyPtr]int32{}, byStr: map[history.Key]int32{}}
}

func (x *keyIndex) get(k history.Key) int32 {
	kp := keyPtr{unsafe.StringData(string(k)), len(k)}
	if i, ok := x.byPtr[kp]; ok {
		return i
	}
	i, ok := x.byStr[k]
	if !ok {
		i = int32(len(x.byStr))
		x.byStr[k] = i
	}
	x.byPtr[kp] = i
	return i
}

func (x *keyIndex) len() int { return len(x.byStr) }
