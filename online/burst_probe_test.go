package online

import (
	"os"
	"strconv"
	"testing"
)

// modelCases is how many generated streams the kept-model tests run:
// STREAMCHECK_KEPTMODEL_N, or 40.
//
//	STREAMCHECK_KEPTMODEL_N=400 go test ./online -run TestKeptModel
func modelCases(t *testing.T) int {
	if v := os.Getenv("STREAMCHECK_KEPTMODEL_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 40
}

// withModelCheck runs the cover streams 0..n-1 (unknowns in doubt,
// random step sizes, injected anomalies) with every "not forced" the
// prober's model gives checked by a probe, keepStale as given, and
// returns the answers the probes refuted.
func withModelCheck(t *testing.T, n int, keepStale bool) int {
	t.Helper()
	oldV, oldK, oldL := verifyModel, keepStaleModel, modelLies
	verifyModel, keepStaleModel, modelLies = true, keepStale, 0
	defer func() { verifyModel, keepStaleModel, modelLies = oldV, oldK, oldL }()
	for i := range n {
		txns, opts, batches := coverCase(t, i)
		runCover(t, keepAfterCover, txns, opts, batches)
		if keepStale && modelLies > 0 {
			t.Logf("stream %d: the stale model lied %d times", i, modelLies)
			break
		}
	}
	return modelLies
}

// TestKeptModelIsAModel: the model the prober keeps across its probes
// (docs/SEMANTICS.md §5 "The prober's model outlives its probes") is a
// model of the instance at every question: no order it leaves unforced
// is one every completion has.
func TestKeptModelIsAModel(t *testing.T) {
	if lies := withModelCheck(t, modelCases(t), false); lies > 0 {
		t.Fatalf("the kept model answered %d questions wrongly", lies)
	}
}

// TestKeptModelCheckCatchesStale: a model kept past clauses it need not
// satisfy (the irrelevance rule's) answers wrongly on some stream, and
// TestKeptModelIsAModel's check sees it.
func TestKeptModelCheckCatchesStale(t *testing.T) {
	if lies := withModelCheck(t, 200, true); lies == 0 {
		t.Fatal("a model kept past the irrelevance rule never lied: the check cannot tell the rule from it")
	}
}
