package incremental

import "github.com/bits-and-blooms/bitset"

// validSets remembers the member sets whose projection a core search's
// check found valid. The projection is monotone (docs/SEMANTICS.md §3): a
// set that violates makes every superset violate, so every subset of a
// valid set is valid, and its check need not be asked (§3 "C6"). After a
// core is projected out, collectCores searches the rest window by window
// from the first window again (C1); the windows before the one that held
// the core were valid, and those that now lie inside one of them are
// answered here instead of by an encode and a solve.
type validSets struct {
	sets []*bitset.BitSet // over the history's transactions
}

// maxValidSets bounds the sets kept (the newest stay): a round asks again
// only the few windows before the last core's.
const maxValidSets = 64

// noValidSets turns the memory off, and recheckValidSets makes every
// answer it gives be checked as well (a mismatch panics): tests hold the
// search with the memory to the search without it, and every answer from
// memory to a real check.
var noValidSets, recheckValidSets = false, false

// covers reports whether members lie inside a set known valid.
func (v *validSets) covers(members []bool) bool {
	if noValidSets || len(v.sets) == 0 {
		return false
	}
	m := asBitSet(members)
	for _, s := range v.sets {
		if s.IsSuperSet(m) {
			return true
		}
	}
	return false
}

// add remembers members as valid.
func (v *validSets) add(members []bool) {
	if noValidSets {
		return
	}
	if len(v.sets) == maxValidSets {
		v.sets = append(v.sets[:0], v.sets[1:]...)
	}
	v.sets = append(v.sets, asBitSet(members))
}

func asBitSet(members []bool) *bitset.BitSet {
	b := bitset.New(uint(len(members)))
	for i, in := range members {
		if in {
			b.Set(uint(i))
		}
	}
	return b
}
