package stamponline

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/online"
)

// isoIDs are the ids of the isolation alerts among fired, sorted, and
// whether an inconsistency alert fired.
func isoIDs(fired []*online.Alert) (ids []string, inconsistent bool) {
	for _, a := range fired {
		if a.Class == Inconsistent {
			inconsistent = true
			continue
		}
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	return ids, inconsistent
}

// TestLateWriter is the regression of the unneeded fallback on the 1M
// mixed stream (BENCHMARKS.md "stampson"): a committed writer that the
// window sets aside as late, whose stamps place it after everything
// replayed, once made the engine fall back to the black-box engine ("a
// dead-lettered writer has no stamps") although its stamps were read
// with it. Now it is placed in the witness (docs/SEMANTICS.md §10 "Late
// writers in the witness online") and the stamps carry the stream; where
// its stamps cannot place it (below the frontier, or before a member of
// its session already seen), the stream still falls back. Either way the
// alerts are the black-box engine's on the same arrival.
func TestLateWriter(t *testing.T) {
	type txn struct {
		spec     string
		cts, sts int64
		session  string
	}
	for _, c := range []struct {
		name     string
		level    history.Level
		txns     []txn // in arrival order; U arrives late
		fallBack bool
	}{
		// U starts at 9, after B (10) arrived, with lateness 0: late. Its
		// commit_ts 3 lies above everything closed; C reads its write.
		{"placed after the frontier", history.Serializable,
			[]txn{{"A 0 3 w x 1", 1, 1, ""}, {"B 10 12 w y 1", 2, 2, ""}, {"U 9 14 w x 2", 3, 3, ""}, {"C 20 22 r x 2", 4, 4, ""}}, false},
		{"placed after the frontier, snapshot", history.StrongSnapshotIsolation,
			[]txn{{"A 0 3 w x 1", 1, 1, ""}, {"B 10 12 w y 1", 3, 2, ""}, {"U 9 14 w x 2", 5, 4, ""}, {"C 20 22 r x 2", 7, 6, ""}}, false},
		// U's commit_ts 1 lies below A's (2), which closed at the tick
		// before U came: the witness was replayed past U's place.
		{"below the frontier", history.Serializable,
			[]txn{{"A 0 3 w x 1", 2, 2, ""}, {"B 10 12 w y 1", 3, 3, ""}, {"U 9 14 w x 2", 1, 1, ""}, {"C 20 22 r x 1", 4, 4, ""}}, true},
		// U comes after B, a later member of its session, was released;
		// the stamps keep session order (U's 3 below B's 4): U takes its
		// place before B.
		{"before a later member of its session", history.StrongSessionSerializable,
			[]txn{{"A 0 3 w x 1", 1, 1, ""}, {"B 10 16 w y 1", 4, 4, "s"}, {"C 13 22 r x 2", 5, 5, ""}, {"U 4 14 w x 2", 3, 3, "s"}}, false},
		// B, a later member of U's session, is released (at tick 15, C
		// having arrived) before U comes: the engine keeps only a
		// session's latest member and falls back.
		{"after a later member of its session", history.StrongSessionSerializable,
			[]txn{{"A 0 3 w x 1", 1, 1, ""}, {"B 10 12 w y 1", 2, 2, "s"}, {"C 20 22 r x 2", 4, 4, ""}, {"U 4 14 w x 2", 3, 3, "s"}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &history.History{}
			for _, x := range c.txns {
				stamped(h, x.spec, x.cts, x.sts)
				if x.session != "" {
					h.Txns[len(h.Txns)-1].Session, h.Txns[len(h.Txns)-1].HasSession = x.session, true
				}
			}
			opts := history.DefaultOptions()
			opts.Level = c.level
			f := feed{order: []int{0, 1, 2, 3}, batch: 1, tick: 5, late: true}
			got, want, inc, eng := sideBySide(t, h, opts, f)
			_, why := eng.FastPath()
			if eng.Stats().Unchecked != 1 {
				t.Fatalf("%d unchecked writers, the history is written for U to arrive late", eng.Stats().Unchecked)
			}
			if !slices.Equal(got, want) || inc {
				t.Errorf("alerts %v (inconsistency: %v), the black box's %v", got, inc, want)
			}
			if (why != "") != c.fallBack {
				t.Errorf("fell back: %q, want a fallback: %v", why, c.fallBack)
			}
		})
	}
}

// sideBySide runs h on feed f through the engine and through the
// level's black-box engine alone: the isolation alert ids of each, and
// whether the engine alerted an inconsistency.
func sideBySide(t *testing.T, h *history.History, opts history.Options, f feed) (got, want []string, inc bool, eng *Engine) {
	t.Helper()
	bb := f
	bb.blackBox = true
	bbFired, _ := runStream(t, h, opts, bb)
	want, _ = isoIDs(bbFired)
	fired, eng := runStream(t, h, opts, f)
	got, inc = isoIDs(fired)
	return got, want, inc, eng
}

// TestLateAgainstBlackBox holds the engine to the level's black-box
// engine on streams where events arrive late (docs/SEMANTICS.md §10
// "Late writers in the witness online"): random tiny stamped histories
// (TestAgainstCheck's mix), shuffled, with a lateness of 0 to 3 so that
// the window sets some aside, each in three feeds; the isolation alerts
// must be the black box's on the same arrival, and no inconsistency is
// alerted for a stream with a dead letter (E4). It counts the streams
// whose late writers the stamps placed and carried to the end, so that a
// rule that always fell back would show.
func TestLateAgainstBlackBox(t *testing.T) {
	n := sweep(t, 120)
	for _, lv := range []history.Level{history.Serializable, history.StrictSerializable, history.StrongSessionSerializable, history.SnapshotIsolation, history.StrongSessionSnapshotIsolation, history.StrongSnapshotIsolation} {
		t.Run(lv.String(), func(t *testing.T) {
			cfg := oracle.DefaultTinyConfig()
			cfg.Timestamps, cfg.Sessions = true, true
			var streams, withLate, carried, alerted int
			for i := 0; i < n; i++ {
				rng := rand.New(rand.NewPCG(uint64(i), 2902))
				h := oracle.RandomTinyStamps(rng, cfg, oracle.CommitStart, 0.5)
				if sessionTies(h) {
					continue
				}
				opts := history.DefaultOptions()
				opts.Level = lv
				if rng.IntN(4) == 0 {
					opts.InitialState = history.InitialUnknown
				}
				for k := 0; k < 3; k++ {
					f := feed{order: rng.Perm(len(h.Txns)), batch: 1 + rng.IntN(4), tick: 1 + rng.Int64N(6), lateness: rng.Int64N(4), late: true}
					got, want, inc, eng := sideBySide(t, h, opts, f)
					_, why := eng.FastPath()
					late := eng.Stats().Unchecked > 0
					streams++
					if !slices.Equal(got, want) {
						t.Fatalf("history %d feed %+v: alerts %v, the black box's %v (fell back: %q)\n%s", i, f, got, want, why, dumpFacts(h))
					}
					if late && inc {
						t.Fatalf("history %d feed %+v: an inconsistency alert on a stream with a dead letter\n%s", i, f, dumpFacts(h))
					}
					if late {
						withLate++
						if why == "" {
							carried++
						}
					}
					if len(want) > 0 {
						alerted++
					}
				}
			}
			t.Logf("%d streams: %d with a late writer, %d of those carried to the end by the stamps; %d with isolation alerts", streams, withLate, carried, alerted)
			if carried == 0 || alerted == 0 {
				t.Errorf("the mix misses a case: %d late streams carried, %d alerted", carried, alerted)
			}
		})
	}
}
