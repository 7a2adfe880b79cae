package online

import "github.com/streamcheck/streamcheck/history"

// Consistent regions left out of the last check (docs/SEMANTICS.md §5
// "Regions tied by real time alone").
//
// stormCores ends a batch with a check of all that is left, H|(S minus
// the cores), because regions need not be independent: session order,
// at a level without real time, can tie two consistent regions into a
// violation (TestStormRegionsUnionViolates). In a storm under an unknown
// initial state that last check held, besides the one large region, every
// consistent injected group of the window (about a third of its
// transactions at 50K), at every step.
//
// A region R whose members are each alone in their session in the alert
// history, committed, and, at a level with real time, each with a start
// before its end, is tied to the rest only by real time (no key, no
// session). If H|R is consistent and H|X is consistent, X the rest, so
// is H|(X ∪ R): a completion of each, taken together, has no cycle,
// because a passage of a cycle through R, entering at g by X1 →rt g and
// leaving at g' by g' →rt Y1, implies X1 →rt Y1 (g and g' are concurrent
// or ordered g →rt g' in R's completion, and each has a length), an
// edge the rest's completion has. So the last check may leave R out: it
// stops on a consistent rest without R, and then the whole rest is
// consistent; a core it finds lies in S minus the earlier cores, as
// before. A region with a core is not left out (its remainder is
// consistent too, but it is kept simple).

// stormSeparate switches the rule on (tests hold it off to compare).
var stormSeparate = true

// sessionCounts counts h's transactions per session (those with one).
func sessionCounts(h *history.History) map[string]int {
	n := map[string]int{}
	for k := range h.Txns {
		if h.Txns[k].HasSession {
			n[h.Txns[k].Session]++
		}
	}
	return n
}

// separable reports whether region r of h (positions) is tied to the
// rest of h by real time alone: every member committed, alone in its
// session in h (sessions: sessionCounts(h)), and with a start before its end when the level has real
// time.
func separable(h *history.History, r []int32, opts history.Options, sessions map[string]int) bool {
	lv := opts.Level
	if lv.RealTime() {
		for _, t := range r {
			if tx := &h.Txns[t]; !tx.HasTime || tx.Start >= tx.End {
				return false
			}
		}
	}
	for _, t := range r {
		tx := &h.Txns[t]
		if tx.Status != history.Committed {
			return false
		}
		if !lv.SessionOrder() || !tx.HasSession {
			continue
		}
		if sessions[tx.Session] > 1 {
			return false
		}
	}
	return true
}

// A batch whose regions found a core ends there (docs/SEMANTICS.md §5 "A
// batch ends at its regions' cores"). The last check of all that is left
// cost a check of the window's large region at every step of a storm,
// and found nothing there: the anomalies are the injected groups, each a
// region. After a batch the step quarantines its cores and solves the
// instance again, and confirms anew if it still violates; so when the
// regions gave cores, the batch returns them and that solve decides
// whether the rest holds another, as it did when a confirmation took
// one core. The last check is made when no region gave a core, which
// always ends a confirmation with a core or a consistent H|S.

// stormEndOnRegionCore switches the rule on (tests hold it off).
var stormEndOnRegionCore = true
