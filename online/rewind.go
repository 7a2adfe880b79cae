package online

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Rewind points.
//
// After an alert the reduced instance must become what the stream minus
// the larger quarantine would have built (replay). Rebuilding it from
// the first released transaction cost a pass over every body ever
// released at each alert, and it needs every body kept for ever, which a
// retention bound cannot allow. So the engine keeps, every rewindEvery
// released transactions, a copy of the reduced instance as a step left it
// (a rewind point), and an alert replays from the latest point at or
// before its core's first member.
//
// Why that is the instance a replay from the start would be judged
// against: the point's state was built from the transactions released
// before it, under a quarantine that differs from today's only in
// transactions released at or after it (points past a quarantined member
// are dropped when it is quarantined, and replays take them again). A
// newly quarantined transaction c changes the instance in two ways: it
// leaves it, which it has not yet joined at the point; and its writes
// taint the reads that it could have written (§3). A member still in the
// point's state reads through build, which applies today's taint. An
// evicted transaction was time-closed when it was evicted, effEnd+2Δ
// below the start of every later release, so it precedes c in real time
// and c was never among its possible writers: its decided reads stay
// decided. What the point decided holds for every future (eviction's
// rule), and a future without c and with fewer reads is one of them.
//
// The pinned cap (capPinned) quarantines old members without an alert;
// a point that still holds one drops it as capPinned did. Positions are
// release positions and a point is taken at a step's end, both set by
// the stream, so replays and restarts pick the same points (deterministic
// replay).

// rewindEvery is how many released transactions lie between two rewind
// points (a variable for the tests).
var rewindEvery = 1 << 14

// maxRewinds is how many rewind points are kept, the newest. A core whose
// first member is older than all of them replays from the start while
// every body is kept.
const maxRewinds = 4

// rewindPoint is the reduced instance as a step left it once Pos
// transactions were released. st is evictState without Taint (a replay
// takes today's) as a flat copy (rewind_copy.go); State is its JSON, what
// a snapshot stores, made when one is (encoded), and all a point
// restored from a snapshot has.
type rewindPoint struct {
	Pos   int
	State json.RawMessage `json:",omitempty"`
	st    *flatState
	// check is, under selfCheck, the JSON of the live state the point
	// copied, as taken (checkRewindCopy).
	check []byte
	// At is, with a durable spill, the offset plus one of State's record
	// in the body file: a durable snapshot names the record instead of
	// holding the state (four points were twice a snapshot's size), and
	// a restore reads it back.
	At int64 `json:",omitempty"`
	// members are State's members, read from it on first use (retention
	// keeps their bodies).
	members []int
}

// memberList returns the point's members in released order, then its
// parked members: retention keeps the bodies of both.
func (p *rewindPoint) memberList() ([]int, error) {
	if p.members == nil && p.st != nil {
		// Not kept: the list is as long as the instance and the parked
		// groups, and retention asks for it once per chunk it retires.
		ms := []int{}
		for i := range p.st.member.len() {
			if p.st.member.get(i) {
				ms = append(ms, i)
			}
		}
		// A parked member's body is needed by a replay from the point
		// as a member's is (park_group.go).
		return append(ms, parkedMembersOf(p.st.parked)...), nil
	}
	if p.members == nil {
		var st struct {
			Member runFlags
			Parked map[int]parkedGroup
		}
		if err := json.Unmarshal(p.State, &st); err != nil {
			return nil, fmt.Errorf("engine: rewind point at %d: %w", p.Pos, err)
		}
		p.members = []int{}
		for i := range st.Member.len() {
			if st.Member.get(i) {
				p.members = append(p.members, i)
			}
		}
		for _, g := range st.Parked {
			p.members = append(p.members, g.Members...)
		}
	}
	return p.members, nil
}

// takeRewind keeps a rewind point at pos once pos reaches the next one
// due.
func (o *Online) takeRewind(pos int) {
	if !o.evicting || pos < o.nextRewind {
		return
	}
	// The point's maps are the changes from the newest point's
	// (storm22d_share.go); its members are listed from its copy when
	// asked (memberList).
	var prev *flatState
	if k := len(o.rewinds); k > 0 {
		prev = o.rewinds[k-1].st
	}
	p := rewindPoint{Pos: pos, st: o.ev.flatOn(prev)}
	if selfCheck.Load() {
		o.checkRewindCopy(&p)
	}
	o.rewinds = append(o.rewinds, p)
	if len(o.rewinds) > maxRewinds {
		// A pending quarantine in place keeps the point its heal starts
		// from (alert_inplace.go), besides the newest.
		var keep []rewindPoint
		if o.inPlace > 0 {
			if k := o.healPoint(o.inPlace - 1); k >= 0 && k < len(o.rewinds)-maxRewinds {
				keep = append(keep, o.rewinds[k])
			}
		}
		keep = append(keep, o.rewinds[len(o.rewinds)-maxRewinds:]...)
		o.rewinds = append(o.rewinds[:0], keep...)
		o.rebaseRewinds()
	}
	o.nextRewind = (pos/rewindEvery + 1) * rewindEvery
}

