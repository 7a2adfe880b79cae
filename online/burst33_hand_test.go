package online

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// seedAfterHistory is a hand-made history for keepAfter's seeded cover
// (docs/SEMANTICS.md §5 "R5's real-time successors from a kept order"),
// run with an in-doubt horizon of 30 ns. A, an unknown in session q, is
// decided committed (T reads its write) and stays in doubt until 75; K,
// its anchor, closed, starts after T and precedes none of the others.
// T (session s, closed) leaves: its session successor S1, an unknown
// whose commit stays open (Rd, open, may read it), gets the kept order
// A -> S1 from R5's pairs, and keepAfter(A, T) visits B, which T
// precedes in real time and A does not. S1's horizon (65) precedes B in
// real time, but S1 may not commit: taking A -> S1 as the cover loses
// A -> B.
const seedAfterHistory = `A[28,45] w a1 (unknown, session q)
K[46,90] w k1 (session q)
T[30,50] r a1 (session s)
S1[33,35] w p1 (unknown, session s)
B[66,68] w b1
Rd[95,99] r p1`

// TestSeedAfterHandMade: on seedAfterHistory T leaves and the orders
// among the rest are the same with the seeded cover as without it; the
// cover taken whatever its commit (seedAnyCommit, the commit test of
// seedSure removed) loses A -> B.
func TestSeedAfterHandMade(t *testing.T) {
	run := func(on bool, mode int) (map[[2]int]bool, map[string]int) {
		var o *Online
		var reach map[[2]int]bool
		var pos map[string]int
		withSeedVia(on, mode, func() {
			o, reach, pos = sessionRunWith(t, seedAfterHistory, func(opts *history.Options) { opts.InDoubt = 30 }, "K", "T")
		})
		if o.ev.Member.get(pos["T"]) {
			t.Fatalf("seed %v, mode %d: T stayed, the history does not exercise R5", on, mode)
		}
		return reach, pos
	}
	want, pos := run(false, seedSound)
	ab := [2]int{pos["A"], pos["B"]}
	if !want[ab] || !want[[2]int{pos["A"], pos["S1"]}] {
		t.Fatalf("without the seed: A -> B %v, A -> S1 %v; the history does not set up the case", want[ab], want[[2]int{pos["A"], pos["S1"]}])
	}
	for _, mode := range []int{seedSound, seedAnyCommit} {
		got, _ := run(true, mode)
		same := len(got) == len(want)
		for p := range want {
			same = same && got[p]
		}
		switch {
		case mode == seedSound && !same:
			t.Fatalf("the rule changed the orders among the members: %v, want %v", got, want)
		case mode == seedAnyCommit && got[ab]:
			t.Fatal("a cover whatever its commit kept A -> B: the history cannot tell it from the rule")
		}
	}
}
