package incremental

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// prepared is a history digested for encoding: keys interned, each
// transaction's external reads, final writes and intermediate writes per
// key, and the anomalies that need no search (internal inconsistencies).
// It is computed once per history and shared by the fast and the guarded
// encodings and by the projection.
type prepared struct {
	h    *history.History
	opts history.Options
	// rtReads is set by the weak levels' online variant
	// (check_weak_online.go): a transaction that began after a reader
	// ended is not a possible writer of its reads (docs/SEMANTICS.md §5
	// "The window at the weak levels"). Unset everywhere else.
	rtReads bool

	keyIndex map[history.Value]int32
	keys     []history.Value
	isList   []bool

	txns []ptxn
	// byKey[k] lists transactions with a write/append of k (any status).
	writersOf [][]int32
	// valueWriters lists the writers of each (key, value).
	valueWriters valueIndex
	// appendersOf[k][elem] = transactions appending elem to list key k,
	// for the keys that a transaction kept reads (nil for the others).
	// Every use of the table asks it of a read's key (a list read's
	// possible writers and parses, possiblyRead, describe); the appends
	// to the other keys, on read-modify-write streams the evicting
	// engine's list prefixes that no member reads, cost a map entry each
	// at every step, two fifths of prepare there.
	appendersOf []map[history.Value][]int32

	// sessionRank orders each session's transactions: start time, then
	// end, then id, or input order without times (docs/SEMANTICS.md §1).
	sessionOf         []int32
	sessionRank       []int32
	sessionMembers    [][]int32 // by session, in rank order
	sessionHasUnknown []bool

	internal []internalAnomaly

	// opKeys are the interned keys of the ops of every transaction not
	// dropped, in transaction and op order.
	opKeys []int32

	// bufs are prepare's scratch, kept for a later prepareReusing.
	bufs prepBufs
}

// prepBufs are the allocations of a prepare that a later one may take
// over (prepareReusing) once its prepared is dropped: the evicting engine
// prepares an instance of about the same size at every step.
type prepBufs struct {
	opKeys, writesOf, writerArena, viewAt []int32
	readKey                               []bool
	readArena                             []pread
	finalArena                            []keyVal
}

