package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// withSessionPreds runs f with R5's session predecessors and successors
// chosen as all says (every one, R5 before "R5 through a session's last
// predecessor" and "first sure successor") and the predecessors' rule
// broken as mode says (rules22e_session.go).
func withSessionPreds(all bool, mode int, f func()) {
	oldAll, oldMode, oldSuccs := sessionPredsAll, sessionLastPredMode, sessionSuccsAll
	sessionPredsAll, sessionLastPredMode, sessionSuccsAll = all, mode, all
	defer func() { sessionPredsAll, sessionLastPredMode, sessionSuccsAll = oldAll, oldMode, oldSuccs }()
	f()
}

// lastPredHistory is the hand-made history of "R5 through a session's
// last predecessor" (docs/SEMANTICS.md §5). Session s: A1 and A2 timed
// out (unknown, in doubt for the whole test) and committed, as R1's and
// R2's reads of their writes prove; K committed, closed, overlapping T
// and B (the unknowns' session anchor, which stays); M aborted and open,
// ranked after K and overlapping T; T committed, read-only, closed: it
// leaves at the first step. B follows T in real time but neither K nor
// the unknowns (their ends are their horizons). When T leaves, A1, A2
// and K are its session predecessors; B is reached from each through T.
// The rule keeps K -> B alone (A1 and A2 reach K by session order); the
// highest-ranked member whatever its commit is M, which has no outgoing
// edge (it aborted); the lowest-ranked predecessor is A1, which A2 does
// not reach.
const lastPredHistory = `A1[10,12] w p1 (unknown, session s)
A2[14,16] w q1 (unknown, session s)
K[26,45] w k1 (session s)
M[27,40] w m1 (aborted, session s)
T[30,32] r z null (session s)
R1[35,38] r p1
R2[35,38] r q1
B[40,50] w b1`

// lastPredRun runs lastPredHistory in one step (everything but the
// unknowns and M closed) and returns the engine, the orders among its
// members after the step (memberReach, evict_cover_test.go) and the
// release positions by id.
func lastPredRun(t *testing.T) (*Online, map[[2]int]bool, map[string]int) {
	return sessionRun(t, lastPredHistory, "K", "T", "R1", "R2", "B")
}

// sessionRun releases history src (compact form) to an evicting engine
// at strict serializability, closes the transactions named, and steps
// once, which must raise nothing; it returns the engine, the orders
// among its members after the step (memberReach, evict_cover_test.go)
// and the release positions by id.
func sessionRun(t *testing.T, src string, closed ...string) (*Online, map[[2]int]bool, map[string]int) {
	t.Helper()
	return sessionRunWith(t, src, nil, closed...)
}

// sessionRunWith is sessionRun with the options changed by set (when not
// nil) before the engine is made.
func sessionRunWith(t *testing.T, src string, set func(*history.Options), closed ...string) (*Online, map[[2]int]bool, map[string]int) {
	t.Helper()
	h, err := history.ParseCompact(src)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	if set != nil {
		set(&opts)
	}
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	o.Release(h.Txns...)
	pos := map[string]int{}
	for i := range h.Txns {
		pos[h.Txns[i].ID] = i
	}
	o.Close(closed...)
	alerts, err := o.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 0 {
		t.Fatalf("alerts on a valid history: %s %v", alerts[0].Class, alerts[0].Core)
	}
	return o, memberReach(o), pos
}

// TestSessionLastPredHandMade: on lastPredHistory T leaves and every
// order through it among the rest stays, with the rule as with every
// predecessor kept; the two broken rules (the highest-ranked member
// whatever its commit; the lowest-ranked predecessor) each lose one.
func TestSessionLastPredHandMade(t *testing.T) {
	var want map[[2]int]bool
	var pos map[string]int
	withSessionPreds(true, 0, func() {
		var o *Online
		o, want, pos = lastPredRun(t)
		if o.ev.Member.get(pos["T"]) {
			t.Fatal("T stayed: the history does not exercise R5")
		}
	})
	for _, o := range [][2]string{{"A1", "B"}, {"A2", "B"}, {"K", "B"}} {
		if !want[[2]int{pos[o[0]], pos[o[1]]}] {
			t.Fatalf("every predecessor kept: the order %s -> %s is not there", o[0], o[1])
		}
	}
	for _, c := range []struct {
		name string
		mode int
		lose bool
	}{
		{"the rule", 0, false},
		{"the highest-ranked member whatever its commit", 1, true},
		{"the lowest-ranked predecessor", 2, true},
	} {
		withSessionPreds(false, c.mode, func() {
			o, got, _ := lastPredRun(t)
			if o.ev.Member.get(pos["T"]) {
				t.Fatalf("%s: T stayed", c.name)
			}
			lost := ""
			for p := range want {
				if !got[p] {
					lost = o.log.at(p[0]).ID + " -> " + o.log.at(p[1]).ID
				}
			}
			for p := range got {
				if !want[p] {
					t.Fatalf("%s: order %s -> %s gained", c.name, o.log.at(p[0]).ID, o.log.at(p[1]).ID)
				}
			}
			switch {
			case c.lose && lost == "":
				t.Fatalf("%s: no order lost; the history cannot tell it from the rule", c.name)
			case !c.lose && lost != "":
				t.Fatalf("%s: order %s lost", c.name, lost)
			}
		})
	}
}

