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
// point is now a deep copy (clone), and its JSON is made only when
// something needs the bytes: a snapshot, a durable body file's record.
// The copy is exactly what the JSON round trip gave the replay: the same
// exported fields, the derived ones empty (build rebuilds them), and
// nothing shared with the live state, which goes on changing in place.

// clone returns a deep copy of st's exported fields, as json.Marshal of
// st followed by an Unmarshal into newEvictState would give them, without
// Taint (a replay takes today's). Nothing of the copy aliases st: the
// engine edits maps and slices of the live state in place.
func (st *evictState) clone() evictState {
	c := evictState{
		Member:        st.Member.clone(),
		GhostKeys:     cloneSlices(st.GhostKeys),
		LiveOf:        maps.Clone(st.LiveOf),
		Replaced:      cloneSlices(st.Replaced),
		Kept:          slices.Clone(st.Kept),
		Decided:       maps.Clone(st.Decided),
		InitVal:       maps.Clone(st.InitVal),
		ListPrefix:    cloneSlices(st.ListPrefix),
		InitList:      cloneSlices(st.InitList),
		Folded:        cloneSlices(st.Folded),
		Backoff:       maps.Clone(st.Backoff),
		Evicted:       st.Evicted,
		Ghosts:        st.Ghosts,
		Disagreements: st.Disagreements,
	}
	if st.Tail != nil {
		c.Tail = make(map[int][]history.Op, len(st.Tail))
		for i, ops := range st.Tail {
			c.Tail[i] = cloneOps(ops)
		}
	}
	fixMaps(&c)
	c.Taint = nil
	return c
}

// cloneSlices copies m and each of its slices (a nil slice stays nil: a
// nil GhostKeys entry and an empty one differ, as in JSON).
func cloneSlices[K comparable, V any](m map[K][]V) map[K][]V {
	if m == nil {
		return nil
	}
	c := make(map[K][]V, len(m))
	for k, v := range m {
		c[k] = slices.Clone(v)
	}
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

// encoded returns the point's state as JSON, made from its copy on first
// use and kept (a snapshot, a durable record, and retention's copy of
// that record forward read the same bytes).
func (p *rewindPoint) encoded() (json.RawMessage, error) {
	if p.State == nil && p.st != nil {
		b, err := json.Marshal(p.st)
		if err != nil {
			return nil, fmt.Errorf("engine: rewind point at %d: %w", p.Pos, err)
		}
		p.State = b
	}
	return p.State, nil
}

// state returns the point's reduced instance as a fresh state the replay
// may change: a copy of the copy (the point stays, for later replays),
// or, for a point restored from a snapshot, its JSON decoded.
func (p *rewindPoint) state() (evictState, error) {
	if p.st != nil {
		return p.st.clone(), nil
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
	got, err := json.Marshal(p.st)
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
	got, err := json.Marshal(p.st)
	if err != nil {
		return fmt.Errorf("online self-check: rewind point at %d: %w", p.Pos, err)
	}
	if string(got) != string(p.check) {
		return fmt.Errorf("online self-check: rewind point at %d changed since it was taken", p.Pos)
	}
	return nil
}
