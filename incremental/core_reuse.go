package incremental

import "context"

// reuseGuarded makes the localizer find every core on one guarded
// instance of the whole history it checks, built at the first core and
// kept (selectors as assumptions, learnt clauses kept), instead of a
// fresh instance of each violating window's projection. Off: the cores
// it finds are subset-minimal and disjoint, but they need not be the
// ones the fresh instances find (docs/SEMANTICS.md §3 "C4"), and the
// cores of a history must stay what they were until the lead decides
// otherwise. A variable so that tests and measurements can turn it on.
var reuseGuarded = false

// guardedReused is localizer.guarded on the kept instance l.whole: the
// members (a window, or all that is left) are selected by assumptions,
// everything else assumed out, so the check asks about H|members (the
// guarded encoding mirrors the projection, I2); find's failed set is a
// violating subset of the members and is shrunk on its own instance
// (C3).
func (l *localizer) guardedReused(ctx context.Context, members []bool) ([]int32, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if l.whole == nil {
		l.whole = newCoreFinderWith(l.p, l.cfg.NoPrune)
	}
	before := l.whole.checks
	core, err := l.whole.find(ctx, members)
	l.checks += l.whole.checks - before
	return core, err
}
