package online

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
)

// Parked isolated groups (docs/SEMANTICS.md §5 "Isolated groups are
// parked out of the instance (issue 22, park22)").
//
// An isolated group (isolatedGroup: its members touch keys nothing else
// in the instance touches, share no session with anything else, carry no
// kept order to the rest, all closed and committed) whose members are
// all backed off and have stayed isolated for parkAfter releases leaves
// the instance whole: its members stop being members, their bodies go to
// the body file as evicted ones do, and evictState.Parked remembers the
// group's members, keys, sessions and the kept orders among its members.
// A transaction released later that touches one of those keys or
// sessions re-admits the group first (unparkArrivals, at the top of
// build): its members come back with their bodies, their back-offs
// cleared, its kept orders restored. Every completion of the instance
// with the group is a completion of the rest and one of the group's own
// sub-instance, whatever each decides, so the rest is judged the same
// without it, and nothing but an arrival on its keys or sessions changes
// the group's own sub-instance (the argument is in §5).
//
// The parked state is part of the reduced instance: a snapshot and a
// rewind point carry Parked and ParkSeen, so a replay or a restored engine
// parks and re-admits at the same steps.

// parkedGroup is one parked isolated group.
type parkedGroup struct {
	// Members are the group's released indexes, in released order.
	Members []int
	// Keys are every key the members' bodies touch and Sessions their
	// sessions: an arrival on one re-admits the group.
	Keys     []history.Key
	Sessions []string `json:",omitempty"`
	// Kept are the kept orders among the members (by released index),
	// out of evictState.Kept while the group is parked.
	Kept [][2]int `json:",omitempty"`
}

// parkIndex finds the parked group of a key or a session (derived from
// evictState.Parked, not in a snapshot).
type parkIndex struct {
	built bool
	keys  map[history.Key]int
	sess  map[string]int
	// members counts the parked members.
	members int
}

// parkGroups turns parking on (tests turn it off to compare);
// parkTrace and readmitTrace count the groups parked and re-admitted
// (tests).
var (
	parkGroups              = true
	parkTrace, readmitTrace atomic.Int64
)

// parkAfter is how many releases a member's back-off must have lasted
// before its group is parked: a group that some arrival is about to
// touch is not parked and re-admitted at once, and a back-off whose wait
// has just passed is first judged by isolatedGroup as before.
const parkAfter = 4 * backoffFirst

// parkIdx returns the index of the parked groups, built on first use.
func (st *evictState) parkIdx() *parkIndex {
	px := &st.park
	if px.built {
		return px
	}
	px.keys, px.sess, px.members = map[history.Key]int{}, map[string]int{}, 0
	for id, g := range st.Parked {
		px.members += len(g.Members)
		for _, k := range g.Keys {
			px.keys[k] = id
		}
		for _, ss := range g.Sessions {
			px.sess[ss] = id
		}
	}
	px.built = true
	return px
}

// parkedMembers returns every parked member, unordered.
func (st *evictState) parkedMembers() []int {
	var out []int
	for _, g := range st.Parked {
		out = append(out, g.Members...)
	}
	return out
}

// parkedCount is how many members are parked.
func (st *evictState) parkedCount() int {
	if len(st.Parked) == 0 {
		return 0
	}
	return st.parkIdx().members
}

// parkIsolated parks, at the end of an evicting step, every isolated
// group whose members were all asked at this step and are all still
// backed off, each for parkAfter releases at least, none of them pinned
// by a pending alert or leaving at this step.
func (s *evictStep) parkIsolated() {
	if !parkGroups || len(s.backoffSeen) == 0 {
		return
	}
	st, r, o := s.st, s.r, s.o
	var cands []int32
	for t, v := range s.backoffSeen {
		if v == -1 {
			cands = append(cands, t)
		}
	}
	slices.Sort(cands)
	seen := map[int32]bool{}
	for _, t := range cands {
		if seen[t] {
			continue
		}
		b, held := st.Backoff[r.pos[t]]
		if !held || s.removed[t] || o.log.len() < b.At+parkAfter {
			continue
		}
		group, ok := s.isolatedGroupOf(t, b.At, true)
		for _, g := range group {
			seen[g] = true
		}
		if !ok || !s.parkable(group) {
			continue
		}
		o.park(group, r)
	}
}

// parkable: every member of group is backed off for parkAfter releases
// at least, was asked at this step and is still backed off, stays (not
// removed, not a ghost), is not pinned by a pending alert, and no key or
// session of its is indexed for another parked group.
func (s *evictStep) parkable(group []int32) bool {
	st, r, o := s.st, s.r, s.o
	px := st.parkIdx()
	for _, g := range group {
		i := r.pos[g]
		b, held := st.Backoff[i]
		if !held || s.backoffSeen[g] != -1 || o.log.len() < b.At+parkAfter || s.removed[g] || r.ghost[g] || s.pinned[i] || o.quar.get(i) {
			return false
		}
		tx := o.log.at(i)
		if _, ok := px.sess[tx.Session]; ok && tx.HasSession {
			return false
		}
		for _, op := range tx.Ops {
			if _, ok := px.keys[op.Key]; ok {
				return false
			}
		}
	}
	return true
}

