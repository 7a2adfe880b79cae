package online

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Retention.
//
// An evicted body is read again only to confirm an alert and to replay
// after one, but which body an alert will need is not known: a stale
// read can reach any overwritten value. Keeping all of them made the
// body file grow with the stream. Retention bounds what is kept by event
// time (MaxAge) and by bytes released (MaxBytes): the floor, a log chunk
// boundary, advances over chunks that are older than MaxAge or that leave
// more than MaxBytes of bodies after them, and an evicted body below it
// is gone unless something still needs it.
//
// What still needs a body below the floor: the engine itself (members,
// ghosts, quarantined bodies: in memory), and the replays from the rewind
// points (rewind.go) at or after the floor, which bring their members
// back. The floor never passes the newest point, so one always remains;
// points below it go. A replay whose core begins before every point left
// starts from the oldest and is inexact, and the alert says so.
//
// Everything else the engine does with a body below the floor is the
// proof of an alert, and there a gone body is named instead of read:
//   - confirming an alert reads the bodies kept. A read in the core whose
//     value none of them wrote may have had its writer below the floor:
//     the alert says which read (PastRetention).
//     One case goes unnamed: a value written twice, once by a kept
//     body and once by a gone one (a workload that repeats values), read
//     in the core. The core then names the kept writer as the source;
//     the anomaly is still proven by the reduced instance, but the core
//     may not be the one the whole history gives.
//   - when the kept bodies do not prove what the reduced instance found
//     (its proof runs through gone bodies), the transactions that made
//     the step unsatisfiable are set aside like a core and the alert
//     names them, rather than counting a disagreement and rebuilding the
//     instance, which would find it again at every step.
//
// The floor moves at a step's end, by release positions and event time,
// so a replay or a restart makes the same bodies gone (deterministic
// replay). The file is cut later: gone records and those copied forward
// stay in it until a checkpoint that no longer names them is durable
// (Online.Punch).

// Retention bounds the evicted bodies an engine keeps (zero fields are
// unbounded).
type Retention struct {
	// MaxAge is in event time: a chunk of transactions that all started
	// more than MaxAge before the newest release may go.
	MaxAge int64
	// MaxBytes bounds the bodies released from the floor on, by the size
	// of their records.
	MaxBytes int64
}

func (r Retention) bounded() bool { return r.MaxAge > 0 || r.MaxBytes > 0 }

// chunkMark is what retention knows of a log chunk: its first release's
// start and the record bytes of every body released before it.
type chunkMark struct {
	Start, Bytes int64
}

// goneOff marks a gone body in the spill's tables, where a record's
// offset plus one (positive) or 0 (in memory) is otherwise.
const goneOff = -1

// BodyGoneError is a body retention deleted that something asked for.
type BodyGoneError struct {
	Pos   int   // release position
	Floor int   // the floor: bodies released before it may be gone
	Start int64 // the event time the floor's chunk began at
}

func (e *BodyGoneError) Error() string {
	return fmt.Sprintf("engine: body of released transaction #%d is past retention (bodies released before #%d, event time %d, are gone)", e.Pos, e.Floor, e.Start)
}

// recordSize estimates a body's record: what MaxBytes counts. It is
// computed at release, where encoding every body would cost a step's
// worth.
func recordSize(t *history.Txn) int64 {
	n := int64(len(t.ID) + len(t.Session) + 12)
	for _, op := range t.Ops {
		n += int64(len(op.Key)+len(op.Value)) + 3
		for _, v := range op.List {
			n += int64(len(v)) + 1
		}
	}
	return n
}

// mark records, at a release, what retention needs of i's chunk and the
// bytes released.
func (o *Online) mark(i int, t *history.Txn) {
	if i&(logChunkSize-1) == 0 {
		o.marks = append(o.marks, chunkMark{Start: t.Start, Bytes: o.bodyBytes})
		o.spill.chunkAt = append(o.spill.chunkAt, o.spill.end)
	}
	o.bodyBytes += recordSize(t)
}

