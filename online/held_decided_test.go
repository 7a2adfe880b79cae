package online

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// heldDecidedHistory parses text, followed by twenty writes of another
// key that keep the stream going, and checks that check finds it invalid.
func heldDecidedHistory(t *testing.T, text string, skew, indoubt int64, init history.InitialState) (*history.History, history.Options) {
	t.Helper()
	for i := range 20 {
		text += fmt.Sprintf("\nZ%d[%d,%d] w q %d (session c9)", i, 300+10*i, 305+10*i, i)
	}
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.Skew, opts.InDoubt, opts.InitialState = skew, indoubt, init
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check: %s, want invalid", res.Verdict)
	}
	return h, opts
}

// TestHeldLeavesOutReadDecisions (§5 "A decision that rests on the reads
// of an unknown in doubt", first history): T2, unknown, reads x3, which
// nothing writes; its session closes it (T5), so its reads are in the
// instance and decide it does not commit. T6 reads T2's z4. The
// instance is unsatisfiable at once, but the alert path drops T2's reads
// until T2 time-closes (e + D + 2Δ = 65): the step must be held, not
// disagree with the bodies, and the alert fire when T2 closes.
func TestHeldLeavesOutReadDecisions(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	h, opts := heldDecidedHistory(t, `T2[27,49] w z 4, r x 3 (unknown, session c1)
T5[55,58] (session c1)
T6[59,60] r z 4 (session c1)`, 2, 12, history.InitialEmpty)
	fired, _ := sweep(t, h, opts)
	if len(fired) == 0 || fired[0].w != 66 {
		t.Fatalf("alerts %v, want the first at w = 66 (T2 time-closed)", fired)
	}
}

// TestVoidedWaitsForItsHorizon (same subsection, second history): T2,
// unknown, appends 1 then reads x as [1], which its session predecessor
// T1's appends rule out; T4 reads T2's appends. T2 is decided not to
// commit by its own reads while in doubt (to 100 + 59 = 159) and leaves,
// open; T4 closes first (119). The instance's violation is then one the
// bodies prove only once T2 closes: no disagreement (the self-checks
// fail the step on one), one wait, and the alert when T2 closes.
func TestVoidedWaitsForItsHorizon(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	h, opts := heldDecidedHistory(t, `T1[27,43] append x 1, append x 2 (session c1)
T2[46,59] append x 1, r x [1], append x 3 (unknown, session c1)
T3[60,89] append x 3 (session c1)
T4[91,119] r x [1 2 1 3 3] (session c1)`, 0, 100, history.InitialEmpty)
	fired, o := sweep(t, h, opts)
	if len(fired) == 0 || fired[0].w != 160 {
		t.Fatalf("alerts %v, want the first at w = 160 (T2 time-closed)", fired)
	}
	if o.goneWaits != 1 {
		t.Fatalf("%d waits for a transaction that left open, want 1", o.goneWaits)
	}
}

// TestKeptOrderWaitsForItsHorizon (same subsection, third history),
// under an unknown initial state: T3, unknown and closed by its session
// (T5, which reads T3's x4, so T3 commits), reads z as null; while T4
// is open the instance keeps the order T3 -> T4 that read proves (T4
// writes z). T4 then reads z as null too: a lost update on z, through
// the kept order. The held build drops T3's reads but not the kept
// order, so it stays unsatisfiable, and the bodies without T3's reads
// prove nothing until T3 time-closes (44 + 40 + 2Δ: w = 89). One wait, no
// disagreement, the alert at 89.
func TestKeptOrderWaitsForItsHorizon(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	h, opts := heldDecidedHistory(t, `T2[20,23] r x null (session c2)
T3[31,44] r z null, w z 3, w x 4 (unknown, session c2)
T4[48,68] r z null, w z 2 (session c1)
T5[51,61] r x 4 (session c2)`, 2, 40, history.InitialUnknown)
	fired, o := sweep(t, h, opts)
	if len(fired) == 0 || fired[0].w != 89 {
		t.Fatalf("alerts %v, want the first at w = 89 (T3 time-closed)", fired)
	}
	if o.goneWaits != 1 {
		t.Fatalf("%d waits, want 1", o.goneWaits)
	}
}
