package record

// The classifiers against errors the real servers and drivers produce
// (PostgreSQL at 127.0.0.1:5432 user postgres database test, MariaDB at
// 127.0.0.1:3306 root database test; skipped when absent, failing under
// CI=true), so that a driver upgrade that changes error shapes shows up.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/realdbtest"
)

func tableName(t *testing.T, db *sql.DB) string {
	var b [5]byte
	rand.Read(b[:])
	name := "sc_rec_" + hex.EncodeToString(b[:])
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS " + name) })
	return name
}

func mustExec(t *testing.T, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, q string, args ...any) {
	t.Helper()
	if _, err := x.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

const pgDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Write skew at SERIALIZABLE: PostgreSQL aborts one of the two with 40001,
// at a statement or at COMMIT; either way it is retryable, and at COMMIT it
// is aborted.
func TestRealPgSerializationFailure(t *testing.T) {
	db := realdbtest.Open(t, "pgx", pgDSN)
	ctx := context.Background()
	tb := tableName(t, db)
	mustExec(t, db, "CREATE TABLE "+tb+" (k INT PRIMARY KEY, v INT)")
	mustExec(t, db, "INSERT INTO "+tb+" VALUES (1, 0), (2, 0)")
	var txs [2]*sql.Tx
	for i := range txs {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		txs[i] = tx
		var sum int
		if err := tx.QueryRow("SELECT sum(v) FROM " + tb).Scan(&sum); err != nil {
			t.Fatal(err)
		}
	}
	var failed error
	var atCommit bool
	for i, tx := range txs {
		if _, err := tx.Exec("UPDATE "+tb+" SET v = 1 WHERE k = $1", i+1); err != nil {
			failed = err
			break
		}
	}
	if failed == nil {
		for _, tx := range txs {
			if err := tx.Commit(); err != nil {
				failed, atCommit = err, true
			}
		}
	}
	if failed == nil {
		t.Fatal("write skew committed at SERIALIZABLE")
	}
	t.Logf("at commit %v: %v", atCommit, failed)
	if !PgxRetryable(failed) {
		t.Errorf("PgxRetryable(%v) = false", failed)
	}
	if atCommit {
		if got := PgxOutcome(failed); got != history.Aborted {
			t.Errorf("PgxOutcome(%v) = %v, want aborted", failed, got)
		}
	}
}

// COMMIT of a transaction that already failed answers ROLLBACK without an
// error on the wire; pgx turns it into ErrTxCommitRollback: aborted.
func TestRealPgCommitAfterFailure(t *testing.T) {
	db := realdbtest.Open(t, "pgx", pgDSN)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("SELECT 1/0"); err == nil {
		t.Fatal("1/0 succeeded")
	}
	err = tx.Commit()
	if got := PgxOutcome(err); got != history.Aborted {
		t.Fatalf("PgxOutcome(%v) = %v, want aborted", err, got)
	}
}

// The backend is terminated while COMMIT runs (a deferred constraint
// trigger sleeps in it): the client cannot know the outcome, so unknown.
func TestRealPgTerminatedDuringCommit(t *testing.T) {
	db := realdbtest.Open(t, "pgx", pgDSN)
	ctx := context.Background()
	tb := tableName(t, db)
	fn := tb + "_slow"
	mustExec(t, db, "CREATE TABLE "+tb+" (k INT PRIMARY KEY)")
	mustExec(t, db, "CREATE FUNCTION "+fn+"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(5); RETURN NULL; END $$")
	t.Cleanup(func() { db.Exec("DROP FUNCTION IF EXISTS " + fn + "() CASCADE") })
	mustExec(t, db, "CREATE CONSTRAINT TRIGGER "+tb+"_t AFTER INSERT ON "+tb+" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "+fn+"()")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var pid int
	if err := conn.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, tx, "INSERT INTO "+tb+" VALUES (1)")
	done := make(chan error, 1)
	go func() { done <- tx.Commit() }()
	// Wait until the backend sleeps inside COMMIT, then terminate it.
	deadline := time.Now().Add(4 * time.Second)
	for {
		var waiting bool
		if err := db.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'PgSleep')", pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("COMMIT never reached the trigger")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mustExec(t, db, "SELECT pg_terminate_backend($1)", pid)
	err = <-done
	t.Logf("commit: %v", err)
	if got := PgxOutcome(err); got != history.Unknown {
		t.Fatalf("PgxOutcome(%v) = %v, want unknown", err, got)
	}
}

// Two transactions lock two rows in opposite orders: InnoDB kills one with
// 1213, which is retryable.
func TestRealMariaDBDeadlock(t *testing.T) {
	db := realdbtest.Open(t, "mysql", "root@tcp(127.0.0.1:3306)/test")
	ctx := context.Background()
	tb := tableName(t, db)
	mustExec(t, db, "CREATE TABLE "+tb+" (k INT PRIMARY KEY, v INT) ENGINE=InnoDB")
	mustExec(t, db, "INSERT INTO "+tb+" VALUES (1, 0), (2, 0)")
	var txs [2]*sql.Tx
	for i := range txs {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		txs[i] = tx
		mustExec(t, tx, "UPDATE "+tb+" SET v = 1 WHERE k = ?", i+1)
	}
	errs := make(chan error, 2)
	for i, tx := range txs {
		go func() {
			_, err := tx.Exec("UPDATE "+tb+" SET v = 2 WHERE k = ?", 2-i)
			if err != nil {
				tx.Rollback() // releases the locks the other waits for
			}
			errs <- err
		}()
	}
	var failed []error
	for range txs {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("want exactly one deadlock victim, got %v", failed)
	}
	if !MySQLRetryable(failed[0]) {
		t.Fatalf("MySQLRetryable(%v) = false", failed[0])
	}
	t.Logf("victim: %v", failed[0])
}
