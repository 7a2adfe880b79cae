package incremental

import (
	"cmp"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// rtWriters indexes the committed writers of one register key by
// adjusted start, with suffix minima of their adjusted ends, for 1-width
// pruning of read-from candidates by real time (Vbox §3.3, applied before
// search): a candidate w of a read by t is impossible when a committed
// writer b of the key follows w and precedes t in real time, because w
// precedes b in version order (time orders it), so t reading w would need
// t -> b (rw) against b -> t (rt), a cycle of base edges.
type rtWriters struct {
	starts []int64 // adjusted starts, ascending
	// minEnd[i] is the smallest adjusted end among writers i.., argMin[i]
	// the writer that has it.
	minEnd []int64
	argMin []int32
}

// pruner lazily builds rtWriters per key. It applies only to the fast
// path: in the guarded encoding b might be deselected, which would make w
// possible again.
type pruner struct {
	e    *encoder
	keys []rtWriters
	// built[k] says keys[k] is built (an empty index is one too).
	built []bool
	// Keys' indexes are carved from these chunks: an allocation per key
	// and table was most of the pruner's cost.
	arena64 []int64
	arena32 []int32
	sorting []startOf
	// forced[w] is the reader of w's version that ends first among the
	// reads whose only candidate is w (noteForced).
	forced map[int32]int32
}

// newPruner returns e's pruner, nil when it prunes nothing. A recycled
// encoder's pruner (prunePrev: the online engine's last step) gives its
// tables, emptied as fresh ones are: keys and built zeroed, the arenas,
// the sort buffer and the forced map emptied. index builds a key's
// table only where built is false and then writes all of it, and
// orderedBefore answers an empty forced map as a nil one, so the answers
// are a fresh pruner's (docs/SEMANTICS.md §5 "A step's other arrays
// recycled"; online's TestRecycleStepByStep holds it). A table per key
// per step was a twentieth of the bytes `run` allocated on the
// PostgreSQL recording.
func newPruner(e *encoder) *pruner {
	old := e.prunePrev
	e.prunePrev = nil
	if e.guarded || e.record || e.noPrune || !e.p.opts.Level.RealTime() {
		return nil
	}
	n := len(e.p.keys)
	if old == nil {
		return &pruner{e: e, keys: make([]rtWriters, n), built: make([]bool, n)}
	}
	pr := old
	pr.e = e
	pr.keys = resized(pr.keys, n)
	pr.built = resized(pr.built, n)
	pr.arena64, pr.arena32, pr.sorting = pr.arena64[:0], pr.arena32[:0], pr.sorting[:0]
	clear(pr.forced)
	return pr
}

// resized returns s with length n, every element zero, reusing its array
// when large enough.
func resized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// startOf is a writer and its adjusted start, sorted together.
type startOf struct {
	start int64
	w     int32
}

func (pr *pruner) index(k int32) *rtWriters {
	ix := &pr.keys[k]
	if pr.built[k] {
		return ix
	}
	pr.built[k] = true
	e := pr.e
	ws := pr.sorting[:0]
	for _, w := range e.p.writersOf[k] {
		if e.p.h.Txns[w].Status == history.Committed && e.node[w] >= 0 {
			ws = append(ws, startOf{e.adjStart(w), w})
		}
	}
	pr.sorting = ws
	// The same algorithm as the sort.Slice it replaces, on the same
	// comparisons: writers that start together keep their order, which
	// decides argMin among equal ends.
	slices.SortFunc(ws, func(a, b startOf) int { return cmp.Compare(a.start, b.start) })
	n := len(ws)
	ix.starts = carve(&pr.arena64, n)
	ix.minEnd = carve(&pr.arena64, n+1)
	ix.argMin = carve(&pr.arena32, n+1)
	ix.minEnd[n], ix.argMin[n] = math.MaxInt64, -1
	for i := n - 1; i >= 0; i-- {
		ix.starts[i] = ws[i].start
		ix.minEnd[i], ix.argMin[i] = ix.minEnd[i+1], ix.argMin[i+1]
		if end := e.adjEnd(ws[i].w); end < ix.minEnd[i] {
			ix.minEnd[i], ix.argMin[i] = end, ws[i].w
		}
	}
	return ix
}

// carve takes n elements from the chunk *arena, starting a new chunk when
// it is full (the old one stays with the slices carved from it).
func carve[T any](arena *[]T, n int) []T {
	a := *arena
	if cap(a)-len(a) < n {
		a = make([]T, 0, max(n, 4096))
	}
	*arena = a[:len(a)+n]
	return a[len(a) : len(a)+n : len(a)+n]
}

// impossible reports whether reader t cannot read key k from candidate w
// (-1: the initial version, which precedes every writer). Only the writer
// that ends first among those starting after w ends is tried, and it is
// confirmed with the level's own order (prepared.before), so a false
// answer only means no pruning.
func (pr *pruner) impossible(k, t, w int32) bool {
	if pr == nil {
		return false
	}
	e := pr.e
	ix := pr.index(k)
	i := 0
	if w >= 0 {
		ew := e.adjEnd(w)
		if ew == math.MaxInt64 {
			return false
		}
		i, _ = slices.BinarySearch(ix.starts, ew)
	}
	b := ix.argMin[i]
	if b < 0 || b == t || b == w || ix.minEnd[i] > e.adjStart(t) {
		return false
	}
	return (w < 0 || e.p.before(w, b)) && e.p.before(b, t)
}

// parses drops the parses of a list read by t that real time rules out:
// a committed appender a of the key outside the parse that precedes t
// would need t -> a (rw: a's elements are missing from the list) against
// a -> t (rt). Consecutive appenders of a parse ordered against real time
// close a cycle the same way.
func (pr *pruner) parses(t int32, appenders []int32, parses []listParse) []listParse {
	e := pr.e
	var preceding []int32
	for _, a := range appenders {
		if e.p.h.Txns[a].Status == history.Committed && e.p.before(a, t) {
			preceding = append(preceding, a)
		}
	}
	out := parses[:0]
	for _, ps := range parses {
		if pr.possibleParse(ps, preceding) {
			out = append(out, ps)
		}
	}
	return out
}

func (pr *pruner) possibleParse(ps listParse, preceding []int32) bool {
	in := func(a int32) bool {
		for _, b := range ps.appenders {
			if a == b {
				return true
			}
		}
		return false
	}
	for _, a := range preceding {
		if !in(a) {
			return false
		}
	}
	for j := 1; j < len(ps.appenders); j++ {
		if e := pr.e; e.p.h.Txns[ps.appenders[j-1]].Status == history.Committed && e.p.before(ps.appenders[j], ps.appenders[j-1]) {
			return false
		}
	}
	return true
}

// noteForced records a read by t whose only candidate w is fixed true: w
// then precedes t in every model (wr), so w precedes every transaction
// that t precedes by the level's order. Kept per unknown writer (whose
// end, +inf without an in-doubt horizon, orders nothing by time): the
// forced reader that ends first.
func (pr *pruner) noteForced(t, w int32) {
	if pr == nil || w < 0 || pr.e.p.h.Txns[w].Status != history.Unknown || pr.e.p.h.Txns[t].Status != history.Committed {
		return
	}
	if pr.forced == nil {
		pr.forced = map[int32]int32{}
	}
	if r, ok := pr.forced[w]; !ok || pr.e.adjEnd(t) < pr.e.adjEnd(r) {
		pr.forced[w] = t
	}
}

// orderedBefore reports whether a must precede b in every model of the
// fast path although the level does not order them: a's forced reader
// precedes b (a -> r by wr, r -> b by the level's order).
func (pr *pruner) orderedBefore(a, b int32) bool {
	if pr == nil || pr.forced == nil {
		return false
	}
	r, ok := pr.forced[a]
	return ok && r != b && pr.e.p.before(r, b)
}

// forcedCommitted reports whether w is an unknown transaction that a read
// of a committed transaction can read from only w: w is then committed in
// every model (the read's choice implies act(w)) and precedes that reader
// (a wr edge without condition).
func (e *encoder) forcedCommitted(w int32) bool {
	if !e.dropUnobserved || e.prune == nil || e.prune.forced == nil {
		return false
	}
	_, ok := e.prune.forced[w]
	return ok
}

// pairEnd is the adjusted end that orderByTime enumerates pairs and
// minimal successors by (U2, docs/SEMANTICS.md §3, "Pruning the offline search"): a transaction's own
// end, except for an unknown writer w forced by a committed reader r
// (forcedCommitted), whose end is r's. Every transaction that starts
// after e_r+Δ follows r in real time, so w, committed in every model,
// reaches it through w -> r (wr) and r's time edges: the pair needs no
// order variable. Without this an unknown writer (end +∞) pairs with every
// later writer of its keys, O(writers²) per key. Offline only
// (dropUnobserved marks the offline instances): the online engine's
// eviction reads its decisions off the pairs it enumerates.
func (e *encoder) pairEnd(w int32) int64 {
	if e.dropUnobserved && e.prune != nil && e.prune.forced != nil {
		if r, ok := e.prune.forced[w]; ok {
			return e.adjEnd(r)
		}
	}
	return e.adjEnd(w)
}
