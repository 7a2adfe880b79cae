package online

import (
	"testing"
)

// TestIrrelevanceGraphSplit: the irrelevance rule's H, read once per
// call and filtered per round (build22_hgraph.go), has at every round
// the components of a fresh read (the self-check compares them and
// panics on a difference), on generated streams with second rounds; and
// every first verdict and alert is check's (sweepGenerated). A split
// that files an edge on a chosen variable as constant, or filters a
// round with the first round's chosen, gives a different partition at
// a second round.
func TestIrrelevanceGraphSplit(t *testing.T) {
	if !selfCheck.Load() {
		t.Skip("the comparison runs under the self-check (STREAMCHECK_SELFCHECK=0)")
	}
	before := hRounds.Load()
	sweepGenerated(t, tinyCount(60), 2201, func(i int) int {
		if i%4 == 0 {
			return 1
		}
		return 0
	})
	rounds := hRounds.Load() - before
	t.Logf("%d rounds answered from the split graph", rounds)
	if rounds == 0 {
		t.Fatal("no second round of the irrelevance rule: the comparison tested nothing")
	}
}
