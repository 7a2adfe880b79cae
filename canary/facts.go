package canary

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// PostgreSQL's facts (Config.Facts; docs/SEMANTICS.md §10). The first
// statement of every transaction asks for its transaction id and its
// snapshot:
//
//	SELECT pg_current_xact_id()::text, pg_current_snapshot()::text
//
// At REPEATABLE READ and SERIALIZABLE the first statement takes the
// snapshot that every later statement of the transaction uses, so the
// snapshot returned is the one all its reads saw; the xid is assigned
// during that statement, after the snapshot, so the transaction never
// sees itself through it. A committed transaction with xid X is visible
// in the snapshot (xmin, xmax, xip) iff X < xmax and X is not in xip
// (history.Snapshot.Sees): exactly the transactions that had committed
// when the snapshot was taken. At READ COMMITTED each statement takes a
// new snapshot, so there is no one snapshot to record: New refuses Facts
// there. Nothing on the server needs turning on (track_commit_timestamp
// is not used: commit timestamps are not the order in which commits
// become visible).
const factsQuery = "SELECT pg_current_xact_id()::text, pg_current_snapshot()::text"

// checkFacts refuses Config.Facts where it cannot be exact.
func checkFacts(cfg *Config, d Dialect) error {
	if !cfg.Facts {
		return nil
	}
	if d != Postgres {
		return errors.New("facts: only PostgreSQL's (xid and snapshot) are recorded; MySQL/MariaDB give none")
	}
	if cfg.Isolation != sql.LevelRepeatableRead && cfg.Isolation != sql.LevelSerializable {
		return fmt.Errorf("facts: isolation %s takes a snapshot per statement; record facts at REPEATABLE READ or SERIALIZABLE", IsolationName(cfg.Isolation))
	}
	return nil
}

// recordFacts runs the facts query as the transaction's first statement
// and records what it returned.
func (x *txn) recordFacts() error {
	if !x.cl.tg.cfg.Facts {
		return nil
	}
	var xid, snap string
	if err := x.tx.QueryRowContext(x.ctx, factsQuery).Scan(&xid, &snap); err != nil {
		return err
	}
	n, err := strconv.ParseUint(xid, 10, 64)
	if err != nil {
		return fmt.Errorf("facts: xid %q: %w", xid, err)
	}
	s, err := history.ParseSnapshot(snap)
	if err != nil {
		return fmt.Errorf("facts: %w", err)
	}
	x.rt.SetFacts(history.Facts{Xid: n, Snap: s, Has: history.HasXid | history.HasSnapshot})
	return nil
}
