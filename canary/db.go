package canary

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/record"
)

// target is the database under test and what every client shares.
type target struct {
	db      *sql.DB
	dialect Dialect
	iso     sql.IsolationLevel
	schema  string
	prefix  string
	cfg     *Config
	health  *health
	values  atomic.Int64 // unique values and list elements (C4)
}

// next returns a value no other write or append of the run uses.
func (tg *target) next() int64 { return tg.values.Add(1) }

// table is the qualified name of workload wl's table.
func (tg *target) table(wl string) string {
	name := tg.prefix + "_" + wl
	if tg.schema != "" {
		return tg.schema + "." + name
	}
	return name
}

// ph is the i-th (from 1) placeholder.
func (tg *target) ph(i int) string {
	if tg.dialect == MySQL {
		return "?"
	}
	return "$" + strconv.Itoa(i)
}

// exec runs a DDL statement outside any recorded transaction. It runs
// even when ctx is done, so that cleanup after an interrupt still happens.
func (tg *target) exec(ctx context.Context, q string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := tg.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("canary: %s: %w", q, err)
	}
	return nil
}

// createTable creates workload wl's table with a value column of type
// vtype (C5).
func (tg *target) createTable(ctx context.Context, wl, vtype string) error {
	q := "CREATE TABLE " + tg.table(wl) + " (k BIGINT PRIMARY KEY, v " + vtype + ")"
	if tg.dialect == MySQL {
		q += " ENGINE=InnoDB"
	}
	return tg.exec(ctx, q)
}

// health turns connection failures into reports: a lost connection that
// comes back on the first try is counted, a database that stays away is
// reported once when it goes and once when it is back.
type health struct {
	log        func(msg string, args ...any)
	mu         sync.Mutex
	down       bool
	since      time.Time
	reconnects int
	outages    int
	downtime   time.Duration
}

func (h *health) unreachable(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		return
	}
	h.down, h.since = true, time.Now()
	h.outages++
	h.log("database unreachable, retrying with backoff", "err", err)
}

// reconnected notes a connection made; replaced says it replaced a
// lost one.
func (h *health) reconnected(replaced bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if replaced {
		h.reconnects++
	}
	if !h.down {
		return
	}
	h.down = false
	d := time.Since(h.since)
	h.downtime += d
	h.log("database reachable again", "after", d.Round(time.Millisecond))
}

// client is one sequential session with its own connection (C1).
type client struct {
	tg      *target
	c       *sql.Conn
	session string
	rec     *record.Recorder
	rng     *rand.Rand
	// connected is set once the client had a connection: later ones
	// replace a lost one.
	connected bool
}

