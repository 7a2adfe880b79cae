package oracle

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// possibleWriters returns the transactions (indexes into h.Txns) that could
// have written the value a read saw (docs/SEMANTICS.md §3): every transaction,
// whatever its status, with a write of that key and value at any position,
// except those the level places after the reader r (real time under
// real-time levels, later in r's session under levels with session order).
// For a list read it is the possible appenders of its elements. initial
// reports whether the initial state can explain the value.
func possibleWriters(h *history.History, opts *history.Options, rank []int, lists map[history.Key]bool, r int, op history.Op) (writers []int, initial bool) {
	k := op.Key
	var want []history.Value
	if lists[k] {
		want = readsList(op)
		initial = opts.InitialState == history.InitialUnknown || len(want) == 0
	} else {
		want = []history.Value{op.Value}
		initial = opts.InitialState == history.InitialUnknown || op.Value == history.Null
	}
	for w := range h.Txns {
		if mustPrecede(h, opts, rank, r, w) {
			continue
		}
		for _, wop := range h.Txns[w].Ops {
			if wop.Kind != history.Read && wop.Key == k && slices.Contains(want, wop.Value) {
				writers = append(writers, w)
				break
			}
		}
	}
	return writers, initial
}

// internalRead reports whether op n of t follows a write of its key by t
// itself: its value is then decided inside t.
func internalRead(t *history.Txn, n int) bool {
	for _, prev := range t.Ops[:n] {
		if prev.Kind != history.Read && prev.Key == t.Ops[n].Key {
			return true
		}
	}
	return false
}

// Project returns H|C (docs/SEMANTICS.md §3): the transactions of core, in h's
// order, each keeping its writes and those reads all of whose possible
// writers are in C (the initial state counts as always present), or that
// have no possible writer at all (garbage reads), or that follow the
// transaction's own write of the key (register reads only: a list read is
// kept iff every possible appender of its elements is in C). Ids in core that h does not have are
// ignored.
func Project(h *history.History, opts history.Options, core []string) *history.History {
	in := make([]bool, len(h.Txns))
	for i := range h.Txns {
		in[i] = slices.Contains(core, h.Txns[i].ID)
	}
	rank := sessionRanks(h)
	lists := h.ListKeys()
	out := &history.History{}
	for r := range h.Txns {
		if !in[r] {
			continue
		}
		t := h.Txns[r]
		ops := make([]history.Op, 0, len(t.Ops))
		for n, op := range t.Ops {
			// A list read after the transaction's own append still shows
			// other appenders' elements, so only register reads are
			// exempt as internal: keeping an internal list read whose
			// prefix came from outside C breaks monotonicity (a history
			// found by TestProjectSoundAndMonotone:
			// T1 append x 4 · T4 append x 3, r x [4 3], C = {T4}).
			if op.Kind == history.Read && (lists[op.Key] || !internalRead(&t, n)) {
				writers, _ := possibleWriters(h, &opts, rank, lists, r, op)
				kept := true
				for _, w := range writers {
					kept = kept && in[w]
				}
				if !kept {
					continue
				}
			}
			ops = append(ops, op)
		}
		t.Ops = ops
		out.Txns = append(out.Txns, t)
	}
	return out
}

// CheckCore reports whether core is a core of h under opts: H|C violates
// the level, and for every t in C, H|(C\{t}) satisfies it (subset-minimal
// under the projection, docs/SEMANTICS.md §3). It returns nil or an error that
// says which condition failed.
func CheckCore(h *history.History, opts history.Options, core []string) error {
	if len(core) == 0 {
		return errors.New("core is empty")
	}
	for i, id := range core {
		if !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.ID == id }) {
			return fmt.Errorf("core names %s, which is not in the history", id)
		}
		if slices.Contains(core[:i], id) {
			return fmt.Errorf("core names %s twice", id)
		}
	}
	valid, witness, err := Check(Project(h, opts, core), opts)
	if err != nil {
		return fmt.Errorf("check H|C: %w", err)
	}
	if valid {
		return fmt.Errorf("not a core: H|{%s} satisfies %s (witness %s)", strings.Join(core, " "), opts.Level, formatOrder(witness))
	}
	for i, id := range core {
		rest := slices.Delete(slices.Clone(core), i, i+1)
		valid, _, err := Check(Project(h, opts, rest), opts)
		if err != nil {
			return fmt.Errorf("check H|C without %s: %w", id, err)
		}
		if !valid {
			return fmt.Errorf("not minimal: H|{%s} (without %s) still violates %s", strings.Join(rest, " "), id, opts.Level)
		}
	}
	return nil
}

// Cores returns every core of h (every subset C passing CheckCore), each
// listed in h's order, by brute force over all subsets: for histories of
// at most a dozen transactions.
func Cores(h *history.History, opts history.Options) ([][]string, error) {
	n := len(h.Txns)
	if n > 12 {
		return nil, fmt.Errorf("%w: %d transactions for core enumeration (max 12)", ErrTooLarge, n)
	}
	violates := make([]bool, 1<<n)
	for m := 1; m < 1<<n; m++ {
		valid, _, err := Check(Project(h, opts, idsOf(h, m)), opts)
		if err != nil {
			return nil, err
		}
		violates[m] = !valid
	}
	var cores [][]string
	for m := 1; m < 1<<n; m++ {
		if !violates[m] {
			continue
		}
		minimal := true
		for i := range n {
			if m&(1<<i) != 0 && violates[m&^(1<<i)] {
				minimal = false
			}
		}
		if minimal {
			cores = append(cores, idsOf(h, m))
		}
	}
	return cores, nil
}

func idsOf(h *history.History, mask int) []string {
	var ids []string
	for i := range h.Txns {
		if mask&(1<<i) != 0 {
			ids = append(ids, h.Txns[i].ID)
		}
	}
	return ids
}

// ShrinkCore shrinks core by deletion under the projection until removing
// any one member makes H|C satisfiable. core must violate: H|core invalid.
// The result is a subset-minimal core (the projection is monotone).
func ShrinkCore(h *history.History, opts history.Options, core []string) ([]string, error) {
	core = slices.Clone(core)
	for i := 0; i < len(core); {
		rest := slices.Delete(slices.Clone(core), i, i+1)
		valid, _, err := Check(Project(h, opts, rest), opts)
		if err != nil {
			return nil, err
		}
		if valid {
			i++
		} else {
			core = rest
		}
	}
	return core, nil
}
