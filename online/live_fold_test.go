package online

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestFoldStepByStep holds the ghosts folded into the initial node
// (live_fold.go, docs/SEMANTICS.md §5 "Ghosts whose readers all follow
// them: the initial node") to the instance that keeps them: two evicting
// engines, one folding and one not (both leaving out the ghosts of B1-B4),
// fed the same stream of every shape and stepped together, raise the same
// alerts (ids, classes, cores) at the same steps, and neither counts a
// disagreement. Their states may differ (a replaced read of a folded
// version keeps no order that real time gives). Seeds per shape:
// STREAMCHECK_RECYCLE_N (default 3).
func TestFoldStepByStep(t *testing.T) {
	folded := 0
	shapes := recycleShapes()
	wide := func(c *gen.Config) { c.Keys *= 20 }
	shapes = append(shapes,
		recycleShape{"wide-rmw", "mixed", func(c *gen.Config) { wide(c); c.ListRatio, c.UnknownRatio = 0, 0 }, history.InitialUnknown},
		recycleShape{"wide-blindw-rw", "blindw-rw", wide, history.InitialUnknown},
		recycleShape{"wide-rmw-storm", "mixed", func(c *gen.Config) { wide(c); c.InjectRate = 0.05; c.ListRatio = 0 }, history.InitialEmpty},
		recycleShape{"wide-storm-unknown-init", "mixed", func(c *gen.Config) { wide(c); c.InjectRate = 0.05; c.ListRatio = 0 }, history.InitialUnknown},
		recycleShape{"wide-storm-lists", "mixed", func(c *gen.Config) { wide(c); c.InjectRate = 0.05 }, history.InitialUnknown},
		recycleShape{"wide-dups", "mixed", func(c *gen.Config) { wide(c); c.ListRatio, c.DupValueRatio = 0, 0.3 }, history.InitialUnknown},
	)
	for _, sh := range shapes {
		for seed := range recycleN() {
			t.Run(fmt.Sprintf("%s/%d", sh.name, seed), func(t *testing.T) {
				opts, txns := sh.stream(t, seed)
				folded += foldCompare(t, opts, txns, 40+20*seed)
			})
		}
	}
	if folded == 0 {
		t.Fatal("no ghost was folded into any instance")
	}
}

// foldCompare steps a folding engine and one that keeps folded ghosts
// in; it returns the ghosts folded.
func foldCompare(t *testing.T, opts history.Options, txns []history.Txn, every int) int {
	t.Helper()
	fo, all := twinCompare(t, opts, txns, every, "folding", func(e *Online) { e.noFold = true })
	t.Logf("%d ghosts folded, %d left out, window %d vs %d", fo.folded, fo.bypassed, fo.Stats().Window, all.Stats().Window)
	return fo.folded
}

// foldHistory runs h (in start order, a step after every release) through
// an evicting engine at strict-serializable and returns its alerts' cores
// and the ghosts it folded.
func foldHistory(t *testing.T, compact string, init history.InitialState) ([][]string, int) {
	t.Helper()
	h, err := history.ParseCompact(compact)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = init
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	var cores [][]string
	ctx := context.Background()
	step := func() {
		got, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range got {
			cores = append(cores, a.Core)
		}
	}
	feedInStartOrder(o, opts, byStart(h), func(int) { step() })
	o.CloseAll()
	step()
	if d := o.Stats().Disagreements; d > 0 {
		t.Fatalf("%d disagreements", d)
	}
	return cores, o.folded
}

// TestFoldReaderOverlaps: F2 keeps in a ghost with a reader that does not
// follow it in real time. A ends before G starts; R reads G's x1 and
// starts before A ends (so A and R overlap, and R overlaps G); U, long,
// reads R's b1 and the version of a that A overwrote, reads that join the
// instance only when U closes, long after G became a ghost of x. The
// cycle A ->rt G ->wr R ->wr U ->rw A runs through G: without G nothing
// orders A before R. Folding G into the initial node (R reading x1 from
// a node before everything) the engine finds nothing; check finds the
// history invalid.
func TestFoldReaderOverlaps(t *testing.T) {
	const h = "V[0,1] w a0 · A[2,5] w a1 · U[3,500] r b1, r a0 · R[4,40] r x1, w b1 · G[10,20] w x1 · F[50,55] w f1 · H[100,105] w f2 · K[200,205] w f3 · P[600,610] w p1 · Q[700,710] w q1 · S[800,810] w s1"
	cores, folded := foldHistory(t, h, history.InitialEmpty)
	want := []string{"V", "A", "G", "R", "U"}
	if len(cores) != 1 || !sameSet(cores[0], want) {
		t.Fatalf("alerts %v, want one on %v (%d ghosts folded)", cores, want, folded)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
