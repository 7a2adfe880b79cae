package incremental

import (
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
	compared, anomalies, checksSaved := 0, 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		g := gen.Config{Txns: 120 + 40*int(seed%3), Keys: 6 + int(seed%3)*6, Seed: seed, Sessions: 5, OpsPerTxn: 2 + int(seed%2),
			AbortRatio: 0.03, DupValueRatio: 0.1 * float64(seed%2), Concurrency: 4, InjectRate: 0.02 + 0.01*float64(seed%3)}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		n, saved := reportsAsBefore(t, seed, []reportCase{{h, history.PL2Plus}, {withoutTime(h), history.PL2Plus}},
			func(old bool) { closedLoop = old })
		compared += 2
		anomalies += n
		checksSaved += saved
	}
	t.Logf("%d checks compared, %d anomalies, %d core checks fewer (negative: more, where the rest ends valid and every window is asked first)", compared, anomalies, checksSaved)
	if anomalies < 2*compared {
		t.Fatalf("%d anomalies in %d checks: too few for the next-core search to matter", anomalies, compared)
	}
}
