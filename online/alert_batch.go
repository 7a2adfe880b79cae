package online

import (
	"context"
	"errors"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// batchCores finds the cores of a local alert history h (H|S, see
// localAlertHistory) on one guarded encoding: the check of H|S, each
// core, its shrink and the check of what is left after it are solves of
// the same incremental instance under selector assumptions, where
// incremental.Check with MaxAnomalies re-projected, re-prepared and
// re-encoded all of H|S twice per core (a storm step holds dozens).
//
// The cores are those check --max-anomalies names: the guarded instance
// under "these members selected, the rest not" is the projection to the
// members (incremental I-guards, docs/SEMANTICS.md §3), so the k-th core
// is a subset-minimal core of H|S minus the cores before it, and, lying
// in S, of the whole history ((H|S)|C = H|C). The first is the one
// incremental.Check finds when S has at most its first localizer window
// (it then runs the same guarded search on all of S); see §5 "Alert
// batches" for what differs past it.
//
// It returns the anomalies (nil: H|S is consistent) with the checks,
// conflicts and constraints it spent, for the engine's counters.
//
// By default the cores are found region by region (stormCores,
// storm_regions.go, §5 "Alert batches by region"): under an unknown
// initial state each guarded solve of a storm's H|S cost seconds. The
// search on the one guarded encoding below stays as the model the tests
// hold the regions to (stormRegions off).
func (o *Online) batchCores(ctx context.Context, h *history.History) ([]incremental.Anomaly, error) {
	if stormRegions {
		return o.stormCores(ctx, h) // storm_regions.go
	}
	ph := incremental.Prepare(h, o.opts)
	cf := incremental.NewCoreFinder(ph)
	g := cf.G()
	o.constraints += int64(len(g.Reads()) + len(g.PairsL()))
	o.pruned += int64(g.Pruned())
	defer func() { o.conflicts += g.Solver().Stats().Conflicts }()
	remaining := make([]bool, len(h.Txns))
	for i := range remaining {
		remaining[i] = true
	}
	var out []incremental.Anomaly
	for len(out) < batchAnomalies {
		o.checks++
		switch cf.Check(ctx, remaining) {
		case solver.Sat:
			return out, nil
		case solver.Unknown:
			if err := ctx.Err(); err != nil {
				return out, err
			}
			return out, errors.New("engine: alert check gave up")
		}
		core, err := o.shrinkFailed(ctx, ph, g)
		if err != nil {
			return out, err
		}
		an := incremental.Describe(context.WithoutCancel(ctx), ph, core) // an alert is always explained
		an.Core = sortedIDs(h, core)
		out = append(out, an)
		for _, t := range core {
			remaining[t] = false
		}
	}
	return out, nil
}

// shrinkFailed shrinks the transactions whose selectors the last,
// unsatisfiable solve of g failed on (the violating set F the core
// finder starts from) to a subset-minimal core, on H|F: a fresh guarded
// encoding of F alone. Every set the shrink tests lies in F, and
// (H|F)|X = H|X, so each test decides what it decides on the whole
// instance, in the same order (content order, tied by position, which
// the projection keeps): the same core as shrinking on g, whose every
// test solved all of H|S and assigned all of it.
func (o *Online) shrinkFailed(ctx context.Context, ph *incremental.Prepared, g *incremental.Encoder) ([]int32, error) {
	sel := g.Sel()
	at := make(map[solver.Lit]int32, len(sel))
	for i, s := range sel {
		if s != incremental.LitFalse && s != incremental.LitTrue {
			at[solver.Lit(s)] = int32(i)
		}
	}
	in := make([]bool, len(sel))
	var failed []int32
	for _, a := range g.Solver().FailedAssumptions() {
		if t, ok := at[a]; ok && !in[t] {
			in[t] = true
			failed = append(failed, t)
		}
	}
	if len(failed) == 0 {
		return nil, errors.New("engine: alert instance unsatisfiable with no transaction selected")
	}
	slices.Sort(failed) // the projection keeps h's order: failed[k] is hf's k-th
	hf := ph.Project(in)
	cf := incremental.NewCoreFinder(incremental.Prepare(hf, o.opts))
	local := make([]int32, len(failed))
	for k := range local {
		local[k] = int32(k)
	}
	shrunk, err := cf.Shrink(ctx, local)
	o.checks += len(failed)
	o.conflicts += cf.G().Solver().Stats().Conflicts
	if err != nil {
		return nil, err
	}
	out := make([]int32, len(shrunk))
	for k, t := range shrunk {
		out[k] = failed[t]
	}
	return out, nil
}
