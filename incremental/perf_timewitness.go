package incremental

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// noVersion marks an operation that neither writes a version others can
// read nor reads one (an intermediate write, an internal read).
const noVersion = int32(-1 << 31)

// giveUp is version's answer when its scans ran out of budget.
const giveUp = noVersion + 1

// timeForm is what the time witness reads of a history, with every key
// and value numbered: per transaction its times, status and session, per
// op its kind, key and value as int32s. Two sources fill it: a
// history.History (timeFormOf, a map lookup per key and value) and the
// compact path of check (TimeCompact, scale_timecompact.go), which takes
// the native decoder's numbering so that nothing is hashed twice and the
// history is never held as []history.Txn (BENCHMARKS.md "check27 (issue
// 27)", session 19: decoding was a third of the 1M check, and the
// witness's string comparisons most of the rest). One witness serves
// both, so the two paths cannot disagree on an order.
type timeForm struct {
	txns []twTxn
	ops  []twOp
	// idCmp compares two transactions' ids, read only to order a tie in
	// start (breakStartTies).
	idCmp func(a, b int32) int
	// nkeys: keys are numbered 0..nkeys-1; nsessions likewise.
	nkeys, nsessions int32
}

type twTxn struct {
	start, end int64
	ops0, opN  int32 // the transaction's ops are ops[ops0 : ops0+opN]
	session    int32 // -1: none
	status     history.Status
	hasTime    bool
}

// twNull is the value number of null (ingest.NullID in the decoder's
// numbering, which TimeCompact keeps).
const twNull = 0

type twOp struct {
	// key is the key's number; val the value's (twNull for null; equal
	// numbers exactly for equal texts).
	key, val int32
	kind     history.Kind
	// list: a read that returned a list (the witness handles registers
	// only).
	list bool
}

func (f *timeForm) opsOf(t int32) []twOp {
	x := &f.txns[t]
	return f.ops[x.ops0 : x.ops0+x.opN]
}

// writes is history.Txn.Writes on the form.
func (f *timeForm) writes(t int32) bool {
	for _, op := range f.opsOf(t) {
		if op.kind != history.Read {
			return true
		}
	}
	return false
}

// sortByKey sorts ts by key, then by position: one total order, whatever
// the sort's algorithm, and the keys read once each into pairs the sort
// moves, not looked up through the transactions at every comparison (the
// sorts were a tenth of the witness at 1M).
func sortByKey(ts []int32, key func(int32) int64) {
	type kt struct {
		k int64
		t int32
	}
	ps := make([]kt, len(ts))
	for i, t := range ts {
		ps[i] = kt{key(t), t}
	}
	slices.SortFunc(ps, func(a, b kt) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.t, b.t)) })
	for i := range ps {
		ts[i] = ps[i].t
	}
}

// breakStartTies orders each run of ts (sorted by start) that shares a
// start as session order ranks a tie (history.SessionCompare on the
// form's fields: end, then id, then position), so that the session
// predecessors read off the start order are prepare's.
func (f *timeForm) breakStartTies(ts []int32) {
	for i := 0; i < len(ts); {
		j := i + 1
		for j < len(ts) && f.txns[ts[j]].start == f.txns[ts[i]].start {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(ts[i:j], func(a, b int32) int {
				return cmp.Or(cmp.Compare(f.txns[a].end, f.txns[b].end), f.idCmp(a, b), cmp.Compare(a, b))
			})
		}
		i = j
	}
}

// prefix is the form of the first n transactions (the probe of
// timeFirstForm); it shares the arrays.
func (f *timeForm) prefix(n int) *timeForm {
	g := *f
	g.txns = f.txns[:n]
	if n > 0 {
		last := &f.txns[n-1]
		g.ops = f.ops[:last.ops0+last.opN]
	}
	return &g
}

