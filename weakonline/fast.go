package weakonline

import (
	"slices"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// fast is the incremental fast path (F1-F4 in doc.go): the graph of the
// alert instance under one fixed choice of read-from sources, kept
// acyclic by a dynamic topological order (Pearce & Kelly, "A dynamic
// topological sort algorithm for directed acyclic graphs", JEA 2007).
// While it is acyclic and every closed read has its chosen source, it is
// a witness that the instance satisfies the level, and the step needs no
// check. Whatever it cannot vouch for (a cycle, a read without a source,
// an internal inconsistency, a forced edge into the initial state, two
// initial values of a key) sets trouble: the step then runs the exact
// check on the instance (Engine.full), which alone raises alerts.
type fast struct {
	lv   history.Level
	opts history.Options
	so   bool // the level has session order (read-atomic, causal)

	// Per engine index (-1 / nil where it is not a node): the
	// topological position, and (nls) the lists: adjacency, the
	// transaction's finals and external reads, clocks, sources.
	ord     []int32
	nls     listBlocks // out, in, finals, reads, clock, succ, srcs, froms, initReads (weak31_lists.go)
	node    []bool
	usable  []bool // a node some read may choose (not an unknown with an unexplained read)
	chosen  []bool // some closed read chose it
	nextOrd int32

	sessOf   []int32 // session of a node (-1: none)
	pos      []int32 // position in its session
	sessions map[string]int32
	sessLast []int32 // last node of each session
	// kt numbers the keys (keys.go): the summary's table, shared.
	kt *keyTable
	// writersOf[key number]: per session that wrote the key, the
	// positions and nodes of its writers (no session: none). Held by
	// value: a pointer per key was one more cache miss on every write
	// and every read of the session-order levels.
	writersOf []keyWriters

	// vals: (key, value) -> its writer nodes, in release order. Most
	// values have one writer: it is held inline (v >= 0); a value with
	// more is -(j+1) for valsMulti[j]. A slice per value cost an
	// allocation per write and a map three times the size (the largest
	// line of run --level read-committed's profile).
	vals      map[kv]int32
	valsMulti [][]int32
	// dense holds, per key number, the writers of a window of the key's
	// integer values, one slot per value from base: counters and
	// generated unique values fill it nearly densely, and a slot is four
	// bytes where a map entry was some thirty, a cache miss each, on every
	// read and write (the largest line of run --level causal's profile).
	// A slot is a value's single writer (>= 0), slotNone (never written
	// while in the window: vals may hold it, written before the window
	// reached it) or slotMap (more than one writer: vals holds them all).
	// The window grows down a little as well as up, moves on (its
	// writers to vals) when a value lands far past it, and vals is asked
	// only for a key's values in the range it holds (denseVals.spilled):
	// a lookup that can find nothing is no lookup.
	dense []denseVals
	// taint: the transactions outside the instance (quarantined,
	// unchecked) that wrote each (key, value), any write op; a closed
	// read is dropped by the projection when one of them is a possible
	// writer of it (§3: not the reader, not after it by session or real
	// time). Wildcard writes drop every read of their key (or of every
	// key) whatever the times, as Engine.instance does.
	taint    map[kv][]taintW
	taintK   map[int32]bool
	taintAll bool
	initVal  map[int32]kv

	// sessNodes[s][p] is session s's node at position p (causal): the
	// frontier of a past is read off it. front[n] is n's frontier plus
	// one (0: not computed since n's clock last changed).
	sessNodes [][]int32
	front     []int32
	closed    []bool
	// Lists (docs/SEMANTICS.md §5 "Lists in the fast path"): a node's
	// appends, in op order, and its external list reads until it
	// closes; per list key the longest version shown so far as its
	// appenders (chain), the key's appenders not in it (pending), and
	// under an unknown initial state the initial list every read
	// shows first is kept with the registers' initial values
	// (initVal, initialList).
	appends [][]kv
	lreads  [][]listRead
	// lists: a list op was released; until then appends and lreads
	// are empty (appendsOf, lreadsOf).
	lists   bool
	chain   map[int32][]int32
	pending map[int32][]int32
	prev    []int32 // the node before in its session (-1: none)

	// rank, when the fast path was rebuilt from the exact check's
	// witness (a commit order), is each transaction's place in it (-1:
	// not in it); choose then takes, among a read's candidates, the last
	// one before the reader in that order (F3).
	rank []int32

	// sum is the engine's retirement summary: a read of a value it
	// holds is out of the instance (R2), and so out of the graph.
	sum *summary

	// batch: Engine.rebuild is closing every closed node; clocks and
	// forced edges wait for settleClocks.
	batch bool
	// rebuilding: Engine.rebuild's closes, which keep choose's picks
	// (reconsider).
	rebuilding bool

	// Causal retirement (weak29_causal.go): per node, its final writes
	// still its key's last (left) and the node that overwrote its last
	// one (over, -1: not yet); the retired set R (nil before the first
	// pass); the nodes not retired (live); retired nodes whose clock is
	// still read (kept); sawList: a list op was seen (no pass runs).
	left, over []int32
	retired    []bool
	live, kept []int32
	sawList    bool
	nRetired   int

	trouble bool
	// why says what the first trouble was, for tests and metrics.
	why string

	// propagate's work stack and scratch clock (never a node's clock).
	work       []int32
	clkScratch []int32

	// slab is what is left of the block new edge lists are carved
	// from (adj).
	slab []int32

	// scratch for the topological order's searches.
	mark       []uint32
	epoch      uint32
	fwd, bwd   []int32
	stack      []int32
	ordScratch []int32
}

type posTxn struct{ pos, t int32 }

// logEntry is a write of keyWriters.log: node t at position pos of
// session s.
type logEntry struct{ s, pos, t int32 }

// listRead is an external list read: its key and the elements it shows,
// the reader's own appends so far taken off its end.
type listRead struct {
	k     int32
	elems []kv
}

// denseVals is one key's window of integer values (fast.dense).
type denseVals struct {
	base  int64
	slots []int32
	// spilled: vals holds integer values of this key (written outside
	// the window, or with several writers, or moved there when the
	// window moved on), all between lo and hi. A value of the key with
	// no writer in its slot (slotNone, or outside the window) and
	// outside [lo, hi] has no writer at all, and neither addVal nor
	// writers asks the map for it.
	spilled bool
	lo, hi  int64
	// strs: some value of the key that is no integer was written (only
	// then can the map hold one: a read of one, null under an unknown
	// initial state above all, asks the map only then).
	strs bool
}

// mayHold: vals may hold integer value n of the key.
func (d *denseVals) mayHold(n int64) bool { return d.spilled && d.lo <= n && n <= d.hi }

// spill notes that vals holds integer value n of the key.
func (d *denseVals) spill(n int64) {
	if !d.spilled {
		d.spilled, d.lo, d.hi = true, n, n
		return
	}
	d.lo, d.hi = min(d.lo, n), max(d.hi, n)
}

const (
	slotNone = -1
	slotMap  = -2
	// denseGap is how far past (or below) its window a value may be and
	// still extend it (the slots between are slotNone).
	denseGap = 64
)

// taintW is a writer outside the instance; noSession marks an unchecked
// one, which the instance takes out of every session.
type taintW struct {
	t         int32
	noSession bool
}

// keyWriters are one key's writers by session: sessions[j] wrote it at
// the positions and nodes of lists[j] (ascending).
type keyWriters struct {
	sessions []int32
	lists    [][]posTxn
	// lastPos[j] is the position of lists[j]'s last entry: contiguous
	// with sessions, so that a read whose source's past holds it skips
	// the session without touching the list.
	lastPos []int32
	// lastT[j] is the node of lists[j]'s last entry, beside lastPos: a
	// past that holds the session's last writer of the key (most
	// reads) finds it here, without the list (lastIn), whose array was
	// a cache miss per visited session (forcedCausal's largest line).
	lastT []int32
	// at[s] is session s's index in sessions plus one (0: none), for
	// the sessions numbered below indexedSessions: a write or a read
	// atomic read finds its session's list by index, where keyWriters.add
	// and its scan of sessions were 8% of run --level causal's profile
	// (each key written by every one of 32 sessions). Later sessions are
	// scanned.
	at []int32
	// log is every write of the key in release order (node index
	// ascending), as (session, position, node): a read visits only the
	// sessions whose last write is at or after its source's frontier
	// (forcedCausal), and reads whether its source's past holds each
	// off the entry. A read looks at most at the last len(sessions)+1
	// entries, so only the last ones are kept (trimLog); trimmed says
	// some were dropped.
	log     []logEntry
	trimmed bool
	// writes counts the writes added (add); cover is t+1 for the last
	// node t whose causal past was found to hold every session's last
	// writer of the key (lastPos), when writes was coverAt (0: none).
	// A past only grows (a clock joins its inputs', which only grow)
	// and lastPos changes only by a write, so while writes is still
	// coverAt, a read of the key from t forces nothing (forcedCausal).
	writes, cover, coverAt int32
}

// indexedSessions bounds the sessions keyWriters.at indexes (at most a
// kilobyte per key).
const indexedSessions = 256

// firstWriters is the capacity of a (key, session) list of writers when
// it is made (64 bytes).
const firstWriters = 8

// find is session s's index in sessions (-1: none).
func (kw *keyWriters) find(s int32) int {
	if s < indexedSessions {
		if int(s) < len(kw.at) {
			return int(kw.at[s]) - 1
		}
		return -1
	}
	return slices.Index(kw.sessions, s)
}

func (kw *keyWriters) add(s, pos, t int32) {
	j := kw.find(s)
	if j < 0 {
		j = len(kw.sessions)
		kw.sessions = append(kw.sessions, s)
		kw.lists = append(kw.lists, nil)
		kw.lastPos = append(kw.lastPos, -1)
		kw.lastT = append(kw.lastT, -1)
		if s < indexedSessions {
			for int(s) >= len(kw.at) {
				kw.at = append(kw.at, 0)
			}
			kw.at[s] = int32(j) + 1
		}
	}
	if kw.lists[j] == nil {
		// Room for a few writes at once: a (key, session) list grew
		// 1, 2, 4, 8 by append, four allocations for the five writes
		// the generated streams give it (keyWriters.add's growth was
		// 8% of run --level causal's profile).
		kw.lists[j] = make([]posTxn, 0, firstWriters)
	}
	kw.lists[j] = append(kw.lists[j], posTxn{pos, t})
	if pos > kw.lastPos[j] {
		kw.lastPos[j], kw.lastT[j] = pos, t
	}
	kw.log = append(kw.log, logEntry{s, pos, t})
	if keep := len(kw.sessions) + 1; len(kw.log) >= 2*keep && len(kw.log) >= minLog {
		kw.trimLog(keep)
	}
	kw.writes++
}

// minLog is the length below which a key's log is never trimmed (a
// trim of a short log would copy about as much as it keeps); the tests
// set it to 0, so that their short histories trim.
var minLog = 16

// trimLog keeps the last keep entries of the log, moved to its start:
// every read looks at no more (forcedCausal), and a read that would
// need an entry dropped visits every session instead. Amortized, a copy
// of keep entries per keep writes.
func (kw *keyWriters) trimLog(keep int) {
	n := copy(kw.log, kw.log[len(kw.log)-keep:])
	kw.log = kw.log[:n]
	kw.trimmed = true
}

// lastIn is the last entry of session index j's writers at a position
// <= p (lastEntry of lists[j]), read off lastPos and lastT when p is at
// or past the last one.
func (kw *keyWriters) lastIn(j int, p int32) (posTxn, bool) {
	if p >= kw.lastPos[j] {
		return posTxn{kw.lastPos[j], kw.lastT[j]}, kw.lastT[j] >= 0
	}
	if w := lastEntry(kw.lists[j], p); w != nil {
		return *w, true
	}
	return posTxn{}, false
}

// lastEntry is the last entry of ws at a position <= p (nil: none).
func lastEntry(ws []posTxn, p int32) *posTxn {
	lo, hi := 0, len(ws)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ws[m].pos <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return nil
	}
	return &ws[lo-1]
}

