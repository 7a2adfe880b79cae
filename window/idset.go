package window

import (
	"encoding/binary"
	"hash/maphash"
)

// idSet is the set of every transaction ID seen, exact: a hash match is
// confirmed by comparing the bytes. It exists because a map[string]struct{}
// of millions of IDs cost about 1µs per Add here (two cache misses per
// probe, one for the string header's target, and a GC that scans every
// key at each cycle). This one holds no pointers: the table is open
// addressing with linear probing over 8-byte slots, each a 24-bit tag of
// the ID's hash and the ID's 40-bit offset in one []byte arena, where the
// IDs live in insertion order, each as a uvarint length then its bytes. An
// insert of a new ID touches one slot's cache line; the arena is read only
// on a tag match. Growing rehashes the IDs from the arena, in order.
//
// Memory: 8 bytes per slot at a load of at most 3/4 (about 11-21 bytes per
// ID) plus the ID's length plus 1-2 bytes: this set is what a long run's
// memory grows by. Nothing is ever removed.
type idSet struct {
	slots []uint64 // tag<<offBits | arena offset; 0: empty (the arena starts with one unused byte)
	arena []byte
	n     int
	seed  maphash.Seed
	// hash is nil for maphash with seed; tests set a weak one to force
	// collisions. The seed is random per set: it changes where IDs land,
	// never which ones are duplicates.
	hash func(seed maphash.Seed, s string) uint64
}

func (s *idSet) hashOf(id string) uint64 {
	if s.hash != nil {
		return s.hash(s.seed, id)
	}
	return maphash.String(s.seed, id)
}

// hashOfBytes is hashOf without a string: growing hashes every ID.
func (s *idSet) hashOfBytes(id []byte) uint64 {
	if s.hash != nil {
		return s.hash(s.seed, string(id))
	}
	return maphash.Bytes(s.seed, id)
}

const offBits = 40

func newIDSet() *idSet {
	return &idSet{
		slots: make([]uint64, 64),
		arena: []byte{0},
		seed:  maphash.MakeSeed(),
	}
}

// add inserts id and reports whether it was new.
func (s *idSet) add(id string) bool {
	h := s.hashOf(id)
	tag := h >> offBits
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := s.slots[i]
		if sl == 0 {
			if 4*(s.n+1) > 3*len(s.slots) {
				s.grow()
				return s.add(id)
			}
			off := uint64(len(s.arena))
			if off >= 1<<offBits {
				panic("window: ID set arena beyond 1 TiB")
			}
			s.slots[i] = tag<<offBits | off
			s.arena = binary.AppendUvarint(s.arena, uint64(len(id)))
			s.arena = append(s.arena, id...)
			s.n++
			return true
		}
		if sl>>offBits == tag && string(s.at(sl&(1<<offBits-1))) == id { // no allocation
			return false
		}
	}
}

// at returns the bytes of the ID stored at off.
func (s *idSet) at(off uint64) []byte {
	n, k := binary.Uvarint(s.arena[off:])
	return s.arena[off+uint64(k) : off+uint64(k)+n]
}

func (s *idSet) grow() {
	s.slots = make([]uint64, 2*len(s.slots))
	mask := uint64(len(s.slots) - 1)
	for off := uint64(1); off < uint64(len(s.arena)); {
		n, k := binary.Uvarint(s.arena[off:])
		h := s.hashOfBytes(s.arena[off+uint64(k) : off+uint64(k)+n])
		i := h & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = h>>offBits<<offBits | off
		off += uint64(k) + n
	}
}

func (s *idSet) len() int { return s.n }

// bytes is the set's memory: slots and arena (capacity, not length).
func (s *idSet) bytes() int { return 8*len(s.slots) + cap(s.arena) }
