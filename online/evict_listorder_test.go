package online

import (
	"context"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// listOrderH is the history of docs/SEMANTICS.md §5 "H holds the orders
// a later list read may show", reduced from a generated stream
// (read-modify-write with lists, duplicate values, strict serializable,
// in-doubt 4 ms) by dropping transactions and ops while the evicting
// engine still disagreed with the bodies. c1-8 reads x4=10, which c3-8
// and c2-8 both wrote; c3-8 folds into the initial node, and the
// irrelevance rule fixed "c1-8 read c2-8" (I5). With the kept order
// c1-8 < c3-9 (from l8's read) that fixed c2-8 before c3-9, so the list
// rule folded l10.1's prefix as [19 18 20]; c4-10 reads [18 19 20 22 23].
// It is valid: c1-8 read the initial node's 10, and c3-9 appended first.
const listOrderH = `c1-0[1700000000001798668,1700000000002129154] append l8 1 (session c1)
c3-1[1700000000005354208,1700000000006752913] append l8 2, append l8 3 (session c3)
c0-2[1700000000007256745,1700000000008334493] append l8 4 (session c0)
c3-3[1700000000009339364,1700000000010167409] append l8 5 (session c3)
c4-5[1700000000013702763,1700000000014916450] append l8 8 (session c4)
c2-4[1700000000014128621,1700000000014973906] append l8 6 (session c2)
c3-5[1700000000013423091,1700000000015161422] append l8 7 (session c3)
c3-8[1700000000019494550,1700000000020079431] w x4 10 (session c3)
c1-8[1700000000020472859,1700000000020740196] r x4 10, append l8 9, append l8 10 (session c1)
c3-9[1700000000020630165,1700000000020882569] append l10.1 18, append l8 11 (session c3)
c2-8[1700000000020292702,1700000000021427172] append l10.1 19, w x4 10 (session c2)
c5-10[1700000000021297161,1700000000022161797] append l10.1 20 (session c5)
c0-6[1700000000021872366,1700000000022520763] append l8 12 (session c0)
c4-8[1700000000021911435,1700000000023270546] r l8 [1 2 3 4 5 6 7 8 9 10 11 12] (session c4)
c2-10[1700000000024703551,1700000000025544479] append l10.1 22 (session c2)
c4-9[1700000000025502034,1700000000026024750] append l10.1 23 (session c4)
c4-10[1700000000026257396,1700000000027381741] r l10.1 [18 19 20 22 23] (session c4)`

func listOrderCase(t *testing.T) (*history.History, history.Options) {
	t.Helper()
	h, err := history.ParseCompact(listOrderH)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 4_000_000
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Valid {
		t.Fatalf("check: %s, want valid", res.Verdict)
	}
	return h, opts
}

// TestListOrderInH: the evicting engine, stepped at every start and end,
// raises nothing and never disagrees with the bodies (sweep fails on a
// disagreement).
func TestListOrderInH(t *testing.T) {
	h, opts := listOrderCase(t)
	if got, _ := sweep(t, h, opts); len(got) > 0 {
		t.Fatalf("alerts on a valid history: %v", got)
	}
}

// TestListOrderInHNaive: without the list orders in H the same run
// disagrees with the bodies, so the test above can fail.
func TestListOrderInHNaive(t *testing.T) {
	h, opts := listOrderCase(t)
	noListOrderEdges = true
	defer func() { noListOrderEdges = false }()
	if _, d := sweepQuiet(t, h, opts); d == 0 {
		t.Fatal("the naive H agreed with the bodies: the history no longer shows the missing orders")
	}
}

// TestListOrderInHNaiveSelfCheck: with the engine's self-checks on (as
// the differential tests run it), the naive H's disagreement is a step
// error, not only a count.
func TestListOrderInHNaiveSelfCheck(t *testing.T) {
	h, opts := listOrderCase(t)
	noListOrderEdges = true
	defer func() { noListOrderEdges = false }()
	defer SetSelfCheck(SetSelfCheck(true))
	_, _, err := sweepSteps(h, opts)
	if err == nil {
		t.Fatal("no step failed: the self-check let the disagreement pass")
	}
	if !strings.Contains(err.Error(), "do not confirm") {
		t.Fatalf("step error %v, want the disagreement", err)
	}
}
