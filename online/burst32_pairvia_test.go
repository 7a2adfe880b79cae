package online

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// withPairsVia runs f with R5's pairs through one sure successor
// (burst32_pairvia.go) on or off, broken as mode says.
func withPairsVia(on bool, mode int, f func()) {
	oldOn, oldMode := r5PairsVia, r5PairsViaBroken
	r5PairsVia, r5PairsViaBroken = on, mode
	defer func() { r5PairsVia, r5PairsViaBroken = oldOn, oldMode }()
	f()
}

// TestPairsViaSameReachability holds the rule (docs/SEMANTICS.md §5
// "R5's pairs through one sure successor") to R5 with every pair kept,
// on keepAfter's generated streams (unknowns in doubt for the whole
// stream, duplicates, lists, injected anomalies, random step sizes):
// every step makes the same eviction choices, raises the same alerts,
// and leaves the same orders among the members, kept or implied. It
// counts the pairs the rule did not keep, so that it cannot pass on
// streams that never take it.
//
//	STREAMCHECK_COVER_N=200 go test ./online -run TestPairsViaSameReachability
func TestPairsViaSameReachability(t *testing.T) {
	n := coverCases(t)
	skipped := 0
	r5ViaSkipped = func() { skipped++ }
	defer func() { r5ViaSkipped = nil }()
	for i := range n {
		txns, opts, batches := coverCase(t, i)
		var all, rule coverRun
		withPairsVia(false, viaSound, func() { all = runCover(t, keepAfterCover, txns, opts, batches) })
		withPairsVia(true, viaSound, func() { rule = runCover(t, keepAfterCover, txns, opts, batches) })
		if d := diffCover(all, rule); d != "" {
			t.Fatalf("stream %d (%d transactions, batches %v): %s", i, len(txns), batches, d)
		}
	}
	if skipped == 0 {
		t.Fatal("the rule left out no pair: the streams do not exercise it")
	}
	t.Logf("%d pairs left out", skipped)
}

// pairsViaHistory is the hand-made history of "R5's pairs through one
// sure successor" (docs/SEMANTICS.md §5), run with an in-doubt horizon
// of 3 ns so that an unknown's real time orders within the history. A,
// an unknown in session q, is decided committed (T reads its write);
// K, its anchor, closed, starts after everything but Rd, so A reaches
// none of the others through it, and A's horizon (48) passes no start
// of S1-S3. T (session s, committed, closed) overlaps its later session
// members S1 (an unknown whose commit stays open: Rd, open, may read
// it; its horizon is 38), S2 and S3 (committed, open). When T leaves,
// A -> T -> S1, S2 (S3 is S2's by session order, "R5 through a
// session's first sure successor"). S1 precedes S2 in real time, but
// may not commit: taking it as the successor that carries A's orders
// loses A -> S2.
const pairsViaHistory = `A[28,45] w a1 (unknown, session q)
K[46,70] w k1 (session q)
T[30,50] r a1 (session s)
S1[33,35] w p1 (unknown, session s)
S2[39,41] w p2 (session s)
S3[42,44] w p3 (session s)
Rd[80,90] r p1`

// TestPairsViaHandMade: on pairsViaHistory T leaves and the orders
// among the rest are the same with the rule as with every pair kept;
// the rule broken to take a successor whatever its commit loses one.
func TestPairsViaHandMade(t *testing.T) {
	run := func(on bool, mode int) (*Online, map[[2]int]bool, map[string]int) {
		var o *Online
		var reach map[[2]int]bool
		var pos map[string]int
		withPairsVia(on, mode, func() {
			o, reach, pos = sessionRunWith(t, pairsViaHistory, func(opts *history.Options) { opts.InDoubt = 3 }, "K", "T")
		})
		if o.ev.Member.get(pos["T"]) {
			t.Fatalf("rule %v, mode %d: T stayed, the history does not exercise R5", on, mode)
		}
		return o, reach, pos
	}
	o, want, pos := run(false, viaSound)
	for _, p := range [][2]string{{"A", "S1"}, {"A", "S2"}, {"A", "S3"}} {
		if !want[[2]int{pos[p[0]], pos[p[1]]}] {
			t.Fatalf("every pair kept: the order %s -> %s is not there", p[0], p[1])
		}
	}
	_ = o
	for _, mode := range []int{viaSound, viaAnyCommit} {
		o, got, _ := run(true, mode)
		lost := ""
		for p := range want {
			if !got[p] {
				lost = o.log.at(p[0]).ID + " -> " + o.log.at(p[1]).ID
			}
		}
		for p := range got {
			if !want[p] {
				t.Fatalf("mode %d: order %s -> %s gained", mode, o.log.at(p[0]).ID, o.log.at(p[1]).ID)
			}
		}
		switch {
		case mode != viaSound && lost == "":
			t.Fatal("a successor whatever its commit lost no order: the history cannot tell it from the rule")
		case mode == viaSound && lost != "":
			t.Fatalf("the rule lost the order %s", lost)
		}
		if mode != viaSound {
			t.Logf("a successor whatever its commit loses %s", lost)
		}
	}
}
