package stampcheck

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// Outcome is what the facts alone say.
type Outcome uint8

const (
	// Witnessed: the facts give a witness; the history is valid at the
	// level and consistent with its facts.
	Witnessed Outcome = iota
	// Open: the facts leave something open (a committed transaction
	// without them, an unknown transaction that writes, tied stamps whose
	// order matters); the caller searches.
	Open
	// Contradicted: the witness the facts give fails; Seed names
	// transactions that contradict each other under the level and the
	// facts (a start for minimization, not minimal).
	Contradicted
)

func (o Outcome) String() string {
	return [...]string{"witnessed", "open", "contradicted"}[o]
}

// Fast is the answer of a fast path.
type Fast struct {
	Outcome Outcome
	// Order is the witness (indexes into the history's Txns) when
	// Witnessed: a serial order at the serializable levels, the commit
	// order at the snapshot levels.
	Order []int32
	// Events is the snapshot levels' witness when Witnessed: begins and
	// commits in an order that gives every read its snapshot.
	Events []Event
	// Why says, in a sentence, what was open or contradicted.
	Why  string
	Seed []int32
}

// CheckSerial tries the commit-stamp witness at a serializable level:
// every committed transaction in commit_ts order (ties by start, end and
// input position), replayed from the initial state, with session order
// and widened real time checked against it when the level has them.
// Unknown transactions are left out (they carry no commit stamp: the
// completion in which none committed is the one tried); a failure that
// one of them that writes might explain is Open, and so is a committed
// transaction without a commit stamp and a failure that a different order
// of tied stamps might avoid.
func CheckSerial(h *history.History, opts history.Options) Fast {
	if h.Facts == nil {
		return Fast{Outcome: Open, Why: "the history carries no database facts"}
	}
	order := make([]int32, 0, len(h.Txns))
	unknownWriter := ""
	for i := range h.Txns {
		t, f := &h.Txns[i], &h.Facts[i]
		switch t.Status {
		case history.Aborted:
			continue
		case history.Unknown:
			// Left out: the completion in which it did not commit is
			// tried, and if a read needs it the search decides.
			if unknownWriter == "" && t.Writes() {
				unknownWriter = t.ID
			}
			continue // an uncommitted transaction's reads constrain nothing (docs/SEMANTICS.md §2)
		}
		if f.Has&history.HasCommitTS == 0 {
			return Fast{Outcome: Open, Why: fmt.Sprintf("committed txn %s has no commit_ts", t.ID)}
		}
		order = append(order, int32(i))
	}
	sortByStamp(order, func(i int32) int64 { return h.Facts[i].CommitTS }, func(a, b int32) int {
		ta, tb := &h.Txns[a], &h.Txns[b]
		return cmp.Or(cmp.Compare(ta.Start, tb.Start), cmp.Compare(ta.End, tb.End), cmp.Compare(a, b))
	})
	ties := false
	for p := 1; p < len(order); p++ {
		if h.Facts[order[p-1]].CommitTS == h.Facts[order[p]].CommitTS {
			ties = true
			break
		}
	}
	if a, b, why := levelOrderViolation(h, opts, order); why != "" {
		if h.Facts[a].CommitTS == h.Facts[b].CommitTS {
			return Fast{Outcome: Open, Why: "tied commit stamps against " + why}
		}
		return Fast{Outcome: Contradicted, Why: fmt.Sprintf("commit_ts puts %s after %s, against %s", h.Txns[a].ID, h.Txns[b].ID, why), Seed: []int32{a, b}}
	}
	if m := replay(h, opts, order); m != nil {
		if ties {
			return Fast{Outcome: Open, Why: "tied commit stamps: " + m.why}
		}
		if unknownWriter != "" {
			return Fast{Outcome: Open, Why: fmt.Sprintf("%s (txn %s is unknown and writes: it may have committed)", m.why, unknownWriter)}
		}
		return Fast{Outcome: Contradicted, Why: m.why, Seed: m.seed}
	}
	return Fast{Outcome: Witnessed, Order: order}
}

