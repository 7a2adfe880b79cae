package online

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// withSessionPreds runs f with R5's session predecessors chosen as all
// says (every one, the rule before "R5 through a session's last
// predecessor") and the rule broken as mode says (rules22e_session.go).
func withSessionPreds(all bool, mode int, f func()) {
	oldAll, oldMode := sessionPredsAll, sessionLastPredMode
	sessionPredsAll, sessionLastPredMode = all, mode
	defer func() { sessionPredsAll, sessionLastPredMode = oldAll, oldMode }()
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
	t.Helper()
	h, err := history.ParseCompact(lastPredHistory)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	o.Release(h.Txns...)
	pos := map[string]int{}
	for i := range h.Txns {
		pos[h.Txns[i].ID] = i
	}
	o.Close("K", "T", "R1", "R2", "B")
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
