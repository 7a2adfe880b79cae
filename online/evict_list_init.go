package online

import (
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// List keys under an unknown initial state (docs/SEMANTICS.md §5, "Lists
// under an unknown initial state", issue 22).
//
// Under --initial-state unknown (run's default) every read of a list key
// k shows k's initial list I, a variable of the instance, followed by the
// appends of the committed appenders before it, in version order. The
// encoding names I through the parses of the reads of k (each parse
// implies "the initial list of k is list[:j]", at most one of which
// holds). The list rule of evict_list.go then carries over with I in
// front of the committed prefix P, provided that no constraint on I is
// lost when a read of k leaves the instance:
//
//   - IL1 a read of k leaves the instance only decided (R2 for an
//     evicted reader; listPrefix for a replaced one): its parse, hence
//     the initial list it names, holds in every completion of the
//     relaxed instance, and so of every later instance (what R_t decides
//     holds now and later). That list is kept as a fact (InitList) when
//     the read leaves;
//   - IL2 while InitList[k] is known, build gives the initial node a
//     read of k showing exactly I, before its appends of the prefix it
//     holds: a closed, committed read that precedes every other
//     transaction in real time, so every completion has initial list I,
//     as the reads that left implied; nothing else of it is claimed;
//   - IL3 while InitList[k] is unknown, no read of k by a committed
//     reader has left: I is as free in the instance as on the whole
//     history, and a fold needs no read to compare against it (a read
//     of k in the instance by a committed reader, decided, names I and
//     makes it known first).
//
// Every read of k in the instance (L3 of evict_list.go) then shows I
// followed by P at the start of its list, and listPrefix compares the
// lists read with I ++ P where it compared them with P.

// listInitRule turns the rule on (tests turn it off to see the naive
// alternatives fail).
var listInitRule = true

// listInitNaive, for tests only, folds under an unknown initial state
// without giving the initial node the read of the initial list that
// leaving reads named (IL2 off): the prefix does not carry I, the naive
// version the regression histories refute.
var listInitNaive = false

// listInitial returns the initial list of list key k as the instance
// holds it: the empty list when the initial state is known (empty), the
// fact InitList[k] when one is kept, else ok false (IL3).
func (s *evictStep) listInitial(k history.Key) (init []history.Value, ok bool) {
	if s.o.opts.InitialState != history.InitialUnknown {
		return nil, true
	}
	init, ok = s.st.InitList[k]
	return init, ok
}

// noteListInitial keeps, under an unknown initial state, the initial list
// of k that u's decided reads of k name (IL1), if none is kept yet. It is
// called for every read of k that leaves the instance decided: u's reads
// when u is evicted (fixInitial), a replaced read when its appender folds
// (listPrefix). A read of an uncommitted reader names nothing (its parses
// are all false).
func (s *evictStep) noteListInitial(u int32, k int32) {
	if s.o.opts.InitialState != history.InitialUnknown {
		return
	}
	p, e, pr, st := s.p, s.e, s.pr, s.st
	key := p.Keys()[k]
	if _, known := st.InitList[key]; known {
		return
	}
	for _, ri := range s.readsOf[u] {
		rv := &e.Reads()[ri]
		if p.Txns()[u].Reads()[rv.Read()].Key() != k {
			continue
		}
		for ci := range e.Cands(rv) {
			if v, dec := pr.decide(e.Rfs(rv)[ci]); !dec || !v {
				continue
			}
			if init, ok := e.ParseInitial(rv, ci); ok {
				if st.InitList == nil {
					st.InitList = map[history.Key][]history.Value{}
				}
				// Copies: the values may share a decoder's buffer, which
				// a fact kept for a cold key would hold for ever.
				kept := make([]history.Value, len(init))
				for j, v := range init {
					kept[j] = history.Value(strings.Clone(string(v)))
				}
				st.InitList[key] = kept
				return
			}
		}
	}
}

// noteListInitials is noteListInitial for every list key u reads (u
// leaves the instance: its reads go).
func (s *evictStep) noteListInitials(u int32) {
	if s.o.opts.InitialState != history.InitialUnknown || !s.listTxn[u] {
		return
	}
	p, e := s.p, s.e
	for _, ri := range s.readsOf[u] {
		rv := &e.Reads()[ri]
		if rd := &p.Txns()[u].Reads()[rv.Read()]; rd.IsList() {
			s.noteListInitial(u, rd.Key())
		}
	}
}

// initialListReads returns the initial node's reads in build (IL2): one
// read of each list key a member touches whose initial list is kept,
// showing exactly that list, keys in order. They come before the initial
// node's appends (initialLists), which follow I.
func (st *evictState) initialListReads(touched map[history.Key]bool) []history.Op {
	if len(st.InitList) == 0 || listInitNaive {
		return nil
	}
	var keys []history.Key
	if len(touched) < len(st.InitList) {
		// The window's keys, not every list key ever read (build by
		// touched keys, docs/SEMANTICS.md §5).
		for k := range touched {
			if _, ok := st.InitList[k]; ok {
				keys = append(keys, k)
			}
		}
	} else {
		for k := range st.InitList {
			if touched[k] {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	ops := make([]history.Op, 0, len(keys))
	for _, k := range keys {
		ops = append(ops, history.Op{Kind: history.Read, IsList: true, Key: k, List: st.InitList[k]})
	}
	return ops
}