// levelOrderViolation finds a pair the level orders (session order,
// widened real time) that order puts the other way round: b placed before
// a although a must precede b. It returns (a, b, reason) or reason "".
func levelOrderViolation(h *history.History, opts history.Options, order []int32) (int32, int32, string) {
	pos := make([]int32, len(h.Txns))
	for i := range pos {
		pos[i] = -1
	}
	for p, i := range order {
		pos[i] = int32(p)
	}
	if opts.Level.SessionOrder() {
		for _, s := range sessions(h) {
			var prev int32 = -1
			for _, i := range s {
				if pos[i] < 0 {
					continue
				}
				if prev >= 0 && pos[prev] > pos[i] {
					return prev, i, "session order"
				}
				prev = i
			}
		}
	}
	if opts.Level.RealTime() {
		// Walk the order from its end, keeping the placed transaction
		// with the smallest effective end among those after position p:
		// if it precedes order[p] in real time, the order inverts them.
		var best int32 = -1
		for p := len(order) - 1; p >= 0; p-- {
			j := order[p]
			if best >= 0 && opts.Precedes(&h.Txns[best], &h.Txns[j]) {
				return best, j, fmt.Sprintf("real time (Δ=%d)", opts.Skew)
			}
			// On equal ends the earlier start: two zero-length
			// transactions at one instant are concurrent (Options.Precedes),
			// a longer one ending there is not.
			if best < 0 || cmp.Or(cmp.Compare(opts.EffectiveEnd(&h.Txns[j]), opts.EffectiveEnd(&h.Txns[best])), cmp.Compare(h.Txns[j].Start, h.Txns[best].Start)) < 0 {
				best = j
			}
		}
	}
	return 0, 0, ""
}

// sessions lists each session's transactions in session order: start
// timestamps when all of the session's transactions have them, a tie by
// end and then id, and input order otherwise (docs/SEMANTICS.md §1
// "Session order").
func sessions(h *history.History) [][]int32 {
	idx := map[string]int{}
	var out [][]int32
	for i := range h.Txns {
		t := &h.Txns[i]
		if !t.HasSession {
			continue
		}
		k, ok := idx[t.Session]
		if !ok {
			k = len(out)
			idx[t.Session] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], int32(i))
	}
	for _, s := range out {
		timed := true
		for _, i := range s {
			timed = timed && h.Txns[i].HasTime
		}
		if timed {
			slices.SortStableFunc(s, func(a, b int32) int { return history.SessionCompare(&h.Txns[a], &h.Txns[b]) })
		}
	}
	return out
}

// mismatch is a read the replay did not reproduce.
type mismatch struct {
	why  string
	seed []int32
	// internal: a read after the transaction's own write that does not
	// return it; no other transaction can explain that.
	internal bool
}