// newFast is an empty fast path over the retirement summary sum, whose
// key table it shares (nil: a table of its own, for tests).
func newFast(opts history.Options, sum *summary) *fast {
	f := &fast{lv: opts.Level, opts: opts, so: opts.Level.SessionOrder(), sessions: map[string]int32{},
		vals: map[kv]int32{}, taint: map[kv][]taintW{}, taintK: map[int32]bool{}, initVal: map[int32]kv{}, sum: sum,
		chain: map[int32][]int32{}, pending: map[int32][]int32{}}
	if sum != nil {
		f.kt = sum.kt
	} else {
		f.kt = newKeyTable()
	}
	return f
}

func (f *fast) fail(why string) {
	if !f.trouble {
		f.trouble, f.why = true, why
	}
}

func (f *fast) grow(n int) {
	if len(f.ord) >= n {
		return
	}
	// Every per-node slice to the same capacity at once, doubling: one
	// append each grew them by a quarter at a time past 256 nodes (Go's
	// growth for large slices), and, rebuilt from nothing after every
	// retirement pass at read committed, they were 22% of the bytes run
	// allocated there (n's own allocation is about a third of that).
	c := max(n, 2*len(f.ord), 64)
	f.ord = extend(f.ord, n, c, -1)
	f.growLists(n)
	f.node = extend(f.node, n, c, false)
	f.usable = extend(f.usable, n, c, false)
	f.chosen = extend(f.chosen, n, c, false)
	f.sessOf = extend(f.sessOf, n, c, -1)
	f.pos = extend(f.pos, n, c, -1)
	if f.lv == history.Causal {
		f.front = extend(f.front, n, c, 0)
	}
	f.closed = extend(f.closed, n, c, false)
	f.prev = extend(f.prev, n, c, -1)
	if f.lists {
		f.appends = extend(f.appends, n, c, nil)
		f.lreads = extend(f.lreads, n, c, nil)
	}
	f.mark = extend(f.mark, n, c, 0)
	if f.lv == history.Causal {
		f.left = extend(f.left, n, c, 0)
		f.over = extend(f.over, n, c, -1)
		if f.retired != nil {
			f.retired = extend(f.retired, n, c, false)
		}
	}
}

// extend is s extended to length n with fill, its backing array of
// capacity at least c when it must be replaced.
func extend[T any](s []T, n, c int, fill T) []T {
	if cap(s) < n {
		s = slices.Grow(s, c-len(s))
	}
	for len(s) < n {
		s = append(s, fill)
	}
	return s
}

// parse splits t's ops as prepare does: one external read per distinct
// (key, value) not after the transaction's own write of the key, the
// last write of each key; ok is false on an internal inconsistency (a
// read after its own write that returns another value) or a list op.
// Each op's key is numbered here, once (kt), and its value read as an
// integer if it is one: the pairs are what every later map lookup hashes.
func parse(t *history.Txn, kt *keyTable) (finals, reads []kv, ok bool) {
	finals, reads, _, _, ok = parseLists(t, kt, false)
	return finals, reads, ok
}

