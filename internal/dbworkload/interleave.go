package dbworkload

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/record"
)

// InterleaveReport says how the two clients of LostUpdate ended.
type InterleaveReport struct {
	// A and B are the two increments' transaction ids and outcomes.
	A, B             string
	StatusA, StatusB history.Status
	// Final is the value read afterwards; 1 after a lost update (both
	// committed 0+1), 2 if the database stopped it.
	Final int64
}

// LostUpdate runs one deterministic interleaving of two increments of key
// 0, each client on its own connection and session, the order forced with
// channels:
//
//	A: BEGIN; SELECT v          (reads 0, or absent)
//	B: BEGIN; SELECT v          (reads the same)
//	A: write v = 1; COMMIT
//	B: write v = 1; COMMIT
//
// At READ COMMITTED (PostgreSQL) or REPEATABLE READ without
// innodb_snapshot_isolation (MariaDB) both commit and one increment is
// lost; a serializable database aborts B at its write or its COMMIT.
// With seeded, a recorded setup transaction first inserts v = 0 and the
// writes are UPDATEs; without, the row starts absent (the table is new),
// both reads return absent and the writes are upserts. A final recorded
// transaction reads v.
func LostUpdate(ctx context.Context, tg *Target, seeded bool, rec *record.Recorder) (InterleaveReport, error) {
	var rep InterleaveReport
	suffix := "lu"
	if seeded {
		suffix = "lus"
	}
	tb, err := tg.createTable(ctx, suffix)
	if err != nil {
		return rep, err
	}
	defer tb.drop(ctx)
	const key = 0
	base := tg.prefix() + "-" + suffix
	if seeded {
		if err := setup(ctx, tg, tb, rec, base+"-setup", key, 0); err != nil {
			return rep, err
		}
	}
	ca, err := tg.conn(ctx, rec, base+"-a")
	if err != nil {
		return rep, err
	}
	defer ca.close()
	cb, err := tg.conn(ctx, rec, base+"-b")
	if err != nil {
		return rep, err
	}
	defer cb.close()
	if tg.Dialect == MariaDB {
		// Where reads take locks (SERIALIZABLE), A's write waits for B's
		// shared lock while B waits for A on a channel; a short lock wait
		// ends that with 1205 (A aborted) instead of the 50 s default.
		for _, c := range []*conn{ca, cb} {
			if _, err := c.c.ExecContext(ctx, "SET SESSION innodb_lock_wait_timeout = 1"); err != nil {
				return rep, err
			}
		}
	}

	// Each channel is closed when its step is done; failed is closed when
	// either client gives up, so that the other never waits forever.
	aRead, bRead, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	failed := make(chan struct{})
	errStopped := errors.New("dbworkload: other client failed")
	wait := func(ch chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-failed:
			return errStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	type result struct {
		id  string
		st  history.Status
		err error
	}
	var once sync.Once
	stop := func() { once.Do(func() { close(failed) }) }
	// client runs one increment: it begins after startAfter (if any),
	// reads, closes readDone, writes after writeAfter, and closes done
	// once its write has succeeded or failed.
	client := func(c *conn, startAfter, readDone, writeAfter, done chan struct{}) result {
		if startAfter != nil {
			if err := wait(startAfter); err != nil {
				return result{err: err}
			}
		}
		x, err := c.begin(ctx)
		if err != nil {
			return result{err: err}
		}
		r := result{id: x.rt.ID()}
		v, err := x.read(ctx, tb, key)
		if err != nil {
			r.st, _, _ = x.fail(err)
			r.err = err
			return r
		}
		close(readDone)
		if err := wait(writeAfter); err != nil {
			r.st, _, _ = x.fail(err)
			r.err = err
			return r
		}
		if seeded {
			err = x.update(ctx, tb, key, v.Int64+1)
		} else {
			err = x.upsert(ctx, tb, key, v.Int64+1) // absent reads as 0
		}
		if err != nil {
			// A serializable database refuses here: an expected outcome.
			r.st, _, r.err = x.fail(err)
			if c.retryable(err) {
				r.err = nil
			}
			close(done)
			return r
		}
		var retry bool
		r.st, retry, r.err = x.commit()
		if retry {
			r.err = nil
		}
		close(done)
		return r
	}
	resA := make(chan result, 1)
	go func() {
		// A reads first, then waits until B has read before writing.
		r := client(ca, nil, aRead, bRead, aDone)
		if r.err != nil {
			stop()
		}
		resA <- r
	}()
	rb := client(cb, aRead, bRead, aDone, make(chan struct{}))
	if rb.err != nil {
		stop()
	}
	ra := <-resA
	if err := errors.Join(ra.err, rb.err); err != nil {
		return rep, fmt.Errorf("dbworkload: lost-update interleaving: %w", err)
	}
	rep.A, rep.StatusA, rep.B, rep.StatusB = ra.id, ra.st, rb.id, rb.st

	v, err := readFinal(ctx, tg, tb, rec, base+"-final", key)
	if err != nil {
		return rep, err
	}
	rep.Final = v.Int64
	return rep, nil
}
