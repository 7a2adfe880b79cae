package online

import (
	"testing"
)

// withSeenCheck runs the cover streams 0..n-1 (unknowns in doubt, random
// step sizes, injected anomalies) and the bursts and streams of
// sameStatesAsNaive with every "not decided" the models seen give
// checked by the probe decide then makes (verifySeen: the engine runs
// as without the record), and returns the claims checked and the ones a
// probe refuted.
func withSeenCheck(t *testing.T, n int) (claims, lies int) {
	t.Helper()
	old := verifySeen
	verifySeen, seenClaims, seenLies = true, 0, 0
	defer func() { verifySeen, seenClaims, seenLies = old, 0, 0 }()
	for i := range n {
		txns, opts, batches := coverCase(t, i)
		runCover(t, keepAfterCover, txns, opts, batches)
	}
	// With verifySeen the engine is the engine without the record, so
	// both runs of sameStatesAsNaive are the same one: it only drives
	// its bursts and streams here.
	var same bool
	sameStatesAsNaive(t, "STREAMCHECK_SEEN_N", &same)
	return seenClaims, seenLies
}

// TestModelsSeenAnswerAsTheProbe holds the models seen (burst_probe.go,
// docs/SEMANTICS.md §5 "Models seen answer 'not decided'") to the probe
// they replace: every literal they call undecided is probed, on the
// solver of that moment, and the probe must be satisfiable (the
// whole-instance answer is "not decided" too). It counts the claims, so
// that it cannot pass on streams where the record answers nothing.
//
//	STREAMCHECK_KEPTMODEL_N=400 STREAMCHECK_SEEN_N=100 go test ./online -run TestModelsSeen
func TestModelsSeenAnswerAsTheProbe(t *testing.T) {
	claims, lies := withSeenCheck(t, modelCases(t))
	if lies > 0 {
		t.Fatalf("the models seen called %d of %d decided literals undecided", lies, claims)
	}
	if claims == 0 {
		t.Fatal("the models seen answered no question: the streams do not exercise them")
	}
	t.Logf("%d answers of the models seen, each confirmed by a probe", claims)
}

// TestFlipAnswersAsTheProbe holds the flip test (solver F1, seenBoth's
// flipped; docs/SEMANTICS.md §5 "A flip of the model answers 'not
// decided'") to the probe it replaces, on the streams of
// TestModelsSeenAnswerAsTheProbe: every literal it calls undecided is
// probed, and the probe must be satisfiable. It fails if the flip never
// answered, so that it cannot pass on streams that do not exercise it.
//
//	STREAMCHECK_KEPTMODEL_N=400 STREAMCHECK_SEEN_N=100 go test ./online -run TestFlipAnswers
func TestFlipAnswersAsTheProbe(t *testing.T) {
	flipHits.Store(0)
	claims, lies := withSeenCheck(t, modelCases(t))
	flips := flipHits.Load()
	if lies > 0 {
		t.Fatalf("%d of %d claims refuted by a probe (%d flips)", lies, claims, flips)
	}
	if flips == 0 {
		t.Fatal("the flip answered no question: the streams do not exercise it")
	}
	t.Logf("%d flips among %d claims, each confirmed by a probe", flips, claims)
}
