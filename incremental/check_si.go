package incremental

import (
	"context"
	"fmt"

	"github.com/streamcheck/streamcheck/history"
)

// SnapshotCounterpart returns the strongest checked level of the
// snapshot-isolation family that lv implies (serializable: snapshot
// isolation; strict serializable: strong snapshot isolation), and false
// when lv is itself of the family or implies none.
func SnapshotCounterpart(lv history.Level) (history.Level, bool) {
	if lv.BeginCommit() {
		return 0, false
	}
	var best history.Level
	found := false
	for _, d := range history.Levels() {
		if d.Level.BeginCommit() && lv.Implies(d.Level) && (!found || d.Level.Implies(best)) {
			best, found = d.Level, true
		}
	}
	return best, found
}

// NoteAllowedUnderSnapshot tells a serializable verdict's reader which of
// its anomalies snapshot isolation allows: for each anomaly of res (an
// invalid result at a level outside the family) whose core, projected
// (docs/SEMANTICS.md §3), is valid at the level's snapshot counterpart, it
// puts first in the explanation "<type>: allowed under snapshot isolation"
// (a write skew: "write skew: allowed under snapshot isolation"). It
// returns the counterpart and whether the whole history is valid there,
// so that the report can say the history is SI but not serializable. A
// check cut short by ctx notes nothing and reports false.
func NoteAllowedUnderSnapshot(ctx context.Context, h *history.History, res *Result) (history.Level, bool) {
	si, ok := SnapshotCounterpart(res.Options.Level)
	if !ok || res.Verdict != Invalid {
		return si, false
	}
	opts := res.Options
	opts.Level = si
	if si.RealTime() {
		for i := range h.Txns {
			if !h.Txns[i].HasTime {
				return si, false
			}
		}
	}
	for i := range res.Anomalies {
		a := &res.Anomalies[i]
		if len(a.Core) == 0 || ctx.Err() != nil {
			continue
		}
		hc := Project(h, opts, a.Core)
		r, err := Check(ctx, hc, opts, Config{})
		if err != nil || r.Verdict != Valid {
			continue
		}
		name := a.Type
		if name == history.WriteSkew {
			name = "write skew" // as the issue and people say it
		}
		a.Text = append([]string{fmt.Sprintf("%s: allowed under snapshot isolation (these transactions are valid at %s)", name, si)}, a.Text...)
	}
	r, err := Check(ctx, h, opts, Config{})
	return si, err == nil && r.Verdict == Valid
}
