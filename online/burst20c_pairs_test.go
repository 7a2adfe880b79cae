package online

import "testing"

// TestR5PairsAreAddKept holds keepPairs (burst20c_pairs.go) to the loop
// it replaces, addKept for every pair: the same engine state (kept
// orders included) and the same alerts after every step, on
// sameStatesAsNaive's bursts and stepped streams. It counts the pairs
// the stamps decided, so that it cannot pass on streams that never take
// them.
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestR5PairsAreAddKept
func TestR5PairsAreAddKept(t *testing.T) {
	var stamped int
	r5PairsCount = func(n int) { stamped += n }
	defer func() { r5PairsCount = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_WRITERS_N", &r5PairsNaive)
	if stamped == 0 {
		t.Fatal("no pair went through the stamps: the streams do not exercise them")
	}
	t.Logf("%d pairs decided by stamp", stamped)
}
