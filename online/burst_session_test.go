package online

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestSessionNeighboursIsTheScan holds r5Remove's session index
// (burst_session.go) to the scan it replaces: the same engine state and
// alerts after every step (sameStatesAsNaive: bursts and streams with
// unknowns, some with injected anomalies), and at every visit the same
// predecessors as a pure scan of the whole session (no start bound, no
// probe). It fails unless some visit had an unknown earlier in t's
// session, the case the index is for.
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestSessionNeighboursIsTheScan
func TestSessionNeighboursIsTheScan(t *testing.T) {
	var visits, withUnknown, nonEmpty, mixed int
	var bad string
	sessionNeighboursCheck = func(want, got []int32, unknownBefore bool) {
		visits++
		if unknownBefore {
			withUnknown++
		}
		if len(want) > 0 {
			nonEmpty++
		}
		if unknownBefore && len(want) > 1 {
			mixed++
		}
		if !sessionPredsAll && len(want) > 1 {
			// R5 through the session's last predecessor
			// (rules22e_session.go): the highest-ranked one alone.
			want = want[len(want)-1:]
		}
		if bad == "" && !slices.Equal(want, got) {
			bad = fmt.Sprintf("the whole session's scan has predecessors %v, the index %v", want, got)
		}
	}
	// Half the streams with a clock skew of up to 300µs, as wide as a
	// few of a burst's transactions in one session: a session's
	// consecutive members are then unordered by real time, and committed
	// members become predecessors that the settled bound must find,
	// beside the unknowns.
	sameStatesOpts = func(o *history.Options, rng *rand.Rand) {
		if rng.IntN(2) == 0 {
			o.Skew = int64(rng.IntN(300_000))
		}
	}
	// And in half the streams a few committed transactions end late
	// (their end moved up to 2ms on, one in five): a session's ends are then not in
	// rank order, so the nearest earlier member can precede t in real
	// time while a farther one does not; a bound that stops at the
	// first member ordered before t misses the farther one.
	sameStatesHist = func(h *history.History, rng *rand.Rand) {
		if rng.IntN(2) != 0 {
			return
		}
		for i := range h.Txns {
			if x := &h.Txns[i]; x.Status == history.Committed && x.HasTime && rng.IntN(5) == 0 {
				x.End += int64(rng.IntN(2_000_000))
			}
		}
	}
	defer func() { sessionNeighboursCheck, sameStatesOpts, sameStatesHist = nil, nil, nil }()
	sameStatesAsNaive(t, "STREAMCHECK_WRITERS_N", &sessionNeighboursNaive)
	if bad != "" {
		t.Fatal(bad)
	}
	if withUnknown == 0 || mixed == 0 {
		t.Fatalf("%d visits, %d with an unknown earlier in the session, %d with a predecessor, %d with both and two predecessors: the streams do not exercise the index", visits, withUnknown, nonEmpty, mixed)
	}
	t.Logf("%d visits, %d with an unknown earlier in the session, %d with a predecessor, %d with both and two predecessors", visits, withUnknown, nonEmpty, mixed)
}