// replay runs order serially from the initial state (own writes visible)
// and returns the first read it does not reproduce, with a seed: the
// reader, the transactions whose versions the replay showed it, every
// writer of what it read instead, and the transaction that bound the
// key's unknown initial value.
func replay(h *history.History, opts history.Options, order []int32) *mismatch {
	unknownInit := opts.InitialState == history.InitialUnknown
	type state struct {
		val     history.Value
		list    []history.Value
		writers []int32 // who wrote the current state (for lists: every appender)
		bound   bool    // the unknown initial value is bound (or written)
		binder  int32
		written bool
	}
	// Number the keys once; list keys are marked as history.ListKeys
	// marks them.
	kx := numberKeys(h)
	st := make([]state, len(kx.name))
	for k := range st {
		st[k] = state{val: history.Null, binder: -1}
	}
	isList := kx.list
	var wix *writerIndex
	for _, ti := range order {
		t := &h.Txns[ti]
		for n, op := range t.Ops {
			k := kx.of(ti, n)
			s, list := &st[k], isList[k]
			switch {
			case op.Kind == history.Write:
				s.val, s.written, s.bound = op.Value, true, true
				s.writers = append(s.writers[:0], ti)
			case op.Kind == history.Append:
				s.list = append(s.list, op.Value)
				s.written, s.bound = true, true
				s.writers = append(s.writers, ti)
			default:
				got := op.List
				if !op.IsList && op.Value != history.Null {
					got = nil
				}
				var ok bool
				if list {
					if !op.IsList && op.Value != history.Null {
						ok = false
					} else if unknownInit && !s.bound {
						ok = len(got) >= len(s.list) && slices.Equal(got[len(got)-len(s.list):], s.list)
						if ok {
							s.list = slices.Clone(got)
							s.bound, s.binder = true, ti
						}
					} else {
						ok = slices.Equal(got, s.list)
					}
				} else if unknownInit && !s.bound {
					s.val, s.bound, s.binder, ok = op.Value, true, ti, true
				} else {
					ok = op.Value == s.val
				}
				if ok {
					continue
				}
				if wix == nil {
					wix = newWriterIndex(h)
				}
				seed := []int32{ti}
				seed = append(seed, s.writers...)
				if s.binder >= 0 {
					seed = append(seed, s.binder)
					seed = append(seed, wix.possible(&h.Txns[s.binder], op.Key)...)
				}
				seed = append(seed, wix.writersOf(op)...)
				want := string(s.val)
				if list {
					want = fmt.Sprint(s.list)
				}
				return &mismatch{
					why:  fmt.Sprintf("txn %s op %d (%s) reads %s where the stamps' order gives %s", t.ID, n, op, readText(op), want),
					seed: dedup(seed),
				}
			}
		}
	}
	return nil
}

func readText(op history.Op) string {
	if op.IsList {
		return fmt.Sprint(op.List)
	}
	return string(op.Value)
}

func dedup(s []int32) []int32 {
	slices.Sort(s)
	return slices.Compact(s)
}

// writerIndex finds every transaction (any status) that writes or appends
// a value to a key: the possible writers of docs/SEMANTICS.md §3 before
// the level's narrowing, a superset, which is all a seed needs.
type writerIndex struct {
	by map[history.Key]map[history.Value][]int32
}

func newWriterIndex(h *history.History) *writerIndex {
	w := &writerIndex{by: map[history.Key]map[history.Value][]int32{}}
	for i := range h.Txns {
		for _, op := range h.Txns[i].Ops {
			if op.Kind == history.Read {
				continue
			}
			m := w.by[op.Key]
			if m == nil {
				m = map[history.Value][]int32{}
				w.by[op.Key] = m
			}
			if l := m[op.Value]; len(l) == 0 || l[len(l)-1] != int32(i) {
				m[op.Value] = append(l, int32(i))
			}
		}
	}
	return w
}

// writersOf returns the possible writers of a read: of its value, or of
// every element of a list read.
func (w *writerIndex) writersOf(op history.Op) []int32 {
	m := w.by[op.Key]
	if !op.IsList {
		return m[op.Value]
	}
	var out []int32
	for _, v := range op.List {
		out = append(out, m[v]...)
	}
	return out
}

// possible returns the possible writers of t's reads of key k.
func (w *writerIndex) possible(t *history.Txn, k history.Key) []int32 {
	var out []int32
	for _, op := range t.Ops {
		if op.Kind == history.Read && op.Key == k {
			out = append(out, w.writersOf(op)...)
		}
	}
	return out
}

// closure returns C with the possible writers of every read of C's
// members: the part of the history on which H|C can be computed.
func (w *writerIndex) closure(h *history.History, members []int32) []int32 {
	out := slices.Clone(members)
	for _, i := range members {
		for _, op := range h.Txns[i].Ops {
			if op.Kind == history.Read {
				out = append(out, w.writersOf(op)...)
			}
		}
	}
	return dedup(out)
}

