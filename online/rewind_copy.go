package online

import (
	"encoding/json"
	"fmt"
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
// which nothing writes once a group is parked (docs/SEMANTICS.md §5
// "Rewind points share the parked groups"); nothing
// else of the live state is. The maps are shared between points instead
// (storm22d_share.go): each holds the changes from base, the point taken
// before it, or the whole map when base is nil.
type flatState struct {
	base                           *flatState
	member                         runFlags
	ghostKeys, replaced, folded    shareMap[int, []history.Key]
	listPrefix, initList           shareMap[history.Key, []history.Value]
	liveOf                         shareMap[history.Key, int]
	decided                        shareMap[int, bool]
	initVal                        shareMap[history.Key, history.Value]
	backoff                        shareMap[int, probeBackoff]
	kept                           [][2]int
	tail                           shareMap[int, []history.Op]
	evicted, ghosts, disagreements int
	// parked and parkSeen are Parked and ParkSeen (park_group.go),
	// Parked as a persistent map of immutable chunks.
	parked   []*parkedChunk
	parkSeen int
}

// flat copies st's exported fields but Taint, whole.
func (st *evictState) flat() *flatState { return st.flatOn(nil) }

// flatOn copies st's exported fields but Taint, its maps as changes
// from prev's (nil: whole).
func (st *evictState) flatOn(prev *flatState) *flatState {
	var (
		pGhostKeys, pReplaced, pFolded *shareMap[int, []history.Key]
		pListPrefix, pInitList         *shareMap[history.Key, []history.Value]
		pLiveOf                        *shareMap[history.Key, int]
		pDecided                       *shareMap[int, bool]
		pInitVal                       *shareMap[history.Key, history.Value]
		pBackoff                       *shareMap[int, probeBackoff]
		pParked                        []*parkedChunk
		pTail                          *shareMap[int, []history.Op]
	)
	if prev != nil {
		pGhostKeys, pReplaced, pFolded = &prev.ghostKeys, &prev.replaced, &prev.folded
		pListPrefix, pInitList = &prev.listPrefix, &prev.initList
		pLiveOf, pDecided, pInitVal, pBackoff = &prev.liveOf, &prev.decided, &prev.initVal, &prev.backoff
		pParked, pTail = prev.parked, &prev.tail
	}
	f := &flatState{
		base:       prev,
		member:     st.Member.clone(),
		ghostKeys:  shareOf(st.GhostKeys, pGhostKeys, eqList, packLists),
		replaced:   shareOf(st.Replaced, pReplaced, eqList, packLists),
		folded:     shareOf(st.Folded, pFolded, eqList, packLists),
		listPrefix: shareOf(st.ListPrefix, pListPrefix, eqList, packLists),
		initList:   shareOf(st.InitList, pInitList, eqList, packLists),
		liveOf:     shareOf(st.LiveOf, pLiveOf, eqValue, packValues),
		decided:    shareOf(st.Decided, pDecided, eqValue, packValues),
		initVal:    shareOf(st.InitVal, pInitVal, eqValue, packValues),
		backoff:    shareOf(st.Backoff, pBackoff, eqValue, packValues),
		kept:       slices.Clone(st.Kept),
		evicted:    st.Evicted, ghosts: st.Ghosts, disagreements: st.Disagreements,
		tail:   shareOf(st.Tail, pTail, eqOps, packOps),
		parked: shareParked(st.Parked, pParked), parkSeen: st.ParkSeen,
	}
	return f
}

// flatten makes every map of f whole (the same maps): f no longer
// needs its base.
func (f *flatState) flatten() {
	f.ghostKeys.flatten(packLists)
	f.replaced.flatten(packLists)
	f.folded.flatten(packLists)
	f.listPrefix.flatten(packLists)
	f.initList.flatten(packLists)
	f.liveOf.flatten(packValues)
	f.decided.flatten(packValues)
	f.initVal.flatten(packValues)
	f.backoff.flatten(packValues)
	f.tail.flatten(packOps)
	f.base = nil
}

// state returns a fresh evictState from f, sharing nothing with it but
// strings and the parked groups' arrays: its derived fields empty, Taint
// nil.
func (f *flatState) state() evictState {
	c := evictState{
		Member:        f.member.clone(),
		GhostKeys:     restoreLists(&f.ghostKeys),
		Replaced:      restoreLists(&f.replaced),
		Folded:        restoreLists(&f.folded),
		ListPrefix:    restoreLists(&f.listPrefix),
		InitList:      restoreLists(&f.initList),
		LiveOf:        f.liveOf.materialize(),
		Decided:       f.decided.materialize(),
		InitVal:       f.initVal.materialize(),
		Backoff:       f.backoff.materialize(),
		Kept:          slices.Clone(f.kept),
		Evicted:       f.evicted,
		Ghosts:        f.ghosts,
		Disagreements: f.disagreements,
		Parked:        parkedMap(f.parked),
		ParkSeen:      f.parkSeen,
		Tail:          restoreOps(&f.tail),
	}
	fixMaps(&c)
	c.Taint = nil
	return c
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
