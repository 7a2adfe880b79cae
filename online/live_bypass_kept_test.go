package online

import (
	"context"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestBypassKeptOrder: B1's kept-order clause (docs/SEMANTICS.md §5
// "Ghosts that only precede") keeps in a ghost that a kept order names or
// covers through real time. In both histories G writes z and x; B reads
// G's z and is long, so it starts before A ends; Y overwrites z, and its
// eviction replaces B's read by the kept order G -> B (and B -> Y): G
// stays a ghost of x alone. C, long, writes x after G in real time, and
// nothing reads x, so B2-B4 hold for G. A precedes G in real time, and a
// read that joins the instance only once a long transaction closes
// closes the cycle A ->rt G ->kept B -> ... -> A, which runs through G:
// A and B overlap, so without G nothing orders A before B. An instance
// that left G out would find nothing; the engine must alert, as check
// does.
//
//   - "named": F, long, wrote the v that A read (F -> A, a kept order
//     that also covers G: F ends after G starts, A before) and reads B's
//     w. Either half of the clause keeps G in.
//   - "only named": U, long, reads B's w and the k0 that A overwrote
//     (U ->rw A), both reads joining at U's close, so no kept order
//     covers G and only the kept order G -> B names it.
func TestBypassKeptOrder(t *testing.T) {
	for _, c := range []struct {
		name, text string
		core       []string
	}{
		{"named", "A[0,5] r v1 · F[1,300] w v1, r w1 · B[2,50] r z1, w w1 · G[10,20] w z1, w x1 · " +
			"Y[25,30] w z2 · C[60,350] w x2 · P[80,90] w p1 · Q[400,410] w q1 · R[500,510] w r1",
			[]string{"A", "F", "B", "G"}},
		{"only named", "V[0,1] w k0 · A[2,5] w k1 · U[3,300] r k0, r w1 · B[4,50] r z1, w w1 · G[10,20] w z1, w x1 · " +
			"Y[25,30] w z2 · C[60,350] w x2 · P[80,90] w p1 · Q[400,410] w q1 · R[500,510] w r1",
			[]string{"V", "A", "U", "B", "G"}},
	} {
		t.Run(c.name, func(t *testing.T) { bypassKeptOrder(t, c.text, c.core) })
	}
}

func bypassKeptOrder(t *testing.T, text string, core []string) {
	t.Helper()
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialEmpty
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check says %v, want invalid", res.Verdict)
	}
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	var alerts []*Alert
	ctx := context.Background()
	step := func() {
		got, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		alerts = append(alerts, got...)
	}
	keptG := false
	feedInStartOrder(o, opts, byStart(h), func(int) {
		step()
		if g, ok := o.find("G"); ok && o.ev.GhostKeys[g] != nil {
			for _, k := range o.ev.Kept {
				keptG = keptG || k[0] == g || k[1] == g
			}
		}
	})
	o.CloseAll()
	step()
	if !keptG {
		t.Fatal("no kept order named the ghost G: the history no longer tests B1")
	}
	if len(alerts) != 1 || !slices.Equal(alerts[0].Core, core) {
		var cores [][]string
		for _, a := range alerts {
			cores = append(cores, a.Core)
		}
		t.Fatalf("alerts %v, want one on %v (%d ghosts left out)", cores, core, o.bypassed)
	}
}
