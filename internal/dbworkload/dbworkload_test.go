package dbworkload

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/realdbtest"
	"github.com/streamcheck/streamcheck/record"
)

var dsns = map[Dialect]string{
	Postgres: "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	MariaDB:  "root@tcp(127.0.0.1:3306)/test",
}

func openOrSkip(t *testing.T, d Dialect) *sql.DB {
	t.Helper()
	db, err := Open(context.Background(), d, dsns[d], realdbtest.PingTimeout)
	if err != nil {
		realdbtest.Unreachable(t, d.String(), err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// tablesLeft counts the tables whose name starts with prefix.
func tablesLeft(t *testing.T, db *sql.DB, d Dialect, prefix string) int {
	t.Helper()
	var n int
	q := "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE $1"
	if d == MariaDB {
		q = "SELECT count(*) FROM information_schema.tables WHERE table_name LIKE ?"
	}
	if err := db.QueryRow(q, prefix+"%").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The counter's arithmetic in the other direction: at SERIALIZABLE no
// committed increment may be lost, on either server (W2, W3); every
// transaction is recorded once, in a valid history; the tables are gone
// afterwards (W5).
func TestCounterSerializableLosesNothing(t *testing.T) {
	for _, d := range []Dialect{Postgres, MariaDB} {
		t.Run(d.String(), func(t *testing.T) {
			db := openOrSkip(t, d)
			var sink record.SliceSink
			tg := &Target{DB: db, Dialect: d, Isolation: sql.LevelSerializable}
			rep, err := Counter(context.Background(), tg, CounterConfig{Clients: 3, Increments: 10, Pause: 200 * time.Microsecond}, record.New(&sink, record.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v final %d", rep.Report, rep.Final)
			if rep.LostUpdates() != 0 {
				t.Fatalf("SERIALIZABLE lost %d updates: %+v", rep.LostUpdates(), rep)
			}
			h := sink.History()
			if err := h.Validate(); err != nil {
				t.Fatal(err)
			}
			if got, want := len(h.Txns), rep.Committed+rep.Aborted+rep.Unknown+2; got != want {
				t.Fatalf("%d transactions recorded, %d run", got, want)
			}
			counts := map[history.Status]int{}
			for _, tx := range h.Txns {
				counts[tx.Status]++
			}
			if counts[history.Committed] != rep.Committed+2 || counts[history.Aborted] != rep.Aborted {
				t.Fatalf("recorded statuses %v, report %+v", counts, rep.Report)
			}
			if n := tablesLeft(t, db, d, tg.Prefix); n != 0 {
				t.Fatalf("%d tables of %s left behind", n, tg.Prefix)
			}
		})
	}
}

// A cancelled workload still drops its tables and ends every transaction
// it began.
func TestCancelledCleansUp(t *testing.T) {
	db := openOrSkip(t, Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	var sink record.SliceSink
	tg := &Target{DB: db, Dialect: Postgres, Isolation: sql.LevelSerializable}
	_, err := Register(ctx, tg, RegisterConfig{Clients: 3, Txns: 100, Keys: 3, MaxOps: 3}, record.New(&sink, record.Options{}))
	t.Logf("register: %v, %d transactions recorded", err, len(sink.History().Txns))
	if n := tablesLeft(t, db, Postgres, tg.Prefix); n != 0 {
		t.Fatalf("%d tables of %s left behind", n, tg.Prefix)
	}
	if err := sink.History().Validate(); err != nil {
		t.Fatal(err)
	}
}

// The forced interleaving in both directions on PostgreSQL: READ
// COMMITTED commits both increments and loses one, SERIALIZABLE refuses
// one; either way the final read is recorded in its own session.
func TestLostUpdateInterleaving(t *testing.T) {
	db := openOrSkip(t, Postgres)
	for _, tc := range []struct {
		iso      sql.IsolationLevel
		wantLost bool
	}{
		{sql.LevelReadCommitted, true},
		{sql.LevelSerializable, false},
	} {
		t.Run(tc.iso.String(), func(t *testing.T) {
			var sink record.SliceSink
			tg := &Target{DB: db, Dialect: Postgres, Isolation: tc.iso}
			rep, err := LostUpdate(context.Background(), tg, true, record.New(&sink, record.Options{}))
			if err != nil {
				t.Fatal(err)
			}
			bothCommitted := rep.StatusA == history.Committed && rep.StatusB == history.Committed
			if lost := bothCommitted && rep.Final == 1; lost != tc.wantLost {
				t.Fatalf("lost update %v, want %v: %+v", lost, tc.wantLost, rep)
			}
			var final *history.Txn
			h := sink.History()
			for i := range h.Txns {
				if tx := &h.Txns[i]; tx.Session == tg.Prefix+"-lus-final" {
					final = tx
				}
			}
			if final == nil || final.Status != history.Committed {
				t.Fatalf("final read not recorded as committed: %+v", final)
			}
		})
	}
}
