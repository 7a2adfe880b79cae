package online

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestUnknownFreeSkipIsTheScan holds the free-rank skip of
// undecidedUnknownBefore (burst_unknowns.go, docs/SEMANTICS.md §5
// "Unknowns that need no skeleton, by index") to the candidates without
// it: the same engine state and alerts after every step, on generated
// streams (sameStatesAsNaive's: half of them bursts inside one tick whose
// unknowns stay in doubt, anchored by their session, until the last step
// closes them all), and on streams rich in unknowns (unknownRich), the
// only ones where an unknown that needs a skeleton precedes a removal.
//
//	STREAMCHECK_FREE_N=200 go test ./online -run TestUnknownFreeSkipIsTheScan
//
// At every question it compares the unknowns the scan of every unknown
// would ask about with the skip's, and it counts the candidates visited
// with the skip and without, so that it cannot pass on streams where the
// skip never leaves one out, nor where no question has an unknown to ask
// about.
func TestUnknownFreeSkipIsTheScan(t *testing.T) {
	var asked, nonEmpty, withSkip, without int
	unknownCandidatesCount = func(n int, want, got []int32) {
		if unknownFreeNaive {
			without += n
			return
		}
		asked++
		withSkip += n
		if len(want) > 0 {
			nonEmpty++
		}
		if !slices.Equal(want, got) {
			t.Errorf("the scan asks about %v, the skip about %v", want, got)
		}
	}
	defer func() { unknownCandidatesCount = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_FREE_N", &unknownFreeNaive)
	t.Logf("%d questions; candidates visited: %d with the skip, %d without", asked, withSkip, without)
	if without == 0 || withSkip*2 > without {
		t.Fatalf("candidates visited: %d with the skip, %d without: the skip leaves out less than half", withSkip, without)
	}
	asked = 0
	unknownRich(t, func() { sameStatesAsNaive(t, "STREAMCHECK_FREE_N", &unknownFreeNaive) })
	t.Logf("rich in unknowns: %d questions, %d asking about an unknown", asked, nonEmpty)
	if nonEmpty == 0 {
		t.Fatal("no question asks about an unknown: the streams do not exercise the skeleton")
	}
}

// unknownRich runs f with sameStatesAsNaive's streams made rich in
// unknowns (10-40%), with few sessions, little concurrency, in-doubt
// horizons of 0-1.5 ms and clock skews of 0-100 µs: there, unknowns in
// doubt that no committed member of their session anchors yet precede
// removals.
func unknownRich(t *testing.T, f func()) {
	t.Helper()
	sameStatesShape = func(c *gen.Config, rng *rand.Rand) {
		c.UnknownRatio = 0.1 + 0.3*rng.Float64()
		c.Sessions = 2 + rng.IntN(6)
		c.Concurrency = min(float64(2*(c.Sessions-1)), 1+3*rng.Float64())
	}
	sameStatesOpts = func(o *history.Options, rng *rand.Rand) {
		o.InDoubt = int64(rng.IntN(4)) * 500_000
		o.Skew = int64(rng.IntN(3)) * 50_000
	}
	defer func() { sameStatesShape, sameStatesOpts = nil, nil }()
	f()
}

// TestClosedUnknownsByIndexIsTheScan holds closedUnknownsBefore's index
// (burst30_closed.go, docs/SEMANTICS.md §5 "The time-closed unknowns
// before t, by index") to the scan of every candidate it replaces: the
// same engine state and alerts after every step, on generated streams
// (the bursts close every unknown at their last step; the others pass
// their unknowns' horizons within the stream), and on streams rich in
// unknowns (unknownRich).
//
//	STREAMCHECK_CLOSEDIX_N=200 go test ./online -run TestClosedUnknownsByIndexIsTheScan
//
// It counts the entries the index visits, so that it cannot pass on
// streams where no time-closed unknown precedes a removal.
func TestClosedUnknownsByIndexIsTheScan(t *testing.T) {
	visits := 0
	closedVisitCount = func() { visits++ }
	defer func() { closedVisitCount = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_CLOSEDIX_N", &closedUnknownsNaive)
	unknownRich(t, func() { sameStatesAsNaive(t, "STREAMCHECK_CLOSEDIX_N", &closedUnknownsNaive) })
	t.Logf("%d entries visited by the index", visits)
	if visits == 0 {
		t.Fatal("no time-closed unknown before a removal: the streams do not exercise the index")
	}
}

// TestSessionDownIsTheWalk holds the skip of sessionLastPred's settled
// walk (burst30_down.go, docs/SEMANTICS.md §5 "R5's walk down a session
// skips the dead") to the walk of every rank: the same engine state and
// alerts after every step, on generated streams; the pure scan of the
// whole session (sessionNeighboursCheck) is compared at every visit too.
//
//	STREAMCHECK_DOWN_N=200 go test ./online -run TestSessionDownIsTheWalk
func TestSessionDownIsTheWalk(t *testing.T) {
	visits, bad := 0, ""
	sessionNeighboursCheck = func(want, got []int32, _ bool) {
		visits++
		if len(want) > 0 {
			want = want[len(want)-1:]
		}
		if bad == "" && !slices.Equal(want, got) {
			bad = fmt.Sprintf("the pure scan's last predecessor is %v, the walk's %v", want, got)
		}
	}
	defer func() { sessionNeighboursCheck = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_DOWN_N", &sessionDownNaive)
	unknownRich(t, func() { sameStatesAsNaive(t, "STREAMCHECK_DOWN_N", &sessionDownNaive) })
	if bad != "" {
		t.Fatal(bad)
	}
	if visits == 0 {
		t.Fatal("no session visit: the streams do not exercise the walk")
	}
	t.Logf("%d session visits", visits)
}
