package weakonline

import (
	"encoding/binary"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// keyTable numbers the keys the engine has seen, and the values that
// are no integer, once each: the fast path, the summary and retirement
// then key their maps by (key number, value) pairs (kv), two integers,
// so an op's key is hashed as a string once, when it is parsed, not once
// per map it meets, and the maps hold no pointer for the collector to
// scan. It grows with the distinct keys of the stream and its distinct
// values that are no integer (the summary holds an entry per key, and per
// retired such value, already), and is derived state: a snapshot stores
// keys and values by text, and a restore numbers them afresh.
type keyTable struct {
	// short numbers the keys of at most 16 bytes (shortKeys), ids the
	// longer ones: each key is in exactly one of them, by its length.
	short    shortKeys
	ids      map[history.Key]int32
	names    []history.Key
	valIDs   map[history.Value]int64
	valNames []history.Value
}

func newKeyTable() *keyTable {
	return &keyTable{ids: map[history.Key]int32{}, valIDs: map[history.Value]int64{}}
}

// id is k's number, given on first sight.
func (kt *keyTable) id(k history.Key) int32 {
	if len(k) <= shortKeyLen {
		e := kt.short.find(k)
		if e.n == 0 {
			*e = shortKey{n: uint32(len(k)) + 1, id: int32(len(kt.names))}
			e.a, e.b = keyWords(k)
			kt.names = append(kt.names, k)
			kt.short.added()
		}
		return e.id
	}
	if i, ok := kt.ids[k]; ok {
		return i
	}
	i := int32(len(kt.names))
	kt.ids[k] = i
	kt.names = append(kt.names, k)
	return i
}

// idOf is k's number if it has one.
func (kt *keyTable) idOf(k history.Key) (int32, bool) {
	if len(k) <= shortKeyLen {
		e := kt.short.find(k)
		return e.id, e.n != 0
	}
	i, ok := kt.ids[k]
	return i, ok
}

// shortKeyLen bounds the keys shortKeys holds.
const shortKeyLen = 16

// shortKeys numbers keys of at most 16 bytes in an open-addressing table
// whose slots hold the key's bytes as two words, its length and its
// number: a lookup reads one slot (the map it replaces read a control
// word, a slot, and the key's bytes elsewhere on the heap: the key
// table's map was 6% of run --level read-committed's profile on u300k).
// Two keys of at most 16 bytes are equal exactly when their lengths and
// their two zero-padded words are, so the table takes no key for
// another.
type shortKeys struct {
	slots []shortKey
	used  int
	shift uint
}

// shortKey is a slot: n is the key's length plus one (0: empty).
type shortKey struct {
	a, b uint64
	n    uint32
	id   int32
}

// keyWords are k's (at most 16) bytes as two little-endian words,
// zero-padded.
func keyWords(k history.Key) (a, b uint64) {
	var buf [shortKeyLen]byte
	copy(buf[:], k)
	return binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])
}

func shortHash(a, b uint64, n uint32) uint64 {
	return (a ^ b*0xC2B2AE3D27D4EB4F ^ uint64(n)) * 0x9E3779B97F4A7C15
}

// find is k's slot, or the empty slot where it goes (n == 0); len(k) <=
// shortKeyLen. A caller that fills the empty slot calls added.
func (t *shortKeys) find(k history.Key) *shortKey {
	if t.slots == nil {
		t.slots, t.shift = make([]shortKey, 1<<8), 64-8
	}
	a, b := keyWords(k)
	n := uint32(len(k)) + 1
	mask := len(t.slots) - 1
	for i := int(shortHash(a, b, n) >> t.shift); ; i = (i + 1) & mask {
		e := &t.slots[i]
		if e.n == n && e.a == a && e.b == b || e.n == 0 {
			return e
		}
	}
}

// added notes a slot filled; past half full the table doubles.
func (t *shortKeys) added() {
	if t.used++; 2*t.used <= len(t.slots) {
		return
	}
	old := t.slots
	t.slots, t.shift = make([]shortKey, 2*len(old)), t.shift-1
	mask := len(t.slots) - 1
	for _, e := range old {
		if e.n == 0 {
			continue
		}
		i := int(shortHash(e.a, e.b, e.n) >> t.shift)
		for t.slots[i].n != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = e
	}
}

// pair is (k, v) by number, numbering what has no number yet.
func (kt *keyTable) pair(k history.Key, v history.Value) kv {
	return kt.pairOf(kt.id(k), v)
}

// pairOf is (key number k, v).
func (kt *keyTable) pairOf(k int32, v history.Value) kv {
	if n, ok := intOf(v); ok {
		return kv{k: k, n: n}
	}
	j, ok := kt.valIDs[v]
	if !ok {
		j = int64(len(kt.valNames))
		kt.valIDs[v] = j
		kt.valNames = append(kt.valNames, v)
	}
	return kv{k: k, str: 1, n: j}
}

// lookup is (k, v) by number if both have one; a key or value never
// seen is in no map, so a caller that only asks need not number it.
func (kt *keyTable) lookup(k history.Key, v history.Value) (kv, bool) {
	i, ok := kt.idOf(k)
	if !ok {
		return kv{}, false
	}
	if n, ok := intOf(v); ok {
		return kv{k: i, n: n}, true
	}
	j, ok := kt.valIDs[v]
	return kv{k: i, str: 1, n: j}, ok
}

// value is r's value as text.
func (kt *keyTable) value(r kv) history.Value {
	if r.str != 0 {
		return kt.valNames[r.n]
	}
	return history.Value(strconv.FormatInt(r.n, 10))
}

// text is r's value as text when it is no integer ("" otherwise).
func (kt *keyTable) text(r kv) history.Value {
	if r.str != 0 {
		return kt.valNames[r.n]
	}
	return ""
}

// kv is a (key, value) pair as the engine's maps key it: the key's number
// in the engine's keyTable, and the value as the integer n when it is one
// in canonical text (intOf: counters and generated unique values, the
// common case), else (str set) n is the value's number in the table.
// Canonical text and integer correspond one to one, so two pairs are
// equal exactly when their keys and value texts are: no value is ever
// taken for another. Sixteen bytes, no pointer.
type kv struct {
	k   int32
	str uint32 // 1: n numbers a value that is no integer
	n   int64
}
