package incremental

import (
	"testing"

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
	compared, anomalies := 0, 0
	for seed := uint64(1); seed <= 8; seed++ {
		g := gen.Config{Txns: 150 + 50*int(seed%4), Keys: 8 + int(seed%3)*8, Seed: seed, Sessions: 6, OpsPerTxn: 2 + int(seed%3),
			AbortRatio: 0.03, DupValueRatio: 0.1 * float64(seed%2), Concurrency: 4, InjectRate: 0.01 + 0.01*float64(seed%3)}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := reportsAsBefore(t, seed, timedAndUntimed(h), func(old bool) { closedLoop, shrinkAskAll = old, old })
		compared += 4
		anomalies += n
	}
	t.Logf("%d checks compared, %d anomalies", compared, anomalies)
	if anomalies == 0 {
		t.Fatal("no anomaly: the test compares nothing")
	}
}
