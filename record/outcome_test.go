package record

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamcheck/streamcheck/history"
)

// notSent is an error pgconn.SafeToRetry accepts: nothing reached the
// server.
type notSent struct{}

func (notSent) Error() string     { return "not sent" }
func (notSent) SafeToRetry() bool { return true }

func pgErr(sev, code string) error {
	return &pgconn.PgError{Severity: sev, SeverityUnlocalized: sev, Code: code, Message: "m"}
}

func TestPgxOutcome(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("commit: %w", err) }
	for _, c := range []struct {
		err       error
		want      history.Status
		retryable bool
	}{
		{nil, history.Committed, false},
		{pgx.ErrTxCommitRollback, history.Aborted, false},
		{wrap(pgx.ErrTxCommitRollback), history.Aborted, false},
		{pgErr("ERROR", "40001"), history.Aborted, true},
		{wrap(pgErr("ERROR", "40001")), history.Aborted, true},
		{pgErr("ERROR", "40P01"), history.Aborted, true},
		{pgErr("ERROR", "23505"), history.Aborted, false},
		{pgErr("ERROR", "40003"), history.Unknown, false},
		{pgErr("FATAL", "57P01"), history.Unknown, false},
		{pgErr("PANIC", "XX000"), history.Unknown, false},
		// A localized severity alone ("ERREUR") is not trusted.
		{&pgconn.PgError{Severity: "ERREUR", Code: "40001"}, history.Unknown, true},
		{&pgconn.PgError{Severity: "ERROR", Code: "40001"}, history.Aborted, true},
		{notSent{}, history.Aborted, false},
		{wrap(notSent{}), history.Aborted, false},
		{io.EOF, history.Unknown, false},
		{io.ErrUnexpectedEOF, history.Unknown, false},
		{&net.OpError{Op: "read", Err: errors.New("connection reset")}, history.Unknown, false},
		{context.Canceled, history.Unknown, false},
		{context.DeadlineExceeded, history.Unknown, false},
		{driver.ErrBadConn, history.Unknown, false},
		{errors.New("conn closed"), history.Unknown, false},
	} {
		if got := PgxOutcome(c.err); got != c.want {
			t.Errorf("PgxOutcome(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := PgxRetryable(c.err); got != c.retryable {
			t.Errorf("PgxRetryable(%v) = %v, want %v", c.err, got, c.retryable)
		}
		for _, name := range []string{"pgx", "pgx/v5"} {
			if got := DriverOutcome(name, c.err); got != c.want {
				t.Errorf("DriverOutcome(%q, %v) = %v, want %v", name, c.err, got, c.want)
			}
			if got := DriverRetryable(name, c.err); got != c.retryable {
				t.Errorf("DriverRetryable(%q, %v) = %v, want %v", name, c.err, got, c.retryable)
			}
		}
	}
}

func TestMySQLOutcome(t *testing.T) {
	my := func(n uint16) error { return &mysql.MySQLError{Number: n, Message: "m"} }
	for _, c := range []struct {
		err       error
		want      history.Status
		retryable bool
	}{
		{nil, history.Committed, false},
		{my(1213), history.Aborted, true},
		{fmt.Errorf("commit: %w", my(1213)), history.Aborted, true},
		{my(1205), history.Aborted, true},
		{my(1020), history.Unknown, true},
		{my(1180), history.Unknown, false}, // "Got error during COMMIT"
		{my(1062), history.Unknown, false},
		{driver.ErrBadConn, history.Unknown, false},
		{mysql.ErrInvalidConn, history.Unknown, false},
		{io.EOF, history.Unknown, false},
		{context.Canceled, history.Unknown, false},
	} {
		if got := MySQLOutcome(c.err); got != c.want {
			t.Errorf("MySQLOutcome(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := MySQLRetryable(c.err); got != c.retryable {
			t.Errorf("MySQLRetryable(%v) = %v, want %v", c.err, got, c.retryable)
		}
		if got := DriverOutcome("mysql", c.err); got != c.want {
			t.Errorf("DriverOutcome(mysql, %v) = %v, want %v", c.err, got, c.want)
		}
		if got := DriverRetryable("mysql", c.err); got != c.retryable {
			t.Errorf("DriverRetryable(mysql, %v) = %v, want %v", c.err, got, c.retryable)
		}
	}
}

// A driver with no classifier must not get a guessed outcome (R4).
func TestDriverOutcomeUnknownDriverPanics(t *testing.T) {
	for _, call := range []func(){
		func() { DriverOutcome("sqlite3", nil) },
		func() { DriverRetryable("sqlite3", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for driver sqlite3")
				}
			}()
			call()
		}()
	}
}
