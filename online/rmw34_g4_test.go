package online

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// ghostKeysOf returns the keys the transaction named id holds as a
// ghost (nil: not a ghost).
func ghostKeysOf(o *Online, id string) []history.Key {
	for i := 0; i < o.log.len(); i++ {
		if o.log.at(i).ID == id {
			return o.ev.GhostKeys[i]
		}
	}
	return nil
}

// TestG4BothWays (docs/SEMANTICS.md §5 "G4 asks both directions
// (rmw34)"): U, an unknown that appends to an unread list, ends its
// horizon (10 + 35) before L starts, so U precedes L whenever it
// commits. T, U's session successor, overwrites L's x1 and overtakes U.
// U is ordered with L, so G4 does not apply: L's key goes with R's read
// of it replaced, and L leaves. Before the rule L kept x for good, as a
// stale ghost (the mutation g4BothWays = false fails here). Z's later
// read of x1 is stale in every completion: alerted, as check alerts it.
func TestG4BothWays(t *testing.T) {
	const text = "U[0,10] w x2, append l 1 (unknown) (session s) · L[50,60] w x1 · R[70,80] r x1 · T[100,110] w x3 (session s) · Q[150,160] w q1 · Z[200,210] r x1"
	o := closedUnknownRun(t, text, 35)
	if ks := ghostKeysOf(o, "L"); len(ks) != 0 {
		t.Fatalf("L still holds %v: U precedes L and T overwrote it", ks)
	}
	// Without Z the history is valid, and online agrees.
	closedUnknownRun(t, "U[0,10] w x2, append l 1 (unknown) (session s) · L[50,60] w x1 · R[70,80] r x1 · T[100,110] w x3 (session s) · Q[150,160] w q1", 35)
}