// connect opens the client's connection and prepares its session.
func (cl *client) connect(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cl.tg.cfg.TxnTimeout)
	defer cancel()
	c, err := cl.tg.db.Conn(ctx)
	if err != nil {
		return err
	}
	var setup []string
	lockWait := max(1, int(cl.tg.cfg.TxnTimeout/(2*time.Second)))
	if cl.tg.dialect == MySQL {
		// A lock wait must end well inside the transaction timeout.
		setup = append(setup, "SET SESSION innodb_lock_wait_timeout = "+strconv.Itoa(lockWait))
	} else {
		setup = append(setup,
			"SET application_name = '"+cl.tg.prefix+"'",
			"SET lock_timeout = '"+strconv.Itoa(lockWait*1000)+"ms'")
	}
	for _, q := range setup {
		if _, err := c.ExecContext(ctx, q); err != nil {
			discard(c)
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if cl.tg.dialect == MySQL && cl.tg.cfg.SnapshotIsolation != "" {
		_, err := c.ExecContext(ctx, "SET SESSION innodb_snapshot_isolation = "+cl.tg.cfg.SnapshotIsolation)
		var me *mysql.MySQLError
		// 1193: unknown system variable; servers without it behave as OFF.
		if err != nil && !(errors.As(err, &me) && me.Number == 1193 && cl.tg.cfg.SnapshotIsolation == "OFF") {
			discard(c)
			return fmt.Errorf("set innodb_snapshot_isolation: %w", err)
		}
	}
	cl.c = c
	return nil
}

// discard closes c and makes database/sql drop its driver connection
// instead of pooling a connection that may be broken.
func discard(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}

// reconnect replaces the client's connection, retrying with exponential
// backoff (50 ms doubling to 5 s, with jitter) until ctx is done (C6).
func (cl *client) reconnect(ctx context.Context) error {
	if cl.c != nil {
		discard(cl.c)
		cl.c = nil
	}
	backoff := 50 * time.Millisecond
	for {
		err := cl.connect(ctx)
		if err == nil {
			cl.tg.health.reconnected(cl.connected)
			cl.connected = true
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cl.tg.health.unreachable(err)
		sleep := backoff/2 + time.Duration(cl.rng.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// alive probes the connection after an error nobody expected.
func (cl *client) alive(ctx context.Context) bool {
	if cl.c == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	return cl.c.PingContext(ctx) == nil
}

func (cl *client) outcome(commitErr error) history.Status {
	return record.DriverOutcome(cl.tg.dialect.driver(), commitErr)
}

func (cl *client) retryable(err error) bool {
	if record.DriverRetryable(cl.tg.dialect.driver(), err) {
		return true
	}
	// 55P03 lock_not_available: our lock_timeout, the same refusal as
	// MySQL's lock wait timeout.
	var pe *pgconn.PgError
	return cl.tg.dialect == Postgres && errors.As(err, &pe) && pe.Code == "55P03"
}

// txn is one recorded database transaction (C2, C3).
type txn struct {
	cl  *client
	ctx context.Context
	rt  *record.Tx
	tx  *sql.Tx
}

// result is how a transaction ended: its recorded status, whether the
// database refused it in a way worth retrying, and an error the workload
// did not expect (nil for committed, refused or unknown transactions).
type result struct {
	status    history.Status
	retryable bool
	err       error
}

// sinkError is a failure to record a transaction: fatal, since the
// history would have a hole (a write nobody wrote, a false alarm).
type sinkError struct{ err error }

func (e sinkError) Error() string { return "canary: record transaction: " + e.err.Error() }
func (e sinkError) Unwrap() error { return e.err }

// begin takes the start time, then sends BEGIN at the requested level.
func (cl *client) begin(ctx context.Context) (*txn, error) {
	rt := cl.rec.Begin(cl.session)
	tx, err := cl.c.BeginTx(ctx, &sql.TxOptions{Isolation: cl.tg.iso})
	if err != nil {
		// COMMIT was never sent: nothing of it can be visible.
		if aerr := rt.Abort(); aerr != nil {
			return nil, sinkError{aerr}
		}
		return nil, err
	}
	x := &txn{cl: cl, ctx: ctx, rt: rt, tx: tx}
	if err := x.recordFacts(); err != nil {
		if r := x.fail(err); r.err != nil {
			return nil, r.err
		}
		return nil, err
	}
	return x, nil
}

// fail rolls back after a statement error and records an abort: COMMIT
// was never sent, so the server rolls back even if the connection is gone.
func (x *txn) fail(cause error) result {
	_ = x.tx.Rollback()
	if err := x.rt.Abort(); err != nil {
		return result{status: history.Aborted, err: sinkError{err}}
	}
	if x.cl.retryable(cause) {
		return result{status: history.Aborted, retryable: true}
	}
	return result{status: history.Aborted, err: cause}
}

// commit sends COMMIT and records the outcome its answer proves.
func (x *txn) commit() result {
	err := x.tx.Commit()
	st := x.cl.outcome(err)
	if rerr := x.rt.Finish(st); rerr != nil {
		return result{status: st, err: sinkError{rerr}}
	}
	switch {
	case err == nil:
		return result{status: st}
	case st == history.Aborted && x.cl.retryable(err):
		return result{status: st, retryable: true}
	case st == history.Unknown:
		// Expected under faults; the connection is probed by the caller.
		return result{status: st}
	}
	return result{status: st, err: err}
}

// key is the history key of row k of workload wl's table: the workloads'
// keys never collide, and registers never share a key with lists.
func key(wl string, k int64) string { return wl + ":" + strconv.FormatInt(k, 10) }

func (x *txn) readInt(wl string, k int64) (sql.NullInt64, error) {
	var v sql.NullInt64
	err := x.tx.QueryRowContext(x.ctx, "SELECT v FROM "+x.cl.tg.table(wl)+" WHERE k = "+x.cl.tg.ph(1), k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err == nil {
		x.rt.Read(key(wl, k), v)
	}
	return v, err
}

// readAll reads every row of wl's table in one statement (one snapshot
// even at read committed) and returns them by k.
func (x *txn) readAll(wl string) (map[int64]int64, error) {
	rows, err := x.tx.QueryContext(x.ctx, "SELECT k, v FROM "+x.cl.tg.table(wl)+" ORDER BY k")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]int64{}
	var ks []int64
	for rows.Next() {
		var k, v int64
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
		ks = append(ks, k)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, k := range ks {
		x.rt.Read(key(wl, k), out[k])
	}
	return out, nil
}

// upsert writes v to row k whether or not it exists.
func (x *txn) upsert(wl string, k, v int64) error {
	tb := x.cl.tg.table(wl)
	q := "INSERT INTO " + tb + " (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v"
	if x.cl.tg.dialect == MySQL {
		q = "INSERT INTO " + tb + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
	}
	if _, err := x.tx.ExecContext(x.ctx, q, k, v); err != nil {
		return err
	}
	x.rt.Write(key(wl, k), v)
	return nil
}

// errNoRow: an UPDATE matched no row, which no workload expects.
var errNoRow = errors.New("canary: update matched no row")

// update sets an existing row to a value the client computed.
func (x *txn) update(wl string, k, v int64) error {
	tg := x.cl.tg
	res, err := x.tx.ExecContext(x.ctx, "UPDATE "+tg.table(wl)+" SET v = "+tg.ph(1)+" WHERE k = "+tg.ph(2), v, k)
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
	x.rt.Write(key(wl, k), v)
	return nil
}

// appendElem appends e to the comma-separated list in row k, creating it.
func (x *txn) appendElem(wl string, k, e int64) error {
	tb := x.cl.tg.table(wl)
	q := "INSERT INTO " + tb + " AS t (k, v) VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = t.v || ',' || EXCLUDED.v"
	if x.cl.tg.dialect == MySQL {
		q = "INSERT INTO " + tb + " (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', VALUES(v))"
	}
	if _, err := x.tx.ExecContext(x.ctx, q, k, strconv.FormatInt(e, 10)); err != nil {
		return err
	}
	x.rt.Append(key(wl, k), e)
	return nil
}

// readList reads row k's list; an absent row is the empty list.
func (x *txn) readList(wl string, k int64) error {
	var v sql.NullString
	err := x.tx.QueryRowContext(x.ctx, "SELECT v FROM "+x.cl.tg.table(wl)+" WHERE k = "+x.cl.tg.ph(1), k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return err
	}
	var list []int64
	if v.Valid && v.String != "" {
		for _, s := range strings.Split(v.String, ",") {
			e, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("canary: list %s row %d holds %q: %w", wl, k, v.String, err)
			}
			list = append(list, e)
		}
	}
	x.rt.ReadList(key(wl, k), list)
	return nil
}
