package incremental

import (
	"context"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestSessionTieByEnd (docs/SEMANTICS.md §1 "Session order"): T3 and T4
// of one session start at the same instant; T4 ends then, so it ran
// first and R's read of T3's x1 is the last write. Valid at every level
// with session order, in either order of lines, for check and for the
// oracle alike; ranked by input order it was invalid in one order and
// valid in the other, and the online window (which releases by start,
// end, id) never alerted.
func TestSessionTieByEnd(t *testing.T) {
	h, err := history.ParseCompact("T3[62,79] w x1 (session s) · T4[62,62] w x2 (session s) · R[100,110] r x1")
	if err != nil {
		t.Fatal(err)
	}
	rev := &history.History{Txns: slices.Clone(h.Txns)}
	slices.Reverse(rev.Txns)
	for _, lv := range []history.Level{history.StrictSerializable, history.StrongSessionSerializable} {
		for name, hh := range map[string]*history.History{"lines in order": h, "lines reversed": rev} {
			opts := history.DefaultOptions()
			opts.Level = lv
			opts.InitialState = history.InitialEmpty
			res, err := Check(context.Background(), hh, opts, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != Valid {
				t.Errorf("%s, %s: check says %s, want valid (T4 ends when T3 starts: it ran first)", lv, name, res.Verdict)
			}
			ok, _, err := oracle.Check(hh, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Errorf("%s, %s: the oracle says invalid, want valid", lv, name)
			}
		}
	}
}
