package online

import "github.com/streamcheck/streamcheck/history"

// A session tie keeps its order (docs/SEMANTICS.md §5 "An unknown
// decided committed ends at its anchor's end", "A session tie
// (lead34)").
//
// Session order ranks a session's transactions by start, a tie by end
// (docs/SEMANTICS.md §1 "Session order"). sessEnded gives an unknown U
// decided committed the end of K, a later member of its session; when
// another member M of U's session starts at U's start and ranks after
// U, that moves U after M whenever end(K) passes M's end, and the
// instance's session edge between them turns round: the schedule hunt
// (seed 111, history 18,572) had M read U's write, a garbage read in the
// instance that the bodies do not show (a disagreement). Such a U keeps
// its own end while M is a member: the rule is off for it, and
// markInDoubt anchors it as before the rule.

// sessTieOff switches the check off (mutation checks, by hand).
var sessTieOff = false

// sessTieKey is a session and a start.
type sessTieKey struct {
	session string
	start   int64
}

// tiedNow reports whether unknown member i shares its session and start
// with a member ranked after it (released later: releases are in start,
// end, id order, which is the session's rank of a tie). The set is made
// on the first question after markInDoubt (once per build, and only on
// a step that has an unknown decided committed to ask about: a stream
// without unknowns never lists its members for it), and holds for the
// rest of the step. Members' bodies are in memory; ghosts count, since
// the instance may hold them. A transaction that is no member is in no
// instance, so no session edge of the instance joins it to U, and the
// orders kept for it when it left are facts of the bodies.
func (o *Online) tiedNow(i int) bool {
	d := &o.doubt
	if sessTieOff {
		return false
	}
	if !d.tiesBuilt {
		d.tiesBuilt = true
		clear(d.tied)
		o.markTies()
	}
	return d.tied[i]
}

// markTies fills doubt.tied (tiedNow).
func (o *Online) markTies() {
	d := &o.doubt
	ms := o.ev.memberList()
	var unknowns map[sessTieKey][]int
	for _, i := range ms {
		t := o.log.at(i)
		if t.Status != history.Unknown || !t.HasSession || !t.HasTime {
			continue
		}
		if unknowns == nil {
			unknowns = map[sessTieKey][]int{}
		}
		k := sessTieKey{t.Session, t.Start}
		unknowns[k] = append(unknowns[k], i)
	}
	if unknowns == nil {
		return
	}
	for _, j := range ms {
		t := o.log.at(j)
		if !t.HasSession || !t.HasTime {
			continue
		}
		for _, i := range unknowns[sessTieKey{t.Session, t.Start}] {
			if i < j {
				if d.tied == nil {
					d.tied = map[int]bool{}
				}
				d.tied[i] = true
			}
		}
	}
}