// sortByStamp sorts idx by stamp, equal stamps by tie (nil: by index).
// The sort runs on (stamp, index) pairs, whose comparisons touch one
// contiguous array instead of the history's transactions and facts (at
// 1M transactions the indirect comparisons missed the cache at every
// step); runs of equal stamps, rare, are then sorted by tie. When idx is
// increasing (every caller's list of committed transactions), the pairs
// are in index order already and a stable radix sort by stamp alone
// gives the (stamp, index) order, in a few linear passes instead of
// n log n comparisons (BENCHMARKS.md "stamps29").
//
// Stamps that span a range of at most denseSpan times len(idx) values
// (a database's counters, gen's stamps) are sorted by counting instead
// (countByStamp): one pass to count, one to place.
func sortByStamp(idx []int32, stamp func(int32) int64, tie func(a, b int32) int) {
	ps := make([]stampPair, len(idx))
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for p, i := range idx {
		ts := stamp(i)
		ps[p] = stampPair{ts, i}
		lo, hi = min(lo, ts), max(hi, ts)
	}
	sorted := slices.IsSorted(idx)
	if sorted && len(idx) > 1 && uint64(hi)-uint64(lo) < denseSpan*uint64(len(idx)) {
		countByStamp(idx, ps, lo, uint64(hi)-uint64(lo), tie)
		return
	}
	if sorted {
		// int64 to uint64 keeping the order: flip the sign bit.
		ps = radixSort(ps, func(x stampPair) uint64 { return uint64(x.ts) ^ 1<<63 })
	} else {
		slices.SortFunc(ps, func(x, y stampPair) int {
			if x.ts != y.ts {
				return cmp.Compare(x.ts, y.ts)
			}
			return cmp.Compare(x.i, y.i)
		})
	}
	for p := range ps {
		idx[p] = ps[p].i
	}
	if tie == nil {
		return
	}
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].ts == ps[lo].ts {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(idx[lo:hi], tie)
		}
		lo = hi
	}
}

// denseSpan bounds the counting sort's table: at most denseSpan int32
// counters per transaction sorted.
const denseSpan = 4

// countByStamp is sortByStamp's counting sort: ps holds (stamp, index)
// in index order, every stamp in [lo, lo+span] (span < denseSpan*len(ps)).
// Counting is stable, so equal stamps stay in index order, the radix
// sort's order; runs of equal stamps are the counters above one, sorted
// by tie afterwards as in sortByStamp. The result is the (stamp, index)
// order with ties by tie, exactly what the comparison sort gives
// (docs/SEMANTICS.md §10 "The compact form at 1M, second pass";
// TestSortByStamp).
func countByStamp(idx []int32, ps []stampPair, lo int64, span uint64, tie func(a, b int32) int) {
	count := make([]int32, span+1)
	for _, x := range ps {
		count[uint64(x.ts)-uint64(lo)]++
	}
	var runs [][2]int32 // [from, to) of each run of equal stamps
	pos := int32(0)
	for d, n := range count {
		count[d] = pos
		if n > 1 && tie != nil {
			runs = append(runs, [2]int32{pos, pos + n})
		}
		pos += n
	}
	for _, x := range ps {
		d := uint64(x.ts) - uint64(lo)
		idx[count[d]] = x.i
		count[d]++
	}
	for _, r := range runs {
		slices.SortFunc(idx[r[0]:r[1]], tie)
	}
}

type stampPair struct {
	ts int64
	i  int32
}

// radixSort sorts a stably by key, least significant byte first, through
// one buffer of a's size, and returns the sorted slice (a or the buffer).
// A byte every key shares is skipped (stamps below 2^24 take three
// passes).
func radixSort[T any](a []T, key func(T) uint64) []T {
	if len(a) < 2 {
		return a
	}
	var buf []T
	src := a
	for shift := uint(0); shift < 64; shift += 8 {
		var count [256]int
		for _, v := range src {
			count[key(v)>>shift&0xff]++
		}
		if count[key(src[0])>>shift&0xff] == len(src) {
			continue
		}
		if buf == nil {
			buf = make([]T, len(a))
		}
		dst := buf
		pos := 0
		for d := range count {
			count[d], pos = pos, pos+count[d]
		}
		for _, v := range src {
			d := key(v) >> shift & 0xff
			dst[count[d]] = v
			count[d]++
		}
		buf, src = src, dst
	}
	return src
}
