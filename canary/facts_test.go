package canary

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/record"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// TestPostgresFacts is issue 29's acceptance 2: the canary on PostgreSQL
// records the server's own facts (xid and snapshot) with every
// transaction; at SERIALIZABLE and REPEATABLE READ the history checks
// with them at the serializable and the snapshot levels, the verdict
// equals the black-box one, and the facts are consistent with every read
// (a correct server's reads are what its snapshots say). Without a
// server it skips, saying so, except under CI=true, where it fails
// (realdbtest.Unreachable); internal/checkcmd's TestFactsPostgresFixture
// holds a recording of it without a server.
func TestPostgresFacts(t *testing.T) {
	for _, iso := range []sql.IsolationLevel{sql.LevelSerializable, sql.LevelRepeatableRead} {
		t.Run(IsolationName(iso), func(t *testing.T) {
			var sink record.FactsSliceSink
			schema := "sc_facts_test_" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
			c := newOrSkip(t, Config{DSN: dsns[Postgres], Isolation: iso, Duration: 2 * time.Minute, Facts: true,
				Clients: 6, Keys: 4, Schema: schema, Prefix: schema + "_t"}, record.New(&sink, record.Options{}))
			// End on work done (a few hundred transactions), not on a
			// wall-clock budget.
			done := make(chan struct{})
			defer close(done)
			go func() {
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
					}
					if c.Snapshot().Total().Committed >= 300 {
						c.Stop()
						return
					}
				}
			}()
			if _, err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			h := sink.History()
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
			stamped := 0
			for i := range h.Txns {
				f := h.FactsOf(i)
				if h.Txns[i].Status == history.Committed {
					if f.Has&(history.HasXid|history.HasSnapshot) != history.HasXid|history.HasSnapshot {
						t.Fatalf("committed txn %s has no facts", h.Txns[i].ID)
					}
					stamped++
				}
			}
			// The facts settle snapshot isolation on their own, and hold.
			snap := stampcheck.CheckSnapshot(h, history.DefaultOptions(), stampcheck.SnapshotRules{Session: true})
			if snap.Outcome == stampcheck.Contradicted {
				t.Fatalf("PostgreSQL's facts contradict its reads: %s", snap.Why)
			}
			if snap.Outcome != stampcheck.Witnessed {
				t.Logf("snapshot check left open: %s", snap.Why)
			}
			for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable} {
				opts := history.DefaultOptions()
				opts.Level = lv
				black, err := incremental.Check(context.Background(), &history.History{Txns: h.Txns}, opts, incremental.Config{})
				if err != nil {
					t.Fatal(err)
				}
				rep, err := stampcheck.Check(context.Background(), h, opts, incremental.Config{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Result.Verdict != black.Verdict {
					t.Fatalf("%s: with facts %v, black box %v", lv, rep, black.Verdict)
				}
				if rep.Inconsistent != nil {
					t.Fatalf("%s: facts inconsistent on a correct server: %v (%s)", lv, rep.Inconsistent, rep.Why)
				}
				if iso == sql.LevelSerializable && black.Verdict != incremental.Valid {
					t.Fatalf("%s at SERIALIZABLE: %v", lv, black.Verdict)
				}
				t.Logf("%s: %d transactions (%d committed with facts): %v; snapshot check %v", lv, len(h.Txns), stamped, rep, snap.Outcome)
			}
			// The snapshot levels as check runs them (stampcheck.RulesFor,
			// the family's checker as the black box): PostgreSQL's
			// REPEATABLE READ is snapshot isolation, so at both isolation
			// levels the history is valid there, the facts settle it
			// (their witness replays in the family's checker's own
			// terms), and they agree with every read.
			for _, lv := range []history.Level{history.SnapshotIsolation, history.StrongSessionSnapshotIsolation} {
				opts := history.DefaultOptions()
				opts.Level = lv
				black, err := incremental.Check(context.Background(), &history.History{Txns: h.Txns}, opts, incremental.Config{})
				if err != nil {
					t.Fatal(err)
				}
				bb := func(ctx context.Context, h *history.History, opts history.Options) (*incremental.Result, error) {
					return incremental.Check(ctx, h, opts, incremental.Config{})
				}
				rep, err := stampcheck.CheckSnapshotLevel(context.Background(), h, opts, stampcheck.RulesFor(lv), bb)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Result.Verdict != black.Verdict {
					t.Fatalf("%s: with facts %v, black box %v", lv, rep, black.Verdict)
				}
				if black.Verdict != incremental.Valid {
					t.Fatalf("%s at %s: %v", lv, IsolationName(iso), black.Verdict)
				}
				if rep.Inconsistent != nil {
					t.Fatalf("%s: facts inconsistent on a correct server: %v (%s)", lv, rep.Inconsistent, rep.Why)
				}
				if rep.ByFacts {
					if err := oracle.ReplayWitness(h, opts, rep.Result.Witness); err != nil {
						t.Fatalf("%s: the facts' witness does not replay: %v", lv, err)
					}
				} else {
					// An unknown transaction that writes leaves them open;
					// the verdict is then the black box's, as above.
					t.Logf("%s: facts unused: %s", lv, rep.Unused)
				}
				t.Logf("%s: %d transactions: %v", lv, len(h.Txns), rep)
			}
		})
	}
}
