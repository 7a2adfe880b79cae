package incremental

import (
	"hash/maphash"

	"github.com/streamcheck/streamcheck/history"
)

// valueIndex maps (key, value) to the transactions that write it, any
// status, any position: the possible writers of EXACTNESS.md §3 before
// the real-time and session exclusions. A history of 100K transactions
// holds about 400K written values, and a map keyed by keyVal (a 16-byte
// string header beside the key) cost 20 MB of check's 300 MB; keyed by a
// 64-bit hash it costs a third of that. Each entry remembers the
// operation that first wrote its value, which confirms a lookup, so a
// hash collision never merges two values: the later one of a colliding
// pair goes to a small exact map instead.
type valueIndex struct {
	seed    maphash.Seed
	byHash  map[uint64]vEntry
	collide map[keyVal]vEntry
	// multi holds the writers of values written by more than one
	// transaction; most values have one, held inline.
	multi [][]int32
	// at returns operation i of transaction t.
	at func(t, i int32) *history.Op
	// keys names the key indices (the caller's slice, which grows).
	keys *[]history.Value
	// weakHash, set by tests, replaces the hash to force collisions.
	weakHash func(keyVal) uint64
}

// vEntry is the first write of a value (transaction and operation index)
// and, from the second writer on, the index in multi plus one.
type vEntry struct {
	txn, op int32
	multi   int32
}

func newValueIndex(capacity int, keys *[]history.Value, at func(t, i int32) *history.Op) valueIndex {
	return valueIndex{seed: maphash.MakeSeed(), byHash: make(map[uint64]vEntry, capacity), keys: keys, at: at}
}

func (x *valueIndex) hash(kv keyVal) uint64 {
	if x.weakHash != nil {
		return x.weakHash(kv)
	}
	return maphash.String(x.seed, string(kv.val)) ^ (uint64(uint32(kv.key)) * 0x9E3779B97F4A7C15)
}

// is reports whether e is the entry of kv.
func (x *valueIndex) is(e vEntry, kv keyVal) bool {
	op := x.at(e.txn, e.op)
	return op.Value == kv.val && op.Key == (*x.keys)[kv.key]
}

// add records that operation op of transaction t writes kv (consecutive
// repeats by one transaction count once).
func (x *valueIndex) add(kv keyVal, t, op int32) {
	h := x.hash(kv)
	e, ok := x.byHash[h]
	switch {
	case !ok:
		x.byHash[h] = vEntry{txn: t, op: op}
	case x.is(e, kv):
		x.byHash[h] = x.extend(e, t)
	default:
		if x.collide == nil {
			x.collide = map[keyVal]vEntry{}
		}
		if c, ok := x.collide[kv]; ok {
			x.collide[kv] = x.extend(c, t)
		} else {
			x.collide[kv] = vEntry{txn: t, op: op}
		}
	}
}

// extend adds writer t to entry e, returning the new entry.
func (x *valueIndex) extend(e vEntry, t int32) vEntry {
	if e.multi == 0 {
		if e.txn != t {
			x.multi = append(x.multi, []int32{e.txn, t})
			e.multi = int32(len(x.multi))
		}
		return e
	}
	ws := x.multi[e.multi-1]
	if ws[len(ws)-1] != t {
		x.multi[e.multi-1] = append(ws, t)
	}
	return e
}

// get lists the writers of kv in transaction order. one is scratch for
// the single-writer case; the result is valid until one is reused.
func (x *valueIndex) get(kv keyVal, one *[1]int32) []int32 {
	e, ok := x.byHash[x.hash(kv)]
	if ok && !x.is(e, kv) {
		e, ok = x.collide[kv]
	}
	switch {
	case !ok:
		return nil
	case e.multi == 0:
		one[0] = e.txn
		return one[:]
	}
	return x.multi[e.multi-1]
}
