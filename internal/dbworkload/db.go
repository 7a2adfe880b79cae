package dbworkload

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/record"
)

// Dialect is the SQL spoken by the server under test.
type Dialect uint8

const (
	// Postgres: PostgreSQL through github.com/jackc/pgx/v5/stdlib ("pgx").
	Postgres Dialect = iota
	// MariaDB: MariaDB (or MySQL) through github.com/go-sql-driver/mysql
	// ("mysql").
	MariaDB
)

func (d Dialect) String() string {
	if d == MariaDB {
		return "mariadb"
	}
	return "postgres"
}

// Driver is the database/sql driver name for d.
func (d Dialect) Driver() string {
	if d == MariaDB {
		return "mysql"
	}
	return "pgx"
}

// Open opens dsn with d's driver and pings it within timeout, so that a
// missing server shows up here, not in the middle of a workload. For
// MariaDB it sets the driver's clientFoundRows: an UPDATE's row count is
// then the rows it matched, not the rows whose value changed, and a lost
// update writes the value the row already holds. A *sql.DB opened
// elsewhere for a Target must do the same.
func Open(ctx context.Context, d Dialect, dsn string, timeout time.Duration) (*sql.DB, error) {
	if d == MariaDB {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return nil, fmt.Errorf("dbworkload: %w", err)
		}
		cfg.ClientFoundRows = true
		dsn = cfg.FormatDSN()
	}
	db, err := sql.Open(d.Driver(), dsn)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("dbworkload: %s at %s: %w", d, redact(dsn), err)
	}
	return db, nil
}

// redact drops a DSN's password, if any, for error messages.
func redact(dsn string) string {
	for i := 0; i < len(dsn); i++ {
		if dsn[i] == '@' {
			return "…" + dsn[i:]
		}
	}
	return dsn
}

// Target is a database under test.
type Target struct {
	DB      *sql.DB
	Dialect Dialect
	// Isolation is requested for every transaction (BEGIN ISOLATION LEVEL
	// on PostgreSQL, SET TRANSACTION ISOLATION LEVEL on MariaDB, both
	// through sql.TxOptions).
	Isolation sql.IsolationLevel
	// SnapshotIsolationOff sets innodb_snapshot_isolation=OFF on every
	// MariaDB connection (where the server has that variable), so that
	// REPEATABLE READ behaves as it did before MariaDB 11.6: a write over
	// a version newer than the snapshot is allowed, which loses updates.
	SnapshotIsolationOff bool
	// Prefix names the workload's tables; empty picks a random one.
	// Tables are created at the start and dropped at the end.
	Prefix string
}

// Report counts what a workload did.
type Report struct {
	Committed, Aborted, Unknown int
	// Retryable counts aborts the driver called retryable (serialization
	// failures, deadlocks, lock wait timeouts).
	Retryable int
}

func (r *Report) add(st history.Status, retryable bool) {
	switch st {
	case history.Committed:
		r.Committed++
	case history.Aborted:
		r.Aborted++
	default:
		r.Unknown++
	}
	if retryable {
		r.Retryable++
	}
}

func (r *Report) merge(o Report) {
	r.Committed += o.Committed
	r.Aborted += o.Aborted
	r.Unknown += o.Unknown
	r.Retryable += o.Retryable
}

// runClients runs client(ctx, i) for i in [0, n) concurrently and sums
// their reports. The first client to fail cancels the others' context,
// and its error is returned with the sum of what every client did.
func runClients(ctx context.Context, n int, client func(ctx context.Context, i int) (Report, error)) (Report, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total Report
		errs  []error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := client(ctx, i)
			mu.Lock()
			total.merge(r)
			if err != nil {
				errs = append(errs, fmt.Errorf("client %d: %w", i, err))
				cancel()
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return total, errs[0]
	}
	return total, nil
}

// randomPrefix is unique enough that concurrent test runs on one server
// never share tables.
func randomPrefix() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return "sc_" + hex.EncodeToString(b[:])
}

// table is one kv(k int primary key, v int) table of a workload.
type table struct {
	t    *Target
	name string
}

func (tg *Target) prefix() string {
	if tg.Prefix == "" {
		tg.Prefix = randomPrefix()
	}
	return tg.Prefix
}

// createTable creates <prefix>_<suffix>; the caller drops it with drop.
func (tg *Target) createTable(ctx context.Context, suffix string) (*table, error) {
	name := tg.prefix() + "_" + suffix
	q := "CREATE TABLE " + name + " (k INT PRIMARY KEY, v INT)"
	if tg.Dialect == MariaDB {
		q += " ENGINE=InnoDB"
	}
	if _, err := tg.DB.ExecContext(ctx, q); err != nil {
		return nil, fmt.Errorf("dbworkload: create %s: %w", name, err)
	}
	return &table{t: tg, name: name}, nil
}

