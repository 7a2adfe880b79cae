package incremental

import (
	"hash/maphash"
	"math/bits"

	"github.com/streamcheck/streamcheck/history"
)

// valueIndex maps (key, value) to the transactions that write it, any
// status, any position: the possible writers of docs/SEMANTICS.md §3 before
// the real-time and session exclusions. A history of 100K transactions
// holds about 400K written values, and a map keyed by keyVal (a 16-byte
// string header beside the key) cost 20 MB of check's 300 MB; keyed by a
// 64-bit hash it costs a third of that. Each entry remembers the
// operation that first wrote its value, which confirms a lookup, so a
// hash collision never merges two values: the later one of a colliding
// pair goes to a small exact map instead. The hashes sit in an open-
// addressing table rather than a map: a write costs one probe sequence
// where the map took a lookup and an assignment, and the evicting engine
// builds the index anew at every step.
//
// A slot also holds its key's number and, for a value of at most seven
// bytes (counters, generated unique values), the value itself packed in
// a word (short): a lookup then confirms its entry in the slot's own
// cache line, where reading the first writer's operation back cost two
// or three more cache misses (the key's and the value's bytes), which
// made the index a third of check --level read-atomic at one million
// transactions. A longer value is confirmed as before.
type valueIndex struct {
	seed maphash.Seed
	// salt varies the short values' hash with the seed.
	salt uint64
	// slots is a linear-probing table of the entries by hash, at most
	// three quarters full; a zero hash marks a free slot.
	slots   []vSlot
	used    int
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

	// pend are the last adds, not yet in the table (a ring from head):
	// each add loads its slot's cache line when it comes and is done
	// pendDepth adds later, so that the loads of several adds are in
	// flight at once where each one's miss stalled the next (a lookup is
	// a cache miss in a table of millions of entries). Adds keep their
	// order, and get finishes them first, so the table is as if each
	// had been done at once. Not for concurrent use (get may finish
	// adds), like the rest of prepared.
	pend       [pendDepth]pendAdd
	head, npnd int
	// sink takes the warming loads' values, so that they are not
	// optimized away.
	sink uint64
}

// pendDepth is the number of adds in flight (pend).
const pendDepth = 8

type pendAdd struct {
	kv       keyVal
	h, short uint64
	t, op    int32
}

// vEntry is the first write of a value (transaction and operation index)
// and, from the second writer on, the index in multi plus one.
type vEntry struct {
	txn, op int32
	multi   int32
}

type vSlot struct {
	h uint64
	vEntry
	// key is the value's key number; short its value packed (packShort),
	// 0 when it is longer (then is reads the operation back).
	key   int32
	short uint64
}

// packShort packs a value of one to seven bytes into a word: its length
// in the low byte, its bytes above, so that two values pack alike
// exactly when they are equal. A longer (or empty) value is 0.
func packShort(v history.Value) uint64 {
	if len(v) == 0 || len(v) > 7 {
		return 0
	}
	w := uint64(len(v))
	for i := 0; i < len(v); i++ {
		w |= uint64(v[i]) << (8 * (i + 1))
	}
	return w
}

func newValueIndex(capacity int, keys *[]history.Value, at func(t, i int32) *history.Op) valueIndex {
	seed := maphash.MakeSeed()
	return valueIndex{seed: seed, salt: maphash.String(seed, "salt"), slots: make([]vSlot, tableSize(capacity)), keys: keys, at: at}
}

// newValueIndexReusing is newValueIndex taking over old's table when it
// is large enough and not much larger (a table's size changes where an
// entry sits, never what a lookup finds); old must be dropped.
func newValueIndexReusing(old *valueIndex, capacity int, keys *[]history.Value, at func(t, i int32) *history.Op) valueIndex {
	n := tableSize(capacity)
	if len(old.slots) < n || len(old.slots) > 2*n {
		return newValueIndex(capacity, keys, at)
	}
	clear(old.slots)
	clear(old.multi)
	return valueIndex{seed: old.seed, salt: old.salt, slots: old.slots, multi: old.multi[:0], keys: keys, at: at}
}

// tableSize holds n entries at most three quarters full.
func tableSize(n int) int { return n + n/3 + 8 }