// gone reports whether released transaction i's body is past retention.
func (o *Online) gone(i int) bool {
	return i < o.floor && o.spill.spilled(i) && o.spill.isGone(i)
}

func (o *Online) goneError(i int) error {
	e := &BodyGoneError{Pos: i, Floor: o.floor}
	if c := o.floor >> logChunkBits; c < len(o.marks) {
		e.Start = o.marks[c].Start
	}
	return e
}

// retire advances the floor as far as the retention bound asks and the
// newest rewind point allows, at a step's end.
func (o *Online) retire() error {
	if !o.retention.bounded() || !o.evicting || len(o.rewinds) == 0 {
		return nil
	}
	limit := o.rewinds[len(o.rewinds)-1].Pos
	now := o.lastStart()
	target := o.floor
	for c := o.floor >> logChunkBits; (c+1)<<logChunkBits <= limit && c+1 < len(o.marks); c++ {
		old := o.retention.MaxAge > 0 && o.marks[c+1].Start < now-o.retention.MaxAge
		big := o.retention.MaxBytes > 0 && o.bodyBytes-o.marks[c].Bytes > o.retention.MaxBytes
		if !old && !big {
			break
		}
		target = (c + 1) << logChunkBits
	}
	if target == o.floor {
		return nil
	}
	return o.advance(target)
}

// advance moves the floor to target: the evicted bodies below it that no
// rewind point at or after it holds are gone, and the records still
// needed below the file's new cut are copied forward.
func (o *Online) advance(target int) error {
	keep := map[int]bool{}
	k := 0
	for k < len(o.rewinds) && o.rewinds[k].Pos < target {
		k++
	}
	o.rewinds = append(o.rewinds[:0], o.rewinds[k:]...)
	o.rebaseRewinds()
	for k := range o.rewinds {
		ms, err := o.rewinds[k].memberList()
		if err != nil {
			return err
		}
		for _, i := range ms {
			if i < target {
				keep[i] = true
			}
		}
	}
	sp := &o.spill
	for _, i := range o.belowFloor {
		if !sp.spilled(i) || sp.isGone(i) {
			continue
		}
		if keep[i] {
			// Held loose if its chunk was dropped (writeOut below the
			// floor), so copyForward sees it.
			continue
		}
		sp.markGone(i)
		if o.log.inMemory(i) {
			*o.log.at(i) = history.Txn{}
		}
		o.goneCount++
	}
	o.belowFloor = o.belowFloor[:0]
	for c := o.floor >> logChunkBits; c < target>>logChunkBits && c < len(sp.block); c++ {
		base := c << logChunkBits
		switch {
		case sp.at[c] != nil:
			for k, off := range sp.at[c] {
				if off > 0 && !keep[base+k] {
					sp.at[c][k] = goneOff
					// The stub goes too: a restart cannot read it back.
					*o.log.at(base + k) = history.Txn{}
					o.goneCount++
				}
			}
		case sp.block[c] > 0:
			offs, err := sp.readBlock(c)
			if err != nil {
				return err
			}
			for k, off := range offs {
				i := base + k
				if _, ok := sp.loose[i]; ok || off <= 0 {
					continue
				}
				if keep[i] {
					sp.setAt(i, off)
					continue
				}
				o.zeroStub(i)
				o.goneCount++
			}
			sp.block[c] = goneOff
		}
	}
	for i, off := range sp.loose {
		if i >= o.floor && i < target && off > 0 && !keep[i] {
			sp.markGone(i)
			o.zeroStub(i)
			o.goneCount++
		}
	}
	o.floor, sp.floorChunk = target, target>>logChunkBits
	if !sp.opened || target>>logChunkBits >= len(sp.chunkAt) {
		return nil
	}
	return o.copyForward(sp.chunkAt[target>>logChunkBits])
}

