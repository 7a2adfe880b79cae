package incremental

import (
	"context"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestCoresAsBefore holds C1 and C2 (docs/SEMANTICS.md §3) to the loops
// they replace: on generated histories with injected anomalies, without
// timestamps (so that windows and shrinks do the work) and with them, at
// the serializable and snapshot levels, Check with up to 10 anomalies
// gives the same verdict, the same anomalies in the same order (cores,
// classes, explanations) and the same deadline flag whether collectCores
// checks the whole rest after every core and the shrink asks every check
// (closedLoop, shrinkAskAll) or not.
func TestCoresAsBefore(t *testing.T) {
	defer func(w int) { firstWindow = w }(firstWindow)
	firstWindow = 64 // windows on histories of a few hundred
	ctx := context.Background()
	compared, anomalies := 0, 0
	for seed := uint64(1); seed <= 8; seed++ {
		g := gen.Config{Txns: 150 + 50*int(seed%4), Keys: 8 + int(seed%3)*8, Seed: seed, Sessions: 6, OpsPerTxn: 2 + int(seed%3),
			AbortRatio: 0.03, DupValueRatio: 0.1 * float64(seed%2), Concurrency: 4, InjectRate: 0.01 + 0.01*float64(seed%3)}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		noTime := &history.History{Txns: make([]history.Txn, len(h.Txns))}
		for i, x := range h.Txns {
			x.HasTime, x.Start, x.End = false, 0, 0
			noTime.Txns[i] = x
		}
		for _, c := range []struct {
			h  *history.History
			lv history.Level
		}{
			{noTime, history.Serializable}, {noTime, history.StrongSessionSerializable},
			{noTime, history.StrongSessionSnapshotIsolation}, {h, history.StrictSerializable},
		} {
			opts := history.DefaultOptions()
			opts.Level = c.lv
			cfg := Config{MaxAnomalies: 10}
			closedLoop, shrinkAskAll = true, true
			want, err1 := Check(ctx, c.h, opts, cfg)
			closedLoop, shrinkAskAll = false, false
			got, err2 := Check(ctx, c.h, opts, cfg)
			if err1 != nil || err2 != nil {
				t.Fatalf("seed %d %s: %v / %v", seed, c.lv, err1, err2)
			}
			if got.Verdict != want.Verdict || !reflect.DeepEqual(got.Anomalies, want.Anomalies) || got.Stats.TimedOutAny != want.Stats.TimedOutAny {
				t.Fatalf("seed %d %s: before %v %d anomalies (timed out %v), now %v %d (timed out %v)\nbefore %+v\nnow %+v", seed, c.lv,
					want.Verdict, len(want.Anomalies), want.Stats.TimedOutAny, got.Verdict, len(got.Anomalies), got.Stats.TimedOutAny, want.Anomalies, got.Anomalies)
			}
			compared++
			anomalies += len(got.Anomalies)
		}
	}
	t.Logf("%d checks compared, %d anomalies", compared, anomalies)
	if anomalies == 0 {
		t.Fatal("no anomaly: the test compares nothing")
	}
}
