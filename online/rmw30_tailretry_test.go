package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// tailWaitText: T is a tail ghost of l behind U, an unknown appender in
// doubt (closed by its session through K, its outcome undecided: V reads
// K's k1, not U's y1; decided committed, U would end at K's end and leave,
// docs/SEMANTICS.md §5 "An unknown decided committed ends at its anchor's
// end"), in an order no read decides until R, which shows T's 2 before
// U's 1. The X are quiet arrivals on other keys, a step each.
const tailWaitText = "U[0,10] append l 1, w y1 (unknown) (session s) · T[5,15] append l 2 (session t) · K[20,30] w k1 (session s) · V[32,38] r k1 · X1[40,50] w z1 · X2[60,70] w z2 · X3[80,90] w z3 · R[100,110] r l [2 1]"

// tailWaitRun streams tailWaitText through the evicting engine, a step
// after every release, and returns, per step (named by the transaction
// just released; "end" after all close), whether T was a tail ghost
// after it and how many tail retries the step tried, and how many were
// tried and skipped in all. The verdict must be check's.
func tailWaitRun(t *testing.T) (tail map[string]bool, triedAt map[string]int, tried, skipped int) {
	t.Helper()
	h, err := history.ParseCompact(tailWaitText)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialEmpty
	opts.InDoubt = 1000
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tailRetryCount = func(skip bool) {
		if skip {
			skipped++
		} else {
			tried++
		}
	}
	defer func() { tailRetryCount = nil }()
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	txns := byStart(h)
	tail, triedAt = map[string]bool{}, map[string]int{}
	alerts := 0
	ti := -1 // T's released index
	isTail := func() bool {
		_, ok := o.ev.Tail[ti]
		return ti >= 0 && ok
	}
	feedInStartOrder(o, opts, txns, func(i int) {
		if txns[i].ID == "T" {
			ti = o.index["T"]
		}
		before := tried
		as, err := o.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		alerts += len(as)
		tail[txns[i].ID] = isTail()
		triedAt[txns[i].ID] = tried - before
	})
	// R's read enters the instance once R is closed: the end.
	o.CloseAll()
	as, err := o.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	alerts += len(as)
	tail["end"] = isTail()
	if (alerts > 0) != (res.Verdict == incremental.Invalid) {
		t.Fatalf("online alerts %d, offline %s", alerts, res.Verdict)
	}
	return tail, triedAt, tried, skipped
}

// TestTailRetryWaits (docs/SEMANTICS.md §5 "A tail ghost's retry waits
// for its key"): T, a tail ghost behind U from V's step on, is not
// retried at the quiet steps X1-X3 (their arrivals touch no tail key of
// T), and is retried, and folds, once R, whose read of l orders it
// before U, has closed; no step retries it twice (a later pass of a
// step skips it: its other evictions leave l as it was). Without the wait every step retries T (no retry is skipped);
// a wait that only the time ends (no arrival on l) keeps T a tail ghost
// at the end; a later pass that asks again retries T twice in a step.
func TestTailRetryWaits(t *testing.T) {
	tail, triedAt, tried, skipped := tailWaitRun(t)
	for _, id := range []string{"V", "X1", "X2", "X3"} {
		if !tail[id] {
			t.Fatalf("T is not a tail ghost after %s's step (%v): the history no longer shows the wait", id, tail)
		}
	}
	for _, id := range []string{"X1", "X2", "X3"} {
		if triedAt[id] != 0 {
			t.Fatalf("T was retried at %s's step (%v), whose arrival touches no key of T's", id, triedAt)
		}
	}
	for id, n := range triedAt {
		if n > 1 {
			// A later pass of the step asked again, though nothing of
			// l changed in between (the step's other evictions touch
			// other keys).
			t.Fatalf("T was retried %d times at %s's step (%v)", n, id, triedAt)
		}
	}
	if tail["end"] {
		t.Fatalf("T is still a tail ghost once R closed: R's read of l did not end its wait (%v)", tail)
	}
	if skipped < 3 {
		t.Fatalf("tail retries skipped %d (tried %d): T was retried at the quiet steps", skipped, tried)
	}
	t.Logf("tail retries tried %d, skipped %d", tried, skipped)
}

// TestTailRetryWaitOffSame: with the wait and the in-step skip off, T
// is tried at every step and the engine ends where it ends with them:
// T folded once R closed, the same verdict.
func TestTailRetryWaitOffSame(t *testing.T) {
	tailBackoff, tailRetrySkip = false, false
	defer func() { tailBackoff, tailRetrySkip = true, true }()
	tail, _, tried, skipped := tailWaitRun(t)
	if skipped != 0 || tried < 4 {
		t.Fatalf("with the rule off: tried %d, skipped %d", tried, skipped)
	}
	if !tail["X3"] || tail["end"] {
		t.Fatalf("with the rule off T's course differs: %v", tail)
	}
}
