package online

import (
	"context"
	"slices"
)

// Quarantine in place (docs/SEMANTICS.md §5 "Quarantine in place").
//
// After an alert the reduced instance must not hold the core. Replaying
// from a rewind point (replay, rewind.go) rebuilds exactly the instance
// the stream minus the larger quarantine would have built, but it costs
// up to rewindEvery released transactions of steps per alert batch, so
// in a storm every step paid for the stream behind it. When every member
// of the batch's cores is still a window member (not evicted, not a
// ghost), the engine instead takes them out of the instance where it
// stands: quarantine already clears their membership and taints their
// writes; their commit decisions and replaced reads go with them.
//
// A member that is a ghost (an evicted writer holding a key's live
// version) cannot leave so: the replay would make the version before it
// live, and that writer is gone from the instance. It stays the live
// version of its keys, quarantined (reads of its writes are tainted, as
// for every quarantined writer; a ghost has no reads), which only adds
// constraints (its place before every later writer, its times and
// session); a later read of the version before it finds no writer in the
// instance and heals.
//
// Why that is safe. The instance left (R') differs from the replayed one
// (R*) only by what the steps since the first member's release decided
// while the members were in it: kept orders and commit decisions
// proven in all completions of an instance that also held the members,
// and evictions those facts allowed. Each such fact holds in every
// completion of that larger instance; the members only add constraints,
// so R' is R* with more constraints, never fewer: whatever R* finds
// unsatisfiable, R' does, and no anomaly is missed. R' may be
// unsatisfiable where R* is not; a violation of R' is a trigger that is
// confirmed on bodies as always (no false alarm), and when the bodies of
// the window do not confirm it while a quarantine in place is pending,
// heal replays from the first member quarantined in place, which is the
// replay today's engine would have run, and the step judges that
// instance (online.go Step). inPlace is in the snapshot, so a restored
// engine heals the same way (deterministic replay).
//
// A heal must start from a rewind point at or before the first member
// quarantined in place, as the replay it stands for would have: a batch
// is quarantined in place only while nothing is past retention (so such a
// point exists, or the replay starts from the first transaction), and
// takeRewind keeps it besides the newest maxRewinds. Retention's floor
// may still pass it (holding the floor back held every body back, and a
// run's default bound is a day of event time): a heal then starts from
// the oldest point kept and counts as an inexact rewind (retain.go), the
// same as an alert's replay past retention. It replays the stream since
// that point: the cost of a quarantine in place is deferred to the first
// window violation the bodies do not confirm, which may never come (none
// in the 55.7K and 223K storms of BENCHMARKS.md), and is then the stream
// since the first pending member. Healing at every rewind point instead
// bounded that, at the price of a replay of up to four points' worth of
// the stream every four points, whether or not anything disagreed.

// quarantineInPlace finishes a batch's quarantine where the instance
// stands when every member at was in the instance (wasMember), and says
// whether it did; otherwise the caller replays.
func (o *Online) quarantineInPlace(at []int, wasMember map[int]bool) bool {
	if !inPlaceEnabled {
		return false
	}
	first := o.log.len()
	for _, i := range at {
		if !wasMember[i] {
			return false
		}
		first = min(first, i)
	}
	from := first
	if o.inPlace > 0 {
		from = min(from, o.inPlace-1)
	}
	if o.floor > 0 {
		// Past retention a heal could need a point retention dropped;
		// replays handle that case (retain.go) and say so.
		return false
	}
	for _, i := range at {
		delete(o.ev.Replaced, i)
		delete(o.ev.Decided, i)
		if o.ev.GhostKeys[i] != nil {
			// A quarantined ghost stays the live version of its keys
			// (reads of its writes are tainted): see above.
			o.ev.Member.set(i, true)
			if k, found := slices.BinarySearch(o.ev.members, i); !found && o.ev.listed {
				o.ev.members = slices.Insert(o.ev.members, k, i)
			}
		}
	}
	if o.inPlace == 0 || first+1 < o.inPlace {
		o.inPlace = first + 1
	}
	o.inPlaceCount++
	return true
}

// inPlaceEnabled switches quarantine in place (a variable for the tests
// that exercise rewind points).
var inPlaceEnabled = true

// replayFrom is where a replay after quarantining from first starts: no
// later than the first member quarantined in place, whose facts it then
// rebuilds too.
func (o *Online) replayFrom(first int) int {
	if o.inPlace > 0 && (o.floor == 0 || o.healPoint(o.inPlace-1) >= 0) {
		first = min(first, o.inPlace-1)
		o.inPlace = 0
	}
	// Else retention dropped the point a heal would start from: the
	// batch replays from its own first member, exactly for itself, and
	// the quarantine in place stays pending (its facts only add
	// constraints).
	return first
}

// heal rebuilds the instance by the replay a quarantine in place saved:
// from the first member quarantined so.
func (o *Online) heal(ctx context.Context) error {
	from := o.inPlace - 1
	o.inPlace = 0
	o.healed++
	return o.replay(ctx, from)
}

// healPoint is the index in rewinds of the newest point at or before
// pos, the one a replay from pos starts at (rewindTo), or -1.
func (o *Online) healPoint(pos int) int {
	k := len(o.rewinds) - 1
	for k >= 0 && o.rewinds[k].Pos > pos {
		k--
	}
	return k
}
