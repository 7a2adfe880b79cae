package stamponline

import (
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// stamped adds a committed transaction from "ID start end ops" with ops
// like "w x 1", "r x 2", and its stamps (h.Facts kept parallel).
func stamped(h *history.History, spec string, cts, sts int64) {
	f := strings.Fields(spec)
	t := history.Txn{ID: f[0], Start: atoi(f[1]), End: atoi(f[2]), HasTime: true, Status: history.Committed}
	for i := 3; i+3 <= len(f); i += 3 {
		op := history.Op{Key: history.Key(f[i+1]), Value: history.Value(f[i+2])}
		if f[i] == "w" {
			op.Kind = history.Write
		}
		t.Ops = append(t.Ops, op)
	}
	h.Txns = append(h.Txns, t)
	h.Facts = append(h.Facts, history.Facts{CommitTS: cts, StartTS: sts, Has: history.HasCommitTS | history.HasStartTS})
}

func atoi(s string) int64 {
	var n int64
	for _, c := range s {
		n = n*10 + int64(c-'0')
	}
	return n
}

// TestRegressions runs the histories of docs/SEMANTICS.md §10 "Online
// with facts" (OF1-OF4) in arrival order at tick 5, lateness 0, so that
// the driver steps while they arrive: the engine reports what check
// reports, and the engine with the named rule switched off does not (the
// history breaks the naive rule).
func TestRegressions(t *testing.T) {
	type txn struct {
		spec     string
		cts, sts int64
	}
	for _, c := range []struct {
		name  string
		level history.Level
		txns  []txn
		naive naiveRule
		want  []string // the inconsistent set check reports (nil: invalid at the level)
	}{
		{"OF1 replay what has arrived", history.Serializable,
			[]txn{{"A 0 3 w x 1", 1, 1}, {"B 1 30 w x 2", 3, 3}, {"C 10 12 r x 2", 2, 2}}, naiveFrontier, []string{"B", "C"}},
		{"OF2 a late stamp below the frontier", history.Serializable,
			[]txn{{"A 0 3 w x 1", 1, 1}, {"B 4 8 w x 2", 5, 5}, {"C 20 25 r x 2", 3, 3}}, naiveArrival, []string{"B", "C"}},
		{"OF3 real time inside one tick", history.Serializable,
			[]txn{{"A 0 2 w x 1", 2, 2}, {"B 3 4 w y 1", 1, 1}}, naiveRealTime, []string{"A", "B"}},
		{"OF4 first committer wins", history.StrongSnapshotIsolation,
			[]txn{{"A 0 10 w x 1", 3, 0}, {"B 1 11 w x 2", 4, 1}}, naiveFCW, []string{"A", "B"}},
		// A read of one's own write after a new key was first seen: the
		// replay once kept own writes by a pointer into the per-key
		// states, which a new key can move (found by the 1,000-stream
		// sweep): B's last read passed against its snapshot.
		{"own write across a new key", history.StrongSnapshotIsolation,
			[]txn{{"A 15 43 w y 1", 2, 1}, {"B 43 66 r y 1 w y 2 r x null r y 1", 4, 3}}, 0, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &history.History{}
			for _, x := range c.txns {
				stamped(h, x.spec, x.cts, x.sts)
			}
			opts := history.DefaultOptions()
			opts.Level = c.level
			checked := opts
			checked.Level = Checked(c.level)
			rep := checkWithFacts(t, h, checked)
			got := slices.Clone(rep.Inconsistent)
			slices.Sort(got)
			if (rep.Result.Verdict.String() == "valid") != (c.want != nil) || !slices.Equal(got, c.want) {
				t.Fatalf("check says %s, inconsistent %v; the history is written for %v", rep.Result.Verdict, got, c.want)
			}
			if c.want == nil {
				fired, _ := runStream(t, h, opts, feed{order: []int{0, 1}, batch: 1, tick: 5})
				if len(fired) == 0 || fired[0].Class == Inconsistent {
					t.Fatalf("alerts %v, check says invalid", fired)
				}
				return
			}
			f := feed{order: []int{0, 1, 2}[:len(h.Txns)], batch: 1, tick: 5}
			for _, naive := range []naiveRule{0, c.naive} {
				f.naive = naive
				fired, eng := runStream(t, h, opts, f)
				var inc []string
				for _, a := range fired {
					if a.Class != Inconsistent {
						t.Fatalf("naive %d: isolation alert %s %v", naive, a.Class, a.Core)
					}
					inc = append(inc, a.Core...)
				}
				slices.Sort(inc)
				_, why := eng.FastPath()
				if ok := slices.Equal(inc, c.want); ok != (naive == 0) {
					t.Errorf("naive %d: inconsistent %v (fell back: %q), check's %v", naive, inc, why, c.want)
				}
			}
		})
	}
}
