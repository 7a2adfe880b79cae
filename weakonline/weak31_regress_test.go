package weakonline

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestWitnessGraphRebuiltAtPass is history 1,830 of
// TestWeakAgreesUnderSchedules at read committed, seed 1 (docs/SEMANTICS.md
// §5 "A graph built from a witness is rebuilt at a pass"). The in-doubt
// horizon (12) closes the unknowns T4 and T5 mid-stream; the fast path
// gets into trouble, the exact check finds the instance valid and the
// graph is rebuilt from its witness, which leaves T4 and T5 out as not
// committed; the retirement pass in the same step used to compact that
// graph in place, keeping the witness's choice after the witness was
// dropped, so that the graph no longer was the one a rebuild from the
// held transactions makes (checkCompacted, after every step of runFeed,
// failed: "node 0: false, rebuilt true"). The pass now rebuilds such a
// graph. Alerts (none: the history is valid) are the keeping engine's and
// the naive rebuild's.
func TestWitnessGraphRebuiltAtPass(t *testing.T) {
	h, err := history.ParseCompact("T1[10,32] w x 2, r y null, r x 2, w x 1 (session c4) · T2[13,33] w x 2, r x 2 (session c6) · T3[17,29] w y 1, w y 4, r y 4, r y 4, w y 4 (session c3) · T4[34,43] r x 2, w x 4, w x 1, r y null, w y 4, r y 4, w y 3 (unknown, session c2) · T5[34,47] r x null, w x 2, r x 2, w y 1 (unknown, session c5) · T6[42,65] r x 1, w x 2 (session c4) · T7[55,64] r x null (session c2) · T8[59,78] r x null, r y null, w y 3 (unknown, session c5)")
	if err != nil {
		t.Fatal(err)
	}
	for i := range h.Txns {
		h.Txns[i].Pos = history.Pos{}
	}
	opts := history.DefaultOptions()
	opts.Level = history.ReadCommitted
	opts.InDoubt = 12
	f := feed{tick: 40, order: []int{1, 4, 3, 6, 5, 0, 7, 2}, batch: 3, restart: -1}
	fired, e := runFeed(t, h, opts, f)
	if e.rebuilds == 0 || e.sum.n == 0 {
		t.Fatalf("%d rebuilds from a witness, %d retired: the test needs both", e.rebuilds, e.sum.n)
	}
	naiveCompact = true
	naive, _ := runFeed(t, h, opts, f)
	naiveCompact = false
	sameAlerts(t, "in place vs rebuilt", fired, naive)
	f.noRetire = true
	sameAlerts(t, "retiring vs keeping", fired, must(runFeed(t, h, opts, f)))
	if want := offline(t, h, opts); (len(fired) > 0) != (want == incremental.Invalid) {
		t.Fatalf("online %d alerts, offline %v", len(fired), want)
	}
}