// TestSessionLastPredSameReachability holds the rule to R5 with every
// session predecessor kept, on keepAfter's generated bursts (unknown
// outcomes in doubt for the whole stream, duplicates, lists, injected
// anomalies, random step sizes; evict_cover_test.go): every step makes
// the same eviction choices, raises the same alerts and leaves the same
// orders among the members, kept or implied.
//
//	STREAMCHECK_COVER_N=200 go test ./online -run TestSessionLastPredSameReachability
func TestSessionLastPredSameReachability(t *testing.T) {
	n := coverCases(t)
	for i := range n {
		txns, opts, batches := coverCase(t, i)
		var all, rule coverRun
		withSessionPreds(true, 0, func() { all = runCover(t, keepAfterCover, txns, opts, batches) })
		withSessionPreds(false, 0, func() { rule = runCover(t, keepAfterCover, txns, opts, batches) })
		if d := diffCover(all, rule); d != "" {
			t.Fatalf("stream %d (%d transactions, batches %v): %s", i, len(txns), batches, d)
		}
	}
}

// firstSureHistory is the hand-made history of "R5 through a session's
// first sure successor" (docs/SEMANTICS.md §5). A timed out in session q
// and committed (T reads its write); K, A's anchor, closed, overlapping
// S1-S3 (so that A reaches none of them through K). In session s,
// T (committed, closed, reads A's write, writes nothing) overlaps its
// later session members S1 (unknown, its commit open),
// S2 and S3 (committed, open): real time orders none of them after T.
// Rd, open, may read S1's write, so S1 is observable and stays.
// When T leaves, A -> T -> S1, S2, S3. The rule keeps A -> S1 and
// A -> S2 (S2 is the first that commits for sure) and reaches S3 through
// S2; cutting at the first successor whatever its commit keeps A -> S1
// alone, and S1, which may not commit, carries no order on.
const firstSureHistory = `A[10,12] w a1 (unknown, session q)
K[14,45] w k1 (session q)
T[30,50] r a1 (session s)
S1[32,34] w p1 (unknown, session s)
S2[36,38] w p2 (session s)
S3[40,42] w p3 (session s)
Rd[60,70] r p1`

func firstSureRun(t *testing.T) (*Online, map[[2]int]bool, map[string]int) {
	return sessionRun(t, firstSureHistory, "K", "T")
}

// TestSessionFirstSureHandMade: on firstSureHistory T leaves and every
// order through it among the rest stays with the rule as with every
// successor kept; cutting at the first successor whatever its commit
// loses A -> S2 and A -> S3.
func TestSessionFirstSureHandMade(t *testing.T) {
	var want map[[2]int]bool
	var pos map[string]int
	old := sessionSuccsAll
	defer func() { sessionSuccsAll, sessionFirstSureBroken = old, false }()
	sessionSuccsAll = true
	var o *Online
	o, want, pos = firstSureRun(t)
	if o.ev.Member.get(pos["T"]) {
		t.Fatal("T stayed: the history does not exercise R5")
	}
	for _, p := range [][2]string{{"A", "S1"}, {"A", "S2"}, {"A", "S3"}} {
		if !want[[2]int{pos[p[0]], pos[p[1]]}] {
			t.Fatalf("every successor kept: the order %s -> %s is not there", p[0], p[1])
		}
	}
	sessionSuccsAll = false
	for _, broken := range []bool{false, true} {
		sessionFirstSureBroken = broken
		o, got, _ := firstSureRun(t)
		if o.ev.Member.get(pos["T"]) {
			t.Fatalf("broken %v: T stayed", broken)
		}
		lost := ""
		for p := range want {
			if !got[p] {
				lost = o.log.at(p[0]).ID + " -> " + o.log.at(p[1]).ID
			}
		}
		for p := range got {
			if !want[p] {
				t.Fatalf("broken %v: order %s -> %s gained", broken, o.log.at(p[0]).ID, o.log.at(p[1]).ID)
			}
		}
		switch {
		case broken && lost == "":
			t.Fatal("the cut at the first successor lost no order: the history cannot tell it from the rule")
		case !broken && lost != "":
			t.Fatalf("the rule lost the order %s", lost)
		}
	}
}
