package online

import (
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
)

// Consistent regions remembered (docs/SEMANTICS.md §5 "Consistent
// regions remembered by their projection").
//
// In a storm under an unknown initial state most injected groups are
// consistent (an unknown initial version or list explains them) and
// nothing touches their keys again: they stay in the window, each its own
// key region, and every confirmation checked every one of them again
// (about 400 checks of one to four transactions per step on the 55.7K
// storm, a fifth of the CPU). A region's check is incremental.Check on
// H|R with the engine's options: a function of the projected history and
// the options alone. So a region whose projection H|R, byte for byte in
// every field check reads, was found consistent under the same options
// is consistent again, and its check is skipped.
//
// The key is the projection, not the region's members or their bodies:
// H|R carries what the window made of them (a read dropped because a
// possible writer left or was quarantined, a ghost's ops that hold a
// list's whole prefix, which grows), and the same members can project
// differently from one step to the next (TestStormMemoByProjection).
//
// Skipping a region never changes a verdict either way: the batch still
// ends only on the check of everything left (storm_regions.go), which
// includes every region not taken. A wrong memo could only move a core
// from its region to that last check.
//
// The memo is shared by the engines of the process (tests run several
// at once; a mutex guards it) and bounded: two generations of at most
// stormMemoGen entries, the older dropped when the newer fills, an entry
// found in the older carried into the newer. The regions a storm keeps
// re-checking are found at every step and stay.

// stormMemo switches the memo on (tests hold it off to compare).
var stormMemo = true

// stormMemoGen bounds one generation of the memo.
const stormMemoGen = 1 << 13

// stormMemoHits counts the region checks the memo answered (for the
// tests: the memo must answer some).
var stormMemoHits atomic.Int64

type stormMemoKey struct {
	opts history.Options
	proj string
}

// memoGens is the memo: two generations of keys found consistent.
type memoGens struct {
	sync.Mutex
	cur, old map[stormMemoKey]checkCost
}

// checkCost is what a region's check added to the engine's counters
// (Online.checks is one more): a check the memo answers adds the same, so
// that an engine's counters, which its snapshot carries, do not depend on
// what other engines of the process, or it before a restore, checked
// (TestSnapshotBodiesRoundTrip compares a restored engine's snapshot with
// that of one that ran through, both in one process). Check is
// deterministic: the same history gives the same counts.
type checkCost struct {
	conflicts, constraints, pruned int64
}

var regionMemo memoGens

// memoConsistent reports whether H|R, encoded as proj under opts, was
// found consistent before, and what its check cost.
func memoConsistent(opts history.Options, proj string) (checkCost, bool) {
	if !stormMemo || proj == "" {
		return checkCost{}, false
	}
	k := stormMemoKey{opts, proj}
	m := &regionMemo
	m.Lock()
	defer m.Unlock()
	if c, ok := m.cur[k]; ok {
		return c, true
	}
	if c, ok := m.old[k]; ok {
		m.addLocked(k, c)
		return c, true
	}
	return checkCost{}, false
}

// rememberConsistent notes that H|R, encoded as proj, is consistent
// under opts, and what its check cost.
func rememberConsistent(opts history.Options, proj string, c checkCost) {
	if !stormMemo {
		return
	}
	m := &regionMemo
	m.Lock()
	defer m.Unlock()
	m.addLocked(stormMemoKey{opts, proj}, c)
}

// addLocked adds k to the newer generation, which becomes the older one
// once full.
func (m *memoGens) addLocked(k stormMemoKey, c checkCost) {
	if len(m.cur) >= stormMemoGen {
		m.old, m.cur = m.cur, nil
	}
	if m.cur == nil {
		m.cur = make(map[stormMemoKey]checkCost)
	}
	m.cur[k] = c
}

// encodeProjection appends to buf every field of h's transactions, in
// order, that a check may read (ids, sessions, times, flags, status,
// position, and each op in full), length-prefixed so that two different
// histories never share an encoding. A history with database facts is
// not encoded (ok false): no projection carries them today, and the memo
// does not guess what a check would make of them.
func encodeProjection(buf []byte, h *history.History) (_ []byte, ok bool) {
	if h.Facts != nil {
		return buf, false
	}
	u := func(x uint64) { buf = binary.AppendUvarint(buf, x) }
	i := func(x int64) { buf = binary.AppendVarint(buf, x) }
	s := func(x string) { u(uint64(len(x))); buf = append(buf, x...) }
	b := func(x bool) {
		if x {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
	}
	u(uint64(len(h.Txns)))
	for k := range h.Txns {
		t := &h.Txns[k]
		s(t.ID)
		s(t.Session)
		i(t.Start)
		i(t.End)
		b(t.HasSession)
		b(t.HasTime)
		u(uint64(t.Status))
		s(t.Pos.Source)
		i(int64(t.Pos.Line))
		i(t.Pos.Offset)
		u(uint64(len(t.Ops)))
		for _, op := range t.Ops {
			u(uint64(op.Kind))
			b(op.IsList)
			s(string(op.Key))
			s(string(op.Value))
			u(uint64(len(op.List)))
			for _, v := range op.List {
				s(string(v))
			}
		}
	}
	return buf, true
}