// parseLists is parse with list ops when lists is set: appends are the
// transaction's appends in op order, lreads its external list reads,
// each without the reader's own appends so far to the key (which must
// end it: ok is false otherwise, an internal inconsistency, as for a
// register). Without lists a list op makes ok false.
func parseLists(t *history.Txn, kt *keyTable, lists bool) (finals, reads, appends []kv, lreads []listRead, ok bool) {
	ok = true
	// Sized once: the pairs are kept as long as the transaction is.
	// One array holds both, finals' part first, each capped at its own
	// part (an append past it, release's list keys, copies): two
	// allocations per transaction were one more than needed.
	nr := 0
	for _, op := range t.Ops {
		if op.Kind == history.Read {
			nr++
		}
	}
	if len(t.Ops) > 0 {
		nw := len(t.Ops) - nr
		buf := make([]kv, len(t.Ops))
		finals, reads = buf[:0:nw], buf[nw:nw:len(t.Ops)]
	}
	for _, op := range t.Ops {
		if op.IsList || op.Kind == history.Append {
			if !lists {
				return nil, nil, nil, nil, false
			}
			k := kt.id(op.Key)
			if op.Kind == history.Append {
				appends = append(appends, kt.pairOf(k, op.Value))
				continue
			}
			// The reader's own appends so far end the list read.
			var own []kv
			for _, a := range appends {
				if a.k == k {
					own = append(own, a)
				}
			}
			if len(own) > len(op.List) {
				ok = false
				continue
			}
			ext := len(op.List) - len(own)
			lr := listRead{k: k, elems: make([]kv, ext)}
			for j, v := range op.List {
				r := kt.pairOf(k, v)
				if j < ext {
					lr.elems[j] = r
				} else if r != own[j-ext] {
					ok = false
				}
			}
			lreads = append(lreads, lr)
			continue
		}
		r := kt.pair(op.Key, op.Value)
		if op.Kind != history.Read {
			found := false
			for i := range finals {
				if finals[i].k == r.k {
					finals[i], found = r, true
				}
			}
			if !found {
				finals = append(finals, r)
			}
			continue
		}
		own := false
		for _, w := range finals {
			if w.k == r.k {
				own = true
				if w != r {
					ok = false
				}
			}
		}
		if own {
			continue
		}
		if !slices.Contains(reads, r) {
			reads = append(reads, r)
		}
	}
	return finals, reads, appends, lreads, ok
}

// release adds member i (released, in release order).
func (f *fast) release(i int, t *history.Txn) {
	f.grow(i + 1)
	finals, reads, appends, lreads, ok := parseLists(t, f.kt, true)
	if !ok {
		// An internal inconsistency of a committed transaction is an
		// anomaly now (its internal reads count while it is open); one
		// of an unknown transaction means it did not commit; lists are
		// not checked at these levels (the check says so).
		if t.Status != history.Unknown {
			f.fail("internal inconsistency or list operation")
		}
		f.noLists(i)
		return
	}
	if t.Status == history.Aborted {
		f.noLists(i)
		return // not a node: its writes are sources of nothing
	}
	if t.Status == history.Unknown && f.rank != nil && i < len(f.rank) && f.rank[i] < 0 {
		// The witness did not take it as committed: nor does the graph
		// (a read that can have no other source is then trouble).
		f.noLists(i)
		return
	}
	f.node[i], f.usable[i] = true, true
	f.ord[i] = f.nextOrd
	f.nextOrd++
	if f.lv == history.Causal {
		f.live = append(f.live, int32(i))
		if len(appends) > 0 || len(lreads) > 0 {
			f.sawList = true
			if f.nRetired > 0 {
				// The retirement argument covers no list edge.
				f.fail("a list op after causal retirement")
			}
		}
		f.left[i] = int32(len(finals))
		if len(finals) == 0 {
			f.over[i] = int32(i)
		}
	}
	for _, w := range finals {
		f.addVal(w, int32(i))
	}
	// An appender: each element finds it as its writer, and it is a
	// writer of each list key it appends to (finals holds the key once,
	// for the forced edges of the session-order levels), after the
	// key's longest version shown so far.
	for j, a := range appends {
		f.addVal(a, int32(i))
		if slices.ContainsFunc(appends[:j], func(b kv) bool { return b.k == a.k }) {
			continue
		}
		finals = append(finals, kv{k: a.k, str: listFinal})
		if c := f.chain[a.k]; len(c) > 0 {
			f.edge(c[len(c)-1], int32(i))
		}
		f.pending[a.k] = append(f.pending[a.k], int32(i))
	}
	f.nl(int(i)).finals, f.nl(int(i)).reads = finals, reads
	if len(appends) > 0 || len(lreads) > 0 {
		if !f.lists {
			// The first list op: the per-node list slices, empty
			// until now (two slice headers a node, 48 bytes, on every
			// stream without lists), are made as long as the others.
			f.lists = true
			f.appends = extend(f.appends, len(f.ord), cap(f.ord), nil)
			f.lreads = extend(f.lreads, len(f.ord), cap(f.ord), nil)
		}
		f.appends[i], f.lreads[i] = appends, lreads
	}
	if t.HasSession {
		s, seen := f.sessions[t.Session]
		if !seen {
			s = int32(len(f.sessLast))
			f.sessions[t.Session] = s
			f.sessLast = append(f.sessLast, -1)
		}
		f.sessOf[i] = s
		prev := f.sessLast[s]
		f.pos[i] = 0
		if prev >= 0 {
			f.prev[i] = prev
			f.pos[i] = f.pos[prev] + 1
			if f.so {
				f.edge(prev, int32(i))
			}
		}
		f.sessLast[s] = int32(i)
		if f.lv == history.Causal {
			clk := make([]int32, len(f.sessLast))
			for k := range clk {
				clk[k] = -1
			}
			if prev >= 0 {
				copy(clk, f.nl(int(prev)).clock)
				f.nl(int(prev)).succ = append(f.nl(int(prev)).succ, int32(i))
			}
			clk[s] = f.pos[i]
			f.nl(int(i)).clock = clk
			for int(s) >= len(f.sessNodes) {
				f.sessNodes = append(f.sessNodes, nil)
			}
			f.sessNodes[s] = append(f.sessNodes[s], int32(i))
		}
		for _, w := range finals {
			if !f.so {
				// Only the session-order levels ask for a session's
				// last writer of a key (forced edges).
				break
			}
			if int(w.k) >= len(f.writersOf) {
				f.writersOf = extend(f.writersOf, int(w.k)+1, max(int(w.k)+1, 2*len(f.writersOf), 64), keyWriters{})
			}
			if f.lv == history.Causal {
				f.noteWrite(&f.writersOf[w.k], int32(i))
			}
			f.writersOf[w.k].add(s, f.pos[i], int32(i))
		}
	} else if f.lv == history.Causal {
		// A transaction without a session is a session of its own; the
		// clocks would then be as long as the stream.
		f.fail("a transaction without a session at causal")
	}
}

// addTaint records the writes of transaction i, unchecked or
// quarantined: a read they could explain is dropped by the projection.
func (f *fast) addTaint(i int, t *history.Txn, unchecked bool) {
	for _, op := range t.Ops {
		if op.Kind == history.Read {
			continue
		}
		switch {
		case op.Key == online.Wild:
			f.taintAll = true
		case op.Value == online.Wild:
			f.taintK[f.kt.id(op.Key)] = true
		default:
			r := f.kt.pair(op.Key, op.Value)
			if ws := f.taint[r]; len(ws) == 0 || ws[len(ws)-1].t != int32(i) {
				f.taint[r] = append(ws, taintW{int32(i), unchecked})
			}
		}
	}
}

