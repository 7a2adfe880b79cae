package online

import (
	"context"
	"slices"
	"testing"
)

// TestOpenReadMeetsNoGhost: a ghost whose key only an open member's read
// touches is left out of the step's instance (the read is not in it
// either: docs/SEMANTICS.md §5 "Touched by the instance's ops"), and is
// built again once the reader closes, so that its stale read of the
// version the ghost overwrote is alerted then.
func TestOpenReadMeetsNoGhost(t *testing.T) {
	h, o := evictingEngine(t, "W0[0,5] w x0 · W1[10,15] w x1 · R[20,30] r x0")
	releaseCloseStep(t, h, o, "W0", "W1")
	w1 := o.index["W1"]
	if o.ev.GhostKeys[w1] == nil {
		t.Fatalf("W1 is not the ghost of x (stats %+v)", o.Stats())
	}
	inInstance := func() bool {
		r := o.build()
		defer o.drop(r)
		return slices.Contains(r.pos, w1)
	}
	if inInstance() {
		t.Errorf("R is open, its read of x is not in the instance, yet the ghost of x is")
	}
	o.Close("R")
	if !inInstance() {
		t.Errorf("R closed: its read of x is in the instance, the ghost of x is not")
	}
	alerts, err := o.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("R reads x0 after W1 overwrote it in real time: %d alerts, want 1", len(alerts))
	}
}
