package canary

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/record"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// TestPostgresFacts is issue 29's acceptance 2: the canary on PostgreSQL
// records the server's own facts (xid and snapshot) with every
// transaction; at SERIALIZABLE and REPEATABLE READ the history checks
// with them, the verdict equals the black-box one, and the facts are
// consistent with every read (the snapshot check finds no
// contradiction: a correct server's reads are what its snapshots say).
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
		})
	}
}
