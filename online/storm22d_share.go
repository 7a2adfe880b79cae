package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Rewind points that share what did not change (docs/SEMANTICS.md §5
// "Rewind points share what did not change (issue 22, storm22d)").
//
// Four points are kept, one every rewindEvery releases, and each held a
// whole flat copy of the per-key and per-ghost maps and its own copy of
// the parked groups' map: on the anomaly storm, where keys and parked
// groups accumulate, four copies of state that is mostly the same in all
// four (44 MB of 270 at 1.4M transactions). Now:
//
//   - each map of a point is a shareMap: the changes from the previous
//     point's copy of the same map (entries added or changed, keys
//     removed), or, for the oldest point, the whole map. A point's map
//     is its chain applied from the whole map up. Nothing in a shareMap
//     is written once it is made, except by flatten, which replaces a
//     delta by the whole map it stands for (the same entries), so a
//     later point whose chain runs through it reads the same map.
//   - the parked groups are a persistent map: chunks of the groups by
//     their first member's release position (parkChunkBits), each chunk
//     immutable, a point holding a sorted list of chunk pointers. A chunk
//     equal to the previous point's is that point's chunk.
//
// Whenever the points kept change, every point whose chain runs through
// a point no longer kept is flattened (rebaseRewinds), so that a dropped
// point's arrays are not kept alive by the chain; correctness does not
// depend on it, only memory.

// shareMap is one map of a rewind point, as a delta against base (the
// previous point's same map) or whole (base nil).
type shareMap[K comparable, V any] struct {
	base *shareMap[K, V]
	k    []K
	v    []V
	del  []K // keys of base's map that this map does not hold
	null bool
}

// shareDepth bounds a chain: a point whose base chain is this long is
// made whole (points are dropped oldest first, so chains stay short;
// this is a guard).
const shareDepth = 8

// shareOf copies m as a delta against prev (nil: whole). eq says when a
// value is unchanged; pack copies the values of keys out of m into
// arrays the point owns.
func shareOf[K comparable, V any](m map[K]V, prev *shareMap[K, V], eq func(a, b V) bool, pack func(m map[K]V, keys []K) []V) shareMap[K, V] {
	s := shareMap[K, V]{null: m == nil}
	if prev == nil || prev.depth() >= shareDepth {
		s.k = make([]K, 0, len(m))
		for k := range m {
			s.k = append(s.k, k)
		}
		s.v = pack(m, s.k)
		return s
	}
	pm := prev.materialize()
	for k, v := range m {
		if pv, ok := pm[k]; ok {
			delete(pm, k)
			if eq(pv, v) {
				continue
			}
		}
		s.k = append(s.k, k)
	}
	for k := range pm {
		s.del = append(s.del, k)
	}
	s.v = pack(m, s.k)
	s.base = prev
	return s
}

func (s *shareMap[K, V]) depth() int {
	d := 0
	for b := s.base; b != nil; b = b.base {
		d++
	}
	return d
}

// materialize returns the map s stands for: a fresh map whose values
// are s's chain's own (a caller that hands them to the live state copies
// what the engine edits in place).
func (s *shareMap[K, V]) materialize() map[K]V {
	var m map[K]V
	if s.base == nil {
		m = make(map[K]V, len(s.k))
	} else {
		m = s.base.materialize()
	}
	for _, k := range s.del {
		delete(m, k)
	}
	for j, k := range s.k {
		m[k] = s.v[j]
	}
	return m
}

// flatten makes s whole: the same map, without a base.
func (s *shareMap[K, V]) flatten(pack func(m map[K]V, keys []K) []V) {
	if s.base == nil {
		return
	}
	m := s.materialize()
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	s.k, s.v, s.del, s.base = keys, pack(m, keys), nil, nil
}

// packValues copies scalar values.
func packValues[K comparable, V any](m map[K]V, keys []K) []V {
	v := make([]V, len(keys))
	for j, k := range keys {
		v[j] = m[k]
	}
	return v
}

// packLists copies lists into one array the point owns, each list a
// capped window of it; a nil list stays nil, an empty one empty (not
// nil: the array is never nil).
func packLists[K comparable, E any](m map[K][]E, keys []K) [][]E {
	n := 0
	for _, k := range keys {
		n += len(m[k])
	}
	arena := make([]E, 0, n)
	v := make([][]E, len(keys))
	for j, k := range keys {
		l := m[k]
		if l == nil {
			continue
		}
		from := len(arena)
		arena = append(arena, l...)
		v[j] = arena[from:len(arena):len(arena)]
	}
	return v
}

// eqList: the same elements, and nil only with nil.
func eqList[E comparable](a, b []E) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

func eqValue[V comparable](a, b V) bool { return a == b }

// restoreLists is the map s stands for with every list copied (the live
// state edits its lists in place), an empty one never nil; nil if the
// copied map was.
func restoreLists[K comparable, E any](s *shareMap[K, []E]) map[K][]E {
	if s.null {
		return nil
	}
	m := s.materialize()
	for k, l := range m {
		if l != nil {
			c := slices.Clone(l)
			if c == nil {
				c = []E{}
			}
			m[k] = c
		}
	}
	return m
}

// parkChunkBits groups the parked groups into chunks by their first
// member's release position: new groups are parked near the stream's
// end, so the chunks behind it change only when a group in them is
// re-admitted.
const parkChunkBits = 12

// parkedChunk is an immutable chunk of the parked groups' map: ids
// ascending, gs[j] the group of ids[j]. The groups' arrays are shared
// with the live state as before: a parkedGroup's slices are made by
// park and never written after (unpark reads them and deletes the
// entry; a snapshot's restore makes fresh ones).
type parkedChunk struct {
	ids []int
	gs  []parkedGroup
}

// shareParked copies the parked groups' map as sorted chunks, taking
// from prev (the previous point's chunks) every chunk that is unchanged.
// An empty map gives no chunk (len 0).
func shareParked(m map[int]parkedGroup, prev []*parkedChunk) []*parkedChunk {
	if len(m) == 0 {
		return nil
	}
	by := map[int][]int{}
	for id := range m {
		c := id >> parkChunkBits
		by[c] = append(by[c], id)
	}
	cs := make([]int, 0, len(by))
	for c := range by {
		cs = append(cs, c)
	}
	slices.Sort(cs)
	out := make([]*parkedChunk, 0, len(cs))
	j := 0
	for _, c := range cs {
		ids := by[c]
		slices.Sort(ids)
		for j < len(prev) && prev[j].ids[0]>>parkChunkBits < c {
			j++
		}
		if j < len(prev) && prev[j].ids[0]>>parkChunkBits == c && sameChunk(prev[j], ids, m) {
			out = append(out, prev[j])
			continue
		}
		ch := &parkedChunk{ids: ids, gs: make([]parkedGroup, len(ids))}
		for k, id := range ids {
			ch.gs[k] = m[id]
		}
		out = append(out, ch)
	}
	return out
}

// sameChunk: ch holds exactly the groups ids of m, each the same group
// (the same members, keys, sessions and kept orders).
func sameChunk(ch *parkedChunk, ids []int, m map[int]parkedGroup) bool {
	if !slices.Equal(ch.ids, ids) {
		return false
	}
	for k, id := range ids {
		if !sameGroup(ch.gs[k], m[id]) {
			return false
		}
	}
	return true
}

func sameGroup(a, b parkedGroup) bool {
	return slices.Equal(a.Members, b.Members) && slices.Equal(a.Keys, b.Keys) &&
		slices.Equal(a.Sessions, b.Sessions) && slices.EqualFunc(a.Kept, b.Kept, func(x, y [2]int) bool { return x == y })
}

// parkedMap is the parked groups' map the chunks stand for, a fresh map
// (nil for none, as JSON's omitempty gives back).
func parkedMap(cs []*parkedChunk) map[int]parkedGroup {
	if len(cs) == 0 {
		return nil
	}
	n := 0
	for _, ch := range cs {
		n += len(ch.ids)
	}
	m := make(map[int]parkedGroup, n)
	for _, ch := range cs {
		for k, id := range ch.ids {
			m[id] = ch.gs[k]
		}
	}
	return m
}

// parkedMembersOf lists the chunks' parked members.
func parkedMembersOf(cs []*parkedChunk) []int {
	var out []int
	for _, ch := range cs {
		for _, g := range ch.gs {
			out = append(out, g.Members...)
		}
	}
	return out
}

// rebaseRewinds flattens every point whose chain runs through a point
// that is no longer the one kept before it (dropped, or a point restored
// from a snapshot), so that no dropped point stays in memory through a
// chain. Called whenever the points kept change.
func (o *Online) rebaseRewinds() {
	var before *flatState
	for k := range o.rewinds {
		f := o.rewinds[k].st
		if f != nil && f.base != nil && f.base != before {
			f.flatten()
		}
		before = f
	}
}

// eqOps: the same ops (a read list element by element, nil only with
// nil), and nil only with nil.
func eqOps(a, b []history.Op) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k := range a {
		x, y := &a[k], &b[k]
		if x.Kind != y.Kind || x.IsList != y.IsList || x.Key != y.Key || x.Value != y.Value || !eqList(x.List, y.List) {
			return false
		}
	}
	return true
}

// packOps copies each key's ops and their read lists (cloneOps): the
// live state may edit them in place.
func packOps(m map[int][]history.Op, keys []int) [][]history.Op {
	v := make([][]history.Op, len(keys))
	for j, k := range keys {
		v[j] = cloneOps(m[k])
	}
	return v
}

// restoreOps is the map s stands for with every op list copied again;
// nil if the copied map was.
func restoreOps(s *shareMap[int, []history.Op]) map[int][]history.Op {
	if s.null {
		return nil
	}
	m := s.materialize()
	for k, ops := range m {
		m[k] = cloneOps(ops)
	}
	return m
}
