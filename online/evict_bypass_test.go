package online

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestBypassStepByStep holds the ghosts a step's instance leaves out
// (evict_bypass.go, docs/SEMANTICS.md §5 "Ghosts that only precede") to
// the instance with every ghost: two evicting engines, one leaving them
// out and one not, fed the same stream of every shape and stepped
// together, raise the same alerts (ids, classes, cores) at the same
// steps (in an order that may differ within a step), and neither counts a disagreement (a violation of its reduced
// instance the bodies do not confirm). Their states may differ: an
// eviction through a ghost left out adds no kept order that real time
// implies. Seeds per shape: STREAMCHECK_RECYCLE_N (default 3).
func TestBypassStepByStep(t *testing.T) {
	bypassed := 0
	// Besides the shapes, streams over many keys, where most of a
	// member's writes overwrite a version no op of the instance reads.
	shapes := recycleShapes()
	wide := func(c *gen.Config) { c.Keys *= 20 }
	shapes = append(shapes,
		recycleShape{"wide-blindw", "blindw-wh", wide, history.InitialEmpty},
		recycleShape{"wide-blindw-rw", "blindw-rw", wide, history.InitialUnknown},
		recycleShape{"wide-rmw-storm", "mixed", func(c *gen.Config) { wide(c); c.InjectRate = 0.05; c.ListRatio = 0 }, history.InitialEmpty},
		recycleShape{"wide-storm-lists", "mixed", func(c *gen.Config) { wide(c); c.InjectRate = 0.05 }, history.InitialUnknown},
	)
	for _, sh := range shapes {
		for seed := range recycleN() {
			t.Run(fmt.Sprintf("%s/%d", sh.name, seed), func(t *testing.T) {
				opts, txns := sh.stream(t, seed)
				bypassed += bypassCompare(t, opts, txns, 40+20*seed)
			})
		}
	}
	if bypassed == 0 {
		t.Fatal("no ghost was left out of any instance")
	}
}

// bypassCompare steps an engine that leaves ghosts out and one that
// keeps them on txns; it returns the ghosts left out.
func bypassCompare(t *testing.T, opts history.Options, txns []history.Txn, every int) int {
	t.Helper()
	by, all := twinCompare(t, opts, txns, every, "leaving ghosts out", func(e *Online) { e.noBypass = true })
	t.Logf("%d ghosts left out, window %d vs %d", by.bypassed, by.Stats().Window, all.Stats().Window)
	return by.bypassed
}

// twinCompare feeds txns alike to two evicting engines, the second
// configured by keep (a rule switched off), steps both every `every`
// releases and at the end, and fails at the first step whose alerts
// differ or if either engine disagreed with its own check. It returns
// the two engines for their counts. name says what the first does.
func twinCompare(t *testing.T, opts history.Options, txns []history.Txn, every int, name string, keep func(*Online)) (*Online, *Online) {
	t.Helper()
	ctx := context.Background()
	on := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	all := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	keep(all)
	stepNo := 0
	step := func() {
		stepNo++
		ga, err := on.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wa, err := all.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The same alerts; their order within a step follows the
		// alert history's, which holds other transactions.
		g, w := alertKeys(ga), alertKeys(wa)
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Fatalf("step %d: alerts %s %v, with the rule off %v", stepNo, name, g, w)
		}
	}
	feedAlike(opts, txns, func(i int) {
		if (i+1)%every == 0 {
			step()
		}
	}, on, all)
	on.CloseAll()
	all.CloseAll()
	step()
	if d := on.Stats().Disagreements + all.Stats().Disagreements; d > 0 {
		t.Fatalf("%d disagreements", d)
	}
	t.Logf("%d steps", stepNo)
	return on, all
}

// TestBypassSessionPredecessor: B4 keeps in a ghost whose session
// predecessor does not precede it in real time. Y (session c) writes a
// and ends after G (session c, later) starts; Z, long, writes G's key g
// after G in real time and reads the version of a that Y overwrote. The
// cycle Y ->session G ->rt Z ->rw Y runs through G alone: Y and Z
// overlap. An instance without G would find nothing; the engine must
// alert, as check does.
func TestBypassSessionPredecessor(t *testing.T) {
	h, err := history.ParseCompact("X[0,5] w a1 · Y[6,50] w a2 (session c) · G[10,20] w g1 (session c) · Z[30,200] r a1, w g2 · P[210,220] w p1 · Q[300,310] w q1 · R[400,410] w r1")
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialEmpty
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
	feedInStartOrder(o, opts, byStart(h), func(int) { step() })
	o.CloseAll()
	step()
	if len(alerts) != 1 || !slices.Equal(alerts[0].Core, []string{"X", "Y", "G", "Z"}) {
		var cores [][]string
		for _, a := range alerts {
			cores = append(cores, a.Core)
		}
		t.Fatalf("alerts %v, want one on X, Y, G, Z (%d ghosts left out)", cores, o.bypassed)
	}
}