// drop runs even when ctx is done, so that a cancelled test leaves no
// tables behind.
func (tb *table) drop(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := tb.t.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+tb.name)
	return err
}

func (tb *table) ph(i int) string {
	if tb.t.Dialect == MariaDB {
		return "?"
	}
	return fmt.Sprintf("$%d", i)
}

func (tb *table) selectSQL() string {
	return "SELECT v FROM " + tb.name + " WHERE k = " + tb.ph(1)
}

// upsertSQL writes v to k whether or not the row exists.
func (tb *table) upsertSQL() string {
	if tb.t.Dialect == MariaDB {
		return "INSERT INTO " + tb.name + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
	}
	return "INSERT INTO " + tb.name + " (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
}

// updateSQL sets v of an existing row to a value computed by the client.
func (tb *table) updateSQL() string {
	return "UPDATE " + tb.name + " SET v = " + tb.ph(1) + " WHERE k = " + tb.ph(2)
}

// conn is one client: its own connection and session.
type conn struct {
	t       *Target
	c       *sql.Conn
	session string
	rec     *record.Recorder
}

func (tg *Target) conn(ctx context.Context, rec *record.Recorder, session string) (*conn, error) {
	c, err := tg.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if tg.Dialect == MariaDB && tg.SnapshotIsolationOff {
		_, err := c.ExecContext(ctx, "SET SESSION innodb_snapshot_isolation = OFF")
		var me *mysql.MySQLError
		// 1193: unknown system variable (servers before the variable
		// existed behave as OFF).
		if err != nil && !(errors.As(err, &me) && me.Number == 1193) {
			c.Close()
			return nil, fmt.Errorf("dbworkload: set innodb_snapshot_isolation: %w", err)
		}
	}
	return &conn{t: tg, c: c, session: session, rec: rec}, nil
}

func (c *conn) close() { c.c.Close() }

// txn is one recorded database transaction.
type txn struct {
	c  *conn
	rt *record.Tx
	tx *sql.Tx
}

// begin takes the start time, then sends BEGIN at the target's level.
func (c *conn) begin(ctx context.Context) (*txn, error) {
	rt := c.rec.Begin(c.session)
	tx, err := c.c.BeginTx(ctx, &sql.TxOptions{Isolation: c.t.Isolation})
	if err != nil {
		// No COMMIT was sent: nothing of it can be visible.
		_ = rt.Abort()
		return nil, err
	}
	return &txn{c: c, rt: rt, tx: tx}, nil
}

func (x *txn) read(ctx context.Context, tb *table, k int64) (sql.NullInt64, error) {
	var v sql.NullInt64
	err := x.tx.QueryRowContext(ctx, tb.selectSQL(), k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err == nil {
		x.rt.Read(k, v)
	}
	return v, err
}

func (x *txn) upsert(ctx context.Context, tb *table, k, v int64) error {
	_, err := x.tx.ExecContext(ctx, tb.upsertSQL(), k, v)
	if err == nil {
		x.rt.Write(k, v)
	}
	return err
}

// errNoRow: an UPDATE found no row, which the workloads never expect.
var errNoRow = errors.New("dbworkload: update found no row")

func (x *txn) update(ctx context.Context, tb *table, k, v int64) error {
	res, err := x.tx.ExecContext(ctx, tb.updateSQL(), v, k)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return errNoRow
	}
	x.rt.Write(k, v)
	return nil
}

// fail rolls back after a statement error and records an abort: COMMIT was
// never sent.
func (x *txn) fail(cause error) (history.Status, bool, error) {
	_ = x.tx.Rollback()
	if err := x.rt.Abort(); err != nil {
		return history.Aborted, false, err
	}
	if x.c.retryable(cause) {
		return history.Aborted, true, nil
	}
	return history.Aborted, false, cause
}

// commit sends COMMIT and records the outcome the driver's answer proves.
func (x *txn) commit() (history.Status, bool, error) {
	err := x.tx.Commit()
	st := x.c.outcome(err)
	if rerr := x.rt.Finish(st); rerr != nil {
		return st, false, rerr
	}
	switch {
	case err == nil:
		return st, false, nil
	case st == history.Aborted && x.c.retryable(err):
		return st, true, nil
	}
	return st, false, err
}

func (c *conn) outcome(commitErr error) history.Status {
	return record.DriverOutcome(c.t.Dialect.Driver(), commitErr)
}

func (c *conn) retryable(err error) bool {
	return record.DriverRetryable(c.t.Dialect.Driver(), err)
}
