package dbworkload

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/record"
)

// CounterConfig shapes the read-then-write counter workload.
type CounterConfig struct {
	// Clients increment one counter concurrently, each on its own
	// connection and session.
	Clients int
	// Increments is the number of increments each client attempts.
	Increments int
	// Pause is slept between the read and the write, widening the window
	// in which another client reads the same value.
	Pause time.Duration

	_ struct{}
}

// CounterReport is a Report with the counter's arithmetic.
type CounterReport struct {
	Report
	// Final is the counter's value read after every client finished.
	Final int64
}

// LostUpdates is what the arithmetic proves: committed increments that
// left no trace in the final value. Unknown outcomes can only add to the
// final value, so a positive number is a proof.
func (r CounterReport) LostUpdates() int64 { return int64(r.Committed) - r.Final }

// Counter runs the counter workload on a fresh table: a recorded setup
// transaction inserts row 0 with v = 0; then each client repeats: read
// v with SELECT, compute v+1 in the client, UPDATE ... SET v = <that
// number> (not v = v+1, which PostgreSQL never loses), commit. A final
// recorded transaction reads v. Sessions are "<prefix>-ctr-c<i>",
// "<prefix>-ctr-setup" and "<prefix>-ctr-final". The report's Committed
// counts committed increments only.
func Counter(ctx context.Context, tg *Target, cfg CounterConfig, rec *record.Recorder) (CounterReport, error) {
	var rep CounterReport
	if cfg.Clients < 1 || cfg.Increments < 0 {
		return rep, fmt.Errorf("dbworkload: counter: bad config %+v", cfg)
	}
	tb, err := tg.createTable(ctx, "ctr")
	if err != nil {
		return rep, err
	}
	defer tb.drop(ctx)
	const key = 0
	if err := setup(ctx, tg, tb, rec, tg.prefix()+"-ctr-setup", key, 0); err != nil {
		return rep, err
	}
	rep.Report, err = runClients(ctx, cfg.Clients, func(ctx context.Context, client int) (Report, error) {
		return counterClient(ctx, tg, tb, cfg, rec, client, key)
	})
	if err != nil {
		return rep, err
	}
	v, err := readFinal(ctx, tg, tb, rec, tg.prefix()+"-ctr-final", key)
	if err != nil {
		return rep, err
	}
	if !v.Valid {
		return rep, fmt.Errorf("dbworkload: counter row vanished")
	}
	rep.Final = v.Int64
	return rep, nil
}

// setup inserts row k = v in a recorded committed transaction, so that
// every later read has a writer in the history.
func setup(ctx context.Context, tg *Target, tb *table, rec *record.Recorder, session string, k, v int64) error {
	c, err := tg.conn(ctx, rec, session)
	if err != nil {
		return err
	}
	defer c.close()
	x, err := c.begin(ctx)
	if err != nil {
		return err
	}
	if err := x.upsert(ctx, tb, k, v); err != nil {
		x.fail(err)
		return err
	}
	st, _, err := x.commit()
	if err == nil && st != history.Committed {
		err = fmt.Errorf("dbworkload: setup ended %v", st)
	}
	return err
}

// readFinal reads row k in a recorded transaction of its own session,
// once the clients are done, so that the history holds the value the
// workload's arithmetic is checked against.
func readFinal(ctx context.Context, tg *Target, tb *table, rec *record.Recorder, session string, k int64) (sql.NullInt64, error) {
	c, err := tg.conn(ctx, rec, session)
	if err != nil {
		return sql.NullInt64{}, err
	}
	defer c.close()
	x, err := c.begin(ctx)
	if err != nil {
		return sql.NullInt64{}, err
	}
	v, err := x.read(ctx, tb, k)
	if err != nil {
		x.fail(err)
		return sql.NullInt64{}, err
	}
	if _, _, err := x.commit(); err != nil {
		return sql.NullInt64{}, err
	}
	return v, nil
}

func counterClient(ctx context.Context, tg *Target, tb *table, cfg CounterConfig, rec *record.Recorder, client int, key int64) (Report, error) {
	var rep Report
	c, err := tg.conn(ctx, rec, fmt.Sprintf("%s-ctr-c%d", tg.prefix(), client))
	if err != nil {
		return rep, err
	}
	defer c.close()
	for n := 0; n < cfg.Increments; n++ {
		st, retry, err := increment(ctx, c, tb, key, cfg.Pause)
		if err != nil {
			return rep, err
		}
		rep.add(st, retry)
	}
	return rep, nil
}

func increment(ctx context.Context, c *conn, tb *table, key int64, pause time.Duration) (history.Status, bool, error) {
	x, err := c.begin(ctx)
	if err != nil {
		return history.Aborted, c.retryable(err), retryOrErr(c, err)
	}
	v, err := x.read(ctx, tb, key)
	if err != nil {
		return x.fail(err)
	}
	if !v.Valid {
		return x.fail(fmt.Errorf("dbworkload: counter row missing"))
	}
	if pause > 0 {
		time.Sleep(pause)
	}
	if err := x.update(ctx, tb, key, v.Int64+1); err != nil {
		return x.fail(err)
	}
	return x.commit()
}
