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
// addressing with linear probing over 16-byte slots {hash, arena offset},
// and the IDs live in one []byte arena, each as a uvarint length then its
// bytes. An insert of a new ID touches one slot's cache line; the arena is
// read only on a full 64-bit hash match.
//
// Memory: 16 bytes per slot at a load of at most 3/4 (about 21-43 bytes per
// ID) plus the ID's length plus 1-2 bytes. Nothing is ever removed.
type idSet struct {
	slots []idSlot
	arena []byte
	n     int
	seed  maphash.Seed
	// hash is maphash.String with seed; tests swap in a weak one to force
	// collisions. The seed is random per set: it changes where IDs land,
	// never which ones are duplicates.
	hash func(seed maphash.Seed, s string) uint64
}

type idSlot struct {
	h   uint64
	off uint64 // 0: empty (the arena starts with one unused byte)
}

func newIDSet() *idSet {
	return &idSet{
		slots: make([]idSlot, 64),
		arena: []byte{0},
		seed:  maphash.MakeSeed(),
		hash:  maphash.String,
	}
}

// add inserts id and reports whether it was new.
func (s *idSet) add(id string) bool {
	h := s.hash(s.seed, id)
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.off == 0 {
			if 4*(s.n+1) > 3*len(s.slots) {
				s.grow()
				return s.add(id)
			}
			sl.h, sl.off = h, uint64(len(s.arena))
			s.arena = binary.AppendUvarint(s.arena, uint64(len(id)))
			s.arena = append(s.arena, id...)
			s.n++
			return true
		}
		if sl.h == h && string(s.at(sl.off)) == id { // no allocation

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
	old := s.slots
	s.slots = make([]idSlot, 2*len(old))
	mask := uint64(len(s.slots) - 1)
	for _, sl := range old {
		if sl.off == 0 {
			continue
		}
		i := sl.h & mask
		for s.slots[i].off != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = sl
	}
}

func (s *idSet) len() int { return s.n }

// bytes is the set's memory: slots and arena (capacity, not length).
func (s *idSet) bytes() int { return 16*len(s.slots) + cap(s.arena) }
