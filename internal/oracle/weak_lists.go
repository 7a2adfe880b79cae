package oracle

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// List keys at the weak levels, from docs/SEMANTICS.md §1 "Lists at the
// weak levels", by enumeration. A list key has a version order: a
// permutation of its taken appenders. The initial version is the empty
// list (under --initial-state unknown, one list per key, the same for
// every read); the version of the i-th appender is the (i-1)-th's
// followed by all the appender's appends to the key, in op order. A list
// read, without the reader's own appends so far (which must end it),
// must equal one of these versions: it reads from that version's
// appender (the last one it shows; none for the initial version), never
// from the reader itself. The version order then enters each level's
// definition as a fixed order of the key's writers:
//
//   - read-committed, repeatable-read, pl-2+ (Adya): it is the key's
//     version order in the DSG (ww to the next version, rw from a reader
//     of a version to the next version's installer).
//   - read-atomic, causal (Biswas & Enea): the commit order co restricted
//     to the key's appenders is the version order; an appender counts as
//     a writer of the key in the axiom. Only the version read is
//     read-from: the appenders it shows before the last are ordered, not
//     visible.
//
// Nothing here follows the checker: it never parses a list, it builds
// every version of every order and compares.

// listKeys are the list keys some taken candidate appends to or reads,
// sorted.
func (w *weakWorld) listKeys() []history.Key {
	set := map[history.Key]bool{}
	for ci, c := range w.cand {
		if !w.taken[ci] {
			continue
		}
		for k := range c.apps {
			set[k] = true
		}
		for _, r := range c.reads {
			if r.isList {
				set[r.key] = true
			}
		}
	}
	keys := make([]history.Key, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// registerKeys are the register keys some taken candidate writes, sorted.
func (w *weakWorld) registerKeys() []history.Key {
	set := map[history.Key]bool{}
	for ci, c := range w.cand {
		if w.taken[ci] {
			for k := range c.writes {
				set[k] = true
			}
		}
	}
	keys := make([]history.Key, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// chooseLists tries every version order (and, under an unknown initial
// state, every initial list) of keys[ki:], fixing the source of every
// list read of those keys, then hands over to chooseRF for the register
// reads.
func (w *weakWorld) chooseLists(keys []history.Key, ki int) ([]int, bool) {
	if ki == len(keys) {
		return w.chooseRF(0, 0)
	}
	x := keys[ki]
	var writers []int
	for ci, c := range w.cand {
		if _, ok := c.apps[x]; ok && w.taken[ci] {
			writers = append(writers, ci)
		}
	}
	// The initial list: empty, or under an unknown initial state any
	// prefix of a list read of x (a read of the initial version shows
	// it whole, and one of another version starts with it).
	inits := [][]history.Value{nil}
	if w.opts.InitialState == history.InitialUnknown {
		for ci, c := range w.cand {
			if !w.taken[ci] {
				continue
			}
			for _, r := range c.reads {
				if !r.isList || r.key != x {
					continue
				}
				for j := 1; j <= len(r.list); j++ {
					if !slices.ContainsFunc(inits, func(l []history.Value) bool { return slices.Equal(l, r.list[:j]) }) {
						inits = append(inits, r.list[:j])
					}
				}
			}
		}
	}
	if w.vo == nil {
		w.vo = map[history.Key][]int{}
	}
	type lread struct{ ci, ri int }
	var reads []lread
	for ci := range w.cand {
		if !w.taken[ci] {
			continue
		}
		for ri, r := range w.cand[ci].reads {
			if r.isList && r.key == x {
				reads = append(reads, lread{ci, ri})
			}
		}
	}
	var found []int
	ok := false
	p := make([]int, 0, len(writers))
	used := make([]bool, len(writers))
	// build places appenders one at a time; version is the list after
	// p. A read that is no version so far must extend this one (later
	// versions all do), so an order whose prefix already rules out a
	// read is cut there: only a speed-up, every order is still judged
	// by the comparison below.
	var build func(version []history.Value, matched []int) bool
	build = func(version []history.Value, matched []int) bool {
		for i, lr := range reads {
			if matched[i] < 0 && !hasPrefix(w.cand[lr.ci].reads[lr.ri].list, version) {
				return false
			}
		}
		if len(p) == len(writers) {
			for i, lr := range reads {
				if matched[i] < 0 {
					return false // longer than every version
				}
				w.rf[lr.ci][lr.ri] = -1
				if m := matched[i]; m > 0 {
					w.rf[lr.ci][lr.ri] = p[m-1]
				}
			}
			w.vo[x] = slices.Clone(p)
			found, ok = w.chooseLists(keys, ki+1)
			return ok
		}
		for j, a := range writers {
			if used[j] {
				continue
			}
			used[j] = true
			p = append(p, a)
			next := append(slices.Clone(version), w.cand[a].apps[x]...)
			m2 := slices.Clone(matched)
			good := true
			for i, lr := range reads {
				if m2[i] < 0 && slices.Equal(w.cand[lr.ci].reads[lr.ri].list, next) {
					if lr.ci == a {
						good = false // a transaction never reads its own version
					}
					m2[i] = len(p)
				}
			}
			if good && build(next, m2) {
				return true
			}
			p = p[:len(p)-1]
			used[j] = false
		}
		return false
	}
	for _, init := range inits {
		matched := make([]int, len(reads))
		for i, lr := range reads {
			matched[i] = -1
			if slices.Equal(w.cand[lr.ci].reads[lr.ri].list, init) {
				matched[i] = 0
			}
		}
		if build(init, matched) {
			break
		}
	}
	return found, ok
}

// hasPrefix reports whether l starts with pre.
func hasPrefix(l, pre []history.Value) bool {
	return len(l) >= len(pre) && slices.Equal(l[:len(pre)], pre)
}

// voEdges are the list keys' version orders as edges, each appender to
// the next.
func (w *weakWorld) voEdges() [][2]int {
	var out [][2]int
	for _, x := range w.listKeys() {
		p := w.vo[x]
		for i := 0; i+1 < len(p); i++ {
			out = append(out, [2]int{p[i], p[i+1]})
		}
	}
	return out
}
