package incremental

import (
	"context"
	"slices"
)

// freshShrink makes coreFinder.find shrink on its own guarded instance,
// the whole projection it was built on (the search before C3): a
// variable so that tests can hold C3 to it as the naive model.
var freshShrink = false

// shrinkSmall is the deletion of coreFinder.shrink run on a guarded
// instance of the violating set's own projection instead of the
// finder's (docs/SEMANTICS.md §3 "C3: the shrink on the violating set's
// own projection"). core is the failed set of find's first check, a set
// of cf.p's transactions whose projection violates the level; every
// check of the shrink asks about a subset S of it, and for S ⊆ core ⊆
// the finder's history, (H|core)|S is H|S: the answers are the ones
// cf.g gives, on an instance of a few transactions rather than one
// selector per transaction of a window of a thousand or more, where the
// solver assigned every deselected transaction's order variables on each
// satisfiable check (65% of the CPU of ten anomalies on the PostgreSQL
// REPEATABLE READ write-skew recording, session 19).
func (cf *coreFinder) shrinkSmall(ctx context.Context, core []int32) ([]int32, error) {
	core = slices.Clone(core)
	slices.Sort(core)
	in := make([]bool, len(cf.p.h.Txns))
	for _, t := range core {
		in[t] = true
	}
	// project keeps the members in their order in cf.p.h, so the
	// sub-history's position i is core[i] (core is sorted): the shrink's
	// tie-break on position (after content) orders the members as it did.
	sub := newCoreFinderWith(prepare(cf.p.project(in), cf.p.opts), cf.noPrune)
	if sub.g.unsat {
		// Unsatisfiable with nothing selected: the projection to no
		// transaction is the empty history, which satisfies every level,
		// so this is an encoder fault; the finder's own instance decides.
		return cf.shrink(ctx, core)
	}
	all := make([]int32, len(core))
	for i := range all {
		all[i] = int32(i)
	}
	small, err := sub.shrink(ctx, all)
	cf.checks += sub.checks
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(small))
	for i, t := range small {
		out[i] = core[t]
	}
	return out, nil
}
