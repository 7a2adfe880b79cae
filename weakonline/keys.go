package weakonline

import (
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
	ids      map[history.Key]int32
	names    []history.Key
	valIDs   map[history.Value]int64
	valNames []history.Value
	// cache finds most keys by their string's address before ids
	// (weak34_keycache.go).
	cache keyCache
}

func newKeyTable() *keyTable {
	return &keyTable{ids: map[history.Key]int32{}, valIDs: map[history.Value]int64{}}
}

// id is k's number, given on first sight.
func (kt *keyTable) id(k history.Key) int32 {
	if i, ok := kt.cache.get(k); ok {
		return i
	}
	i, ok := kt.ids[k]
	if !ok {
		i = int32(len(kt.names))
		kt.ids[k] = i
		kt.names = append(kt.names, k)
	}
	kt.cache.put(k, i, len(kt.names))
	return i
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
	i, ok := kt.cache.get(k)
	if !ok {
		if i, ok = kt.ids[k]; !ok {
			return kv{}, false
		}
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