// timeFormOf numbers h's keys, values and sessions for the witness.
func timeFormOf(h *history.History) *timeForm {
	f := &timeForm{txns: make([]twTxn, len(h.Txns))}
	f.idCmp = func(a, b int32) int { return strings.Compare(h.Txns[a].ID, h.Txns[b].ID) }
	nops := 0
	for i := range h.Txns {
		nops += len(h.Txns[i].Ops)
	}
	f.ops = make([]twOp, 0, nops)
	keys := make(map[history.Value]int32, 1024)
	vals := map[history.Value]int32{history.Null: twNull}
	sessions := map[string]int32{}
	for i := range h.Txns {
		t := &h.Txns[i]
		x := &f.txns[i]
		*x = twTxn{start: t.Start, end: t.End, ops0: int32(len(f.ops)), opN: int32(len(t.Ops)), session: -1, status: t.Status, hasTime: t.HasTime}
		if t.HasSession {
			s, ok := sessions[t.Session]
			if !ok {
				s = int32(len(sessions))
				sessions[t.Session] = s
			}
			x.session = s
		}
		for _, op := range t.Ops {
			k, ok := keys[op.Key]
			if !ok {
				k = int32(len(keys))
				keys[op.Key] = k
			}
			o := twOp{key: k, kind: op.Kind, list: op.IsList}
			if !op.IsList && op.Kind != history.Append {
				v, ok := vals[op.Value]
				if !ok {
					v = int32(len(vals))
					vals[op.Value] = v
				}
				o.val = v
			}
			f.ops = append(f.ops, o)
		}
	}
	f.nkeys, f.nsessions = int32(len(keys)), int32(len(sessions))
	return f
}

// timeWitness is the witness on h (timeFormOf); see witness.
func timeWitness(ctx context.Context, h *history.History, opts history.Options) []int32 {
	if opts.InitialState != history.InitialEmpty || opts.Level.BeginCommit() {
		return nil
	}
	return timeFormOf(h).witness(ctx, opts)
}

