package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// closedUnknownRun streams text through the evicting engine as the window
// would (sweep) at strict serializable with the in-doubt horizon d, and
// requires online's verdict to be check's.
func closedUnknownRun(t *testing.T, text string, d int64) *Online {
	t.Helper()
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = d
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	fired, o := sweep(t, h, opts)
	if (len(fired) > 0) != (res.Verdict == incremental.Invalid) {
		t.Fatalf("%s: online alerts %v, offline %s", text, fired, res.Verdict)
	}
	return o
}

// TestOrdersOutOfAClosedUnknown: U timed out (its append bars the
// unobservable fix), K follows it in its session, Y overwrites x after K
// in real time. U's horizon (35) ends after Y starts, so real time
// does not order U before Y: only U -> K -> Y does, when U commits. Once
// U time-closes its commit is still open and K, no longer its anchor,
// leaves; the order U -> K -> Y must stay (kept as U -> Y), for R,
// after Y, reads U's x1: stale in every completion that commits U, and
// without a source in the others. K left as a ghost of k that no
// member touches, so the next instances held neither K nor an order
// from U: main lost the alert (`run --indoubt 35ms` on these four
// transactions, 0 alerts; `--evict=false` and `check`, 1).
func TestOrdersOutOfAClosedUnknown(t *testing.T) {
	closedUnknownRun(t, "U[20,30] w x1, append l 1 (unknown) (session s) · K[40,50] w k1 (session s) · Y[60,70] w x2 · R[100,110] r x1", 35)
}

// TestOrdersOutOfAClosedUnknownVariants: the same loss through K's
// other ways out (R5 for a read-only K; a ghost that loses its key), a
// later quiet member, and the horizon that outlasts the stream (U in
// doubt until the end: its anchor K carries the order).
func TestOrdersOutOfAClosedUnknownVariants(t *testing.T) {
	for _, text := range []string{
		// K read-only: it leaves through R5 (a skeleton).
		"Q[0,5] w q1 · U[20,30] w x1, append l 1 (unknown) (session s) · K[40,50] r q1 (session s) · Y[60,70] w x2 · R[100,110] r x1",
		// K's key overwritten: a ghost that loses its key.
		"U[20,30] w x1, append l 1 (unknown) (session s) · K[40,50] w k1 (session s) · Y[60,70] w x2 · W[72,80] w k2 · R[100,110] r x1",
		// A longer horizon: U still in doubt when R arrives.
		"U[20,30] w x1, append l 1 (unknown) (session s) · K[40,50] w k1 (session s) · Y[60,70] w x2 · R[100,110] r x1 · Z[200,210] w z1",
	} {
		t.Run("", func(t *testing.T) { closedUnknownRun(t, text, 35) })
	}
	closedUnknownRun(t, "U[20,30] w x1, append l 1 (unknown) (session s) · K[40,50] w k1 (session s) · Y[60,70] w x2 · R[100,110] r x1", 1000)
}
