package incremental

import "github.com/streamcheck/streamcheck/history"

// windowBySession orders the windows of a history without timestamps by
// each transaction's rank in its session first, then by content
// (docs/SEMANTICS.md §3 "C5"). Content alone (the transaction id first,
// without time) puts a session's transactions side by side and another
// session's far away, so a core across sessions lies in no window and
// is searched on all that is left; transactions with the same rank in
// their sessions ran about at the same time when sessions run at the
// same pace, so such a core lies in a window. A variable so that tests
// and measurements can compare it with content order.
var windowBySession = true

// sessionRanks is each transaction's index in its session's order (0
// for a transaction without a session), or nil when any transaction has
// client time (time orders the windows then, and ranks beside time
// would not make one order).
func sessionRanks(h *history.History) []int32 {
	for i := range h.Txns {
		if h.Txns[i].HasTime {
			return nil
		}
	}
	rank := make([]int32, len(h.Txns))
	next := map[string]int32{}
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasSession {
			continue
		}
		rank[i] = next[t.Session]
		next[t.Session]++
	}
	return rank
}
