package online

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// A rewind point's state as a copy in memory (docs/SEMANTICS.md §5
// "Rewind points copied, encoded on demand"). A point was the JSON of the
// whole reduced instance, taken when it was due: JSON sorts every map's
// keys and writes every key's text, so with one ghost per key of a
// 20K-key workload each point cost tens of milliseconds, 6% of the CPU
// on a real recording, for points that a clean stream never reads. A
// point is now a flat copy (flatState), and its JSON is made only when
// something needs the bytes: a snapshot, a durable body file's record.
// The state a replay gets from it is exactly what the JSON round trip
// gave: the same exported fields, the derived ones empty (build rebuilds
// them), and nothing shared with the live state, which goes on changing
// in place.

// flatState is a rewind point's copy of an evictState: every map laid
// out as flat slices, a few arrays per map instead of a map's table and
// an array per entry. Copied maps made a point about three times its
// JSON's size (the ghosts' maps dominate: one entry per key), and four
// points are kept; flat, a point is about its JSON's size. Strings are
// shared (Go's are immutable), and so are the parked groups' arrays,
// which nothing writes once a group is parked (cloneParked); nothing
// else is.
type flatState struct {
	member                         runFlags
	ghostKeys, replaced, folded    flatLists[int, history.Key]
	listPrefix, initList           flatLists[history.Key, history.Value]
	liveOf                         flatMap[history.Key, int]
	decided                        flatMap[int, bool]
	initVal                        flatMap[history.Key, history.Value]
	backoff                        flatMap[int, probeBackoff]
	kept                           [][2]int
	tail                           map[int][]history.Op
	evicted, ghosts, disagreements int
	// parked and parkSeen are Parked and ParkSeen (park_group.go).
	parked   map[int]parkedGroup
	parkSeen int
}

// flat copies st's exported fields but Taint.
func (st *evictState) flat() *flatState {
	f := &flatState{
		member:     st.Member.clone(),
		ghostKeys:  flattenLists(st.GhostKeys),
		replaced:   flattenLists(st.Replaced),
		folded:     flattenLists(st.Folded),
		listPrefix: flattenLists(st.ListPrefix),
		initList:   flattenLists(st.InitList),
		liveOf:     flattenMap(st.LiveOf),
		decided:    flattenMap(st.Decided),
		initVal:    flattenMap(st.InitVal),
		backoff:    flattenMap(st.Backoff),
		kept:       slices.Clone(st.Kept),
		evicted:    st.Evicted, ghosts: st.Ghosts, disagreements: st.Disagreements,
		parked: cloneParked(st.Parked), parkSeen: st.ParkSeen,
	}
	if st.Tail != nil {
		f.tail = make(map[int][]history.Op, len(st.Tail))
		for i, ops := range st.Tail {
			f.tail[i] = cloneOps(ops)
		}
	}
	return f
}

// state returns a fresh evictState from f, sharing nothing with it but
// strings: its derived fields empty, Taint nil.
func (f *flatState) state() evictState {
	c := evictState{
		Member:        f.member.clone(),
		GhostKeys:     f.ghostKeys.restore(),
		Replaced:      f.replaced.restore(),
		Folded:        f.folded.restore(),
		ListPrefix:    f.listPrefix.restore(),
		InitList:      f.initList.restore(),
		LiveOf:        f.liveOf.restore(),
		Decided:       f.decided.restore(),
		InitVal:       f.initVal.restore(),
		Backoff:       f.backoff.restore(),
		Kept:          slices.Clone(f.kept),
		Evicted:       f.evicted,
		Ghosts:        f.ghosts,
		Disagreements: f.disagreements,
		Parked:        cloneParked(f.parked),
		ParkSeen:      f.parkSeen,
	}
	if f.tail != nil {
		c.Tail = make(map[int][]history.Op, len(f.tail))
		for i, ops := range f.tail {
			c.Tail[i] = cloneOps(ops)
		}
	}
	fixMaps(&c)
	c.Taint = nil
	return c
}

// flatMap is a map as its keys and values side by side. A nil map comes
// back empty: for these fields JSON could not tell them apart either
// (fixMaps, omitempty).
type flatMap[K comparable, V any] struct {
	k []K
	v []V
}

func flattenMap[K comparable, V any](m map[K]V) flatMap[K, V] {
	f := flatMap[K, V]{k: make([]K, 0, len(m)), v: make([]V, 0, len(m))}
	for k, v := range m {
		f.k = append(f.k, k)
		f.v = append(f.v, v)
	}
	return f
}

func (f *flatMap[K, V]) restore() map[K]V {
	m := make(map[K]V, len(f.k))
	for j, k := range f.k {
		m[k] = f.v[j]
	}
	return m
}

// flatLists is a map of lists as its keys, the end of each key's list in
// one array of all their elements, and which lists were nil (a nil
// GhostKeys entry and an empty one differ, as in JSON); null says the map
// was nil.
type flatLists[K comparable, V any] struct {
	k    []K
	end  []int32
	v    []V
	nils []int32 // indexes in k of the nil lists
	null bool
}

