package incremental

import (
	"context"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestPLCoresAsBefore holds pl-2+'s next-core search (C1: findOpen) to
// the loop it replaces, a check of the whole rest after every core: the
// same verdict, cores, order and explanations on generated histories with
// several injected anomalies, with and without client time.
func TestPLCoresAsBefore(t *testing.T) {
	defer func(w int) { firstWindow = w }(firstWindow)
	firstWindow = 32 // several windows on histories of a few hundred
	ctx := context.Background()
	compared, anomalies, checksSaved := 0, 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		g := gen.Config{Txns: 120 + 40*int(seed%3), Keys: 6 + int(seed%3)*6, Seed: seed, Sessions: 5, OpsPerTxn: 2 + int(seed%2),
			AbortRatio: 0.03, DupValueRatio: 0.1 * float64(seed%2), Concurrency: 4, InjectRate: 0.02 + 0.01*float64(seed%3)}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		noTime := &history.History{Txns: make([]history.Txn, len(h.Txns))}
		for i, x := range h.Txns {
			x.HasTime, x.Start, x.End = false, 0, 0
			noTime.Txns[i] = x
		}
		for _, hh := range []*history.History{h, noTime} {
			opts := history.DefaultOptions()
			opts.Level = history.PL2Plus
			cfg := Config{MaxAnomalies: 10}
			closedLoop = true
			want, err1 := Check(ctx, hh, opts, cfg)
			closedLoop = false
			got, err2 := Check(ctx, hh, opts, cfg)
			if err1 != nil || err2 != nil {
				t.Fatalf("seed %d: %v / %v", seed, err1, err2)
			}
			if got.Verdict != want.Verdict || !reflect.DeepEqual(got.Anomalies, want.Anomalies) || got.Stats.TimedOutAny != want.Stats.TimedOutAny {
				t.Fatalf("seed %d: before %v %d anomalies, now %v %d\nbefore %+v\nnow %+v", seed,
					want.Verdict, len(want.Anomalies), got.Verdict, len(got.Anomalies), want.Anomalies, got.Anomalies)
			}
			compared++
			anomalies += len(got.Anomalies)
			checksSaved += want.Stats.CoreChecks - got.Stats.CoreChecks
		}
	}
	t.Logf("%d checks compared, %d anomalies, %d core checks fewer (negative: more, where the rest ends valid and every window is asked first)", compared, anomalies, checksSaved)
	if anomalies < 2*compared {
		t.Fatalf("%d anomalies in %d checks: too few for the next-core search to matter", anomalies, compared)
	}
}