// copyForward rewrites at the file's end every record still needed that
// lies below cut, and makes cut the file's new start. Records of bodies
// released at or after the floor lie above it: each was written after
// its release, and cut is where the file ended when the floor's chunk
// began.
func (o *Online) copyForward(cut int64) error {
	sp := &o.spill
	if cut <= sp.cut {
		return nil
	}
	move := func(i int, off int64) (int64, error) {
		b, err := sp.recordAt(off-1, i)
		if err != nil {
			return 0, err
		}
		sp.buf = append(sp.buf[:0], b...)
		w, err := sp.write(sp.buf)
		return w + 1, err
	}
	for i, off := range sp.durable {
		if off-1 < cut {
			w, err := move(i, off)
			if err != nil {
				return err
			}
			sp.durable[i] = w
		}
	}
	for c := 0; c < o.floor>>logChunkBits && c < len(sp.at); c++ {
		for k, off := range sp.at[c] {
			if off > 0 && off-1 < cut {
				w, err := move(c<<logChunkBits+k, off)
				if err != nil {
					return err
				}
				sp.at[c][k] = w
			}
		}
	}
	for i, off := range sp.loose {
		if off > 0 && off-1 < cut {
			w, err := move(i, off)
			if err != nil {
				return err
			}
			sp.loose[i] = w
		}
	}
	for k := range o.rewinds {
		if p := &o.rewinds[k]; p.At > 0 && p.At-1 < cut {
			b, err := p.encoded()
			if err != nil {
				return err
			}
			w, err := sp.write(b)
			if err != nil {
				return err
			}
			p.At = w + 1
		}
	}
	if err := o.copyIndexForward(cut); err != nil {
		return err
	}
	sp.cut = cut
	if !sp.file.Durable() {
		// No checkpoint names the old records: cut now.
		return o.Punch()()
	}
	return nil
}

// zeroStub empties the stub a dropped chunk kept of gone body i (a
// quarantined one's, txnLog.keep), as the stubs of live chunks are: a
// restart cannot read it back, and must find what the running engine
// has (the taint rule then takes the writer as without times, which
// drops more reads, never fewer).
func (o *Online) zeroStub(i int) {
	if o.log.inMemory(i) {
		*o.log.at(i) = history.Txn{}
	}
}

// markGone records that spilled body i is past retention. In a dropped
// chunk whose offsets are gone too it needs no entry of its own: memory
// and snapshots then hold only the few bodies kept below the floor.
func (s *spill) markGone(i int) {
	c := i >> logChunkBits
	if s.at[c] == nil && s.block[c] == goneOff {
		delete(s.loose, i)
		return
	}
	s.setAt(i, goneOff)
}

// readBlock reads chunk c's written-out offsets.
func (s *spill) readBlock(c int) ([]int64, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("engine: reading spilled offsets: %w", err)
	}
	offs := make([]int64, logChunkSize)
	if err := s.readOffsets(c, offs); err != nil {
		return nil, err
	}
	return offs, nil
}

// Punch returns what frees the body file's bytes below its cut (records
// gone or copied forward): call it once a checkpoint taken after the cut
// moved is durable, since an older one still names them. It may run on
// any goroutine. Should it fail, the bytes stay until a restart's first
// punch.
func (o *Online) Punch() func() error {
	f, cut, done := o.spill.file, o.spill.cut, o.spill.punched
	if !o.spill.opened || cut <= done {
		return func() error { return nil }
	}
	o.spill.punched = cut
	return func() error {
		if err := f.Punch(cut); err != nil {
			return fmt.Errorf("engine: freeing %d bytes of the body file: %w", cut, err)
		}
		return nil
	}
}

// RetentionStats are what retention did.
type RetentionStats struct {
	Floor int   // release position below which bodies may be gone
	Gone  int   // bodies past retention
	Cut   int64 // body file bytes no longer needed
}

// Retention returns what retention did so far.
func (o *Online) RetentionStats() RetentionStats {
	return RetentionStats{Floor: o.floor, Gone: o.goneCount, Cut: o.spill.cut}
}

// PastRetentionType is the type of an alert whose transactions were set
// aside because the bodies kept could not prove the anomaly the engine
// found among them (setAside).
const PastRetentionType = "past-retention"

