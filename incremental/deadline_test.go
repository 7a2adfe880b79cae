package incremental

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestCheckPastDeadlineSaysSo: a check whose deadline has passed reports
// that the budget ran out, whatever it still finds (issue 20, item 6:
// the core search and the explanation ran on past --timeout and reported
// a complete result, so the overshoot was invisible). Histories whose
// violation the solver proves at level 0 are the ones the old code
// checked in full past the deadline.
func TestCheckPastDeadlineSaysSo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, shape := range []string{"g-single", "garbage", "valid"} {
		h := gen.ListRead(1000, 1, shape)
		res, err := Check(ctx, h, history.DefaultOptions(), Config{MaxAnomalies: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Stats.TimedOutAny {
			t.Errorf("%s: verdict %s with %d anomalies past the deadline, and the result does not say the budget ran out", shape, res.Verdict, len(res.Anomalies))
		}
		if res.Verdict == Valid {
			t.Errorf("%s: valid past the deadline", shape)
		}
	}
}
