package checkcmd

import (
	"context"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// factsCheck is check's path for a history that carries the database's
// own facts (docs/SEMANTICS.md §10): stampcheck tries the facts' witness
// and falls back to the black-box checker (r.checkFn), so that the
// verdict is the black-box one and "stamps inconsistent with reads" is
// reported in its own class.
type factsCheck struct {
	rep *stampcheck.Report
}

// useFacts swaps r.checkFn for the facts' path when h has facts and
// returns the holder of its report (nil otherwise): stampcheck.CheckWith
// at the serializable levels, stampcheck.CheckSnapshotLevel with the
// level's rules (stampcheck.RulesFor: strong session SI's session order,
// strong SI's C_i before B_j, GSI's C_i before C_j) at the snapshot
// levels. The level's own checker stays the black box in both.
func (r *runner) useFacts(h *history.History) *factsCheck {
	lv := r.c.opts.Level
	if !h.HasFacts() || !serialFamily(lv) && !lv.BeginCommit() {
		return nil
	}
	fc := &factsCheck{}
	black := r.checkFn
	r.checkFn = func(ctx context.Context, h *history.History, opts history.Options, cfg incremental.Config) (*incremental.Result, error) {
		bb := stampcheck.BlackBox(func(ctx context.Context, h *history.History, opts history.Options) (*incremental.Result, error) {
			return black(ctx, h, opts, cfg)
		})
		var rep *stampcheck.Report
		var err error
		if opts.Level.BeginCommit() {
			rep, err = stampcheck.CheckSnapshotLevel(ctx, h, opts, stampcheck.RulesFor(opts.Level), bb)
		} else {
			rep, err = stampcheck.CheckWith(ctx, h, opts, cfg, bb)
		}
		if err != nil {
			return nil, err
		}
		fc.rep = rep
		return rep.Result, nil
	}
	return fc
}

// apply adds the facts' section to the report and makes an inconsistency
// exit 1: the level holds, but the database's own claims are proven
// false, which a pipeline that asked for them must not read as success
// (docs/SEMANTICS.md §7, §10).
func (fc *factsCheck) apply(rep *report.Report, h *history.History, o cliutil.Outcome) cliutil.Outcome {
	if fc == nil || fc.rep == nil {
		return o
	}
	rep.Facts = &report.Facts{ByFacts: fc.rep.ByFacts, Unused: fc.rep.Unused}
	if fc.rep.Inconsistent != nil {
		rep.Facts.Inconsistent = report.NewInconsistency(fc.rep.Inconsistent, fc.rep.Why, h)
		o.Anomalies = max(o.Anomalies, 1)
	}
	return o
}

// serialFamily reports whether the facts' serial witness applies to lv:
// the serializable levels (docs/SEMANTICS.md §10). The snapshot family
// (history.Level.BeginCommit) has its own path; the weak levels are
// checked black-box, their facts unused, until their own facts rules are
// written.
func serialFamily(lv history.Level) bool {
	switch lv {
	case history.Serializable, history.StrongSessionSerializable, history.StrictSerializable:
		return true
	}
	return false
}