// witness tries to build a witness of the strict level (real time and
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
func (f *timeForm) witness(ctx context.Context, opts history.Options) []int32 {
	if opts.InitialState != history.InitialEmpty || opts.Level.BeginCommit() {
		return nil
	}
	n := len(f.txns)
	txns := f.txns
	// eend is each transaction's end for real-time order
	// (Options.EffectiveEnd: an unknown one's in-doubt horizon).
	eend := make([]int64, n)
	for ti := range txns {
		t := &txns[ti]
		eend[ti] = opts.EffectiveEnd(&history.Txn{Status: t.status, End: t.end})
	}
	// The participants are the committed transactions and the unknown
	// ones that write and are in doubt forever (real time orders nothing
	// after them): an unknown one runs, taken as committed, only if a
	// read needs its version. An operation's slot is its index in f.ops.
	in := make([]bool, n)
	committed := 0
	for ti := range txns {
		t := &txns[ti]
		switch {
		case t.status == history.Committed:
			committed++
		case t.status == history.Unknown && f.writes(int32(ti)):
			if eend[ti] != math.MaxInt64 {
				return nil
			}
		default:
			continue
		}
		if !t.hasTime {
			return nil
		}
		in[ti] = true
	}
	// participants ranges over the participants in input order.
	participants := func(yield func(int32, *twTxn) bool) {
		for ti := range txns {
			if in[ti] && !yield(int32(ti), &txns[ti]) {
				return
			}
		}
	}
	nkeys := f.nkeys
	for ti := range participants {
		for _, op := range f.opsOf(ti) {
			if op.kind == history.Append || op.list || (op.kind == history.Write && op.val == twNull) {
				return nil
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	// finalWrite reports whether op oi of t is its last write of the key:
	// the version other transactions can read.
	finalWrite := func(ti int32, oi int) bool {
		ops := f.opsOf(ti)
		k := ops[oi].key
		for j := oi + 1; j < len(ops); j++ {
			if ops[j].kind == history.Write && ops[j].key == k {
				return false
			}
		}
		return true
	}
	// firstOnKey says whether op oi is t's first operation on its key.
	firstOnKey := func(ti int32, oi int) bool {
		ops := f.opsOf(ti)
		for j := 0; j < oi; j++ {
			if ops[j].key == ops[oi].key {
				return false
			}
		}
		return true
	}
	end := func(t int32) int64 { return eend[t] }
	// writersOf[wOff[k]:wOff[k+1]] are key k's writers (participants, by
	// start); wNext[k] skips the ones that ran.
	pByStart := make([]int32, 0, committed)
	for ti := range txns {
		if in[ti] {
			pByStart = append(pByStart, int32(ti))
		}
	}
	sortByKey(pByStart, func(t int32) int64 { return txns[t].start })
	f.breakStartTies(pByStart)
	wOff := make([]int32, nkeys+2)
	for _, ti := range pByStart {
		for oi, op := range f.opsOf(ti) {
			if op.kind == history.Write && finalWrite(ti, oi) {
				wOff[op.key+2]++
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
	ver := make([]int32, len(f.ops))
	for i := range ver {
		ver[i] = noVersion
	}
	writersOf := make([]int32, wOff[len(wOff)-1])
	// The writers' starts, ends and values beside them: the lookups below
	// touch these and not the transactions.
	wStart := make([]int64, len(writersOf))
	wEnd := make([]int64, len(writersOf))
	wVal := make([]int32, len(writersOf))
	for _, ti := range pByStart {
		base := txns[ti].ops0
		for oi, op := range f.opsOf(ti) {
			if op.kind == history.Write && finalWrite(ti, oi) {
				k := op.key
				writersOf[wOff[k+1]] = ti
				ver[base+int32(oi)] = wOff[k+1]
				wStart[wOff[k+1]] = txns[ti].start
				wEnd[wOff[k+1]] = end(ti)
				wVal[wOff[k+1]] = op.val
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
	budget := 2*len(f.ops) + 1024
	const window = 32
	version := func(k, v, reader int32) int32 {
		if v == twNull {
			return -1 - k
		}
		re := txns[reader].end
		ws := writersOf[wOff[k]:wOff[k+1]]
		starts, vals := wStart[wOff[k]:wOff[k+1]], wVal[wOff[k]:wOff[k+1]]
		hi := sort.Search(len(ws), func(i int) bool { return starts[i] >= re })
		// A writer of v is dead for this read if a writer of another
		// value starts after it ends and ends before the reader starts
		// (it overwrote v in real time); of the live ones, one that ended
		// before the reader did, latest end first, then one that started
		// before, latest start first.
		rs := txns[reader].start - 2*opts.Skew
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
	initLeft := make([]int32, nkeys)
	never := make([]bool, n) // unknown, and no order lets it commit
	for ti, t := range participants {
		base := t.ops0
		ops := f.opsOf(ti)
		for oi, op := range ops {
			s := base + int32(oi)
			k := op.key
			if op.kind == history.Write {
				continue // its version was set with writersOf
			}
			own, earlier := int32(-1), false
			for j := oi - 1; j >= 0; j-- {
				if ops[j].key != k {
					continue
				}
				if ops[j].kind == history.Write {
					own = int32(j)
					break
				}
				earlier = true // an earlier read of the same version
			}
			if own >= 0 {
				// Internal: it must return the transaction's own write,
				// whatever the order; if it does not, the transaction
				// cannot commit and the search names it.
				if ops[own].val != op.val {
					if t.status == history.Committed {
						return nil
					}
					never[ti] = true
				}
				continue
			}
			v := version(k, op.val, ti)
			if v == giveUp {
				return nil
			}
			if v == noVersion {
				if t.status == history.Committed {
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
				if left[v] == 0 || t.end < firstEnd[v] {
					firstEnd[v] = t.end
				}
				if left[v] == 0 || t.start > lastStart[v] {
					lastStart[v] = t.start
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
	for ti := range txns {
		t := &txns[ti]
		if !in[ti] || t.status == history.Committed {
			continue
		}
		needed := false
		for oi, op := range f.opsOf(int32(ti)) {
			if v := ver[t.ops0+int32(oi)]; op.kind == history.Write && v >= 0 && left[v] > 0 {
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
		for oi, op := range f.opsOf(int32(ti)) {
			s := t.ops0 + int32(oi)
			if op.kind != history.Read || ver[s] == noVersion || !firstOnKey(int32(ti), oi) {
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
	for ti := range txns {
		if in[ti] {
			byEnd = append(byEnd, int32(ti))
		}
	}
	sortByKey(byEnd, end)
	// byStart: the participants by start, pByStart without those that
	// left (no second sort).
	byStart := make([]int32, 0, total)
	for _, t := range pByStart {
		if in[t] {
			byStart = append(byStart, t)
		}
	}
	need := make([]int32, n)
	{
		j := 0
		for _, t := range byStart {
			lim := txns[t].start - 2*opts.Skew
			for j < len(byEnd) && end(byEnd[j]) <= lim {
				j++
			}
			need[t] = int32(j)
		}
	}
	// Session order: each committed transaction waits for the committed
	// member before it (members sorted as prepare ranks them: by start,
	// a tie by end, id, then position); next is the inverse.
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range prev {
		prev[i], next[i] = -1, -1
	}
	if opts.Level.SessionOrder() {
		// byStart is in that order, so each session's members come in
		// session order: last[s] is session s's latest so far.
		last := make([]int32, f.nsessions)
		for i := range last {
			last[i] = -1
		}
		for _, t := range byStart {
			s := txns[t].session
			if s < 0 {
				continue
			}
			if l := last[s]; l >= 0 {
				prev[t], next[l] = l, t
			}
			last[s] = t
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
	rOff := make([]int32, nv+int(nkeys)+2)
	// firstReads ranges over the reads that count a reader of a version.
	firstReads := func(yield func(int32, int32) bool) {
		for ti, t := range participants {
			for oi, op := range f.opsOf(ti) {
				if s := t.ops0 + int32(oi); op.kind == history.Read && ver[s] != noVersion && firstOnKey(ti, oi) && !yield(ti, s) {
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
	wNext := slices.Clone(wOff[:nkeys])
	value := func(v int32) int32 {
		if v < 0 {
			return twNull
		}
		return wVal[v]
	}

	// The schedule: a sweep over ends. At t's end t must have run; if it
	// cannot run yet, what it waits for runs first, recursively (the
	// writer of a version it reads, the readers of a version it would
	// overwrite, its session predecessor), each only if due by time.
	cur := make([]int32, nkeys) // the version each key holds
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
		base := txns[ti].ops0
		for oi, op := range f.opsOf(ti) {
			if s := base + int32(oi); op.kind == history.Write && ver[s] != noVersion {
				cur[op.key] = ver[s]
			}
		}
	}
	readsMatch := func(u int32) bool {
		base := txns[u].ops0
		for oi, op := range f.opsOf(u) {
			s := base + int32(oi)
			if v := ver[s]; op.kind == history.Read && v != noVersion && cur[op.key] != v && value(cur[op.key]) != op.val {
				return false
			}
		}
		return true
	}
	writeVersion := func(u, k int32) int32 {
		ops := f.opsOf(u)
		for j := len(ops) - 1; j >= 0; j-- {
			if ops[j].kind == history.Write && ops[j].key == k {
				return ver[txns[u].ops0+int32(j)]
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
		t := &txns[ti]
		base := t.ops0
		ops := f.opsOf(ti)
		for attempt := 0; attempt < 8; attempt++ {
			ok := true
			for oi, op := range ops {
				s := base + int32(oi)
				v, k := ver[s], op.key
				if op.kind != history.Read || v == noVersion || cur[k] == v || value(cur[k]) == op.val {
					continue
				}
				ok = false
				if v < 0 || !try(writersOf[v], depth+1) {
					return false
				}
			}
			for oi, op := range ops {
				s := base + int32(oi)
				if op.kind != history.Write || ver[s] == noVersion {
					continue
				}
				k := op.key
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
					if txns[u].start >= t.end {
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
					later := left[uv] > 0 && lastStart[uv]-2*opts.Skew >= t.end
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
