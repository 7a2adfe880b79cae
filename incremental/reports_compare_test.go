package incremental

import (
	"context"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// withoutTime is h with every transaction's client time removed, so
// that windows and shrinks, not time, do the work of the core search.
func withoutTime(h *history.History) *history.History {
	out := &history.History{Txns: make([]history.Txn, len(h.Txns))}
	for i, x := range h.Txns {
		x.HasTime, x.Start, x.End = false, 0, 0
		out.Txns[i] = x
	}
	return out
}

// coreSeeds is the number of generated histories the core-search
// comparisons run on: 12, 4 under -short.
func coreSeeds() uint64 {
	if testing.Short() {
		return 4
	}
	return 12
}

// coreHistory is the generated history of seed for the core-search
// comparisons (a few hundred transactions, injected anomalies, aborted
// and unknown outcomes, lists and repeated values on some seeds), and
// sets firstWindow so that some seeds search window by window.
func coreHistory(t *testing.T, seed uint64) *history.History {
	t.Helper()
	firstWindow = []int{32, 64, 1 << 20}[seed%3]
	g := gen.Config{Txns: 120 + 40*int(seed%4), Keys: 6 + int(seed%3)*6, Seed: seed, Sessions: 5 + int(seed%3),
		OpsPerTxn: 2 + int(seed%3), AbortRatio: 0.03, UnknownRatio: 0.02 * float64(seed%2),
		ListRatio: 0.2 * float64(seed%3/2), DupValueRatio: 0.15 * float64(seed%2),
		Concurrency: 3, InjectRate: 0.03 + 0.01*float64(seed%3)}
	h, _, err := gen.Generate(g)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// reportCase is one history checked at one level.
type reportCase struct {
	h  *history.History
	lv history.Level
}

// timedAndUntimed are the cases the core-search comparisons run on: h
// without time at the serializable, strong session serializable and
// strong session SI levels, and h with its time at strict-serializable.
func timedAndUntimed(h *history.History) []reportCase {
	noTime := withoutTime(h)
	return []reportCase{
		{noTime, history.Serializable}, {noTime, history.StrongSessionSerializable},
		{noTime, history.StrongSessionSnapshotIsolation}, {h, history.StrictSerializable},
	}
}

// reportsAsBefore checks each case with up to ten anomalies twice, with
// before(true) (the code kept as the naive model) and before(false), and
// fails unless the verdicts, the anomalies (cores, order, classes,
// explanations) and the deadline flag agree. It returns the number of
// anomalies compared and the core checks the new code saved (negative:
// more).
func reportsAsBefore(t *testing.T, seed uint64, cases []reportCase, before func(bool)) (anomalies, saved int) {
	t.Helper()
	ctx := context.Background()
	defer before(false)
	for _, c := range cases {
		opts := history.DefaultOptions()
		opts.Level = c.lv
		cfg := Config{MaxAnomalies: 10}
		before(true)
		want, err1 := Check(ctx, c.h, opts, cfg)
		before(false)
		got, err2 := Check(ctx, c.h, opts, cfg)
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d %s: %v / %v", seed, c.lv, err1, err2)
		}
		if got.Verdict != want.Verdict || !reflect.DeepEqual(got.Anomalies, want.Anomalies) || got.Stats.TimedOutAny != want.Stats.TimedOutAny {
			t.Fatalf("seed %d %s: before %v %d anomalies (timed out %v), now %v %d (timed out %v)\nbefore %+v\nnow %+v", seed, c.lv,
				want.Verdict, len(want.Anomalies), want.Stats.TimedOutAny, got.Verdict, len(got.Anomalies), got.Stats.TimedOutAny, want.Anomalies, got.Anomalies)
		}
		anomalies += len(got.Anomalies)
		saved += want.Stats.CoreChecks - got.Stats.CoreChecks
	}
	return anomalies, saved
}