func flattenLists[K comparable, V any](m map[K][]V) flatLists[K, V] {
	f := flatLists[K, V]{k: make([]K, 0, len(m)), end: make([]int32, 0, len(m)), null: m == nil}
	n := 0
	for _, l := range m {
		n += len(l)
	}
	f.v = make([]V, 0, n)
	for k, l := range m {
		if l == nil {
			f.nils = append(f.nils, int32(len(f.k)))
		}
		f.k = append(f.k, k)
		f.v = append(f.v, l...)
		f.end = append(f.end, int32(len(f.v)))
	}
	return f
}

func (f *flatLists[K, V]) restore() map[K][]V {
	if f.null {
		return nil
	}
	m := make(map[K][]V, len(f.k))
	from := int32(0)
	nils := f.nils
	for j, k := range f.k {
		var l []V
		if len(nils) > 0 && nils[0] == int32(j) {
			nils = nils[1:]
		} else {
			l = slices.Clone(f.v[from:f.end[j]:f.end[j]])
			if l == nil {
				l = []V{}
			}
		}
		m[k] = l
		from = f.end[j]
	}
	return m
}

// cloneOps copies ops and their read lists.
func cloneOps(ops []history.Op) []history.Op {
	c := slices.Clone(ops)
	for k := range c {
		if c[k].List != nil {
			c[k].List = slices.Clone(c[k].List)
		}
	}
	return c
}

// clone returns a copy of f sharing nothing with it.
func (f *runFlags) clone() runFlags {
	return runFlags{words: slices.Clone(f.words), base: f.base, fill: f.fill, odd: slices.Clone(f.odd), n: f.n, ones: f.ones}
}

// encoded returns the point's state as JSON: made from its copy at each
// call (the same bytes each time: JSON sorts map keys), not kept, so
// that a point a checkpoint has encoded does not hold its state twice;
// a point restored from a snapshot has only its JSON.
func (p *rewindPoint) encoded() (json.RawMessage, error) {
	if p.st == nil {
		return p.State, nil
	}
	st := p.st.state()
	b, err := json.Marshal(&st)
	if err != nil {
		return nil, fmt.Errorf("engine: rewind point at %d: %w", p.Pos, err)
	}
	return b, nil
}

// state returns the point's reduced instance as a fresh state the replay
// may change: a copy of the copy (the point stays, for later replays),
// or, for a point restored from a snapshot, its JSON decoded.
func (p *rewindPoint) state() (evictState, error) {
	if p.st != nil {
		return p.st.state(), nil
	}
	st := newEvictState()
	if err := json.Unmarshal(p.State, &st); err != nil {
		return st, fmt.Errorf("engine: rewind point at %d: %w", p.Pos, err)
	}
	fixMaps(&st)
	return st, nil
}

// checkRewindCopy holds, under selfCheck, a point's copy to the live
// state it copies: their JSON (what a point used to be) must be the
// same bytes. The bytes are kept for checkUnchanged.
func (o *Online) checkRewindCopy(p *rewindPoint) {
	live := o.ev
	live.Taint = nil
	want, err := json.Marshal(&live)
	if err != nil {
		panic(fmt.Sprintf("online self-check: rewind point at %d: %v", p.Pos, err))
	}
	st := p.st.state()
	got, err := json.Marshal(&st)
	if err != nil {
		panic(fmt.Sprintf("online self-check: rewind point at %d: %v", p.Pos, err))
	}
	if string(got) != string(want) {
		panic(fmt.Sprintf("online self-check: rewind point at %d: the copy is not the state it copies", p.Pos))
	}
	p.check = want
}

// checkUnchanged holds, under selfCheck, a point about to be replayed
// from to the state it copied when it was taken: the steps since changed
// the live state in place, and none of that may have reached the copy.
func (p *rewindPoint) checkUnchanged() error {
	if p.st == nil || p.check == nil {
		return nil
	}
	st := p.st.state()
	got, err := json.Marshal(&st)
	if err != nil {
		return fmt.Errorf("online self-check: rewind point at %d: %w", p.Pos, err)
	}
	if string(got) != string(p.check) {
		return fmt.Errorf("online self-check: rewind point at %d changed since it was taken", p.Pos)
	}
	return nil
}

// cloneParked copies the parked groups' map. The groups themselves are
// shared, not copied (docs/SEMANTICS.md §5 "Rewind points share the
// parked groups"): a parkedGroup's slices are made by park and never
// written after (unpark reads them and deletes the entry; a snapshot's
// restore makes fresh ones), so a point and the live state, or a replay
// and the point it started from, may hold the same arrays. Each of the
// four points used to hold its own copy of every group parked since the
// stream began (nil for none, as JSON's omitempty gives back).
func cloneParked(m map[int]parkedGroup) map[int]parkedGroup {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