// pastPoints is said of an alert whose core begins before every rewind
// point retention left.
const pastPoints = "the core begins before every rewind point retention kept: the instance was rebuilt from the oldest, and an anomaly through the core's older members may be missed from here on"

// unwrittenReads names the reads of core, in the confirming history h,
// whose value no body of h writes: with bodies past retention, such a
// value's writer may be one of them, and the core is then not the whole
// proof.
func (o *Online) unwrittenReads(h *history.History, core []string) string {
	written := map[string]bool{}
	for _, t := range h.Txns {
		for _, op := range t.Ops {
			if op.Kind == history.Write {
				written[taintKey(op.Key, op.Value)] = true
			}
		}
	}
	inCore := map[string]bool{}
	for _, id := range core {
		inCore[id] = true
	}
	var reads []string
	for _, t := range h.Txns {
		if !inCore[t.ID] {
			continue
		}
		for _, op := range t.Ops {
			if op.Kind == history.Read && !op.IsList && op.Value != history.Null && !written[taintKey(op.Key, op.Value)] {
				reads = append(reads, fmt.Sprintf("%s read %s=%s", t.ID, op.Key, op.Value))
			}
		}
	}
	if reads == nil {
		return ""
	}
	g := o.goneError(o.floor).(*BodyGoneError)
	return fmt.Sprintf("no body kept writes what %s: its writer may be past retention (bodies released before #%d, event time %d, are gone)", strings.Join(reads, ", "), g.Floor, g.Start)
}

// setAside handles a step whose reduced instance is unsatisfiable while
// the bodies kept prove nothing: the proof runs through bodies past
// retention. What made the step unsatisfiable is among the transactions
// released or time-closed since the last satisfiable step; they are
// quarantined like a core, which leaves a part of that satisfiable
// instance, and named in an alert of type PastRetentionType. Only if
// there are none is it a disagreement (a bug), healed by a rebuild.
func (o *Online) setAside(ctx context.Context) (*Alert, error) {
	var set []int
	seen := map[int]bool{}
	add := func(i int) {
		if !seen[i] && !o.quar.get(i) {
			seen[i] = true
			set = append(set, i)
		}
	}
	for i := o.since; i < o.log.len(); i++ {
		add(i)
	}
	for _, i := range o.closedSince {
		add(i)
	}
	o.since, o.closedSince = o.log.len(), o.closedSince[:0]
	if len(set) == 0 {
		o.ev.Disagreements++
		return nil, o.resetInstance()
	}
	slices.Sort(set)
	o.setAsideCount += len(set)
	a := &Alert{Level: o.opts.Level, Promised: o.promised, Skew: o.opts.Skew, Watermark: o.lastStart(), names: map[string]int{}}
	// The id is taken before the set is quarantined: like a core's, it
	// names the set by its members' bodies (alertid.go).
	id, err := o.alertID(PastRetentionType, set)
	if err != nil {
		return nil, err
	}
	for _, i := range set {
		id := o.log.at(i).ID
		for _, dup := a.names[id]; dup; _, dup = a.names[id] {
			id += "'"
		}
		a.names[id] = i
		a.Core = append(a.Core, id)
		if err := o.quarantine(i); err != nil {
			return nil, err
		}
	}
	a.Type, a.Class, a.ID = PastRetentionType, PastRetentionType, id
	g := o.goneError(o.floor).(*BodyGoneError)
	a.PastRetention = fmt.Sprintf("the engine found an anomaly among these %d transactions (released or time-closed at this step) that the bodies kept do not prove: its proof runs through bodies past retention (released before #%d, event time %d); they are set aside unchecked", len(set), g.Floor, g.Start)
	o.raise(a)
	return a, o.replay(ctx, set[0])
}

// SetRetention sets the retention bound of a restored engine (the bound
// is configuration, not state: a restart may change it). A smaller bound
// takes effect at the next step.
func (o *Online) SetRetention(r Retention) { o.retention = r }
