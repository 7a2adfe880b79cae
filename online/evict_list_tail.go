package online

import (
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// The unordered tail of a list key as ghosts (docs/SEMANTICS.md §5,
// "Lists: the unordered tail as ghosts", issue 22).
//
// An appender t of list key k folds into k's prefix only once its order
// against every other appender of k that may commit is decided
// (listPrefix). Two closed appenders that no read has ordered yet (on
// gen streams mostly the last appenders of a key nobody appends to
// again) can then never fold, and each stayed in the window with its
// body for ever. Nothing but a read still to come can order them, and
// every such read follows both in real time: all it can see of them is
// their appends. So t, otherwise free to leave (R1-R5 with every
// constraint that mentions it decided), leaves as a ghost of k whose
// only ops on k are its own appends (Tail), claiming no order: the
// instance keeps exactly the choices the future can still make.
//
// Invariants, per tail ghost g of list key k:
//
//   - T1 g is committed, time-closed, and every constraint of the
//     instance that mentioned it when it left was decided (kept as
//     orders by becomeGhost); its appends to k are in Tail[g] and in no
//     prefix;
//   - T2 g follows k's prefix holder in every completion (listPrefix's
//     order test failed only in its loop over the other appenders);
//   - T3 once every condition of listPrefix holds for g, its appends
//     join the prefix, which passes to the initial node, and g loses k
//     (foldTails); a tail ghost left with no key leaves (R5).

// listTailRule turns tail ghosts on (tests turn it off to compare).
var listTailRule = true

// tailOnly reports whether ghost i holds nothing but tail keys: build
// writes its ops from Tail alone, so its body leaves memory for the
// body file, as an evicted one's, and only its stub stays (stub,
// txnLog.keep). Kept in memory, one tail ghost kept its whole chunk of
// the log there (4,096 transactions): on gen's list streams there was
// one every 2,000 transactions, and the memory grew with the stream.
func (st *evictState) tailOnly(i int) bool {
	tail := st.Tail[i]
	gk := st.GhostKeys[i]
	if tail == nil || len(gk) == 0 {
		return false
	}
	for _, k := range gk {
		if !tailHas(tail, k) {
			return false
		}
	}
	return true
}

// tailHas reports whether tail ops append to k.
func tailHas(tail []history.Op, k history.Key) bool {
	return slices.ContainsFunc(tail, func(op history.Op) bool { return op.Key == k })
}

// keepTail records the appends of member i to the list keys of tail as
// its own ops once it is a ghost, and returns those keys (T1). The
// values are copies, as in a prefix (applyFold).
func (s *evictStep) keepTail(i int, tail []listEntry) []history.Key {
	if len(tail) == 0 {
		return nil
	}
	st := s.st
	if st.Tail == nil {
		st.Tail = map[int][]history.Op{}
	}
	var keys []history.Key
	var ops []history.Op
	for _, le := range tail {
		keys = append(keys, le.key)
		for _, v := range le.apps {
			ops = append(ops, history.Op{Kind: history.Append, Key: le.key, Value: history.Value(strings.Clone(string(v)))})
		}
	}
	st.Tail[i] = ops
	return keys
}

// dropTailKey takes k's appends from ghost g's tail ops, once they joined
// the prefix (or g leaves).
func (st *evictState) dropTailKey(g int, k history.Key) {
	tail, ok := st.Tail[g]
	if !ok {
		return
	}
	tail = slices.DeleteFunc(slices.Clone(tail), func(op history.Op) bool { return op.Key == k })
	if len(tail) == 0 {
		delete(st.Tail, g)
		return
	}
	st.Tail[g] = tail
}

// foldTails tries the list rule on every tail ghost of the instance, in
// start order (T3): a read that arrived since may have decided its order
// against the other appenders. A tail ghost whose appends to k join k's
// prefix hands the prefix to the initial node at once (it is no window
// member that could hold it) and loses k; with no key left it leaves
// with R5 (dropGhostKey).
func (s *evictStep) foldTails() {
	r, st := s.r, s.st
	if len(st.Tail) == 0 || !s.listEvictable() {
		return
	}
	for t := range r.h.Txns {
		i := r.pos[t]
		if i < 0 || !r.ghost[t] || s.removed[t] {
			continue
		}
		tail := st.Tail[i]
		if tail == nil {
			continue
		}
		if s.tailBackedOff(int32(t)) {
			// Its last retry, at an earlier step, failed, and nothing
			// that ends the wait arrived (rmw30_tailretry.go).
			if tailRetryCount != nil {
				tailRetryCount(true)
			}
			continue
		}
		failed := false
		for _, le := range s.listAppends(int32(t)) {
			if !tailHas(st.Tail[i], le.key) || !st.touched[le.key] {
				// Not a tail key, or one no member touches: then the
				// key's other tail ghosts may not be built this step
				// (build leaves out a ghost of keys no member touches),
				// and the order test would not see them.
				continue
			}
			if s.tailRetryWaits(int32(t), le.k) {
				// Failed earlier in this step, and nothing of k
				// changed since (rmw30_tailretry.go).
				if tailRetryCount != nil {
					tailRetryCount(true)
				}
				continue
			}
			if tailRetryCount != nil {
				tailRetryCount(false)
			}
			ni := len(st.InitList)
			repl, ok, _, _ := s.listPrefix(int32(t), le)
			if !ok {
				if len(st.InitList) != ni {
					// An initial list kept on the way (IL1): k's
					// part of the instance changed.
					s.keyChanged(le.k)
				}
				s.tailRetryFailed(int32(t), le.k)
				failed = true
				continue
			}
			s.applyFold(int32(t), le, repl)
			s.keyChanged(le.k)
			// A ghost holds no prefix: the initial node does.
			st.Folded[i] = slices.DeleteFunc(st.Folded[i], func(k history.Key) bool { return k == le.key })
			if len(st.Folded[i]) == 0 {
				delete(st.Folded, i)
			}
			delete(st.LiveOf, le.key)
			s.livePosOf[le.k] = 0
			s.dropGhostKey(i, le.key)
			if s.removed[t] {
				break
			}
		}
		if failed && !s.removed[t] {
			s.tailBackOff(int32(t))
		}
	}
}