// close makes member i's reads count: one source chosen per read, its
// wr edges, and its forced edges (read atomic now; causal once every
// predecessor is processed).
func (f *fast) close(i int, txns []history.Txn) {
	if i >= len(f.node) || !f.node[i] {
		return
	}
	t := &txns[i]
	// The reads kept overwrite the parsed ones in place (a read is
	// written at or before the place it was read from), and the sources
	// are sized once: four appends from nothing per close were a tenth
	// of run --level causal's allocation time.
	var srcs []int32
	reads := f.nl(int(i)).reads[:0]
	var from []int32
	if nr := len(f.nl(int(i)).reads) + len(f.lreadsOf(i)); nr > 0 {
		// One array, each capped at its half: one allocation per
		// close where there were two.
		buf := make([]int32, 0, 2*nr)
		srcs, from = buf[:0:nr], buf[nr:nr:2*nr]
	}
	var initReads []kv
	for _, r := range f.nl(int(i)).reads {
		if f.taintAll || f.taintK[r.k] || f.tainted(i, r, txns) {
			continue // dropped by the projection (§3)
		}
		src, ok := f.choose(i, r, txns)
		if ok && src >= 0 && f.so && !f.rebuilding {
			src = f.reconsider(i, r, src, srcs, txns)
		}
		if ok && src >= 0 && f.isRetired(src) {
			// Its clock and edges are gone (weak29_causal.go): the
			// exact check decides (F2).
			f.fail(whyRetiredRead)
			continue
		}
		if (!ok || src < 0) && f.sum.hasKV(r) {
			// Dropped by retirement (R2). The summary is asked only
			// for a read no held writer explains (most reads are of a
			// value written since the last pass): a read it holds that
			// keeps a held source instead is one constraint more than
			// the instance has, which can only make the graph see
			// trouble, never miss it (F2).
			continue
		}
		if ok && src < 0 {
			// The initial state, recorded only now: a read the summary
			// dropped is in no instance and ties no initial value
			// (recorded in choose, a retired value read under an
			// unknown initial state gave its key a second initial
			// value, trouble at nearly every step once R7 retired).
			f.chooseInitial(r)
		}
		if !ok {
			if t.Status == history.Unknown {
				// It cannot have committed: no read may choose it.
				f.usable[i] = false
				if f.chosen[i] {
					f.fail("an unknown transaction read from has a read nothing explains")
				}
				continue
			}
			f.fail("a read without a source")
			continue
		}
		reads = append(reads, r)
		from = append(from, src)
		if src < 0 && f.opts.InitialState == history.InitialUnknown {
			initReads = append(initReads, r)
		}
		if src >= 0 {
			f.chosen[src] = true
			f.edge(src, int32(i))
			if !slices.Contains(srcs, src) {
				srcs = append(srcs, src)
			}
		}
	}
	for _, lr := range f.lreadsOf(i) {
		if f.taintAll || f.taintK[lr.k] {
			continue // dropped by the projection (a wildcard write)
		}
		if slices.ContainsFunc(lr.elems, func(e kv) bool { return f.tainted(i, e, txns) }) {
			// An element a writer outside the instance (a dead letter,
			// a quarantined core) may have appended: the projection
			// drops the read (§3 for lists), and so does the graph; a
			// read the instance drops for another appender outside it
			// (of an own element) is kept, one constraint more (F1).
			continue
		}
		app, ok := f.parseRead(i, lr, txns)
		if !ok {
			if t.Status == history.Unknown {
				f.usable[i] = false
				if f.chosen[i] {
					f.fail("an unknown transaction read from has a read nothing explains")
				}
				continue
			}
			f.fail("a list read without a parse")
			continue
		}
		src := int32(-1)
		if len(app) > 0 {
			src = app[len(app)-1]
			for _, a := range app {
				f.chosen[a] = true
			}
			f.edge(src, int32(i))
			if !slices.Contains(srcs, src) {
				srcs = append(srcs, src)
			}
		}
		reads = append(reads, kv{k: lr.k, str: listFinal})
		from = append(from, src)
		if f.opts.InitialState == history.InitialUnknown {
			// parseRead took an initial list (perhaps empty) for it.
			initReads = append(initReads, kv{k: lr.k, str: listFinal})
		}
		f.extendChain(lr.k, app)
	}
	f.nl(int(i)).initReads = initReads
	if i < len(f.lreads) {
		f.lreads[i] = nil
	}
	f.nl(int(i)).reads = reads
	f.nl(int(i)).srcs = srcs
	switch f.lv {
	case history.ReadAtomic:
		for k, r := range reads {
			t2 := from[k]
			if s := f.sessOf[i]; s >= 0 {
				if t1 := f.lastWriter(s, r.k, f.pos[i]-1); t1 >= 0 {
					f.forced(t1, t2)
				}
			}
			for _, src := range srcs {
				if src != t2 && writes(f.nl(int(src)).finals, r.k) {
					f.forced(src, t2)
				}
			}
		}
	case history.Causal:
		f.nl(int(i)).froms = from
		f.closed[i] = true
		for _, src := range srcs {
			f.nl(int(src)).succ = append(f.nl(int(src)).succ, int32(i))
		}
		if f.batch {
			// Engine.rebuild: settleClocks computes every clock and
			// forced edge once, after the last close.
			return
		}
		f.closeClock(int32(i))
	}
}

// closeClock takes closed node n's sources into its past, adds its
// forced edges from that past, once, and passes the change on to the
// clocks computed from n's (docs/SEMANTICS.md §5 "A close visits its
// reads once"). Visiting the reads first under n's past at release (its
// session predecessor's) and again, through propagate, for the sessions
// its sources added visited each read of u300k twice, the second time
// over every session of the key again.
func (f *fast) closeClock(n int32) {
	if naiveCloseClock {
		f.forcedCausal(n, nil)
		f.propagate(n)
		return
	}
	prev := f.nl(int(n)).clock
	scratch := f.clkScratch
	if len(scratch) != len(f.sessLast) {
		scratch = make([]int32, len(f.sessLast))
	}
	clk := f.clockInto(n, scratch)
	if sameClock(clk, prev) {
		// Nothing computed from n's clock changes.
		f.clkScratch = clk
		f.forcedCausal(n, nil)
		return
	}
	// A clock belongs to its node alone: the replaced one is the next
	// scratch (propagate).
	f.nl(int(n)).clock, f.clkScratch = clk, prev
	f.front[n] = 0
	f.forcedCausal(n, nil)
	f.propagateFrom(f.nl(int(n)).succ)
}

// naiveCloseClock makes a close visit its reads under its past at
// release and again for what its sources added (the tests' reference
// for closeClock).
var naiveCloseClock bool

