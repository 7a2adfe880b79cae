package online

import (
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// List keys in the reduced instance (docs/SEMANTICS.md §5, "Lists: the
// committed prefix as a ghost", issue 22).
//
// A list key's appenders leave in list order. The appends of those that
// left form the key's committed prefix (evictState.ListPrefix): every
// open or future read of the key follows them in real time, so it must
// show the whole prefix, in that order, at the start of its list. One
// transaction holds the prefix in the instance, as the key's live
// version: the last appender that left, a ghost (LiveOf, GhostKeys) whose
// only op on the key, as build writes it (ghostOps), appends the whole
// prefix. A read of the key in the instance then parses as that ghost
// followed by window appenders, exactly as it parsed as the evicted
// appenders, in order, followed by the same window appenders.
//
// Invariants, per list key k with a prefix P held by ghost g:
//
//   - L1 every appender of k that left the instance (evicted, committed)
//     has its appends in P, and the appenders of P are ordered as P lists
//     them in every completion, with g the last;
//   - L2 every member appender of k follows g in every completion (it was
//     decided after g when g's appends joined P, or it was released after
//     g was time-closed);
//   - L3 every read of k in the instance (a closed member's) shows P at
//     the start of its list: a read that showed less, decided, was
//     replaced by the orders it implied when the appender it missed
//     joined P.
//
// Under an unknown initial state the initial list I is a variable of the
// instance; every read shows I ++ P at its start, and a read that leaves
// the instance keeps the I it names as a fact (evict_list_init.go,
// IL1-IL3).

// listEvictable reports whether list appenders and readers may leave at
// all: under an unknown initial state only with the rule that keeps the
// initial list (evict_list_init.go).
func (s *evictStep) listEvictable() bool {
	return listRule && (s.o.opts.InitialState != history.InitialUnknown || listInitRule)
}

// listEntry is one list key that evicted t's appends join: the key, its
// interned index, and t's appends to it in order.
type listEntry struct {
	key  history.Key
	k    int32
	apps []history.Value
}

// listAppends returns t's appends to each list key of the instance, in op
// order per key, keys in first-append order.
func (s *evictStep) listAppends(t int32) []listEntry {
	var out []listEntry
	for _, op := range s.r.h.Txns[t].Ops {
		if op.Kind != history.Append {
			continue
		}
		k, in := s.p.KeyIndex()[op.Key]
		if !in || !s.p.ListKeys()[k] {
			continue
		}
		j := slices.IndexFunc(out, func(e listEntry) bool { return e.k == k })
		if j < 0 {
			out = append(out, listEntry{key: op.Key, k: k})
			j = len(out) - 1
		}
		out[j].apps = append(out[j].apps, op.Value)
	}
	return out
}

// externalLists returns u's list reads of key in the instance, each
// without the elements u appended itself before it (its own appends end
// the list it reads: incremental prepare checks that, and parses the
// rest).
func externalLists(ops []history.Op, key history.Key) [][]history.Value {
	var out [][]history.Value
	var own int
	for _, op := range ops {
		if op.Key != key {
			continue
		}
		switch {
		case op.Kind == history.Append:
			own++
		case op.Kind == history.Read:
			l := op.List
			if !op.IsList {
				// A scalar read of a list key is a garbage read that no
				// prefix explains: it never shows the prefix.
				l = []history.Value{"scalar:" + op.Value}
			}
			if own <= len(l) {
				l = l[:len(l)-own]
			}
			out = append(out, l)
		}
	}
	return out
}

// foldLists is the list rule for time-closed member t (evict_list.go's
// header): each list key t appends to whose conditions hold gets t's
// appends in its prefix, with t as its holder, even while t stays in the
// instance for other reasons. A member's appends that joined a prefix
// leave its ops (Folded); a holder's ops append the whole prefix (build).
// Folding per key keeps one appender that stays for another key from
// holding back every later appender of its lists, then every appender
// of theirs: on mixed streams the pin spread over the list keys and the
// window grew with the stream.
//
// It reports whether every list key t appends to is folded now and, if
// not, the keys that failed only on the order of t against another
// appender (tail, "Lists: the unordered tail as ghosts"): t may keep
// those appends as a ghost; tailOK is false when another condition
// failed for some key.
func (s *evictStep) foldLists(t int32) (all, tailOK bool, tail []listEntry) {
	st, r := s.st, s.r
	i := r.pos[t]
	all, tailOK = true, true
	// A member backed off is judged without probes, here as in R2
	// (docs/SEMANTICS.md §5 "The list rule backs off too"): only what is
	// decided already folds it.
	b, held := st.Backoff[i]
	backed := held && !s.backoffOver(t, b)
	if backed {
		s.pr.noProbe = true
		defer func() { s.pr.noProbe = false }()
	}
	undecided := false
	for _, le := range s.listAppends(t) {
		if slices.Contains(st.Folded[i], le.key) {
			continue
		}
		repl, ok, order, open := s.listPrefix(t, le)
		if !ok {
			all = false
			undecided = undecided || open
			if order {
				tail = append(tail, le)
			} else {
				tailOK = false
			}
			continue
		}
		s.applyFold(t, le, repl)
	}
	if undecided && !backed && listBackoff {
		s.backOffList(t, held, b)
	}
	return all, tailOK, tail
}

// listBackoff turns the list rule's back-off on (tests turn it off to
// compare).
var listBackoff = true

// listPrefix tells whether committed, time-closed t's appends le to list
// key k may join k's committed prefix P, held by g:
//
//   - every open transaction that touches k follows t (R3 on k);
//   - t follows g in every completion;
//   - every other member appender of k that may commit (its commit
//     decided) follows t in every completion; one that the level's
//     order puts after t does in every completion that commits it,
//     whatever its commit (evict_list_later.go);
//   - every read of k in the instance is decided; another member's shows
//     P followed by t's appends (it stays as it is) or exactly P (it is
//     replaced by the orders g -> reader -> t it implied); t's own show
//     exactly P (replaced: g -> t is a fact already).
//
// It returns the replacements, or ok false when a condition fails; order
// says that the one that failed is the order of t against another
// appender (the loop over the key's appenders), the only failure that
// leaves t a tail ghost of the key.
//
// open says that the one that failed is a read of k, or a reader's commit,
// that is not decided (a probe came back undecided, or is known to), the
// failure the list back-off waits out (evict_backoff.go).
func (s *evictStep) listPrefix(t int32, le listEntry) (repl []replacement, ok, order, open bool) {
	r, p, e, pr, st := s.r, s.p, s.e, s.pr, s.st
	tx := &r.h.Txns[t]
	before := func(a, b int32) bool { // a precedes b in every completion
		return p.Before(a, b) || pr.forced(e.Node()[a], e.Node()[b])
	}
	k := le.k
	if c, dec := s.commitOf(t); !dec || !c {
		return nil, false, false, false
	}
	for _, u := range s.openAccessors[k] {
		if u != t && !p.Before(t, u) {
			tracePin(tx, func() string { return "list: an open neighbour on " + string(le.key) })
			return nil, false, false, false
		}
	}
	g := int32(-1)
	if at, ok := s.heldBy[le.key]; ok {
		// Folded this step by a transaction that has left since (its
		// prefix passed to the initial node): this step's instance
		// still has it, and t must follow it as it would the holder.
		g = at
	} else if gi, has := st.LiveOf[le.key]; has {
		at, in := r.at[gi]
		if !in {
			// The holder was not built this step: it holds a key t
			// touches, so build keeps it; a state where it does not is
			// not one to reason from.
			tracePin(tx, func() string { return "list: the prefix holder of " + string(le.key) + " is not in the instance" })
			return nil, false, false, false
		}
		g = at
	}
	prefix := st.ListPrefix[le.key]
	if g >= 0 && !before(g, t) {
		tracePin(tx, func() string { return "list: not after the prefix of " + string(le.key) })
		return nil, false, false, false
	}
	// Appenders that real time puts after t are passed over, and the
	// scan stops at the first that starts after effEnd(t)+2Δ: every
	// later one follows t in real time too (docs/SEMANTICS.md §5 "Lists:
	// appenders that real time puts after the fold", evict_list_later.go).
	rtEnd, rtStop := s.laterAppenders(t)
	for _, w := range s.writersLeft(k) { // r4_writers.go
		if w == t || w == g || r.pos[w] < 0 || s.removed[w] || s.isAborted(w) { // burst_listreads.go
			// The holder (a ghost, or the initial node, pos -1, when
			// the prefix passed to it) precedes t (L1, L4).
			continue
		}
		if skip, stop := s.laterAppender(t, w, rtEnd, rtStop); stop {
			break
		} else if skip {
			continue
		}
		if s.isDropped(w) {
			// Prepare left w out: no read of this instance can read it,
			// which is no decision for reads still to come. Only a
			// time-closed w is judged not committed (it leaves as one).
			if s.closedAt(w) {
				continue
			}
			tracePin(tx, func() string { return "list: appender " + r.h.Txns[w].Compact() + " may still commit" })
			return nil, false, true, false
		}
		if i := r.pos[w]; i >= 0 && (r.ghost[w] && !slices.Contains(st.GhostKeys[i], le.key) || !r.ghost[w] && slices.Contains(st.Folded[i], le.key)) {
			// An appender whose appends joined the prefix earlier (in
			// this step: its ops are still the step's): it precedes
			// the holder (L1).
			continue
		}
		if c, dec := s.commitOf(w); !dec {
			tracePin(tx, func() string { return "list: the commit of appender " + r.h.Txns[w].Compact() + " is not decided" })
			return nil, false, true, false
		} else if !c {
			continue // its appends are in no list
		}
		if p.Before(w, t) {
			tracePin(tx, func() string { return "list: after appender " + r.h.Txns[w].Compact() })
			return nil, false, true, false
		}
		if !before(t, w) {
			tracePin(tx, func() string { return "list: not before appender " + r.h.Txns[w].Compact() })
			return nil, false, true, false
		}
	}
	// Every read of k shows the initial list I and then the prefix
	// (evict_list_init.go): full is I ++ P, next I ++ P ++ t's appends.
	// Under an unknown initial state I may not be known yet (IL3): the
	// first read of a committed reader names it below.
	init, initKnown := s.listInitial(le.key)
	full := slices.Concat(init, prefix)
	next := slices.Concat(full, le.apps)
	// The readers of k the loop acts on (burst_listreads.go): not the
	// initial node (its read of k is the fact I, IL2, and it precedes
	// every appender), not removed, not a ghost, not replaced on k, with
	// a list read of k; each with its lists and its reads of k.
	for _, lr := range s.listReadersLeft(k, le.key) {
		u, lists := lr.u, lr.lists
		for _, ri := range lr.reads {
			rv := &e.Reads()[ri]
			// The read's guard, then its candidates, as one list: one
			// allocation per read and fold was a seventh of the rule
			// on the burst (issue 20, item 7).
			rfs := e.Rfs(rv)
			for li := -1; li < len(rfs); li++ {
				l := rv.G()
				if li >= 0 {
					l = rfs[li]
				}
				if _, dec := s.decideOnce(l); !dec {
					tracePin(tx, func() string {
						return "list: a read of " + string(le.key) + " by " + r.h.Txns[u].ID + " is not decided"
					})
					return nil, false, false, true
				}
			}
		}
		if !initKnown {
			// Its reads are decided: a committed reader's names I,
			// which is kept now (IL1: the read may be replaced below,
			// and whatever else becomes of it, the fact holds).
			s.noteListInitial(u, k)
			if init, initKnown = s.listInitial(le.key); initKnown {
				full = slices.Concat(init, prefix)
				next = slices.Concat(full, le.apps)
			} else if c, dec := s.commitOf(u); dec && !c {
				// A reader that does not commit names nothing and
				// implies nothing (I1).
				repl = append(repl, replacement{reader: u, key: le.key, prev: -1})
				continue
			} else {
				tracePin(tx, func() string { return "list: the initial list of " + string(le.key) + " is not decided" })
				return nil, false, false, true
			}
		}
		shows, exact := 0, 0
		for _, l := range lists {
			switch {
			case u != t && hasPrefix(l, next):
				shows++
			case slices.Equal(l, full):
				exact++
			}
		}
		switch {
		case shows == len(lists):
		case exact == len(lists):
			// A kept order is no commit guard: the orders a read
			// implies are kept only for a reader decided committed
			// (nothing passes through one that does not commit).
			if c, dec := s.commitOf(u); !dec {
				tracePin(tx, func() string { return "list: the commit of reader " + r.h.Txns[u].ID + " is not decided" })
				return nil, false, false, true
			} else if !c {
				repl = append(repl, replacement{reader: u, key: le.key, prev: -1})
				continue
			}
			if u == t {
				repl = append(repl, replacement{reader: u, key: le.key, prev: g})
			} else {
				repl = append(repl, replacement{reader: u, key: le.key, prev: g, after: []int32{t}})
			}
		default:
			// A read that shows neither: in a satisfiable instance L3
			// and the decided orders rule it out; keep t rather than
			// reason past it.
			tracePin(tx, func() string {
				return "list: a read of " + string(le.key) + " by " + r.h.Txns[u].ID + " shows neither the prefix nor it"
			})
			return nil, false, false, false
		}
	}
	return repl, true, false, false
}

// applyFold makes t the holder of le's key: its appends join the prefix,
// the reads repl are replaced by the orders they implied, and the former
// holder loses the key (a ghost left with no key leaves, R5).
func (s *evictStep) applyFold(t int32, le listEntry, repl []replacement) {
	r, st := s.r, s.st
	s.replaceReads(repl)
	if g, has := st.LiveOf[le.key]; has && st.GhostKeys[g] != nil {
		s.dropGhostKey(g, le.key)
	}
	i := r.pos[t]
	st.Folded[i] = append(st.Folded[i], le.key)
	st.LiveOf[le.key] = i
	// A new slice: rewind points and earlier steps' instances may share
	// the old one. Its values are copies: a decoder's strings may share
	// the buffer of a whole batch of events, which a prefix kept for a
	// key nobody touches again would hold for ever.
	next := slices.Clone(st.ListPrefix[le.key])
	for _, v := range le.apps {
		next = append(next, history.Value(strings.Clone(string(v))))
	}
	st.ListPrefix[le.key] = next
	s.livePosOf[le.k] = t + 1
	if s.heldBy == nil {
		s.heldBy = map[history.Key]int32{}
	}
	s.heldBy[le.key] = t
}

// listsToInitial passes the prefixes that member i holds to the initial
// node as i leaves the window (docs/SEMANTICS.md §5, "Lists: the prefix
// passes to the initial node"): build then writes each as appends of the
// initial node, which precedes every transaction, and i leaves as if it
// held none of them, removed with R5 or a ghost of its register keys
// only. Before, i stayed a ghost for each key it held, for ever on a key
// nobody appends to again (a retired key): one ghost per key, and the
// body of each kept its whole chunk of the log in memory.
func (s *evictStep) listsToInitial(i int) {
	st := s.st
	for _, k := range st.heldLists(i) {
		delete(st.LiveOf, k)
		if ki, in := s.p.KeyIndex()[k]; in {
			s.livePosOf[ki] = 0
		}
	}
}

// initialLists appends to ops the initial node's appends in build: the
// prefix of each list key that a member touches and no transaction holds
// (listsToInitial), keys in order.
func (st *evictState) initialLists(ops []history.Op, touched map[history.Key]bool) []history.Op {
	if len(st.ListPrefix) == 0 {
		return ops // no list key ever folded: no lookup per touched key
	}
	// The keys are those of both maps, so the pass goes over the smaller
	// one (on rmw100k the touched keys were several times the folded
	// list keys, and each cost two lookups); the elements are counted
	// first, so that ops grows once (12K of them per step there).
	var keys []history.Key
	n := 0
	if len(st.ListPrefix) < len(touched) {
		for k, prefix := range st.ListPrefix {
			if len(prefix) == 0 || !touched[k] {
				continue
			}
			if _, held := st.LiveOf[k]; !held {
				keys = append(keys, k)
				n += len(prefix)
			}
		}
	} else {
		for k := range touched {
			if _, held := st.LiveOf[k]; held {
				continue
			}
			if prefix := st.ListPrefix[k]; len(prefix) > 0 {
				keys = append(keys, k)
				n += len(prefix)
			}
		}
	}
	slices.Sort(keys)
	ops = slices.Grow(ops, n)
	for _, k := range keys {
		for _, v := range st.ListPrefix[k] {
			ops = append(ops, history.Op{Kind: history.Append, Key: k, Value: v})
		}
	}
	return ops
}

// heldLists returns the list keys member i holds the prefix of.
func (st *evictState) heldLists(i int) []history.Key {
	var out []history.Key
	for _, k := range st.Folded[i] {
		if g, ok := st.LiveOf[k]; ok && g == i {
			out = append(out, k)
		}
	}
	return out
}

// foldedOps returns member i's ops with its appends to folded list keys
// left out and, for each key it holds, the appends of the whole prefix
// (its reads of those keys were replaced when they were folded).
func (o *Online) foldedOps(i int, ops []history.Op) []history.Op {
	folded := o.ev.Folded[i]
	if len(folded) == 0 {
		return ops
	}
	out := make([]history.Op, 0, len(ops))
	for _, op := range ops {
		if op.Kind == history.Append && slices.Contains(folded, op.Key) {
			continue
		}
		out = append(out, op)
	}
	for _, k := range o.ev.heldLists(i) {
		out = append(out, o.listOps(k)...)
	}
	return out
}

func hasPrefix(l, prefix []history.Value) bool {
	return len(l) >= len(prefix) && slices.Equal(l[:len(prefix)], prefix)
}

// listOps are the ops ghost i writes for list key k in the instance: one
// append per element of k's prefix (L1), cached per key while the prefix
// is unchanged.
func (o *Online) listOps(k history.Key) []history.Op {
	st := &o.ev
	prefix := st.ListPrefix[k]
	if ops, ok := st.listOpsOf[k]; ok && len(ops) == len(prefix) {
		return ops
	}
	if st.listOpsOf == nil {
		st.listOpsOf = map[history.Key][]history.Op{}
	}
	ops := make([]history.Op, len(prefix))
	for j, v := range prefix {
		ops[j] = history.Op{Kind: history.Append, Key: k, Value: v}
	}
	st.listOpsOf[k] = ops
	return ops
}

// listRule turns the list rule on (tests turn it off to compare).
var listRule = true