// rewindTo returns the latest rewind point at or before pos, dropping the
// later ones (they were built with a transaction at or after pos that is
// now quarantined), and makes the next one due after it. ok is false when
// none is left: the replay starts from the first transaction. Once
// retention has deleted bodies that start is gone: the oldest point is
// used instead, and inexact says so (retain.go).
func (o *Online) rewindTo(pos int) (p rewindPoint, ok, inexact bool) {
	k := len(o.rewinds)
	for k > 0 && o.rewinds[k-1].Pos > pos {
		k--
	}
	if k == 0 && o.floor > 0 && len(o.rewinds) > 0 {
		k, inexact = 1, true
	}
	o.rewinds = o.rewinds[:k]
	if k == 0 {
		o.nextRewind = rewindEvery
		return rewindPoint{}, false, false
	}
	p = o.rewinds[k-1]
	o.nextRewind = (p.Pos/rewindEvery + 1) * rewindEvery
	return p, true, inexact
}

// rewoundState is p's reduced instance with today's taint and counts:
// members quarantined since (set aside by the pinned cap) leave it as
// capPinned made them leave, and every member's body is brought back
// into memory.
func (o *Online) rewoundState(p rewindPoint, inexact bool) (evictState, error) {
	if selfCheck.Load() {
		if err := p.checkUnchanged(); err != nil {
			return evictState{}, err
		}
	}
	st, err := p.state()
	if err != nil {
		return st, err
	}
	if st.Member.len() > o.log.len() {
		return st, fmt.Errorf("engine: rewind point at %d holds %d instance flags, %d released", p.Pos, st.Member.len(), o.log.len())
	}
	st.Taint = o.ev.Taint
	st.Evicted, st.Disagreements = o.ev.Evicted, o.ev.Disagreements
	for _, i := range st.memberList() {
		if i >= p.Pos {
			return st, fmt.Errorf("engine: rewind point at %d holds member %d", p.Pos, i)
		}
		if o.quar.get(i) {
			if st.GhostKeys[i] != nil {
				// A quarantined ghost: only an alert quarantines one, and
				// the point would have been dropped then, unless retention
				// left no earlier one. It stays the live version of its
				// keys; reads of its writes are tainted.
				if inexact {
					continue
				}
				return st, fmt.Errorf("engine: rewind point at %d holds quarantined ghost %d", p.Pos, i)
			}
			st.Member.set(i, false)
			delete(st.Replaced, i)
			delete(st.Decided, i)
			continue
		}
		if err := o.unstub(i); err != nil {
			return st, err
		}
	}
	return st, nil
}

// fixMaps gives a decoded state the empty maps that JSON's null left
// nil.
func fixMaps(st *evictState) {
	if st.Decided == nil {
		st.Decided = map[int]bool{}
	}
	if st.GhostKeys == nil {
		st.GhostKeys = map[int][]history.Key{}
	}
	if st.LiveOf == nil {
		st.LiveOf = map[history.Key]int{}
	}
	if st.Replaced == nil {
		st.Replaced = map[int][]history.Key{}
	}
	if st.InitVal == nil {
		st.InitVal = map[history.Key]history.Value{}
	}
	if st.Taint == nil {
		st.Taint = map[string][]int{}
	}
	if st.ListPrefix == nil {
		st.ListPrefix = map[history.Key][]history.Value{}
	}
	if st.Folded == nil {
		st.Folded = map[int][]history.Key{}
	}
}

// snapshotRewinds are the rewind points as a snapshot holds them: with
// their states, or, in a durable snapshot, by their records in the body
// file where they have one.
// A point whose state cannot be encoded (only a bug) is left out: a
// restored engine replays from further back, as exactly.
func (o *Online) snapshotRewinds(durable bool) []rewindPoint {
	out := make([]rewindPoint, 0, len(o.rewinds))
	for k := range o.rewinds {
		p := &o.rewinds[k]
		if durable && p.At > 0 {
			out = append(out, rewindPoint{Pos: p.Pos, At: p.At})
			continue
		}
		b, err := p.encoded()
		if err != nil {
			continue
		}
		out = append(out, rewindPoint{Pos: p.Pos, State: b})
	}
	return out
}

// writeRewinds gives every rewind point without one a record in the
// durable body file, for SnapshotDurable to name. A point used to be
// written when taken; it is written at the first snapshot after, which
// is the first thing that can name the record (a point no snapshot
// names is never read from the file).
func (o *Online) writeRewinds() error {
	sp := &o.spill
	for k := range o.rewinds {
		p := &o.rewinds[k]
		if p.At > 0 {
			continue
		}
		b, err := p.encoded()
		if err != nil {
			continue // left out of the snapshot (snapshotRewinds)
		}
		off, err := sp.write(b)
		if err != nil {
			return err
		}
		p.At = off + 1
	}
	return nil
}

// readRewinds reads back from the body file the states of the rewind
// points a durable snapshot named by their records.
func (o *Online) readRewinds(end int64) error {
	for k := range o.rewinds {
		p := &o.rewinds[k]
		if p.At == 0 {
			continue
		}
		if p.At < 0 || p.At > end {
			return fmt.Errorf("rewind point at %d: record at %d of %d", p.Pos, p.At-1, end)
		}
		b, err := o.spill.recordAt(p.At-1, p.Pos)
		if err != nil {
			return fmt.Errorf("rewind point at %d: %w", p.Pos, err)
		}
		p.State = slices.Clone(b)
	}
	return nil
}
