package gen

import (
	"github.com/streamcheck/streamcheck/history"
)

// GenerateStampsStream is GenerateStream with the facts a database with
// commit and snapshot stamps would give (docs/SEMANTICS.md §10, the shape
// of CockroachDB's or TiDB's timestamps): the store executes each
// transaction atomically in one order, so a committed transaction's
// commit_ts is its place in that order and its start_ts the same number
// (it sees exactly the transactions executed before it); an unknown one
// gets its start_ts only (the client never learned the commit); aborted
// and injected transactions get none, so a history with injections is
// only partly stamped and the checker searches what the stamps leave
// open. The history's bytes apart from the facts are GenerateStream's for
// the same cfg.
func GenerateStampsStream(cfg Config, emit func(*history.Txn, history.Facts) error) ([]Injected, error) {
	return run(cfg, func(t *history.Txn, m meta) error {
		var f history.Facts
		if m.inj < 0 {
			ts := int64(m.exec)
			switch t.Status {
			case history.Committed:
				f = history.Facts{CommitTS: ts, StartTS: ts, Has: history.HasCommitTS | history.HasStartTS}
			case history.Unknown:
				f = history.Facts{StartTS: ts, Has: history.HasStartTS}
			}
		}
		return emit(t, f)
	})
}

// GenerateStamps is Generate with GenerateStampsStream's facts.
func GenerateStamps(cfg Config) (*history.History, []Injected, error) {
	h := &history.History{}
	inj, err := GenerateStampsStream(cfg, func(t *history.Txn, f history.Facts) error {
		h.Txns = append(h.Txns, *t)
		h.Facts = append(h.Facts, f)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return h, inj, nil
}
