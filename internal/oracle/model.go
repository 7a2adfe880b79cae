package oracle

import (
	"errors"
	"fmt"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// MaxTxns bounds the transactions Check enumerates: committed ones plus
// unknown ones that write. 8! orders times 2^unknown subsets stays well
// under a second even without pruning.
const MaxTxns = 8

// ErrTooLarge is returned for a history with more than MaxTxns
// transactions that could be in a serial order.
var ErrTooLarge = errors.New("oracle: history too large to enumerate")

// supported reports whether the oracle knows the level's graph: every
// level of history's registry (a Level built from a number is not).
func supported(l history.Level) bool { return l.Supported() }

// checkInput rejects what the oracle cannot give a meaning to: an invalid
// history, a level it does not implement, a real-time level without
// timestamps (docs/SEMANTICS.md §1), and a non-null scalar read of a list key.
func checkInput(h *history.History, opts history.Options) error {
	if !supported(opts.Level) {
		return fmt.Errorf("oracle: level %s is not supported", opts.Level)
	}
	if err := h.Validate(); err != nil {
		return fmt.Errorf("oracle: %w", err)
	}
	lists := h.ListKeys()
	for i := range h.Txns {
		t := &h.Txns[i]
		if opts.Level.RealTime() && !t.HasTime {
			return fmt.Errorf("oracle: level %s needs timestamps, txn %s has none", opts.Level, t.ID)
		}
		for _, op := range t.Ops {
			if op.Kind == history.Read && lists[op.Key] && !op.IsList && op.Value != history.Null {
				return fmt.Errorf("oracle: txn %s reads list key %s as the scalar %s", t.ID, op.Key, op.Value)
			}
		}
	}
	return nil
}

// sessionRanks gives each transaction its position in its session's order:
// by start timestamp when every transaction of the session has one, a tie
// by end and then by id, and input order otherwise (docs/SEMANTICS.md §1
// "Session order"). Transactions without a
// session get rank -1. Every status is ranked, so that the projection can
// ask whether an aborted writer is a later transaction of a reader's
// session.
func sessionRanks(h *history.History) []int {
	rank := make([]int, len(h.Txns))
	members := make(map[string][]int)
	var order []string
	for i := range h.Txns {
		rank[i] = -1
		t := &h.Txns[i]
		if !t.HasSession {
			continue
		}
		if _, ok := members[t.Session]; !ok {
			order = append(order, t.Session)
		}
		members[t.Session] = append(members[t.Session], i)
	}
	for _, s := range order {
		idx := members[s]
		timed := true
		for _, i := range idx {
			timed = timed && h.Txns[i].HasTime
		}
		if timed {
			sort.SliceStable(idx, func(a, b int) bool {
				ta, tb := &h.Txns[idx[a]], &h.Txns[idx[b]]
				if ta.Start != tb.Start {
					return ta.Start < tb.Start
				}
				if ta.End != tb.End {
					return ta.End < tb.End
				}
				return ta.ID < tb.ID
			})
		}
		for r, i := range idx {
			rank[i] = r
		}
	}
	return rank
}

// sessionBefore reports whether a comes before b in session order.
func sessionBefore(h *history.History, rank []int, a, b int) bool {
	ta, tb := &h.Txns[a], &h.Txns[b]
	return ta.HasSession && tb.HasSession && ta.Session == tb.Session && rank[a] < rank[b]
}

// mustPrecede reports whether the level forces a before b in every serial
// order: session order for levels that have it, widened real time
// (Options.Precedes, the one rule every checker shares) for strict ones.
func mustPrecede(h *history.History, opts *history.Options, rank []int, a, b int) bool {
	if a == b {
		return false
	}
	if opts.Level.SessionOrder() && sessionBefore(h, rank, a, b) {
		return true
	}
	ta, tb := &h.Txns[a], &h.Txns[b]
	return opts.Level.RealTime() && ta.HasTime && tb.HasTime && opts.Precedes(ta, tb)
}

// readsList returns the list an op read on a list key: a Null scalar read
// of a list key is the empty list (Jepsen reads nil for an empty list).
func readsList(op history.Op) []history.Value {
	if op.IsList {
		return op.List
	}
	return nil
}