// reuse returns n zero elements: s's array when it holds n, else a new
// one.
func reuse[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// reuseEmpty returns an empty slice of capacity n or more: s's array when
// it holds n, else a new one. The caller appends, so nothing is cleared.
func reuseEmpty[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

type ptxn struct {
	// dropped: a write-free unknown transaction (docs/SEMANTICS.md §2).
	dropped bool
	// reads are the external reads, deduplicated per (key, value).
	reads []pread
	// finals are the final writes (registers) per key, sorted by key.
	finals []keyVal
	// appends[k] is the transaction's append sequence per list key.
	appends []keyList
}

type keyVal struct {
	key int32
	val history.Value
}

type keyList struct {
	key   int32
	elems []history.Value
}

// pread is an external read. It is small because a large history holds
// one per read: the rare list read keeps its lists behind a pointer.
type pread struct {
	key int32
	lr  *listRead     // nil for a register read
	val history.Value // register read
}

type listRead struct {
	list []history.Value // external part
	full []history.Value // as read, own appends included
}

func (r *pread) isList() bool { return r.lr != nil }

type internalAnomaly struct {
	txn  int32
	key  int32
	want string
	got  string
	// full is set for a list read: the projection keeps it (and so the
	// anomaly) only while every appender of its elements is a member.
	full   []history.Value
	isList bool
}

func prepare(h *history.History, opts history.Options) *prepared {
	return prepareReusing(nil, h, opts)
}

// prepareReusing is prepare taking over old's allocations (old may be
// nil): old must be dropped, since its tables are overwritten. What it
// returns does not depend on old.
func prepareReusing(old *prepared, h *history.History, opts history.Options) *prepared {
	p := &prepared{h: h, opts: opts}
	if old == nil {
		old = &prepared{}
	}
	b := &old.bufs
	// A first pass interns the keys of the transactions kept, in the
	// order the main pass meets them, so that the per-key tables are
	// allocated once at their size and each operation costs one map
	// access; it also counts reads and writes for the arenas below.
	p.txns = reuse(old.txns, len(h.Txns))
	writes, reads, ops, largest := 0, 0, 0, 0
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status == history.Unknown && !t.Writes() {
			p.txns[ti].dropped = true
			continue
		}
		ops += len(t.Ops)
		largest = max(largest, len(t.Ops))
	}
	// The largest transaction bounds the key count from below in
	// practice (the reduced instance's one with every fixed initial
	// value writes most keys) and never by more than the input holds.
	if p.keyIndex = old.keyIndex; p.keyIndex != nil {
		// A cleared map keeps its buckets, sized by the last instance.
		clear(p.keyIndex)
	} else {
		p.keyIndex = make(map[history.Value]int32, largest)
	}
	p.keys, p.isList = old.keys[:0], old.isList[:0]
	opKeys := reuseEmpty(b.opKeys, ops)
	// writes of each key (an upper bound on its writers) size writersOf.
	writesOf := b.writesOf[:0]
	// readKey[k]: a transaction kept reads k (appendersOf).
	readKey := b.readKey[:0]
	// last and lastK are the previous op's key and its number: a
	// read-modify-write reads a key and writes it next, and the key of
	// the write was a second lookup of the same string (the keys are
	// interned by ingest, so the comparison is mostly of two pointers).
	var last history.Value
	lastK := int32(-1)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if p.txns[ti].dropped {
			continue
		}
		for oi := range t.Ops {
			op := &t.Ops[oi]
			k, ok := lastK, lastK >= 0 && op.Key == last
			if !ok {
				k, ok = p.keyIndex[op.Key]
			}
			last = op.Key
			if !ok {
				k = int32(len(p.keys))
				p.keyIndex[op.Key] = k
				p.keys = append(p.keys, op.Key)
				p.isList = append(p.isList, false)
				writesOf = append(writesOf, 0)
				readKey = append(readKey, false)
			}
			lastK = k
			opKeys = append(opKeys, k)
			switch op.Kind {
			case history.Write:
				writes++
				writesOf[k]++
			case history.Read:
				reads++
				readKey[k] = true
				if op.IsList {
					p.isList[k] = true
				}
			case history.Append:
				p.isList[k] = true
				writesOf[k]++
			}
		}
	}
	// A list read by a dropped transaction still makes its key a list
	// (history.ListKeys).
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if !p.txns[ti].dropped {
			continue
		}
		for oi := range t.Ops {
			if op := &t.Ops[oi]; op.Kind == history.Read && op.IsList {
				if k, ok := p.keyIndex[op.Key]; ok {
					p.isList[k] = true
				}
			}
		}
	}
	nkeys := len(p.keys)
	p.writersOf = reuse(old.writersOf, nkeys)
	// Each key's writers are carved from one allocation (capacity capped,
	// so that an append past it copies rather than overwrite the next).
	writerArena := reuseEmpty(b.writerArena, len(opKeys)-reads)[:len(opKeys)-reads]
	p.bufs.writerArena = writerArena
	for k, n := range writesOf {
		if n > 0 {
			p.writersOf[k] = writerArena[:0:n]
			writerArena = writerArena[n:]
		}
	}
	p.appendersOf = reuse(old.appendersOf, nkeys)
	// Every transaction's reads and final writes are carved from one
	// allocation each, sized by these upper bounds: per-transaction
	// slices grown by append were a fifth of prepare's memory.
	readArena := reuseEmpty(b.readArena, reads)
	finalArena := reuseEmpty(b.finalArena, writes)
	p.bufs.readArena, p.bufs.finalArena = readArena, finalArena
	p.valueWriters = newValueIndexReusing(&old.valueWriters, writes, &p.keys, func(t, i int32) *history.Op { return &h.Txns[t].Ops[i] })
	// Walk the ops keeping the transaction's own view of each key. A
	// view holds no pointer, so that the thousands of them of the
	// transaction with every fixed initial value cost no write barriers;
	// list keys keep their own appends aside in ownApps.
	type view struct {
		key   int32
		wrote bool
		last  int32 // register: the op of the last own write
	}
	type seen struct {
		key  int32
		read int
	}
	var views []view
	var ownApps [][]history.Value // list keys: own appends so far, by view
	var seenRead []seen
	// viewAt[k] is k's index in views plus one (0: not touched yet by
	// this transaction): the transaction holding every fixed initial
	// value writes thousands of keys, and a scan of views per operation
	// made it quadratic. Entries are reset after each transaction.
	viewAt := reuse(b.viewAt, nkeys)
	p.bufs.viewAt, p.bufs.opKeys, p.bufs.writesOf = viewAt, opKeys, writesOf
	p.bufs.readKey = readKey
	p.opKeys = opKeys
	next := 0 // the next transaction's first entry of opKeys
	for ti := range h.Txns {
		t := &h.Txns[ti]
		pt := &p.txns[ti]
		if pt.dropped {
			continue
		}
		keys := opKeys[next : next+len(t.Ops)]
		next += len(t.Ops)
		pt.reads = readArena[len(readArena):len(readArena)]
		pt.finals = finalArena[len(finalArena):len(finalArena)]
		views = views[:0]
		seenRead = seenRead[:0]
		for oi := range t.Ops {
			op := &t.Ops[oi]
			k := keys[oi]
			vi := viewAt[k]
			if vi == 0 {
				views = append(views, view{key: k})
				vi = int32(len(views))
				viewAt[k] = vi
				if p.isList[k] {
					for len(ownApps) < int(vi) {
						ownApps = append(ownApps, nil)
					}
					ownApps[vi-1] = nil
				}
			}
			v := &views[vi-1]
			switch op.Kind {
			case history.Write:
				p.valueWriters.add(keyVal{k, op.Value}, int32(ti), int32(oi))
				v.wrote, v.last = true, int32(oi)
			case history.Append:
				if readKey[k] {
					m := p.appendersOf[k]
					if m == nil {
						// Sized by k's writes and appends, a bound on
						// its elements: the map does not grow.
						m = make(map[history.Value][]int32, writesOf[k])
						p.appendersOf[k] = m
					}
					as := m[op.Value]
					if len(as) == 0 || as[len(as)-1] != int32(ti) {
						m[op.Value] = append(as, int32(ti))
					}
				}
				v.wrote = true
				ownApps[vi-1] = append(ownApps[vi-1], op.Value)
			case history.Read:
				if p.isList[k] {
					ownApp := ownApps[vi-1]
					list := op.List
					if !op.IsList && op.Value != history.Null {
						// A scalar read of a list key: a garbage value no
						// list can produce; keep it as a one-element list
						// that no parse explains.
						list = []history.Value{"scalar:" + op.Value}
					}
					ext := list
					if len(ownApp) > 0 {
						n := len(list) - len(ownApp)
						if n < 0 || !equalValues(list[n:], ownApp) {
							p.internal = append(p.internal, internalAnomaly{txn: int32(ti), key: k, want: "… " + joinValues(ownApp), got: joinValues(list), full: list, isList: true})
							continue
						}
						ext = list[:n]
					}
					// Repeated external reads are separate reads: if they
					// differ, no version explains both, which the encoding
					// finds as a cycle.
					dup := false
					for _, sr := range seenRead {
						if ri := sr.read; sr.key == k && pt.reads[ri].isList() && equalValues(pt.reads[ri].lr.full, list) && equalValues(pt.reads[ri].lr.list, ext) {
							dup = true
						}
					}
					if !dup {
						seenRead = append(seenRead, seen{k, len(pt.reads)})
						// ext is a prefix of the history's own list, which
						// is never modified: no copy.
						pt.reads = append(pt.reads, pread{key: k, lr: &listRead{list: ext[:len(ext):len(ext)], full: list}})
					}
					continue
				}
				if v.wrote {
					if last := t.Ops[v.last].Value; op.Value != last {
						p.internal = append(p.internal, internalAnomaly{txn: int32(ti), key: k, want: string(last), got: string(op.Value)})
					}
					continue
				}
				dup := false
				for _, sr := range seenRead {
					if sr.key == k && !pt.reads[sr.read].isList() && pt.reads[sr.read].val == op.Value {
						dup = true
					}
				}
				if !dup {
					seenRead = append(seenRead, seen{k, len(pt.reads)})
					pt.reads = append(pt.reads, pread{key: k, val: op.Value})
				}
			}
		}
		for i := range views {
			v := &views[i]
			k := v.key
			viewAt[k] = 0
			if !v.wrote {
				continue
			}
			if p.isList[k] {
				pt.appends = append(pt.appends, keyList{key: k, elems: ownApps[i]})
			} else {
				pt.finals = append(pt.finals, keyVal{key: k, val: t.Ops[v.last].Value})
			}
			// Transactions come in order, each once per key: writersOf
			// is sorted as built.
			p.writersOf[k] = append(p.writersOf[k], int32(ti))
		}
		pt.reads = pt.reads[:len(pt.reads):len(pt.reads)]
		readArena = readArena[:len(readArena)+len(pt.reads)]
		pt.finals = pt.finals[:len(pt.finals):len(pt.finals)]
		finalArena = finalArena[:len(finalArena)+len(pt.finals)]
		if len(pt.reads) == 0 {
			pt.reads = nil
		}
		if len(pt.finals) == 0 {
			pt.finals = nil
		}
		// Keys are distinct, so any sort gives the one order; sort.Slice
		// allocated a swapper per transaction, and most transactions
		// write a few keys, which an insertion sort inline handles best.
		if fs := pt.finals; len(fs) > 12 {
			slices.SortFunc(fs, func(a, b keyVal) int { return cmp.Compare(a.key, b.key) })
		} else {
			for i := 1; i < len(fs); i++ {
				for j := i; j > 0 && fs[j].key < fs[j-1].key; j-- {
					fs[j], fs[j-1] = fs[j-1], fs[j]
				}
			}
		}
		if len(pt.appends) > 1 {
			slices.SortFunc(pt.appends, func(a, b keyList) int { return cmp.Compare(a.key, b.key) })
		}
	}
	p.rankSessions(old)
	return p
}

