package record

import (
	"errors"
	"strconv"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamcheck/streamcheck/history"
)

// The classifiers below answer one question: given the error COMMIT
// returned, did the transaction commit? They say Unknown whenever the
// answer is not certain (doc.go, invariant R4). An error from any
// statement before COMMIT needs no classifier: the application rolls back
// (or the connection is gone, and the server rolls back), so the
// transaction is aborted; the Retryable functions say whether running it
// again is worthwhile.

// PgxOutcome classifies the error of a COMMIT sent through pgx (native or
// through database/sql with pgx/v5/stdlib):
//   - nil: committed.
//   - pgx.ErrTxCommitRollback: the server answered ROLLBACK (the
//     transaction had already failed): aborted.
//   - a server error of severity ERROR (40001 serialization_failure, 40P01
//     deadlock_detected, a deferred constraint's 23xxx, ...): PostgreSQL
//     rolls back a transaction whose COMMIT fails, so aborted; except 40003
//     statement_completion_unknown, which says the opposite.
//   - an error pgconn marks safe to retry (nothing was sent, so COMMIT never
//     reached the server, which rolls back when the connection closes):
//     aborted.
//   - anything else (FATAL or PANIC from the server, connection lost,
//     timeout, cancelled context): unknown.
func PgxOutcome(commitErr error) history.Status {
	if commitErr == nil {
		return history.Committed
	}
	if errors.Is(commitErr, pgx.ErrTxCommitRollback) {
		return history.Aborted
	}
	var pe *pgconn.PgError
	if errors.As(commitErr, &pe) {
		sev := pe.SeverityUnlocalized
		if sev == "" {
			sev = pe.Severity
		}
		// FATAL/PANIC end the session; the commit record may already be
		// flushed when they are sent.
		if sev == "ERROR" && pe.Code != "40003" {
			return history.Aborted
		}
		return history.Unknown
	}
	if pgconn.SafeToRetry(commitErr) {
		return history.Aborted
	}
	return history.Unknown
}

// PgxRetryable reports whether err is a serialization failure (40001) or
// a deadlock (40P01): the server aborted the transaction and running it
// again may succeed.
func PgxRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// MySQL and MariaDB error numbers after which InnoDB has rolled back the
// whole transaction.
const (
	mysqlLockDeadlock    = 1213 // ER_LOCK_DEADLOCK
	mysqlLockWaitTimeout = 1205 // ER_LOCK_WAIT_TIMEOUT
	mysqlCheckRead       = 1020 // ER_CHECKREAD: innodb_snapshot_isolation=ON saw a newer version
)

// MySQLOutcome classifies the error of a COMMIT sent through
// github.com/go-sql-driver/mysql (MySQL or MariaDB):
//   - nil: committed.
//   - server error 1213 (deadlock) or 1205 (lock wait timeout): aborted.
//   - anything else (another server error, driver.ErrBadConn,
//     mysql.ErrInvalidConn, io.EOF, a network error, a cancelled context):
//     unknown. The driver returns driver.ErrBadConn only when nothing was
//     written, but database/sql and connection poolers in between do not
//     promise it, so it stays unknown.
func MySQLOutcome(commitErr error) history.Status {
	if commitErr == nil {
		return history.Committed
	}
	var me *mysql.MySQLError
	if errors.As(commitErr, &me) {
		switch me.Number {
		case mysqlLockDeadlock, mysqlLockWaitTimeout:
			return history.Aborted
		}
	}
	return history.Unknown
}

// MySQLRetryable reports whether err is a deadlock (1213), a lock wait
// timeout (1205) or a snapshot-isolation write conflict (1020): running
// the transaction again may succeed. After 1205 InnoDB rolls back only the
// statement unless innodb_rollback_on_timeout is set, so the application
// must roll back itself, as after any error.
func MySQLRetryable(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case mysqlLockDeadlock, mysqlLockWaitTimeout, mysqlCheckRead:
		return true
	}
	return false
}

// DriverOutcome classifies COMMIT's error for code that speaks to either
// database through database/sql: driverName is the name the driver is
// registered under, "pgx" or "pgx/v5" (pgx/v5/stdlib: PgxOutcome) or
// "mysql" (go-sql-driver/mysql: MySQLOutcome). Another name panics: there
// is no classifier for its errors, and a guessed outcome would break R4.
func DriverOutcome(driverName string, commitErr error) history.Status {
	if isMySQLDriver(driverName) {
		return MySQLOutcome(commitErr)
	}
	return PgxOutcome(commitErr)
}

// DriverRetryable is PgxRetryable or MySQLRetryable, picked by the
// database/sql driver name as DriverOutcome picks its classifier.
func DriverRetryable(driverName string, err error) bool {
	if isMySQLDriver(driverName) {
		return MySQLRetryable(err)
	}
	return PgxRetryable(err)
}

func isMySQLDriver(driverName string) bool {
	switch driverName {
	case "mysql":
		return true
	case "pgx", "pgx/v5":
		return false
	}
	panic("record: no COMMIT classifier for database/sql driver " + strconv.Quote(driverName))
}
