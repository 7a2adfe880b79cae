package online

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestListReadersLeftIsTheNaiveLoop holds listReadersLeft
// (burst_listreads.go) to the loop it replaces: the engine whose list
// rule reads the index and the engine whose list rule visits every
// accessor of the key, its lists and reads made at each fold, leave the
// same state and raise the same alerts after every step
// (sameStatesAsNaive). It counts the readers the index dropped and the
// ones it gave, so that it cannot pass on streams where the list rule
// never reads. Eight streams by default; the sweep:
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestListReadersLeftIsTheNaiveLoop
func TestListReadersLeftIsTheNaiveLoop(t *testing.T) {
	var dropped, kept int
	listReadersCount = func(d, k int) { dropped += d; kept += k }
	defer func() { listReadersCount = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_WRITERS_N", &listReadersNaive)
	// List-heavy streams on few keys: many readers per list key, and
	// readers whose register reads were replaced while they stay.
	sameStatesShape = func(cfg *gen.Config, rng *rand.Rand) {
		cfg.ListRatio = 0.5
		cfg.Keys = 4 + rng.IntN(12)
	}
	defer func() { sameStatesShape = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_WRITERS_N", &listReadersNaive)
	if dropped == 0 || kept == 0 {
		t.Fatalf("the index dropped %d readers and gave %d: the streams do not exercise it", dropped, kept)
	}
	t.Logf("readers passed over once and dropped: %d; given to the loop: %d", dropped, kept)
}