// park takes group (positions of r) out of the instance.
func (o *Online) park(group []int32, r *reduced) {
	st := &o.ev
	g := parkedGroup{}
	for _, t := range group {
		g.Members = append(g.Members, r.pos[t])
	}
	slices.Sort(g.Members)
	keys := map[history.Key]bool{}
	sess := map[string]bool{}
	for _, i := range g.Members {
		tx := o.log.at(i)
		for _, op := range tx.Ops {
			if !keys[op.Key] {
				keys[op.Key] = true
				// A copy: the decoder's string may share a larger
				// buffer, which the index would keep alive.
				g.Keys = append(g.Keys, history.Key(strings.Clone(string(op.Key))))
			}
		}
		if tx.HasSession && !sess[tx.Session] {
			sess[tx.Session] = true
			g.Sessions = append(g.Sessions, strings.Clone(tx.Session))
		}
	}
	slices.Sort(g.Keys)
	slices.Sort(g.Sessions)
	in := func(i int) bool {
		_, found := slices.BinarySearch(g.Members, i)
		return found
	}
	st.Kept = slices.DeleteFunc(st.Kept, func(k [2]int) bool {
		if in(k[0]) && in(k[1]) {
			g.Kept = append(g.Kept, k)
			return true
		}
		return false
	})
	id := g.Members[0]
	if st.Parked == nil {
		st.Parked = map[int]parkedGroup{}
	}
	st.Parked[id] = g
	parkTrace.Add(1)
	px := st.parkIdx()
	for _, k := range g.Keys {
		px.keys[k] = id
	}
	for _, ss := range g.Sessions {
		px.sess[ss] = id
	}
	px.members += len(g.Members)
	for _, i := range g.Members {
		st.Member.set(i, false)
		delete(st.Backoff, i)
		o.spillBody(i)
	}
}

// unparkArrivals re-admits every parked group that a transaction
// released since the last build touches, by a key of its body or its
// session. It runs first in build, so that the instance a step judges
// is the one it would be with the group kept. A body that cannot be read
// back leaves its group parked and is a spill failure (SpillError).
func (o *Online) unparkArrivals() {
	st := &o.ev
	n := o.log.len()
	if len(st.Parked) == 0 || st.ParkSeen > n {
		st.ParkSeen = n
		return
	}
	px := st.parkIdx()
	var hit []int
	for i := st.ParkSeen; i < n; i++ {
		if !st.Member.get(i) {
			// Quarantined (an unchecked writer is: its taint is
			// applied to the group's reads when it is built again),
			// or left.
			continue
		}
		body, err := o.body(i)
		if err != nil {
			if o.spillErr == nil {
				o.spillErr = err
			}
			continue
		}
		tx := &body
		if tx.HasSession {
			if id, ok := px.sess[tx.Session]; ok {
				hit = append(hit, id)
			}
		}
		for _, op := range tx.Ops {
			if id, ok := px.keys[op.Key]; ok {
				hit = append(hit, id)
			}
		}
	}
	st.ParkSeen = n
	slices.Sort(hit)
	for _, id := range slices.Compact(hit) {
		if err := o.unpark(id); err != nil && o.spillErr == nil {
			o.spillErr = err
		}
	}
}

// unpark re-admits parked group id: its members (but the quarantined)
// are members again with their bodies, time-closed as when they were
// parked, without a back-off, and its kept orders are restored.
func (o *Online) unpark(id int) error {
	st := &o.ev
	g, ok := st.Parked[id]
	if !ok {
		return nil
	}
	for _, i := range g.Members {
		if o.quar.get(i) {
			continue
		}
		if err := o.unstub(i); err != nil {
			return fmt.Errorf("engine: re-admitting parked group %d: %w", id, err)
		}
	}
	px := st.parkIdx()
	delete(st.Parked, id)
	px.members -= len(g.Members)
	for _, k := range g.Keys {
		if px.keys[k] == id {
			delete(px.keys, k)
		}
	}
	for _, ss := range g.Sessions {
		if px.sess[ss] == id {
			delete(px.sess, ss)
		}
	}
	for _, i := range g.Members {
		if o.quar.get(i) {
			continue
		}
		st.Member.set(i, true)
		// Closed when parked, and closing only grows; a replay's
		// flags are rebuilt for members only.
		o.closed.set(i, true)
		delete(st.Backoff, i)
		if k, found := slices.BinarySearch(st.members, i); !found && st.listed {
			st.members = slices.Insert(st.members, k, i)
		}
		if k, found := slices.BinarySearch(st.gx.win, i); !found && st.gx.winListed {
			st.gx.win = slices.Insert(st.gx.win, k, i)
		}
	}
	if len(g.Kept) > 0 {
		st.Kept = append(st.Kept, g.Kept...)
		slices.SortFunc(st.Kept, func(x, y [2]int) int {
			if c := cmp.Compare(x[0], y[0]); c != 0 {
				return c
			}
			return cmp.Compare(x[1], y[1])
		})
		st.Kept = slices.Compact(st.Kept)
	}
	readmitTrace.Add(1)
	return nil
}
