package online

import (
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// burstIdx holds burst4's per-step indexes (docs/SEMANTICS.md §5, "The
// list rule's readers and R4's writers, by index"): nothing in it
// outlives the step (newEvictStep makes a fresh evictStep), and each
// index yields exactly what the scan it replaces acted on, in the scan's
// order.
type burstIdx struct {
	// wf are, by instance position, the facts about a writer that every
	// writer scan tests and that a step never changes: its status and
	// whether prepare left it out (writerFlags). Reading them from the
	// transaction (a large struct) and the prepared transaction was a
	// cache miss each, for every later writer of a key at every eviction.
	wf []uint8
	// lr: per interned list key, the readers of the key that the list
	// rule's read loop may still act on, with their reads of the key
	// (listReadersLeft); lrInit says whether key k's list is made.
	lr     [][]listReader
	lrInit []bool
	// sess: r5Remove's session index (burst_session.go).
	sess *sessionIdx
}

// The writer facts of burstIdx.wf.
const (
	wfAborted uint8 = 1 << iota
	wfUnknown
	wfDropped
)

// writerFlags returns the step's writer facts, made once a step. A
// transaction's status is fixed in the step's instance (nothing in evict
// writes it), and Dropped is the prepared history's, fixed at prepare.
func (s *evictStep) writerFlags() []uint8 {
	if s.bx.wf != nil {
		return s.bx.wf
	}
	wf := make([]uint8, len(s.r.h.Txns))
	for t := range s.r.h.Txns {
		var f uint8
		switch s.r.h.Txns[t].Status {
		case history.Aborted:
			f |= wfAborted
		case history.Unknown:
			f |= wfUnknown
		}
		if s.p.Txns()[t].Dropped() {
			f |= wfDropped
		}
		wf[t] = f
	}
	s.bx.wf = wf
	return wf
}

// r4Skip is R4's test, in r4LiveVersion's loop over k's writers, of a
// writer w that does not bear on t's eviction:
//
//	w == t || removed[w] || w aborted || w dropped || s.noCommit(w, true)
//
// the same test, in the same order (noCommit may probe, so whether and
// when it is asked is kept), with the status and Dropped read from the
// step's writer facts. noCommit returns false at once for a writer that
// is not unknown, so it is asked of the unknown ones alone.
func (s *evictStep) r4Skip(w, t int32) bool {
	if writersLeftNaive {
		r, p := s.r, s.p
		return w == t || s.removed[w] || r.h.Txns[w].Status == history.Aborted || p.Txns()[w].Dropped() || s.noCommit(w, true)
	}
	if w == t || s.removed[w] {
		return true
	}
	f := s.writerFlags()[w]
	if f&(wfAborted|wfDropped) != 0 {
		return true
	}
	return f&wfUnknown != 0 && s.noCommit(w, true)
}

// isAborted and isDropped are the list rule's tests of an appender w
// (listPrefix), from the step's writer facts; with writersLeftNaive
// (tests) they read the transactions, as the loop did.
func (s *evictStep) isAborted(w int32) bool {
	if writersLeftNaive {
		return s.r.h.Txns[w].Status == history.Aborted
	}
	return s.writerFlags()[w]&wfAborted != 0
}

func (s *evictStep) isDropped(w int32) bool {
	if writersLeftNaive {
		return s.p.Txns()[w].Dropped()
	}
	return s.writerFlags()[w]&wfDropped != 0
}

// listReader is one reader of a list key for the list rule's read loop:
// the transaction, its list reads of the key in the instance as
// externalLists gives them, and the indexes (into the encoder's reads,
// in readsOf's order) of its read choices on the key.
type listReader struct {
	u     int32
	lists [][]history.Value
	reads []int32
}

// listReadersLeft returns the readers of interned list key k (key is its
// name) that listPrefix's read loop acts on, in s.accessors[k]'s order,
// with their lists and reads of the key.
//
// The loop visited every accessor of k at every fold of k (one per
// appender that leaves: most of a burst on the mixed workload), and for
// each parsed its ops (externalLists) and scanned all its reads for the
// key's: quadratic in the accessors of a key (issue 20, item 7). An
// accessor the loop passes over stays passed over for the rest of the
// step, and so drops out of k's list once, the list compacted in place
// as it is read (as writersLeft does for writers):
//
//   - the initial node (position -1): fixed;
//   - removed (only set within a step);
//   - a ghost (r.ghost goes back to false only with removed);
//   - a reader whose read of the key was replaced (Replaced only grows
//     within a step, but where the reader is removed or becomes a ghost,
//     which skip it anyway);
//   - a reader with no list read of the key in the instance (its ops are
//     the step's instance's, fixed within the step).
//
// The lists and the reads are those the loop computed at every visit,
// computed once: both are functions of the step's fixed ops and reads.
// So the loop acts on the same readers, in the same order, with the same
// lists and reads, and the step decides the same
// (TestListReadersLeftIsTheNaiveLoop).
func (s *evictStep) listReadersLeft(k int32, key history.Key) []listReader {
	r, st := s.r, s.st
	gone := func(u int32) bool {
		i := r.pos[u]
		return i < 0 || s.removed[u] || r.ghost[u] || slices.Contains(st.Replaced[i], key)
	}
	if listReadersNaive {
		return s.listReadersScan(k, key)
	}
	if s.bx.lr == nil {
		s.bx.lr = make([][]listReader, len(s.p.Keys()))
		s.bx.lrInit = make([]bool, len(s.p.Keys()))
	}
	if !s.bx.lrInit[k] {
		var ls []listReader
		for _, u := range s.accessors[k] {
			if r.pos[u] < 0 {
				continue
			}
			if lr, ok := s.makeListReader(u, k, key); ok {
				ls = append(ls, lr)
			}
		}
		s.bx.lr[k], s.bx.lrInit[k] = ls, true
	}
	ls := s.bx.lr[k]
	j := 0
	for _, lr := range ls {
		if !gone(lr.u) {
			ls[j] = lr
			j++
		}
	}
	if listReadersCount != nil {
		listReadersCount(len(ls)-j, j)
	}
	clear(ls[j:])
	ls = ls[:j]
	s.bx.lr[k] = ls
	return ls
}

// makeListReader is u's entry for key k, if u reads the key in the
// instance (externalLists gives a list).
func (s *evictStep) makeListReader(u, k int32, key history.Key) (listReader, bool) {
	lists := externalLists(s.r.h.Txns[u].Ops, key)
	if len(lists) == 0 {
		return listReader{}, false
	}
	var reads []int32
	for _, ri := range s.readsOf[u] {
		rv := &s.e.Reads()[ri]
		if s.p.Txns()[u].Reads()[rv.Read()].Key() == k {
			reads = append(reads, int32(ri))
		}
	}
	return listReader{u: u, lists: lists, reads: reads}, true
}

// listReadersScan is the loop as it was, written apart from the index
// (tests: the differential test's reference): every accessor of k, its
// lists and reads of k made at each call.
func (s *evictStep) listReadersScan(k int32, key history.Key) []listReader {
	r, p, e, st := s.r, s.p, s.e, s.st
	var out []listReader
	for _, u := range s.accessors[k] {
		if r.pos[u] < 0 {
			continue
		}
		if s.removed[u] || r.ghost[u] || slices.Contains(st.Replaced[r.pos[u]], key) {
			continue
		}
		lists := externalLists(r.h.Txns[u].Ops, key)
		if len(lists) == 0 {
			continue
		}
		lr := listReader{u: u, lists: lists}
		for _, ri := range s.readsOf[u] {
			rv := &e.Reads()[ri]
			if p.Txns()[u].Reads()[rv.Read()].Key() != k {
				continue
			}
			lr.reads = append(lr.reads, int32(ri))
		}
		out = append(out, lr)
	}
	return out
}

// listReadersNaive (tests) makes listReadersLeft visit every accessor
// and compute its lists and reads at each call: the loop as it was, for
// the differential test. listReadersCount (tests) is told, at each call,
// how many readers the call dropped and how many it left.
var (
	listReadersNaive bool
	listReadersCount func(dropped, left int)
)
