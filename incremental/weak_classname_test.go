package incremental

import (
	"context"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestListClassNamesAgainstOracle is TestClassNamesAgainstOracle with list
// keys: the weak checkers now read lists (docs/SEMANTICS.md §1 "Lists at
// the weak levels", "PL-2+ with lists"), so a core with a list is held to
// its class like any other: named G0 or G1c it violates read-committed,
// named G-single pl-2+, each decided by the brute-force oracle on the
// core's projection (docs/SEMANTICS.md §3 "Naming an anomaly with lists").
func TestListClassNamesAgainstOracle(t *testing.T) {
	classNamesAgainstOracle(t, true, 37, tinyCount(300))
}

// coreHasList reports whether a core's transactions touch a list key.
func coreHasList(h *history.History, core []string) bool {
	in := map[string]bool{}
	for _, id := range core {
		in[id] = true
	}
	for _, t := range h.Txns {
		if !in[t.ID] {
			continue
		}
		for _, op := range t.Ops {
			if op.IsList || op.Kind == history.Append {
				return true
			}
		}
	}
	return false
}

// TestListLostUpdateNamed: a lost update on a list key is named lost-update
// at every level that forbids it, as on a register (docs/SEMANTICS.md §3
// "Naming an anomaly with lists"). At serializable the cycle's name once
// came from describe's lostUpdate, which skipped list reads, so the pair
// was called G2-item; pl-2+'s own explanation had its own list rule.
func TestListLostUpdateNamed(t *testing.T) {
	for _, c := range []struct{ text string }{
		{"A r x [], append x 1 · B r x [], append x 2"},
		{"A r x0, w x1 · B r x0, w x2 · I w x0"},
		{"I append x 0 · A r x [0], append x 1 · B r x [0], append x 2 · C r x [0 1 2]"},
		{"A r x [], append x 1, append y 1 · B r x [], append x 2"},
	} {
		for _, lv := range []history.Level{history.Serializable, history.SnapshotIsolation, history.StrongSessionSnapshotIsolation, history.RepeatableRead, history.PL2Plus} {
			h, err := history.ParseCompact(c.text)
			if err != nil {
				t.Fatal(err)
			}
			opts := history.DefaultOptions()
			opts.Level = lv
			res, err := Check(context.Background(), h, opts, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != Invalid || len(res.Anomalies) == 0 {
				t.Fatalf("%q at %s: %v, want invalid", c.text, lv, res.Verdict)
			}
			if a := res.Anomalies[0]; a.Type != history.LostUpdate {
				t.Errorf("%q at %s: type %s class %s, want %s (%v)", c.text, lv, a.Type, a.Class, history.LostUpdate, a.Text)
			}
		}
	}
}

// TestListCoreClassConfirmed: a core with a list key whose final cycle is
// a ww/wr cycle under version orders forced through anti-dependencies.
// confirmClass once kept the cycle's name for every core with a list (the
// weak checkers did not read lists then), so this core was called G1c at
// snapshot-isolation though it is valid at read-committed (found by
// TestListClassNamesAgainstOracle at STREAMCHECK_TINY=6000).
func TestListCoreClassConfirmed(t *testing.T) {
	h, err := history.ParseCompact(`
T1[30,35] w x 2, w x 3, r y [], append y 2, r y [2] (session c1)
T2[45,55] w x 3, r z null (session c1)
T3[58,72] append y 1, w z 2, w x 1 (session c1)
T4[78,96] w x 1, r x 1, w x 1, r z 2 (session c1)
T5[98,119] append y 3, r z null, append y 3, r x 1, w x 3 (session c1)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range []history.Level{history.SnapshotIsolation, history.StrongSessionSnapshotIsolation} {
		_, opts := tinyCase{level: lv, skew: 2, indoubt: history.NoInDoubt}.setup()
		res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Invalid || len(res.Anomalies) == 0 {
			t.Fatalf("%s: %v, want invalid", lv, res.Verdict)
		}
		for _, a := range res.Anomalies {
			holdClass(t, h, opts, a, lv.String())
			t.Logf("%s: %s %s %v", lv, a.Type, a.Class, a.Core)
		}
	}
}
