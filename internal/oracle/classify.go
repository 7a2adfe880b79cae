package oracle

import (
	"github.com/streamcheck/streamcheck/history"
)

// Classify tells how hard h is for a checker under opts: valid, and for an
// invalid history whether it needs search, that is, whether no committed
// transaction has a read that is wrong on its face (a garbage read, G1a,
// G1b or an internal inconsistency, found without any ordering). Generators
// report this mix (docs/SEMANTICS.md §4: at least 30% valid and 30% invalid
// needing search). It panics on input Check rejects; callers classify
// only what Check accepts.
func Classify(h *history.History, opts history.Options) (valid, needsSearch bool) {
	valid, _, err := Check(h, opts)
	if err != nil {
		panic("oracle: Classify: " + err.Error())
	}
	return valid, !valid && TrivialAnomaly(h, opts) == ""
}

// TrivialAnomaly returns the name (history.GarbageRead, G1a, G1b,
// Internal) of the first read of a committed transaction that is wrong
// without looking at any order, or "" if there is none.
func TrivialAnomaly(h *history.History, opts history.Options) string {
	lists := h.ListKeys()
	unknownInit := opts.InitialState == history.InitialUnknown
	for r := range h.Txns {
		t := &h.Txns[r]
		if t.Status != history.Committed {
			continue
		}
		for n, op := range t.Ops {
			if op.Kind != history.Read {
				continue
			}
			if internalRead(t, n) {
				if !internalConsistent(t, n, lists[op.Key]) {
					return history.Internal
				}
				continue
			}
			if lists[op.Key] {
				for _, e := range readsList(op) {
					if name := sourceAnomaly(h, r, op.Key, e, true, unknownInit); name != "" {
						return name
					}
				}
				continue
			}
			if op.Value == history.Null && !unknownInit {
				continue
			}
			if name := sourceAnomaly(h, r, op.Key, op.Value, false, unknownInit); name != "" {
				return name
			}
		}
	}
	return ""
}

// sourceAnomaly classifies the writers of (k, v) other than the reader r:
// none at all is a garbage read (unless the initial state may hold
// anything), only aborted ones G1a, only non-final ones G1b. Appends are
// always final.
func sourceAnomaly(h *history.History, r int, k history.Key, v history.Value, list, unknownInit bool) string {
	var anyW, live, final bool
	for w := range h.Txns {
		if w == r {
			continue
		}
		tw := &h.Txns[w]
		last := -1
		wrote := false
		for i, op := range tw.Ops {
			if op.Kind != history.Read && op.Key == k {
				last = i
				wrote = wrote || op.Value == v
			}
		}
		if !wrote {
			continue
		}
		anyW = true
		if tw.Status != history.Aborted {
			live = true
			final = final || list || tw.Ops[last].Value == v
		}
	}
	switch {
	case !anyW && unknownInit:
		return ""
	case !anyW:
		return history.GarbageRead
	case !live:
		return history.G1a
	case !final:
		return history.G1b
	}
	return ""
}

// internalConsistent checks a read that follows t's own write of its key:
// a register read must see the last own write, a list read must end with
// the own appends made so far, in order.
func internalConsistent(t *history.Txn, n int, list bool) bool {
	op := t.Ops[n]
	var mine []history.Value
	var last history.Value
	for _, prev := range t.Ops[:n] {
		if prev.Key != op.Key {
			continue
		}
		switch prev.Kind {
		case history.Write:
			last = prev.Value
		case history.Append:
			mine = append(mine, prev.Value)
		}
	}
	if !list {
		return op.Value == last
	}
	got := readsList(op)
	if len(got) < len(mine) {
		return false
	}
	tail := got[len(got)-len(mine):]
	for i := range mine {
		if tail[i] != mine[i] {
			return false
		}
	}
	return true
}
