package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// Under an unknown initial state the first writer's value may also be the
// initial one, so an overlapping read of it has two sources that no probe
// tells apart. The irrelevance rule fixes the writer (I4); without it the
// pair stayed pinned for the whole run (run's default initial state).

func unknownInitEngine(t *testing.T, text string) (*history.History, *Online) {
	t.Helper()
	h, o := evictingEngine(t, text)
	opts := o.opts
	opts.InitialState = history.InitialUnknown
	return h, NewOnlineConfig(opts, OnlineConfig{Evict: true})
}

// TestEvictReadOfFirstWriterUnknownInit: R may read x1 from W or from the
// initial version; both leave once closed.
func TestEvictReadOfFirstWriterUnknownInit(t *testing.T) {
	h, o := unknownInitEngine(t, "W[0,10] w x1 · R[5,15] r x1")
	releaseCloseStep(t, h, o, "W", "R")
	if in := o.inWindow("W", "R"); len(in) > 0 {
		t.Fatalf("%v still in the window (stats %+v)", in, o.Stats())
	}
}

// TestInitialChoiceThroughOpen: fixing "R read W" while O is open would be
// wrong. A reads the initial y0 and z0, so O must read y1 from R and W z1
// from O: R -> O -> W, and R must have read the initial x1. The history is
// valid (A R O W); the fixed order W -> R would close a cycle once O's read
// counts, found by the reduced instance, refuted by the bodies (a
// disagreement). I3 sees the path through the open O and leaves R's source
// open.
func TestInitialChoiceThroughOpen(t *testing.T) {
	h, o := unknownInitEngine(t, "W[0,10] w x1, r z1 · A[1,3] r y0, r z0 · R[5,15] r x1, w y1 · O[8,40] r y1, w z1")
	ctx := context.Background()
	o.Release(h.Txns...)
	o.Close("W", "A", "R")
	for _, close := range []func(){func() {}, func() { o.Close("O") }, o.CloseAll} {
		close()
		alerts, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(alerts) > 0 {
			t.Fatalf("alert on a valid history: %+v", alerts[0].Anomaly)
		}
	}
	if st := o.Stats(); st.Disagreements > 0 {
		t.Fatalf("the reduced instance disagreed with the bodies: %+v", st)
	}
}
