package solver

import (
	"slices"
	"sync/atomic"
)

// Lazy units (issue 20, item 7; docs/SEMANTICS.md §5, "A learnt unit
// undoes one level, not the whole trail (burst34)").
//
// On a burst of 100K transactions in one tick the step's first solve met
// 63 conflicts, and every one learnt a unit: the decision closed a cycle
// with level-0 edges alone (an edge that pruning, T5, did not reach
// because the path back was completed by edges added later). A learnt
// unit backjumps to level 0, and the search then re-decides every level
// it undid: 21K decisions a conflict on average, 1.37M for the solve,
// where the 30K burst made 45K. The cost of a solve so grew as conflicts
// times the window: conflicts grow with the window, and so does each
// re-descent.
//
// A lazy unit undoes the conflict's level only. The learnt literal u is
// implied by the clauses and the theory alone (a unit clause of the
// 1-UIP analysis has no other literal, assumptions included), so making
// it true is never a loss of models. It is pushed as a decision at the
// undone level's place (level dl, over levels 1..dl-1 kept as they
// were) and remembered in lazy; the next time the search stands at
// level 0 (a restart while lazy units wait goes there, and the end of
// every Solve does), each lazy unit becomes a level-0 fact as the
// backjump would have made it at once.
//
// What this keeps:
//   - Models: a model is a total assignment that satisfies every clause
//     and leaves the present edges acyclic, checked as before; the lazy
//     decision is one more decision.
//   - Unsatisfiability: learnt clauses are derived by resolution over
//     reasons; a lazy unit, having no reason, stays in any clause a later
//     conflict derives through it (as a decision does), which keeps that
//     clause implied. Level-0 conflicts are found only at level 0, where
//     every lazy unit has been made a fact first, as before.
//   - Assumptions: a lazy level is opened only above every assumption
//     level (dl-1 >= len(assumptions)), so the search's rule "level k <
//     len(assumptions) holds assumption k" and analyzeFinal (which reads
//     every reason-less literal below the assumptions as an assumption)
//     see what they saw.
//   - Termination: between two visits of level 0 the search is CDCL with
//     more decisions; a lazy unit is learnt at most once while it is on
//     the trail (its literal true blocks its conflict), and the restart
//     that follows Luby's next interval goes to level 0 when lazy units
//     wait, so each becomes a fact within one interval.

// lazyMinLevels is the least conflict level at which a learnt unit is
// lazy: below it the backjump undoes little. A variable, so that tests
// can make every unit above the assumptions lazy.
var lazyMinLevels = 32

// noLazyUnits (tests, measurements) backjumps to level 0 on every unit,
// as before; lazyPushed counts the lazy units of every solver (tests).
var (
	noLazyUnits bool
	lazyPushed  atomic.Int64
)

// lazyUnit pushes the learnt unit u as the decision of a new level in
// place of the conflict level dl, if the rule applies; it reports
// whether it did.
func (s *Solver) lazyUnit(u Lit, dl int) bool {
	if noLazyUnits || dl-1 < len(s.assumptions) || dl < lazyMinLevels {
		return false
	}
	if slices.Contains(s.lazy, s.trail[s.trailLim[dl-1]]) {
		// The conflict level's decision is a lazy unit: the two units
		// refute each other under level 0 (or under the assumptions),
		// and only level 0, where both are facts, can tell. Without
		// this the search alternated between them for ever (a probe of
		// the 100K burst), never reaching a restart.
		return false
	}
	s.cancelUntil(dl - 1)
	s.lazy = append(s.lazy, u)
	s.newDecisionLevel()
	s.enqueue(u, crefUndef)
	s.stats.LazyUnits++
	lazyPushed.Add(1)
	return true
}

// flushLazy makes every waiting lazy unit a level-0 fact; the caller
// stands at level 0 and propagates next. False: a lazy unit is false at
// level 0, so the instance is unsatisfiable.
func (s *Solver) flushLazy() bool {
	if s.decisionLevel() != 0 {
		panic("solver: lazy units flushed above level 0")
	}
	ok := true
	for _, u := range s.lazy {
		switch {
		case s.val[u] > 0:
		case s.val[u] < 0:
			ok = false
		default:
			s.enqueue(u, crefUndef)
		}
	}
	s.lazy = s.lazy[:0]
	return ok
}

// settleLazy ends a Solve: back to level 0 and the lazy units made facts
// and propagated there, so that Fixed and the next call see them as the
// backjump to level 0 would have left them. A conflict there is the
// instance's unsatisfiability at level 0.
func (s *Solver) settleLazy() {
	if len(s.lazy) == 0 {
		return
	}
	s.cancelUntil(0)
	if !s.ok {
		s.lazy = s.lazy[:0]
		return
	}
	if !s.flushLazy() || s.propagate() != nil {
		s.ok = false
	}
}