func (p *prepared) rankSessions(old *prepared) {
	h := p.h
	p.sessionOf = reuse(old.sessionOf, len(h.Txns))
	p.sessionRank = reuse(old.sessionRank, len(h.Txns))
	// Each session's number, in order of first appearance, and its
	// members by number: one lookup per transaction, where a map of
	// member lists cost two lookups and an assignment (a step of the
	// evicting engine ranks every member again).
	sessions := map[string]int32{}
	var bySession [][]int32
	for i := range h.Txns {
		t := &h.Txns[i]
		p.sessionOf[i] = -1
		if !t.HasSession {
			continue
		}
		si, ok := sessions[t.Session]
		if !ok {
			si = int32(len(bySession))
			sessions[t.Session] = si
			bySession = append(bySession, nil)
		}
		bySession[si] = append(bySession[si], int32(i))
	}
	p.sessionHasUnknown = make([]bool, len(bySession))
	p.sessionMembers = make([][]int32, len(bySession))
	for si, members := range bySession {
		for _, ti := range members {
			if h.Txns[ti].Status == history.Unknown && !p.txns[ti].dropped {
				p.sessionHasUnknown[si] = true
			}
		}
		// Stable, as sort.SliceStable was (the same algorithm, without
		// reflection): the comparison is not transitive when only some
		// members have times, and ranks must not change with the sort.
		slices.SortStableFunc(members, bySessionRank(h))
		for r, ti := range members {
			p.sessionOf[ti] = int32(si)
			p.sessionRank[ti] = int32(r)
		}
		p.sessionMembers[si] = members
	}
}