func (x *valueIndex) hash(kv keyVal, short uint64) uint64 {
	var h uint64
	switch {
	case x.weakHash != nil:
		h = x.weakHash(kv)
	case short != 0:
		// A short value's hash mixes the packed word (a multiply and
		// shifts, murmur3's finalizer) where aeshash took a call; a
		// value is always hashed one way, as its length decides.
		h = mix64(short^x.salt) ^ (uint64(uint32(kv.key)) * 0x9E3779B97F4A7C15)
	default:
		h = maphash.String(x.seed, string(kv.val)) ^ (uint64(uint32(kv.key)) * 0x9E3779B97F4A7C15)
	}
	if h == 0 {
		// Zero marks a free slot; the values of hashes 0 and 1 are told
		// apart by is like any colliding pair.
		h = 1
	}
	return h
}

// mix64 is murmur3's 64-bit finalizer.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// find returns the slot of hash h, or the free slot where it would go.
func (x *valueIndex) find(h uint64) *vSlot {
	// The high bits of h times the size (Lemire's reduction) spread
	// hashes over a table of any size.
	hi, _ := bits.Mul64(h, uint64(len(x.slots)))
	for i := int(hi); ; {
		s := &x.slots[i]
		if s.h == h || s.h == 0 {
			return s
		}
		if i++; i == len(x.slots) {
			i = 0
		}
	}
}

// grow doubles the table, moving the entries by their stored hashes.
func (x *valueIndex) grow() {
	old := x.slots
	x.slots = make([]vSlot, tableSize(2*x.used))
	for _, s := range old {
		if s.h != 0 {
			*x.find(s.h) = s
		}
	}
}

// is reports whether slot s is the entry of kv (short: packShort of
// its value).
func (x *valueIndex) is(s *vSlot, kv keyVal, short uint64) bool {
	if s.key != kv.key {
		return false
	}
	if short != 0 || s.short != 0 {
		return s.short == short
	}
	return x.at(s.txn, s.op).Value == kv.val
}

// add records that operation op of transaction t writes kv (consecutive
// repeats by one transaction count once).
func (x *valueIndex) add(kv keyVal, t, op int32) {
	short := packShort(kv.val)
	h := x.hash(kv, short)
	x.sink += x.first(h).h
	a := pendAdd{kv: kv, h: h, short: short, t: t, op: op}
	if x.npnd < pendDepth {
		x.pend[(x.head+x.npnd)%pendDepth] = a
		x.npnd++
		return
	}
	x.addNow(x.pend[x.head])
	x.pend[x.head] = a
	x.head = (x.head + 1) % pendDepth
}

// finish does the pending adds, in order.
func (x *valueIndex) finish() {
	for ; x.npnd > 0; x.npnd-- {
		x.addNow(x.pend[x.head])
		x.head = (x.head + 1) % pendDepth
	}
}

// first is the slot where a search for hash h begins.
func (x *valueIndex) first(h uint64) *vSlot {
	hi, _ := bits.Mul64(h, uint64(len(x.slots)))
	return &x.slots[hi]
}

// warm loads the first slot of kv's search, for a get soon after (the
// caller asks for the next transaction's reads while it handles these).
func (x *valueIndex) warm(kv keyVal) {
	x.sink += x.first(x.hash(kv, packShort(kv.val))).h
}

// addNow is add, done.
func (x *valueIndex) addNow(a pendAdd) {
	kv, t, op, h, short := a.kv, a.t, a.op, a.h, a.short
	s := x.find(h)
	switch {
	case s.h == 0:
		if (x.used+1)*4 > len(x.slots)*3 {
			x.grow()
			s = x.find(h)
		}
		*s = vSlot{h: h, vEntry: vEntry{txn: t, op: op}, key: kv.key, short: short}
		x.used++
	case x.is(s, kv, short):
		s.vEntry = x.extend(s.vEntry, t)
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
	if x.npnd > 0 {
		x.finish()
	}
	short := packShort(kv.val)
	s := x.find(x.hash(kv, short))
	e, ok := s.vEntry, s.h != 0
	if ok && !x.is(s, kv, short) {
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
