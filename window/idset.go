package window

import (
	"encoding/binary"
	"hash/maphash"
	"math"
)

// idSet remembers the IDs of recent transactions, each with its start, for
// the duplicate-ID check. It used to remember every ID of the stream, and
// on a 10M stream it was most of what the checker's memory grew by. An ID
// only needs remembering while a transaction that repeats it could still be
// accepted: a redelivery repeats the start too, and once W passes that
// start the copy is late whatever the set says. So the rule is (horizon R
// is the lateness):
//
//	a timed event repeats an earlier one iff an event with the same ID and
//	a start at most R away was seen, and that start is at least W-R.
//
// The rule depends on the two events' starts and on W, never on when the
// table was compacted, and for an event that is not late (start >= W) it
// depends on the starts alone: an earlier start s' within R of start s >= W
// is >= W-R, so it is still remembered. Which events are checked therefore
// does not depend on arrival interleaving; only the reason given to a late
// repeat (duplicate or late) can. An ID reused further than R away is a new
// transaction. Events without timestamps are never remembered: they are
// dead letters whatever their ID.
//
// The table is exact (a hash match is confirmed on the bytes) and holds no
// pointers: open addressing with linear probing over 8-byte slots, each a
// 24-bit tag of the ID's hash and the 40-bit offset of its record in one
// []byte arena (uvarint length, ID bytes, zigzag varint start). A lookup
// touches one slot's cache line and reads the arena only on a tag match.
// Nothing is deleted in place: when the table fills, it is rebuilt from the
// records whose start is still >= W-R, at the size they need, so memory
// follows the number of IDs within the horizon, not the stream's length.
type idSet struct {
	slots []uint64 // tag<<offBits | arena offset; 0: empty (the arena starts with one unused byte)
	arena []byte
	n     int // records in the table, forgotten ones included until the next rebuild
	// horizon is R; floor is W-R: records with a start below it are
	// forgotten.
	horizon, floor int64
	seed           maphash.Seed
	// hash is nil for maphash with seed; tests set a weak one to force
	// collisions. The seed is random per set: it changes where IDs land,
	// never which ones repeat.
	hash func(seed maphash.Seed, s string) uint64
}

const (
	offBits    = 40
	minIDSlots = 64
)

func newIDSet(horizon int64) *idSet {
	return &idSet{
		slots:   make([]uint64, minIDSlots),
		arena:   []byte{0},
		horizon: horizon,
		floor:   math.MinInt64,
		seed:    maphash.MakeSeed(),
	}
}

func (s *idSet) hashOf(id string) uint64 {
	if s.hash != nil {
		return s.hash(s.seed, id)
	}
	return maphash.String(s.seed, id)
}

// hashOfBytes is hashOf without a string: a rebuild hashes every ID.
func (s *idSet) hashOfBytes(id []byte) uint64 {
	if s.hash != nil {
		return s.hash(s.seed, string(id))
	}
	return maphash.Bytes(s.seed, id)
}

// advance moves the horizon with W (which never decreases).
func (s *idSet) advance(w int64) {
	s.floor = max(s.floor, satSub(w, s.horizon))
}

// add records id with its start and reports whether it was new under the
// rule above. A start already below W-R is not recorded: a repeat of it is
// late.
func (s *idSet) add(id string, start int64) bool {
	h := s.hashOf(id)
	if s.repeats(h, id, start) {
		return false
	}
	if start >= s.floor {
		s.insert(h, id, start)
	}
	return true
}

// repeats reports whether a remembered record with id lies within the
// horizon of start.
func (s *idSet) repeats(h uint64, id string, start int64) bool {
	tag := h >> offBits
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := s.slots[i]
		if sl == 0 {
			return false
		}
		if sl>>offBits != tag {
			continue
		}
		got, at, _ := recordIn(s.arena, sl&(1<<offBits-1))
		if string(got) == id && at >= s.floor && within(start, at, s.horizon) { // no allocation
			return true
		}
	}
}

func (s *idSet) insert(h uint64, id string, start int64) {
	if 4*(s.n+1) > 3*len(s.slots) {
		s.rebuild()
	}
	s.place(h, appendRecord(s, id, start))
	s.n++
}

// appendRecord stores id and start at the end of the arena and returns
// where (generic so that an insert's string ID is not copied first).
func appendRecord[ID string | []byte](s *idSet, id ID, start int64) uint64 {
	off := uint64(len(s.arena))
	if off >= 1<<offBits {
		panic("window: ID set arena beyond 1 TiB")
	}
	s.arena = binary.AppendUvarint(s.arena, uint64(len(id)))
	s.arena = append(s.arena, id...)
	s.arena = binary.AppendVarint(s.arena, start)
	return off
}

func (s *idSet) place(h, off uint64) {
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = h>>offBits<<offBits | off
}

// rebuild keeps the records within the horizon, in a table and arena
// sized for them with room to grow by as many again before the next
// rebuild, so each rebuild's cost is paid for by the inserts since the
// last one.
func (s *idSet) rebuild() {
	live := 0
	size := 0
	s.each(func(id []byte, start int64) {
		live++
		size += len(id) + 2*binary.MaxVarintLen64
	})
	slots := minIDSlots
	for 4*(2*live+1) > 3*slots {
		slots *= 2
	}
	old := s.arena
	s.slots = make([]uint64, slots)
	s.arena = make([]byte, 1, 1+2*size)
	s.n = 0
	for off := uint64(1); off < uint64(len(old)); {
		id, start, next := recordIn(old, off)
		if start >= s.floor {
			s.place(s.hashOfBytes(id), appendRecord(s, id, start))
			s.n++
		}
		off = next
	}
}

// recordIn returns the ID and start stored in arena at off, and where the
// next record begins.
func recordIn(arena []byte, off uint64) (id []byte, start int64, next uint64) {
	n, k := binary.Uvarint(arena[off:])
	id = arena[off+uint64(k) : off+uint64(k)+n]
	start, j := binary.Varint(arena[off+uint64(k)+n:])
	return id, start, off + uint64(k) + n + uint64(j)
}

// each calls f for every remembered record (start >= W-R), in insertion
// order.
func (s *idSet) each(f func(id []byte, start int64)) {
	for off := uint64(1); off < uint64(len(s.arena)); {
		id, start, next := recordIn(s.arena, off)
		if start >= s.floor {
			f(id, start)
		}
		off = next
	}
}

// len is the number of IDs remembered; O(records), for Stats and
// snapshots.
func (s *idSet) len() int {
	n := 0
	s.each(func([]byte, int64) { n++ })
	return n
}

// bytes is the set's memory: slots and arena (capacity, not length).
func (s *idSet) bytes() int { return 8*len(s.slots) + cap(s.arena) }

// within reports |a-b| <= r (r >= 0) without overflow.
func within(a, b, r int64) bool {
	if a < b {
		a, b = b, a
	}
	return uint64(a)-uint64(b) <= uint64(r)
}