// before reports whether a must precede b by the level's session or
// real-time order (a fact of the history, not of any choice).
func (p *prepared) before(a, b int32) bool {
	if p.opts.Level.SessionOrder() && p.sessionOf[a] >= 0 && p.sessionOf[a] == p.sessionOf[b] && p.sessionRank[a] < p.sessionRank[b] {
		return true
	}
	if p.opts.Level.RealTime() || p.rtReads {
		ta, tb := &p.h.Txns[a], &p.h.Txns[b]
		if ta.HasTime && tb.HasTime && p.opts.Precedes(ta, tb) {
			return true
		}
	}
	return false
}

// realTimeBefore is the real-time half of before.
func (p *prepared) realTimeBefore(a, b int32) bool {
	ta, tb := &p.h.Txns[a], &p.h.Txns[b]
	return p.opts.Level.RealTime() && ta.HasTime && tb.HasTime && p.opts.Precedes(ta, tb)
}

// orderVia says which order of the level fixes the pair: kindSO, kindRT,
// or kindNone when only a choice can.
func (p *prepared) orderVia(a, b int32) edgeKind {
	if a > b {
		a, b = b, a
	}
	if p.opts.Level.SessionOrder() && p.sessionOf[a] >= 0 && p.sessionOf[a] == p.sessionOf[b] {
		return kindSO
	}
	if p.opts.Level.RealTime() {
		ta, tb := &p.h.Txns[a], &p.h.Txns[b]
		if ta.HasTime && tb.HasTime && (p.opts.Precedes(ta, tb) || p.opts.Precedes(tb, ta)) {
			return kindRT
		}
	}
	return kindNone
}

// possibleWriters lists the possible writers (§3) of a read of txn t: every
// transaction with a write of the value (or, for a list read, an append of
// one of its elements), any status, except t itself and, for registers,
// those that follow t by the level's order. initial reports whether the
// initial version is a possible writer too.
func (p *prepared) possibleWriters(t int32, r *pread) (ws []int32, initial bool) {
	return p.possibleWritersTo(nil, t, r)
}

