package history

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Facts are what the database itself said about one transaction, beside
// what the client observed (docs/SEMANTICS.md §10):
//
//   - CommitTS, its commit stamp: the database's commit order, comparable
//     within one stream; equal stamps leave the two transactions unordered.
//   - StartTS, its snapshot stamp: it sees exactly the committed
//     transactions whose CommitTS is below its StartTS.
//   - Xid and Snap, PostgreSQL's transaction id and the snapshot
//     pg_current_snapshot() returned inside it: it sees exactly the
//     committed transactions whose Xid the snapshot shows (Snapshot.Sees).
//
// Any subset may be present; Has says which.
type Facts struct {
	CommitTS, StartTS int64
	Xid               uint64
	Snap              *Snapshot
	Has               FactBits
}

// FactBits says which of a Facts' fields hold a value.
type FactBits uint8

const (
	HasCommitTS FactBits = 1 << iota
	HasStartTS
	HasXid
	HasSnapshot
)

// Snapshot is a PostgreSQL snapshot as pg_current_snapshot() prints it:
// "xmin:xmax:xip1,xip2,...". Every transaction id below Xmin had finished
// when the snapshot was taken; none at or above Xmax had started; Xip
// (sorted, each in [Xmin, Xmax)) lists those in progress.
type Snapshot struct {
	Xmin, Xmax uint64
	Xip        []uint64
}

// Sees reports whether a transaction with id xid, if it committed, is
// visible in the snapshot: it finished before the snapshot was taken, which
// is xid < Xmax and xid not in progress (PostgreSQL's XidInMVCCSnapshot,
// negated). An aborted xid is never visible whatever Sees says: the caller
// asks only about committed transactions.
func (s *Snapshot) Sees(xid uint64) bool {
	if xid >= s.Xmax {
		return false
	}
	if xid < s.Xmin {
		return true
	}
	_, found := slices.BinarySearch(s.Xip, xid)
	return !found
}

func (s *Snapshot) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(s.Xmin, 10))
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(s.Xmax, 10))
	b.WriteByte(':')
	for i, x := range s.Xip {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(x, 10))
	}
	return b.String()
}

// ParseSnapshot reads PostgreSQL's text form "xmin:xmax:xip,..." (the xip
// list may be empty). It holds the invariants PostgreSQL keeps: xmin <=
// xmax, every xip in [xmin, xmax); the list is sorted and deduplicated
// here (PostgreSQL prints it sorted).
func ParseSnapshot(text string) (*Snapshot, error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("snapshot %q: want xmin:xmax:xip,...", text)
	}
	var s Snapshot
	var err error
	if s.Xmin, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return nil, fmt.Errorf("snapshot %q: xmin: %w", text, errors.Unwrap(err))
	}
	if s.Xmax, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
		return nil, fmt.Errorf("snapshot %q: xmax: %w", text, errors.Unwrap(err))
	}
	if s.Xmin > s.Xmax {
		return nil, fmt.Errorf("snapshot %q: xmin %d is above xmax %d", text, s.Xmin, s.Xmax)
	}
	if parts[2] != "" {
		for _, f := range strings.Split(parts[2], ",") {
			x, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("snapshot %q: xip %q: %w", text, f, errors.Unwrap(err))
			}
			if x < s.Xmin || x >= s.Xmax {
				return nil, fmt.Errorf("snapshot %q: in-progress xid %d is outside [xmin, xmax)", text, x)
			}
			s.Xip = append(s.Xip, x)
		}
		slices.Sort(s.Xip)
		s.Xip = slices.Compact(s.Xip)
	}
	return &s, nil
}

// FactsOf returns the database facts of transaction i (zero when the
// history carries none).
func (h *History) FactsOf(i int) Facts {
	if h.Facts == nil {
		return Facts{}
	}
	return h.Facts[i]
}

// SetFacts records f for transaction i, allocating the side table on the
// first fact so that histories without any pay nothing.
func (h *History) SetFacts(i int, f Facts) {
	if f.Has == 0 && h.Facts == nil {
		return
	}
	if h.Facts == nil {
		h.Facts = make([]Facts, len(h.Txns))
	}
	h.Facts[i] = f
}

// HasFacts reports whether any transaction carries a database fact.
func (h *History) HasFacts() bool { return h.Facts != nil }

// ValidateFacts checks what the stamp checkers rely on, naming the
// transaction and field of the first problem: the side table is parallel
// to Txns; an aborted transaction carries no fact (the database gives none
// to what it rolled back: a stamp there is a recorder's bug); only a
// committed transaction has a commit stamp; start_ts <= commit_ts; a
// snapshot comes with its xid; xids are unique.
func (h *History) ValidateFacts() error {
	if h.Facts == nil {
		return nil
	}
	if len(h.Facts) != len(h.Txns) {
		return fmt.Errorf("history: %d database facts for %d transactions", len(h.Facts), len(h.Txns))
	}
	xids := make(map[uint64]int)
	for i := range h.Facts {
		f, t := &h.Facts[i], &h.Txns[i]
		if f.Has == 0 {
			continue
		}
		if err := f.validate(t); err != nil {
			return err
		}
		if f.Has&HasXid != 0 {
			if j, dup := xids[f.Xid]; dup {
				return &Error{Pos: t.Pos, ID: t.ID, Field: "xid", Err: fmt.Errorf("xid %d is also txn %s's", f.Xid, h.Txns[j].ID)}
			}
			xids[f.Xid] = i
		}
	}
	return nil
}

// validate holds the per-transaction rules; decoders call it so that the
// error names the line as soon as it is read.
func (f *Facts) validate(t *Txn) error {
	field := func(name string, err error) error {
		return &Error{Pos: t.Pos, ID: t.ID, Field: name, Err: err}
	}
	if t.Status == Aborted {
		for _, n := range []struct {
			b    FactBits
			name string
		}{{HasCommitTS, "commit_ts"}, {HasStartTS, "start_ts"}, {HasXid, "xid"}, {HasSnapshot, "snapshot"}} {
			if f.Has&n.b != 0 {
				return field(n.name, errors.New("an aborted transaction carries no database fact"))
			}
		}
	}
	if f.Has&HasCommitTS != 0 && t.Status != Committed {
		return field("commit_ts", fmt.Errorf("a commit stamp on a transaction whose status is %s (a commit stamp says it committed)", t.Status))
	}
	if f.Has&(HasCommitTS|HasStartTS) == HasCommitTS|HasStartTS && f.StartTS > f.CommitTS {
		return field("start_ts", fmt.Errorf("start_ts %d is after commit_ts %d", f.StartTS, f.CommitTS))
	}
	if f.Has&HasSnapshot != 0 && f.Has&HasXid == 0 {
		return field("snapshot", errors.New("a snapshot needs the transaction's xid"))
	}
	return nil
}

// Validate is the per-transaction part of ValidateFacts, for decoders.
func (f *Facts) Validate(t *Txn) error { return f.validate(t) }
