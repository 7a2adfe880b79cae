package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// rmw34Run runs text online (evicting, a step at every instant) and
// offline with in-doubt horizon d at strict serializability, fails the
// test when they disagree on the verdict, and returns the engine.
func rmw34Run(t *testing.T, text string, d int64) *Online {
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
	o := rmw34Run(t, text, 35)
	if ks := ghostKeysOf(o, "L"); len(ks) != 0 {
		t.Fatalf("L still holds %v: U precedes L and T overwrote it", ks)
	}
	// Without Z the history is valid, and online agrees.
	rmw34Run(t, "U[0,10] w x2, append l 1 (unknown) (session s) · L[50,60] w x1 · R[70,80] r x1 · T[100,110] w x3 (session s) · Q[150,160] w q1", 35)
}