// possibleWritersTo is possibleWriters appending to ws[:0], so that the
// encoder reuses one buffer for every read.
func (p *prepared) possibleWritersTo(ws []int32, t int32, r *pread) ([]int32, bool) {
	ws = ws[:0]
	if r.isList() {
		// Every appender of any element of the list as read, own
		// appended elements included (docs/SEMANTICS.md §3 for lists).
		// Collect with repeats, then sort and compact (a map per read
		// cost more than the rest of the read).
		m := p.appendersOf[r.key]
		for _, e := range r.lr.full {
			for _, a := range m[e] {
				if a != t && (len(ws) == 0 || ws[len(ws)-1] != a) {
					ws = append(ws, a)
				}
			}
		}
		slices.Sort(ws)
		ws = slices.Compact(ws)
		out := ws[:0]
		for _, a := range ws {
			if !p.before(t, a) {
				out = append(out, a)
			}
		}
		ws = out
		return ws, p.opts.InitialState == history.InitialUnknown || len(r.lr.full) == 0
	}
	var one [1]int32
	for _, w := range p.writersOfValue(r.key, r.val, &one) {
		if w != t && !p.before(t, w) {
			ws = append(ws, w)
		}
	}
	return ws, p.opts.InitialState == history.InitialUnknown || r.val == history.Null
}

// finalValue returns t's final write of key k.
func (pt *ptxn) finalValue(k int32) (history.Value, bool) {
	i := sort.Search(len(pt.finals), func(i int) bool { return pt.finals[i].key >= k })
	if i < len(pt.finals) && pt.finals[i].key == k {
		return pt.finals[i].val, true
	}
	return "", false
}

func (pt *ptxn) appendsTo(k int32) []history.Value {
	i := sort.Search(len(pt.appends), func(i int) bool { return pt.appends[i].key >= k })
	if i < len(pt.appends) && pt.appends[i].key == k {
		return pt.appends[i].elems
	}
	return nil
}

func equalValues(a, b []history.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// joinValues is the text of a list, "[1 2 3]". It sizes the buffer first:
// built by repeated concatenation, a 100K-element list copied gigabytes
// (issue 20, item 6).
func joinValues(vs []history.Value) string {
	n := 2 + len(vs)
	for _, v := range vs {
		n += len(v)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(v))
	}
	b.WriteByte(']')
	return b.String()
}

// possiblyRead marks the unknown transactions whose commit some read can
// observe: those that a read of a committed transaction, or of an unknown
// transaction already marked, could read from (a final write of the value
// read, or an append of an element of the list read). It is a least
// fixpoint from the committed readers: unknown transactions that only
// other unmarked unknown ones could read, a chain or a cycle of them,
// stay unmarked. Taking every unmarked one as aborted keeps every model a
// model (docs/SEMANTICS.md §3, pruning, U1): their outgoing edges vanish (I1),
// their own reads are no longer required, and no read of a transaction
// still in the instance could read from them. Candidates are
// over-approximated (time and session exclusions are ignored), so an
// unmarked unknown transaction is a candidate of no read that matters.
func (p *prepared) possiblyRead() []bool {
	out := make([]bool, len(p.txns))
	var queue []int32
	var one [1]int32
	mark := func(ti int) {
		for ri := range p.txns[ti].reads {
			r := &p.txns[ti].reads[ri]
			if r.isList() {
				for _, el := range r.lr.full {
					for _, a := range p.appendersOf[r.key][el] {
						if int(a) != ti && p.h.Txns[a].Status == history.Unknown && !out[a] {
							out[a] = true
							queue = append(queue, a)
						}
					}
				}
				continue
			}
			for _, w := range p.writersOfValue(r.key, r.val, &one) {
				if int(w) != ti && p.h.Txns[w].Status == history.Unknown && !out[w] {
					if v, ok := p.txns[w].finalValue(r.key); ok && v == r.val {
						out[w] = true
						queue = append(queue, w)
					}
				}
			}
		}
	}
	for ti := range p.txns {
		if p.h.Txns[ti].Status == history.Committed {
			mark(ti)
		}
	}
	for len(queue) > 0 {
		u := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		mark(int(u))
	}
	return out
}

// writersOfValue lists the transactions with a write of (k, v), any
// status, in transaction order. one is scratch for the single-writer
// case; the result is valid until one is reused.
func (p *prepared) writersOfValue(k int32, v history.Value, one *[1]int32) []int32 {
	return p.valueWriters.get(keyVal{k, v}, one)
}

// bySessionRank orders a session's members by history.SessionCompare
// where both have times, and by input position otherwise: the rank
// prepare gives, shared by the weak levels' fast path
// (check_weak_fast.go). Sort stably with it.
func bySessionRank(h *history.History) func(a, b int32) int {
	return func(a, b int32) int {
		ta, tb := &h.Txns[a], &h.Txns[b]
		if ta.HasTime && tb.HasTime {
			if c := history.SessionCompare(ta, tb); c != 0 {
				return c
			}
		}
		return cmp.Compare(a, b)
	}
}
