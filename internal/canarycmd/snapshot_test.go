package canarycmd

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Issue 28's canary acceptance, short: PostgreSQL's REPEATABLE READ is
// strong snapshot isolation on one server, so the canary checked at
// --level snapshot-isolation raises nothing (its write skews are allowed;
// the same workload checked at serializable alerts, TestWeakIsolationAlerts
// "postgres-repeatable-read"), and the recorded history is valid at the
// level checked; READ COMMITTED loses updates, which snapshot isolation
// forbids, and alerts. The 10-minute run:
//
//	STREAMCHECK_CANARY_SI=10m go test -run TestSnapshotLevelCanary -v -timeout 60m ./internal/canarycmd/
func TestSnapshotLevelCanary(t *testing.T) {
	reachable(t, pgDSN)
	quiet := 4 * time.Second
	if d, err := time.ParseDuration(os.Getenv("STREAMCHECK_CANARY_SI")); err == nil && d > 0 {
		quiet = d
	}
	t.Run("repeatable-read", func(t *testing.T) {
		o := runCanary(t, context.Background(), "--dsn", pgDSN, "--isolation", "repeatable-read", "--level", history.SnapshotIsolation.String(),
			"--duration", quiet.String(), "--clients", "6", "--keys", "6")
		if o.code != ExitOK || len(o.alerts) > 0 {
			t.Fatalf("exit %d, %d alerts at REPEATABLE READ checked at snapshot-isolation", o.code, len(o.alerts))
		}
		if n := statuses(o.hist)[history.Committed]; n < 20 {
			t.Fatalf("only %d transactions committed", n)
		}
		opts := onlineOpts
		opts.Level = history.StrongSnapshotIsolation // what run checks at snapshot-isolation (sionline.Checked)
		if res, err := incremental.Check(context.Background(), o.hist, opts, incremental.Config{}); err != nil || res.Verdict != incremental.Valid {
			t.Fatalf("offline check of the recorded history at %s: %v %v", opts.Level, res, err)
		}
	})
	t.Run("read-committed", func(t *testing.T) {
		w := weak{"postgres-read-committed", pgDSN, []string{"--isolation", "read-committed", "--level", history.SnapshotIsolation.String()}, weakControls[0].allowed, weakControls[0].promised}
		runWeak(t, w, 20*time.Second)
	})
}
