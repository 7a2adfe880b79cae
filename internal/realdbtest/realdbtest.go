// Package realdbtest opens the real database servers that tests run
// against (PostgreSQL at 127.0.0.1:5432 and MariaDB at 127.0.0.1:3306,
// README.md "Testing against real parts") under one rule: a server that does
// not answer skips the test, except under CI=true, where it fails it, so
// that a CI machine without the servers cannot pass by skipping. Only
// tests import it: it calls t.Skip and t.Fatal.
package realdbtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // registers "mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// PingTimeout bounds the wait for a server: long enough for a loaded
// machine, short enough that a missing server costs little.
const PingTimeout = 3 * time.Second

// Open opens dsn with the database/sql driver registered as driverName
// ("pgx" or "mysql") and pings it within PingTimeout; an unreachable
// server is Unreachable. The database is closed when the test ends.
func Open(t testing.TB, driverName, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), PingTimeout)
		err = db.PingContext(ctx)
		cancel()
	}
	if err != nil {
		Unreachable(t, driverName, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Unreachable ends the test for a server that did not answer (err):
// skipped, or failed under CI=true. For tests whose package opens the
// server its own way.
func Unreachable(t testing.TB, server string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s required under CI=true: %v", server, err)
	}
	t.Skipf("%s not reachable, skipping: %v", server, err)
}