// settleClocks ends a batch of closes (Engine.rebuild): it computes every
// node's clock once, in a topological order of the clocks' dependencies
// (succ: session successor, closed readers), then each closed node's
// forced edges from its final past. Closing node by node instead
// propagated each close through every later clock of its session and
// their readers, again and again: quadratic in the instance, and most
// of run --level causal's time, since a rebuild follows every step the
// fast path could not vouch for.
//
// The result is the one the closes by themselves give. Clocks: each is
// the least solution of clockInto over its inputs, whatever the order
// they are computed in (propagate iterates to it; here each input is
// final before its dependants are computed). Forced edges: the closes
// added, per read and session, an edge from the last writer in the
// reader's past as it then was, unless it was in the source's past as
// it then was; pasts only grow, so every such edge either is one of the
// edges added here from the final pasts, or comes from an earlier writer
// of the same session (which reaches the final last writer by session
// order) or from a writer in the source's final past (which reaches the
// source by session order and read-from edges, all in the graph): the
// graphs have the same reachability, hence the same cycles, and a read
// of the initial state meets a writer in its past in both or in neither.
func (f *fast) settleClocks() {
	f.batch = false
	if f.lv != history.Causal {
		return
	}
	n := len(f.node)
	indeg := make([]int32, n)
	for d := range n {
		for _, w := range f.nl(int(d)).succ {
			indeg[w]++
		}
	}
	queue := make([]int32, 0, n)
	for d := range n {
		if indeg[d] == 0 {
			queue = append(queue, int32(d))
		}
	}
	ns := len(f.sessLast)
	done := 0
	for len(queue) > 0 {
		d := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		done++
		if f.nl(int(d)).clock != nil || f.closed[d] {
			// clockInto reads only the inputs' clocks: d's own buffer
			// can take the result when it is long enough.
			buf := f.nl(int(d)).clock
			if len(buf) != ns {
				buf = make([]int32, ns)
			}
			f.nl(int(d)).clock = f.clockInto(d, buf)
			f.front[d] = 0
		}
		for _, w := range f.nl(int(d)).succ {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	if done < n {
		// A cycle of read-from and session order (the graph holds
		// those edges: it is in trouble already). The nodes on or
		// after it are iterated to the least solution as propagate
		// does, from their clocks at release, which are below it.
		work := f.work[:0]
		for d := range n {
			if indeg[d] > 0 && (f.nl(int(d)).clock != nil || f.closed[d]) {
				work = append(work, int32(d))
			}
		}
		for len(work) > 0 {
			d := work[len(work)-1]
			work = work[:len(work)-1]
			clk := f.clockInto(d, make([]int32, ns))
			if sameClock(clk, f.nl(int(d)).clock) {
				continue
			}
			f.nl(int(d)).clock = clk
			f.front[d] = 0
			work = append(work, f.nl(int(d)).succ...)
		}
		f.work = work[:0]
	}
	for d := range n {
		if f.closed[d] {
			f.forcedCausal(int32(d), nil)
		}
	}
}

// tainted reports whether a writer outside the instance is a possible
// writer of closed node i's read r (incremental's possibleWriters under
// the real-time read rule).
func (f *fast) tainted(i int, r kv, txns []history.Txn) bool {
	rt := &txns[i]
	for _, w := range f.taint[r] {
		if int(w.t) == i {
			continue
		}
		wt := &txns[w.t]
		if rt.HasTime && wt.HasTime && f.opts.Precedes(rt, wt) {
			continue
		}
		if f.so && !w.noSession && rt.HasSession && wt.HasSession && rt.Session == wt.Session && laterInSession(wt, rt, int(w.t), i) {
			continue
		}
		return true
	}
	return false
}

// laterInSession reports whether w (at engine index wi) comes after r
// (at ri) in their session: the order of starts, then the order given,
// as incremental's session rank has it for the instance's history.
func laterInSession(w, r *history.Txn, wi, ri int) bool {
	return w.Start > r.Start || (w.Start == r.Start && wi > ri)
}

func writes(finals []kv, k int32) bool {
	for _, w := range finals {
		if w.k == k {
			return true
		}
	}
	return false
}

// clockInto computes n's causal past in the instance, from its
// predecessors' clocks now (the session predecessor's, and, once n is
// closed, its chosen sources'), into clk (len(f.sessLast) long): propagate
// computes a successor's clock into scratch, and when it changed keeps it
// and takes the replaced one as the next scratch, so recomputing pasts
// allocates nothing once the sessions are known.
func (f *fast) clockInto(n int32, clk []int32) []int32 {
	for k := range clk {
		clk[k] = -1
	}
	join := func(c []int32) {
		for s, v := range c {
			clk[s] = max(clk[s], v)
		}
	}
	if p := f.prev[n]; p >= 0 {
		join(f.nl(int(p)).clock)
	}
	if f.closed[n] {
		for _, src := range f.nl(int(n)).srcs {
			join(f.nl(int(src)).clock)
		}
	}
	if s := f.sessOf[n]; s >= 0 {
		clk[s] = max(clk[s], f.pos[n])
	}
	return clk
}

// propagate recomputes the clocks that depend on n's, transitively,
// and the forced edges of the closed nodes whose past grew: the
// instance's past of a node grows when an ancestor closes (its reads
// join the instance).
func (f *fast) propagate(n int32) {
	// n is recomputed like every node its clock feeds: when its reads
	// added nothing to its past, nothing is forced anew and the clocks
	// computed from its own are current (every clock equals clockInto
	// of its inputs after each propagate, and only n's inputs changed),
	// so the walk stops there. The work stack and the scratch clock are
	// the fast path's, reused from close to close: an allocation each
	// per close before.
	f.work = append(f.work[:0], n)
	f.propagateFrom(f.work)
}

// propagateFrom is propagate from the nodes in from (which may be
// f.work itself).
func (f *fast) propagateFrom(from []int32) {
	work := append(f.work[:0], from...)
	scratch := f.clkScratch
	for len(work) > 0 {
		d := work[len(work)-1]
		work = work[:len(work)-1]
		prev := f.nl(int(d)).clock
		if len(scratch) != len(f.sessLast) {
			scratch = make([]int32, len(f.sessLast))
		}
		clk := f.clockInto(d, scratch)
		if sameClock(clk, prev) {
			continue
		}
		f.nl(int(d)).clock = clk
		f.front[d] = 0
		if f.closed[d] {
			f.forcedCausal(d, prev)
		}
		// A clock belongs to its node alone (release copies the
		// predecessor's): the replaced one is the next scratch.
		scratch = prev
		work = append(work, f.nl(int(d)).succ...)
	}
	f.work, f.clkScratch = work[:0], scratch
}

// sameClock compares two clocks, a missing entry (a session that began
// later) being -1.
func sameClock(a, b []int32) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	for i, v := range a {
		w := int32(-1)
		if i < len(b) {
			w = b[i]
		}
		if v != w {
			return false
		}
	}
	return true
}

// forcedCausal adds closed node n's forced edges for the sessions whose
// entry in its past grew since old (nil: all): per read of x from t2 and
// per session, only the session's last writer of x in the past needs an
// edge (the session's earlier writers precede it in session order).
func (f *fast) forcedCausal(n int32, old []int32) {
	clk := f.nl(int(n)).clock
	own := f.sessOf[n]
	ownP := f.pos[n] - 1 // n is not in its own past
	froms := f.nl(int(n)).froms
	for k, r := range f.nl(int(n)).reads {
		t2 := froms[k]
		kw := f.keyWriters(r.k)
		if kw == nil {
			continue
		}
		if t2 >= 0 && kw.cover == t2+1 && kw.coverAt == kw.writes {
			// t2's past held every session's last writer of the key
			// when it had no later write, and still does: no session
			// has a writer in n's past that t2's lacks
			// (docs/SEMANTICS.md §5 "A read whose source's past holds every writer of its key").
			continue
		}
		var c2 []int32 // t2's past (nil: the initial state)
		if t2 >= 0 {
			c2 = f.nl(int(t2)).clock
		}
		all := t2 >= 0 // so far every session's last writer is in c2
		if t2 >= 0 && !naiveFrontier {
			// Only a session whose last write of the key is at or
			// after t2's frontier can have a writer outside t2's past
			// (docs/SEMANTICS.md §5 "A read visits the writes after
			// its source's frontier"): visited through the key's log,
			// when that tail is shorter than its sessions.
			// The tail is found from the log's end, given up past as
			// many entries as the key has sessions: the last entries
			// are one or two cache lines, where a binary search over
			// the whole log was a miss per probe.
			front := f.frontier(t2)
			log := kw.log
			lo, stop := len(log), max(len(log)-len(kw.sessions), 0)
			for lo > stop && log[lo-1].t >= front {
				lo--
			}
			if (lo == 0 && !kw.trimmed) || (lo > 0 && log[lo-1].t < front) {
				tail := log[lo:]
				var last uint64
				byTail, marked := false, false
				for x, en := range tail {
					if int(en.s) < len(c2) && c2[en.s] >= en.pos {
						// In t2's past: the session's last write
						// is this one or later in the tail.
						continue
					}
					all = false
					if !marked {
						// Marked at the first write outside t2's
						// past: most reads meet none.
						last, byTail = lastOfSession(tail)
						marked = true
					}
					if byTail {
						// The tail is a suffix of the key's writes
						// in release order: its session's last
						// entry there is the session's last write
						// (docs/SEMANTICS.md §5 "A session's last
						// write read off the log's tail (weak34)").
						if last&(1<<x) != 0 {
							f.forcedFromLast(kw, en, n, t2, clk, c2, own, ownP, old)
						}
					} else if j := kw.find(en.s); kw.lastT[j] == en.t {
						// The session's last write of the key (an
						// earlier one leaves it to this one).
						f.forcedFrom(kw, j, en.s, n, t2, clk, c2, own, ownP, old)
					}
				}
				if all {
					kw.cover, kw.coverAt = t2+1, kw.writes
				}
				continue
			}
		}
		for j, s := range kw.sessions {
			if !f.forcedFrom(kw, j, s, n, t2, clk, c2, own, ownP, old) {
				all = false
			}
		}
		if all {
			kw.cover, kw.coverAt = t2+1, kw.writes
		}
	}
}

// newPastPos is session s's position in n's past clk (pastPos), and
// whether n's past holds anything of s that old (n's past when last
// closed, nil: none) did not: a negative position or nothing new leaves
// no forced edge to add.
func newPastPos(clk []int32, s, own, ownP int32, old []int32) (int32, bool) {
	p := pastPos(clk, s, own, ownP)
	if p < 0 {
		return p, false
	}
	if old != nil {
		o := int32(-1)
		if int(s) < len(old) {
			o = old[s]
			if s == own {
				o = min(o, ownP)
			}
		}
		if p <= o {
			return p, false // nothing new in n's past of s
		}
	}
	return p, true
}

// forcedFrom adds closed node n's forced edge for its read from t2 (c2
// its past, nil: the initial state) of a key kw holds, from session
// index j's (session s's) last writer of the key in n's past clk,
// unless it is in c2 or was in old (forcedCausal); it reports whether c2
// holds the session's last writer of the key.
func (f *fast) forcedFrom(kw *keyWriters, j int, s, n, t2 int32, clk, c2 []int32, own, ownP int32, old []int32) bool {
	if int(s) < len(c2) && c2[s] >= kw.lastPos[j] {
		// Every writer of the session is in t2's past: most
		// sessions of a read end here, whatever n's past.
		return true
	}
	p, ok := newPastPos(clk, s, own, ownP, old)
	if !ok {
		return false
	}
	if int(s) < len(c2) && c2[s] >= p {
		// Every writer of the session in n's past is in t2's
		// too (inPast below, without the search).
		return false
	}
	// The session's last writer in n's past; in t2's past
	// already (inPast, read off its position: t1's own
	// arrays are a cache miss each) it needs no edge.
	if w, ok := kw.lastIn(j, p); ok && w.t != n && !(int(s) < len(c2) && c2[s] >= w.pos) {
		f.forced(w.t, t2)
	}
	return false
}

// naiveFrontier makes forcedCausal visit every session of a key (the
// tests' reference for the frontier).
var naiveFrontier bool

// frontier is the least node index outside t's past (its clock): every
// node of a session at a position past t's entry for it was released
// after the session's node at the next position, and every node not yet
// released comes after every node held. Cached until t's clock changes;
// a cached value stays a lower bound (a past only grows).
func (f *fast) frontier(t int32) int32 {
	if v := f.front[t]; v > 0 {
		return v - 1
	}
	c := f.nl(int(t)).clock
	front := int32(len(f.node))
	for s, nodes := range f.sessNodes {
		next := int32(0)
		if s < len(c) {
			next = c[s] + 1
		}
		if int(next) < len(nodes) {
			front = min(front, nodes[next])
		}
	}
	f.front[t] = front + 1
	return front
}

// pastPos is session s's last position in the past clk of a node of
// session own (ownP for own: a node is not in its own past); -1: none.
func pastPos(clk []int32, s, own, ownP int32) int32 {
	if int(s) >= len(clk) {
		return -1
	}
	if s == own {
		return ownP
	}
	return clk[s]
}

// lastWriter is session s's last writer of k at a position <= p (-1:
// none).
func (f *fast) lastWriter(s int32, k int32, p int32) int32 {
	kw := f.keyWriters(k)
	if kw == nil {
		return -1
	}
	j := kw.find(s)
	if j < 0 {
		return -1
	}
	if w, ok := kw.lastIn(j, p); ok {
		return w.t
	}
	return -1
}

// keyWriters is key number k's writers by session (nil: none). The
// pointer is into writersOf: good until a write of a key not yet in it.
func (f *fast) keyWriters(k int32) *keyWriters {
	if int(k) < len(f.writersOf) {
		if kw := &f.writersOf[k]; len(kw.sessions) > 0 {
			return kw
		}
	}
	return nil
}

// forced adds the co edge t1 -> t2 the axiom forces; into the initial
// state (t2 < 0) it is a violation under this choice.
func (f *fast) forced(t1, t2 int32) {
	if t1 == t2 {
		return
	}
	if t2 < 0 {
		f.fail("a read of the initial state after a writer of the key")
		return
	}
	f.edge(t1, t2)
}

// choose picks the source of closed node i's read r (-1: the initial
// state, which the caller records with chooseInitial), as check_weak's likelySource does: the committed writer that
// ended last before the reader ended, else the initial state if it can
// be (under an unknown initial state, for a read of a value no committed
// candidate wrote, initFallback), else the first committed writer, else
// the initial state, else the first candidate.
func (f *fast) choose(i int, r kv, txns []history.Txn) (int32, bool) {
	rt := &txns[i]
	best, bestEnd := int32(-1), int64(0)
	var firstCommitted, first int32 = -1, -1
	var one [1]int32
	ws := f.writers(r, &one)
	for _, w := range ws {
		if !f.mayRead(i, w, txns) {
			continue
		}
		wt := &txns[w]
		if first < 0 {
			first = w
		}
		if wt.Status != history.Committed {
			continue
		}
		if firstCommitted < 0 {
			firstCommitted = w
		}
		if wt.HasTime && rt.HasTime && wt.End <= rt.End && (best < 0 || wt.End > bestEnd) {
			best, bestEnd = w, wt.End
		}
	}
	initial := f.kt.text(r) == history.Null || f.opts.InitialState == history.InitialUnknown
	if f.rankOf(int32(i)) >= 0 {
		// Guided by the witness: the candidate latest in it before the
		// reader (for read committed this keeps every wr edge along the
		// witness order, so the graph stays acyclic).
		best, bestRank := int32(-1), int32(-1)
		for _, w := range ws {
			if f.rankOf(w) < 0 || f.rank[w] > f.rank[i] || !f.mayRead(i, w, txns) {
				continue
			}
			if f.rank[w] > bestRank {
				best, bestRank = w, f.rank[w]
			}
		}
		if best >= 0 {
			return best, true
		}
		if initial {
			return -1, true
		}
	}
	switch {
	case best >= 0:
		return best, true
	case initial && (!f.initFallback(r) || firstCommitted < 0):
		return -1, true
	case firstCommitted >= 0:
		return firstCommitted, true
	case initial:
		return -1, true
	case first >= 0:
		return first, true
	}
	return 0, false
}

// mayRead reports whether w can be the source of a read of closed node
// i: not i itself, usable, not begun after i ended (the real-time read
// rule), and not later in i's own session where sessions count.
func (f *fast) mayRead(i int, w int32, txns []history.Txn) bool {
	if int(w) == i || !f.usable[w] {
		return false
	}
	rt, wt := &txns[i], &txns[w]
	if rt.HasTime && wt.HasTime && f.opts.Precedes(rt, wt) {
		return false
	}
	return !(f.so && f.sessOf[i] >= 0 && f.sessOf[w] == f.sessOf[i] && f.pos[w] > f.pos[i])
}

// initFallback reports whether the initial state is r's source of last
// resort rather than its first: under --initial-state unknown a read of
// a value some committed transaction wrote is taken from that writer
// before the initial state (docs/SEMANTICS.md §5 "The weak levels under
// an unknown initial state"). Every read may come from the unknown
// initial state there, but only one value per key can: taking it for
// each read whose writer ended after the reader (the usual concurrent
// read) gave one key two initial values, trouble at nearly every step.
func (f *fast) initFallback(r kv) bool {
	return f.opts.InitialState == history.InitialUnknown && f.kt.text(r) != history.Null
}

// listFinal marks a kv that stands for a list key as a whole (in a
// node's finals: it appends to the key; in its reads: a list read, its
// source the last appender shown), never a value.
const listFinal = 2

// listInit marks an initial list's pair in initVal (initialList).
const listInit = 3

// parseRead is the one parse of closed node i's list read lr the fast
// path takes: each element's appender, a run of consecutive elements
// per appender (all its appends to the key, in order), under an unknown
// initial state after a prefix of elements nobody appended (the initial
// list, the same for every read of the key). ok is false when an
// element has no single possible appender among the nodes (none, more
// than one, one after the reader by the real-time read rule or in its
// session, the reader itself) or an appender shows part of its appends:
// the exact check then decides (F2).
func (f *fast) parseRead(i int, lr listRead, txns []history.Txn) (app []int32, ok bool) {
	rt := &txns[i]
	var one [1]int32
	j := 0
	if f.opts.InitialState == history.InitialUnknown {
		for j < len(lr.elems) && len(f.writers(lr.elems[j], &one)) == 0 {
			j++
		}
		f.chooseInitial(f.initialList(lr.k, lr.elems[:j]))
	}
	for j < len(lr.elems) {
		ws := f.writers(lr.elems[j], &one)
		if len(ws) != 1 {
			return nil, false
		}
		w := ws[0]
		wt := &txns[w]
		if int(w) == i || !f.node[w] || !f.usable[w] || (rt.HasTime && wt.HasTime && f.opts.Precedes(rt, wt)) ||
			(f.so && f.sessOf[i] >= 0 && f.sessOf[w] == f.sessOf[i] && f.pos[w] > f.pos[i]) || slices.Contains(app, w) {
			return nil, false
		}
		// The run from j must be w's appends to the key, all of them,
		// in order.
		for _, a := range f.appendsOf(int(w)) {
			if a.k != lr.k {
				continue
			}
			if j >= len(lr.elems) || lr.elems[j] != a {
				return nil, false
			}
			j++
		}
		app = append(app, w)
	}
	return app, true
}

// initialList is the pair under which chooseInitial records list key
// k's initial list shown as elems: the register pair of null when it is
// empty (a register read of null of a list key is a read of the empty
// list, as prepare has it), else the elements' text numbered under a
// mark no register value carries (listInit).
func (f *fast) initialList(k int32, elems []kv) kv {
	if len(elems) == 0 {
		return f.kt.pairOf(k, history.Null)
	}
	var b []byte
	for _, e := range elems {
		v := f.kt.value(e)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	r := f.kt.pairOf(k, history.Value(b))
	if r.str == 0 {
		// The encoding always holds a ':', so it is never an integer.
		panic("weakonline: an initial list numbered as an integer")
	}
	r.str = listInit
	return r
}

// extendChain takes a read's version of list key k (app, its appenders
// in order) into the key's version order: it must extend the longest
// version shown so far or be a prefix of it (else two reads show
// versions neither of which extends the other: trouble). A longer one
// orders its new appenders after the old last, and its last before
// every appender of the key it does not show (pending): with the chain
// that is every order each read so far puts on the key's appenders (its
// appenders in order, its last before every other appender).
func (f *fast) extendChain(k int32, app []int32) {
	c := f.chain[k]
	n := min(len(c), len(app))
	if !slices.Equal(c[:n], app[:n]) {
		f.fail("two list versions neither of which extends the other")
		return
	}
	if len(app) <= len(c) {
		return
	}
	for j := len(c); j < len(app); j++ {
		if j > 0 {
			f.edge(app[j-1], app[j])
		}
	}
	last := app[len(app)-1]
	p := f.pending[k][:0]
	for _, x := range f.pending[k] {
		if slices.Contains(app[len(c):], x) {
			continue
		}
		p = append(p, x)
		f.edge(last, x)
	}
	f.pending[k] = p
	f.chain[k] = slices.Clone(app)
}

// addVal records node w as a writer of r (after the ones recorded).
func (f *fast) addVal(r kv, w int32) {
	if d := f.slot(r, true); d != nil {
		switch x := *d; {
		case x == slotNone:
			if !f.dense[r.k].mayHold(r.n) {
				*d = w
				return
			}
			if _, seen := f.vals[r]; !seen {
				*d = w
				return
			}
		case x >= 0:
			// A second writer: both go to the map, in release order.
			*d = slotMap
			f.vals[r] = x
		}
	}
	// slot(r, true) made the key's entry if r is an integer; a value
	// that is no integer makes it here.
	f.denseOf(r.k)
	if r.str == 0 {
		f.dense[r.k].spill(r.n)
	} else {
		f.dense[r.k].strs = true
	}
	x, seen := f.vals[r]
	switch {
	case !seen:
		f.vals[r] = w
	case x >= 0:
		f.vals[r] = -int32(len(f.valsMulti)) - 1
		f.valsMulti = append(f.valsMulti, []int32{x, w})
	default:
		f.valsMulti[-x-1] = append(f.valsMulti[-x-1], w)
	}
}

// denseOf is key k's entry, made (empty) if there is none yet.
func (f *fast) denseOf(k int32) *denseVals {
	if int(k) >= len(f.dense) {
		f.dense = append(f.dense, make([]denseVals, int(k)+1-len(f.dense))...)
	}
	return &f.dense[k]
}

// slot is r's slot in its key's dense window (nil: r is no integer, or
// outside the window). With grow, a value just past the window or just
// below it (at most denseGap) extends it, a value farther past it moves
// the window there (its writers go to the map), and a key's first
// integer value opens it.
func (f *fast) slot(r kv, grow bool) *int32 {
	if r.str != 0 {
		return nil
	}
	if int(r.k) >= len(f.dense) {
		if !grow {
			return nil
		}
		f.denseOf(r.k)
	}
	d := &f.dense[r.k]
	if len(d.slots) == 0 {
		if !grow {
			return nil
		}
		d.base = r.n
	}
	if r.n < d.base {
		// Below the window. Released in start order, a key's writers
		// come a little out of their values' order (a later start
		// wrote the next value first), and after a rebuild each key's
		// window opens at the first value released: the window grows
		// down by what is missing, and by as much again as it holds
		// (at most denseGap), so a run of such values moves it once.
		below := d.base - r.n
		if !grow || below <= 0 || below > denseGap {
			return nil // far below (or an overflow)
		}
		pad := below + min(int64(len(d.slots)), denseGap)
		if r.n-pad > r.n {
			pad = below // the lowest integers: no slack below them
		}
		slots := make([]int32, int64(len(d.slots))+pad, int64(cap(d.slots))+pad)
		for j := range pad {
			slots[j] = slotNone
		}
		copy(slots[pad:], d.slots)
		d.slots, d.base = slots, d.base-pad
	}
	off := r.n - d.base
	if off < 0 {
		return nil // an overflow
	}
	if off >= int64(len(d.slots)) {
		if !grow {
			return nil
		}
		if off >= int64(len(d.slots))+denseGap {
			// Far past the window: the window moves here, its single
			// writers to the map (the slotMap ones are there already).
			// Under an unknown initial state the writers a rebuild
			// releases first are the pinned ones (R7), of a key's
			// first values, and the key's current values were all
			// past their window and in the map (11% of run --level
			// read-committed's profile on u300k).
			for j, x := range d.slots {
				if x >= 0 {
					v := d.base + int64(j)
					f.vals[kv{k: r.k, n: v}] = x
					d.spill(v)
				}
			}
			d.base, d.slots, off = r.n, d.slots[:0], 0
		}
		for int64(len(d.slots)) <= off {
			d.slots = append(d.slots, slotNone)
		}
	}
	return &d.slots[off]
}

// writers are r's writer nodes in release order; a single one is
// returned in one, which the caller provides.
func (f *fast) writers(r kv, one *[1]int32) []int32 {
	if int(r.k) >= len(f.dense) {
		return nil // no value of the key was ever written
	}
	if r.str == 0 {
		if d := f.slot(r, false); d != nil && *d >= 0 {
			one[0] = *d
			return one[:]
		}
		if !f.dense[r.k].mayHold(r.n) {
			return nil // not in the window, and not in the map
		}
	} else if !f.dense[r.k].strs {
		return nil // no value of the key that is no integer was written
	}
	x, seen := f.vals[r]
	switch {
	case !seen:
		return nil
	case x >= 0:
		one[0] = x
		return one[:]
	}
	return f.valsMulti[-x-1]
}

// rankOf is i's place in the witness the fast path was rebuilt from (-1:
// none, or released since).
func (f *fast) rankOf(i int32) int32 {
	if int(i) < len(f.rank) {
		return f.rank[i]
	}
	return -1
}

// chooseInitial takes the initial state as r's source.
func (f *fast) chooseInitial(r kv) int32 {
	if f.opts.InitialState == history.InitialUnknown {
		if v, seen := f.initVal[r.k]; seen && v != r {
			f.fail("two initial values of one key")
		}
		f.initVal[r.k] = r
	}
	return -1
}

// edge adds u -> v, keeping ord a topological order; a cycle is trouble
// (the edge is not added).
func (f *fast) edge(u, v int32) {
	if u == v {
		f.fail("a cycle")
		return
	}
	if f.retired != nil {
		if f.retired[v] {
			// No edge enters R (weak29_causal.go): the exact check
			// decides.
			f.fail("an edge into a retired node")
			return
		}
		if f.retired[u] {
			return // out of R: in no cycle, since nothing enters R
		}
	}
	if f.ord[u] < f.ord[v] {
		f.nl(int(u)).out = f.adj(f.nl(int(u)).out, v)
		f.nl(int(v)).in = f.adj(f.nl(int(v)).in, u)
		return
	}
	ub, lb := f.ord[u], f.ord[v]
	f.epoch++
	if f.epoch == 0 {
		clear(f.mark)
		f.epoch = 1
	}
	// Forward from v through nodes ordered at most ub: reaching u is a
	// cycle.
	f.fwd = f.fwd[:0]
	f.stack = append(f.stack[:0], v)
	f.mark[v] = f.epoch
	for len(f.stack) > 0 {
		n := f.stack[len(f.stack)-1]
		f.stack = f.stack[:len(f.stack)-1]
		f.fwd = append(f.fwd, n)
		for _, w := range f.nl(int(n)).out {
			if w == u {
				f.fail("a cycle")
				return
			}
			if f.mark[w] != f.epoch && f.ord[w] < ub {
				f.mark[w] = f.epoch
				f.stack = append(f.stack, w)
			}
		}
	}
	// Backward from u through nodes ordered above lb.
	f.bwd = f.bwd[:0]
	f.stack = append(f.stack[:0], u)
	f.mark[u] = f.epoch
	for len(f.stack) > 0 {
		n := f.stack[len(f.stack)-1]
		f.stack = f.stack[:len(f.stack)-1]
		f.bwd = append(f.bwd, n)
		for _, w := range f.nl(int(n)).in {
			if f.mark[w] != f.epoch && f.ord[w] > lb {
				f.mark[w] = f.epoch
				f.stack = append(f.stack, w)
			}
		}
	}
	byOrd := func(a, b int32) int { return int(f.ord[a]) - int(f.ord[b]) }
	slices.SortFunc(f.bwd, byOrd)
	slices.SortFunc(f.fwd, byOrd)
	f.ordScratch = f.ordScratch[:0]
	for _, n := range f.bwd {
		f.ordScratch = append(f.ordScratch, f.ord[n])
	}
	for _, n := range f.fwd {
		f.ordScratch = append(f.ordScratch, f.ord[n])
	}
	slices.Sort(f.ordScratch)
	k := 0
	for _, n := range f.bwd {
		f.ord[n] = f.ordScratch[k]
		k++
	}
	for _, n := range f.fwd {
		f.ord[n] = f.ordScratch[k]
		k++
	}
	f.nl(int(u)).out = f.adj(f.nl(int(u)).out, v)
	f.nl(int(v)).in = f.adj(f.nl(int(v)).in, u)
}

// adjFirst is the capacity a node's first edge list of a direction
// gets, carved from a shared block (adjSlab): a node has some five to
// ten edges each way at read atomic and causal (read-from, session,
// forced), and append grew each list 1, 2, 4, 8, four allocations a
// list (edge's growth was a tenth of run --level causal's allocation
// time on u300k).
const (
	adjFirst = 8
	adjSlab  = 1 << 12
)

// adj is l with v appended; an empty list starts in the shared block.
// A list that outgrows its piece is moved by append, as before. Only
// the levels where nothing retires take pieces (a retirement pass keeps
// a few nodes of each block alive, so at read committed the block would
// outlive its transactions).
func (f *fast) adj(l []int32, v int32) []int32 {
	if cap(l) == 0 && f.so {
		if len(f.slab) < adjFirst {
			f.slab = make([]int32, adjSlab)
		}
		l, f.slab = f.slab[:0:adjFirst], f.slab[adjFirst:]
	}
	return append(l, v)
}

// reconsider is the source closed node i's read r takes, src being
// choose's pick: src unless one of the edges its choice adds at i's close
// (the wr edge into i, the forced edges into src) is seen to close a
// cycle and another committed writer of the value is not (docs/SEMANTICS.md
// §5 "Repeated values: the next writer at a close"). srcs are the sources
// i's earlier reads took. Any possible writer is as good a choice as
// choose's (F1: the graph is a witness under whatever choice it holds);
// the prediction only looks ahead, and close and forcedCausal then add
// every edge of the choice made, so a wrong guess is trouble (F2), never
// a missing constraint.
func (f *fast) reconsider(i int, r kv, src int32, srcs []int32, txns []history.Txn) int32 {
	var one [1]int32
	ws := f.writers(r, &one)
	if len(ws) < 2 || !f.wouldCycle(int32(i), r.k, src, srcs) {
		return src
	}
	for j := len(ws) - 1; j >= 0; j-- {
		w := ws[j]
		if w == src || !f.node[w] || txns[w].Status != history.Committed || !f.mayRead(i, w, txns) {
			continue
		}
		if f.rankOf(int32(i)) >= 0 && (f.rankOf(w) < 0 || f.rank[w] > f.rank[i]) {
			continue // the witness's order, when there is one
		}
		if !f.wouldCycle(int32(i), r.k, w, srcs) {
			return w
		}
	}
	return src
}

// wouldCycle reports whether taking c as the source of closed node n's
// read of key k closes a cycle through the wr edge c -> n or through a
// forced edge into c that the read adds at n's close, with n's past (at
// causal) from its session predecessor, srcs and c. It is a prediction:
// other reads' sources can still grow n's past.
func (f *fast) wouldCycle(n, k, c int32, srcs []int32) bool {
	if f.reaches(n, c) {
		return true
	}
	kw := f.keyWriters(k)
	if kw == nil {
		return false
	}
	own := f.sessOf[n]
	ownP := f.pos[n] - 1
	switch f.lv {
	case history.ReadAtomic:
		if own >= 0 {
			if t1 := f.lastWriter(own, k, ownP); t1 >= 0 && t1 != c && f.reaches(c, t1) {
				return true
			}
		}
		for _, s := range srcs {
			if s != c && writes(f.nl(int(s)).finals, k) && f.reaches(c, s) {
				return true
			}
		}
	case history.Causal:
		clk := make([]int32, len(f.sessLast))
		for j := range clk {
			clk[j] = -1
		}
		join := func(x []int32) {
			for j, v := range x {
				if j < len(clk) {
					clk[j] = max(clk[j], v)
				}
			}
		}
		if p := f.prev[n]; p >= 0 {
			join(f.nl(int(p)).clock)
		}
		for _, s := range srcs {
			join(f.nl(int(s)).clock)
		}
		join(f.nl(int(c)).clock)
		c2 := f.nl(int(c)).clock
		for j, s := range kw.sessions {
			p := pastPos(clk, s, own, ownP)
			if p < 0 {
				continue
			}
			w, ok := kw.lastIn(j, p)
			if !ok || w.t == n || w.t == c || (int(s) < len(c2) && c2[s] >= w.pos) {
				continue
			}
			if f.reaches(c, w.t) {
				return true
			}
		}
	}
	return false
}

// reaches reports whether the graph has a path from u to v (u == v
// included): never when v is before u in the topological order, else a
// search forward from u through the nodes ordered before v.
func (f *fast) reaches(u, v int32) bool {
	if u == v {
		return true
	}
	if f.ord[u] > f.ord[v] {
		return false
	}
	ub := f.ord[v]
	f.epoch++
	if f.epoch == 0 {
		clear(f.mark)
		f.epoch = 1
	}
	f.stack = append(f.stack[:0], u)
	f.mark[u] = f.epoch
	for len(f.stack) > 0 {
		x := f.stack[len(f.stack)-1]
		f.stack = f.stack[:len(f.stack)-1]
		for _, w := range f.nl(int(x)).out {
			if w == v {
				return true
			}
			if f.mark[w] != f.epoch && f.ord[w] < ub {
				f.mark[w] = f.epoch
				f.stack = append(f.stack, w)
			}
		}
	}
	return false
}

// appendsOf is node i's appends (nil before the first list op).
func (f *fast) appendsOf(i int) []kv {
	if i < len(f.appends) {
		return f.appends[i]
	}
	return nil
}

// lreadsOf is node i's external list reads until it closes (nil before
// the first list op).
func (f *fast) lreadsOf(i int) []listRead {
	if i < len(f.lreads) {
		return f.lreads[i]
	}
	return nil
}
