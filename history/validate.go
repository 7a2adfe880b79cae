package history

import (
	"errors"
	"fmt"
)

// ErrNoTransactions: the input holds no transaction to check (it is empty,
// or every transaction in it was rejected). check and run report it as an
// input error rather than as a valid history: an empty recording proves
// nothing, and most often means the recorder wrote nothing or the input is
// in a format no line of which decoded.
var ErrNoTransactions = errors.New("no transactions")

// Error is an input error that names where it happened and which field is
// wrong, like io/fs.PathError.
type Error struct {
	Pos   Pos
	ID    string
	Field string
	Err   error
}

func (e *Error) Error() string {
	where := e.Pos.String()
	if e.ID != "" {
		where += " (txn " + e.ID + ")"
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: field %s: %v", where, e.Field, e.Err)
	}
	return fmt.Sprintf("%s: %v", where, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Validate checks what every checker relies on: unique ids, end >= start,
// and each key used either as a register or as a list, never both. It
// returns the first problem found, naming its position and field.
func (h *History) Validate() error {
	seen := make(map[string]int, len(h.Txns))
	// Per key, one map lookup per op: the map gives the key's slot in
	// uses, which says how it was last used and by which transaction.
	// (A map of kinds and a map of positions, each read and written per
	// op, were three hashes of every key; Validate was an eighth of
	// check's time on 1M stamped transactions.)
	type use struct {
		list bool
		at   int
	}
	slot := make(map[Key]int32)
	var uses []use
	for i := range h.Txns {
		t := &h.Txns[i]
		if j, dup := seen[t.ID]; dup {
			return &Error{Pos: t.Pos, ID: t.ID, Field: "id", Err: fmt.Errorf("duplicate id (first at %s)", h.Txns[j].Pos)}
		}
		seen[t.ID] = i
		if t.HasTime && t.End < t.Start {
			return &Error{Pos: t.Pos, ID: t.ID, Field: "end", Err: fmt.Errorf("end %d is before start %d", t.End, t.Start)}
		}
		for _, op := range t.Ops {
			list, decided := op.KeyKind()
			if !decided {
				continue
			}
			k, ok := slot[op.Key]
			if !ok {
				k = int32(len(uses))
				slot[op.Key] = k
				uses = append(uses, use{list, i})
				continue
			}
			if u := &uses[k]; u.list != list {
				return KindClash(t, op.Key, h.Txns[u.at].ID)
			}
			uses[k].at = i
		}
	}
	return h.ValidateFacts()
}

// KeyKind says what op makes its key: a list (an append, or a read that
// returned a list) or a register (a write). A read of a scalar or of null
// decides nothing: null is also how an absent list reads. Validate and
// run's online check of the same rule both use it, so that the two
// commands reject the same transactions.
func (op Op) KeyKind() (list, decided bool) {
	switch {
	case op.Kind == Append || (op.Kind == Read && op.IsList):
		return true, true
	case op.Kind == Write:
		return false, true
	}
	return false, false
}

// KindClash is the input error for t using key as a list and as a
// register; other names the transaction that used it the other way first
// ("" when it is not known).
func KindClash(t *Txn, key Key, other string) error {
	see := ""
	if other != "" {
		see = " (see txn " + other + ")"
	}
	return &Error{Pos: t.Pos, ID: t.ID, Field: "ops", Err: fmt.Errorf("key %s is used as a list and as a register%s", key, see)}
}

// ListKeys returns the keys used as lists (appended to or read as a list).
func (h *History) ListKeys() map[Key]bool {
	keys := make(map[Key]bool)
	for i := range h.Txns {
		for _, op := range h.Txns[i].Ops {
			if op.Kind == Append || (op.Kind == Read && op.IsList) {
				keys[op.Key] = true
			}
		}
	}
	return keys
}
