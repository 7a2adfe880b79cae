package incremental

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// noVersion marks an operation that neither writes a version others can
// read nor reads one (an intermediate write, an internal read).
const noVersion = int32(-1 << 31)

// giveUp is version's answer when its scans ran out of budget.
const giveUp = noVersion + 1

// timeWitness tries to build a witness of the strict level (real time and
// session order) without an instance, by executing the participants
// serially in an order that real time mostly dictates (docs/SEMANTICS.md
// §3, "T1: a witness from client time"). It returns the order
// (transaction positions) or nil when it cannot build one: nil says
// nothing about the history, and the caller goes on to the search.
//
// The participants are the committed transactions and the unknown ones
// that write a version some read expects; the others are left out (taken
// as aborted). A participant is due once every participant that ends at
// or before its start less 2Δ, and its session predecessor, have run. The
// schedule sweeps the participants by end: at t's end t runs, after what
// it waits for (the writer of a version it reads, the readers of the
// version it overwrites, its session predecessor, a due writer of one of
// its keys whose version is read earlier), each run the same way,
// recursively, only if due. t runs only if each of its reads returns the
// value the state holds (its own writes first). So every read is
// reproduced by construction and the order extends real time and session
// order; every choice only decides whether the sweep gets through.
//
// Registers and the empty initial state only: a list, an explicitly
// written null, an unknown initial state or an unknown writer with a
// finite in-doubt horizon return nil (the search decides).
//
// Cost: O(n log n) for the sorts, one pass over the operations with a
// binary search and a scan of at most 32 writers of the key per read
// (a whole key's writers within a budget of about two per operation in
// all); memory a few words per operation, none of the solver's.
func timeWitness(ctx context.Context, h *history.History, opts history.Options) []int32 {
	if opts.InitialState != history.InitialEmpty || opts.Level.BeginCommit() {
		return nil
	}
	n := len(h.Txns)
	// The participants are the committed transactions and the unknown
	// ones that write and are in doubt forever (real time orders nothing
	// after them): an unknown one runs, taken as committed, only if a
	// read needs its version. Their operations get global slots: opBase[t]
	// + i. Keys are numbered as met.
	in := make([]bool, n)
	opBase := make([]int32, n+1)
	committed := 0
	ops := 0
	for ti := range h.Txns {
		t := &h.Txns[ti]
		opBase[ti] = int32(ops)
		switch {
		case t.Status == history.Committed:
			committed++
		case t.Status == history.Unknown && t.Writes():
			if opts.EffectiveEnd(t) != math.MaxInt64 {
				return nil
			}
		default:
			continue
		}
		if !t.HasTime {
			return nil
		}
		in[ti] = true
		ops += len(t.Ops)
	}
	opBase[n] = int32(ops)
	// participants ranges over the participants in input order.
	participants := func(yield func(int32, *history.Txn) bool) {
		for ti := range h.Txns {
			if in[ti] && !yield(int32(ti), &h.Txns[ti]) {
				return
			}
		}
	}
	keyIndex := make(map[history.Value]int32, 1024)
	var keys []history.Value
	opKey := make([]int32, ops)
	writes := 0
	for ti, t := range participants {
		base := opBase[ti]
		for oi := range t.Ops {
			op := &t.Ops[oi]
			if op.Kind == history.Append || op.IsList || (op.Kind == history.Write && op.Value == history.Null) {
				return nil
			}
			k, ok := keyIndex[op.Key]
			if !ok {
				k = int32(len(keys))
				keyIndex[op.Key] = k
				keys = append(keys, op.Key)
			}
			opKey[base+int32(oi)] = k
			if op.Kind == history.Write {
				writes++
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	// finalWrite reports whether op oi of t is its last write of the key:
	// the version other transactions can read.
	finalWrite := func(ti int32, oi int) bool {
		t := &h.Txns[ti]
		k := opKey[opBase[ti]+int32(oi)]
		for j := oi + 1; j < len(t.Ops); j++ {
			if t.Ops[j].Kind == history.Write && opKey[opBase[ti]+int32(j)] == k {
				return false
			}
		}
		return true
	}
	// firstOnKey says whether op oi is t's first operation on its key.
	firstOnKey := func(ti int32, oi int) bool {
		base := opBase[ti]
		for j := 0; j < oi; j++ {
			if opKey[base+int32(j)] == opKey[base+int32(oi)] {
				return false
			}
		}
		return true
	}
	end := func(t int32) int64 { return opts.EffectiveEnd(&h.Txns[t]) }
	// writersOf[wOff[k]:wOff[k+1]] are key k's writers (participants, by
	// start); wNext[k] skips the ones that ran.
	pByStart := make([]int32, 0, committed)
	for ti := range h.Txns {
		if in[ti] {
			pByStart = append(pByStart, int32(ti))
		}
	}
	slices.SortFunc(pByStart, func(a, b int32) int { return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start) })
	wOff := make([]int32, len(keys)+2)
	for _, ti := range pByStart {
		for oi, op := range h.Txns[ti].Ops {
			if op.Kind == history.Write && finalWrite(ti, oi) {
				wOff[opKey[opBase[ti]+int32(oi)]+2]++
			}
		}
	}
	for i := 2; i < len(wOff); i++ {
		wOff[i] += wOff[i-1]
	}
	// A version is a final write, named by its place in writersOf (so
	// the per-version tables are as long as the writes, not the
	// operations), or -1-k for key k's initial version. ver[slot] is the
	// version an operation writes (a final write) or must see (an
	// external read: one before the transaction's own write of the key),
	// noVersion otherwise.
	ver := make([]int32, ops)
	for i := range ver {
		ver[i] = noVersion
	}
	writersOf := make([]int32, wOff[len(wOff)-1])
	// The writers' starts and values beside them: the lookups below touch
	// these and not the transactions.
	wStart := make([]int64, len(writersOf))
	wEnd := make([]int64, len(writersOf))
	wVal := make([]history.Value, len(writersOf))
	for _, ti := range pByStart {
		for oi, op := range h.Txns[ti].Ops {
			if op.Kind == history.Write && finalWrite(ti, oi) {
				k := opKey[opBase[ti]+int32(oi)]
				writersOf[wOff[k+1]] = ti
				ver[opBase[ti]+int32(oi)] = wOff[k+1]
				wStart[wOff[k+1]] = h.Txns[ti].Start
				wEnd[wOff[k+1]] = end(ti)
				wVal[wOff[k+1]] = op.Value
				wOff[k+1]++
			}
		}
	}
	// A version is one final write, named by its slot, or -1-k for key
	// k's initial version. A read is expected to see one version: a
	// writer of its value, with repeated values the nearest in time (one
	// that ended before the reader did, latest end first; then one that
	// started before, latest start first). Any other guess only costs a
	// failed attempt: a read passes on its value. The writers are looked
	// for among the key's latest starts before the reader's end first;
	// the whole key is scanned only if none of those matches, within a
	// budget of one scan per operation on average (a history that spends
	// it is left to the search).
	budget := 2*ops + 1024
	const window = 32
	version := func(k int32, v history.Value, reader int32) int32 {
		if v == history.Null {
			return -1 - k
		}
		re := h.Txns[reader].End
		ws := writersOf[wOff[k]:wOff[k+1]]
		starts, vals := wStart[wOff[k]:wOff[k+1]], wVal[wOff[k]:wOff[k+1]]
		hi := sort.Search(len(ws), func(i int) bool { return starts[i] >= re })
		// A writer of v is dead for this read if a writer of another
		// value starts after it ends and ends before the reader starts
		// (it overwrote v in real time); of the live ones, one that ended
		// before the reader did, latest end first, then one that started
		// before, latest start first.
		rs := h.Txns[reader].Start - 2*opts.Skew
		ends := wEnd[wOff[k]:wOff[k+1]]
		rank := func(i int) (int, int64) {
			switch {
			case ws[i] == reader:
				return 0, 0
			case ends[i] < re:
				return 2, ends[i]
			case starts[i] < re:
				return 1, starts[i]
			}
			return 0, 0
		}
		pick := func(lo, hi int) int32 {
			overwrite := int64(math.MinInt64)
			for i := lo; i < hi; i++ {
				if vals[i] != v && ends[i] <= rs {
					overwrite = max(overwrite, starts[i])
				}
			}
			best := -1
			for i := lo; i < hi; i++ {
				if vals[i] != v || ends[i] < overwrite && ws[i] != reader {
					continue
				}
				if best >= 0 {
					ri, ti := rank(i)
					rb, tb := rank(best)
					if ri < rb || ri == rb && ti <= tb {
						continue
					}
				}
				best = i
			}
			if best < 0 {
				return noVersion
			}
			return wOff[k] + int32(best)
		}
		if v := pick(max(hi-window, 0), hi); v != noVersion {
			return v
		}
		if budget -= len(ws); budget < 0 {
			return giveUp
		}
		return pick(0, len(ws))
	}
	// left counts the readers of each version (each transaction once per
	// version; initLeft for the initial versions).
	nv := len(writersOf)
	left := make([]int32, nv)
	// firstEnd is the earliest end of a version's readers: of two
	// writers of a key due at once, the one whose version is read first
	// (or never) goes first.
	firstEnd := make([]int64, nv)
	for i := range firstEnd {
		firstEnd[i] = math.MinInt64
	}
	// lastStart is the latest start of a version's readers: a writer
	// that ends before it cannot come after that version.
	lastStart := make([]int64, nv)
	initLeft := make([]int32, len(keys))
	never := make([]bool, n) // unknown, and no order lets it commit
	for ti, t := range participants {
		base := opBase[ti]
		for oi := range t.Ops {
			op := &t.Ops[oi]
			s := base + int32(oi)
			k := opKey[s]
			if op.Kind == history.Write {
				continue // its version was set with writersOf
			}
			own, earlier := int32(-1), false
			for j := oi - 1; j >= 0; j-- {
				if opKey[base+int32(j)] != k {
					continue
				}
				if t.Ops[j].Kind == history.Write {
					own = int32(j)
					break
				}
				earlier = true // an earlier read of the same version
			}
			if own >= 0 {
				// Internal: it must return the transaction's own write,
				// whatever the order; if it does not, the transaction
				// cannot commit and the search names it.
				if t.Ops[own].Value != op.Value {
					if t.Status == history.Committed {
						return nil
					}
					never[ti] = true
				}
				continue
			}
			v := version(k, op.Value, int32(ti))
			if v == giveUp {
				return nil
			}
			if v == noVersion {
				if t.Status == history.Committed {
					return nil // no writer: the search names it
				}
				never[ti] = true
				continue
			}
			ver[s] = v
			if earlier {
				continue
			}
			if v < 0 {
				initLeft[-1-v]++
			} else {
				if left[v] == 0 || t.End < firstEnd[v] {
					firstEnd[v] = t.End
				}
				if left[v] == 0 || t.Start > lastStart[v] {
					lastStart[v] = t.Start
				}
				left[v]++
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	// An unknown participant stays only if a version it writes has
	// readers; then it must run like a committed one (its readers wait
	// for it). The others leave, and their reads stop counting.
	total := committed
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if !in[ti] || t.Status == history.Committed {
			continue
		}
		needed := false
		for oi, op := range t.Ops {
			if v := ver[opBase[ti]+int32(oi)]; op.Kind == history.Write && v >= 0 && left[v] > 0 {
				needed = true
			}
		}
		if needed && never[ti] {
			return nil
		}
		if needed {
			total++
			continue
		}
		in[ti] = false
		for oi, op := range t.Ops {
			s := opBase[ti] + int32(oi)
			if op.Kind != history.Read || ver[s] == noVersion || !firstOnKey(int32(ti), oi) {
				continue
			}
			if v := ver[s]; v < 0 {
				initLeft[-1-v]--
			} else {
				left[v]--
			}
		}
	}

	// Real time: byEnd holds the participants by end (an unknown one's
	// is +inf); t is due by time once the first need[t] of them have run,
	// need[t] being the number that end at or before t's start less twice
	// the skew (an over-approximation of Precedes, which only delays t).
	byEnd := make([]int32, 0, total)
	for ti := range h.Txns {
		if in[ti] {
			byEnd = append(byEnd, int32(ti))
		}
	}
	byStart := slices.Clone(byEnd)
	slices.SortFunc(byEnd, func(a, b int32) int { return cmp.Compare(end(a), end(b)) })
	slices.SortFunc(byStart, func(a, b int32) int { return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start) })
	need := make([]int32, n)
	{
		j := 0
		for _, t := range byStart {
			lim := h.Txns[t].Start - 2*opts.Skew
			for j < len(byEnd) && end(byEnd[j]) <= lim {
				j++
			}
			need[t] = int32(j)
		}
	}
	// Session order: each committed transaction waits for the committed
	// member before it (members sorted as prepare ranks them: by start,
	// then position); next is the inverse.
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range prev {
		prev[i], next[i] = -1, -1
	}
	if opts.Level.SessionOrder() {
		sessions := map[string][]int32{}
		for ti := range h.Txns {
			t := &h.Txns[ti]
			if t.HasSession {
				sessions[t.Session] = append(sessions[t.Session], int32(ti))
			}
		}
		for _, members := range sessions {
			slices.SortStableFunc(members, func(a, b int32) int {
				if h.Txns[a].Start != h.Txns[b].Start {
					return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start)
				}
				return cmp.Compare(a, b)
			})
			last := int32(-1)
			for _, t := range members {
				if !in[t] {
					continue
				}
				prev[t] = last
				if last >= 0 {
					next[last] = t
				}
				last = t
			}
		}
	}

	// readers[rOff[v]:rOff[v+1]] are the participants that read version
	// v (initial versions after the writes: nv+k).
	vix := func(v int32) int32 {
		if v < 0 {
			return int32(nv) + (-1 - v)
		}
		return v
	}
	rOff := make([]int32, nv+len(keys)+2)
	// firstReads ranges over the reads that count a reader of a version.
	firstReads := func(yield func(int32, int32) bool) {
		for ti, t := range participants {
			for oi, op := range t.Ops {
				if s := opBase[ti] + int32(oi); op.Kind == history.Read && ver[s] != noVersion && firstOnKey(ti, oi) && !yield(ti, s) {
					return
				}
			}
		}
	}
	for _, s := range firstReads {
		rOff[vix(ver[s])+2]++
	}
	for i := 2; i < len(rOff); i++ {
		rOff[i] += rOff[i-1]
	}
	readers := make([]int32, rOff[len(rOff)-1])
	for ti, s := range firstReads {
		x := vix(ver[s]) + 1
		readers[rOff[x]] = ti
		rOff[x]++
	}
	wNext := slices.Clone(wOff[:len(keys)])
	value := func(v int32) history.Value {
		if v < 0 {
			return history.Null
		}
		return wVal[v]
	}

	// The schedule: a sweep over ends. At t's end t must have run; if it
	// cannot run yet, what it waits for runs first, recursively (the
	// writer of a version it reads, the readers of a version it would
	// overwrite, its session predecessor), each only if due by time.
	cur := make([]int32, len(keys)) // the version each key holds
	for k := range cur {
		cur[k] = -1 - int32(k)
	}
	ran := make([]bool, n)
	visiting := make([]bool, n)
	order := make([]int32, 0, total)
	done := 0 // the prefix of byEnd that has run
	run := func(ti int32) {
		ran[ti] = true
		order = append(order, ti)
		for oi, op := range h.Txns[ti].Ops {
			if s := opBase[ti] + int32(oi); op.Kind == history.Write && ver[s] != noVersion {
				cur[opKey[s]] = ver[s]
			}
		}
	}
	readsMatch := func(u int32) bool {
		for oi, op := range h.Txns[u].Ops {
			s := opBase[u] + int32(oi)
			if v := ver[s]; op.Kind == history.Read && v != noVersion && cur[opKey[s]] != v && value(cur[opKey[s]]) != op.Value {
				return false
			}
		}
		return true
	}
	writeVersion := func(u, k int32) int32 {
		for j := len(h.Txns[u].Ops) - 1; j >= 0; j-- {
			if s := opBase[u] + int32(j); h.Txns[u].Ops[j].Kind == history.Write && opKey[s] == k {
				return ver[s]
			}
		}
		return noVersion
	}
	firstOf := func(v int32) int64 {
		if v < 0 {
			return math.MinInt64
		}
		return firstEnd[v]
	}
	// Recursion is bounded in depth, and the calls in all by a budget
	// linear in the history: failed yields are retried, and without a
	// budget an adversarial history could make the retries exponential.
	const maxDepth = 64
	calls, maxCalls := 0, 64*total+1<<20
	var try func(ti int32, depth int) bool
	try = func(ti int32, depth int) bool {
		if ran[ti] {
			return true
		}
		if calls++; depth > maxDepth || visiting[ti] || calls > maxCalls {
			return false
		}
		for done < len(byEnd) && ran[byEnd[done]] {
			done++
		}
		if need[ti] > int32(done) {
			return false // not due by real time
		}
		visiting[ti] = true
		defer func() { visiting[ti] = false }()
		if p := prev[ti]; p >= 0 && !try(p, depth+1) {
			return false
		}
		t := &h.Txns[ti]
		base := opBase[ti]
		for attempt := 0; attempt < 8; attempt++ {
			ok := true
			for oi, op := range t.Ops {
				s := base + int32(oi)
				v, k := ver[s], opKey[s]
				if op.Kind != history.Read || v == noVersion || cur[k] == v || value(cur[k]) == op.Value {
					continue
				}
				ok = false
				if v < 0 || !try(writersOf[v], depth+1) {
					return false
				}
			}
			for oi, op := range t.Ops {
				s := base + int32(oi)
				if op.Kind != history.Write || ver[s] == noVersion {
					continue
				}
				k := opKey[s]
				// Another due writer of k whose version is read earlier
				// (or never) goes first; a choice of order only.
				for j := wNext[k]; j < wOff[k+1]; j++ {
					u := writersOf[j]
					if ran[u] {
						if j == wNext[k] {
							wNext[k]++
						}
						continue
					}
					if h.Txns[u].Start >= t.End {
						break
					}
					if u == ti || !in[u] || visiting[u] || need[u] > int32(done) {
						continue
					}
					// Always to one that a reader of t's version follows
					// in real time; never to one whose version a
					// transaction after t in real time reads.
					uv := writeVersion(u, k)
					if uv == noVersion {
						continue
					}
					tv := ver[s]
					first := left[tv] > 0 && lastStart[tv]-2*opts.Skew >= end(u)
					later := left[uv] > 0 && lastStart[uv]-2*opts.Skew >= t.End
					if first || firstOf(uv) < firstOf(tv) && !later {
						try(u, depth+1)
					}
				}
				x := vix(cur[k])
				for _, r := range readers[rOff[x]:rOff[x+1]] {
					if r != ti && !ran[r] {
						ok = false
						if !try(r, depth+1) {
							return false
						}
					}
				}
			}
			if ok && readsMatch(ti) {
				run(ti)
				return true
			}
		}
		return false
	}
	for i, t := range byEnd {
		if i&4095 == 0 && ctx.Err() != nil {
			return nil
		}
		if !try(t, 0) {
			return nil
		}
	}
	if len(order) != total || calls > maxCalls {
		return nil
	}
	return order
}
