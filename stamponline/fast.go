package stamponline

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// The fast path (docs/SEMANTICS.md §10 "Online with facts"): the stamps'
// own witness, replayed as the stream goes. At the serializable levels
// the witness is the committed transactions in commit_ts order; at the
// snapshot levels it is the begins at start_ts and the commits at
// commit_ts, a begin first on an equal stamp. An item is replayed once
// no transaction still to come can sort before it (the frontier, F1 in
// doc.go); the replay keeps per key only what the next item needs. It
// never alerts: any check that fails makes the engine hand the stream to
// the black-box engine (catchUp), so a failure here costs time, never a
// verdict.

// naiveRule switches off rules of the fast path, for the regression
// tests only (regress_test.go): each history there is one the engine
// gets wrong without the rule.
type naiveRule uint8

const (
	naiveFrontier naiveRule = 1 << iota // replay whatever has arrived
	naiveArrival                        // no check of a stamp below the frontier at arrival
	naiveRealTime                       // no real-time check against the latest start placed
	naiveFCW                            // no first-committer-wins check
)

// key kinds, from the ops that use a key.
const (
	kindNone uint8 = iota
	kindReg
	kindList
)

// keyState is what the replay keeps of one key: its committed state
// after every item replayed so far. It is what every op of the replay
// reads, in 64 bytes (one cache line of the keys' array, whose elements
// are 64-byte aligned once it is large): the key's lookup was a third of
// the replay's time on the 1M stamped streams, most of it the cache
// misses of a 104-byte state that spanned two lines. What only an
// unknown initial state needs is in keyCold, beside it by id.
type keyState struct {
	val     history.Value   // register value of the latest committed write (Null: none)
	apps    []history.Value // lists: the committed appends
	lastCTS int64           // commit_ts of the latest committed writer (first committer wins)
	lastBy  int64           // its release sequence number
	written bool            // a committed transaction has written or appended
	bound   bool            // the unknown initial value is bound by a read
	kind    uint8
}

// keyCold is the rest of a key's state: the unknown initial value, once
// a read bound it.
type keyCold struct {
	init    []history.Value // lists: the bound initial list
	initVal history.Value   // registers: the bound initial value
}

// item is one event of the witness: a commit (the serializable levels'
// only kind) or a begin.
type item struct {
	stamp  int64
	commit bool
	p      *pend
}

// pend is a released transaction the replay has not finished with.
type pend struct {
	t        history.Txn
	ids      []int32 // ids[n]: the log's number for op n's key (callLog.keyIDs)
	cts, sts int64
	seq      int64
	items    int8 // its items still queued: at 0 it goes back to the free list
}

// maxFree bounds the free list of pends: about what a tick releases at
// the stream rates `run` is measured at, so that a burst does not keep
// its pends for the rest of the run.
const maxFree = 4096

// newPend returns a pend from the free list or a new one: one allocation
// per released transaction was a share of the collector's work online.
func (e *Engine) newPend() *pend {
	if n := len(e.pool); n > 0 {
		p := e.pool[n-1]
		e.pool = e.pool[:n-1]
		return p
	}
	return &pend{}
}

// free returns p, replayed to its last item, to the free list; nothing
// refers to it any more (the queue held its only references). Its body
// is dropped, so that the list keeps no ops alive; its ids' array (no
// pointers) is kept for the next pend.
func (e *Engine) free(p *pend) {
	if len(e.pool) < maxFree {
		*p = pend{ids: p.ids[:0]}
		e.pool = append(e.pool, p)
	}
}

// less is the witness order: stamp, then a begin before a commit (it does
// not see a commit with its own stamp); commits by start, end (the
// serializable levels' tie order, stampcheck.CheckSerial) or end, start
// (the snapshot levels', stampcheck's stampEvents), then release order.
func (e *Engine) less(a, b item) bool {
	if c := cmp.Compare(a.stamp, b.stamp); c != 0 {
		return c < 0
	}
	if a.commit != b.commit {
		return !a.commit
	}
	ta, tb := &a.p.t, &b.p.t
	var c int
	if e.si {
		c = cmp.Or(cmp.Compare(ta.End, tb.End), cmp.Compare(ta.Start, tb.Start))
	} else {
		c = cmp.Or(cmp.Compare(ta.Start, tb.Start), cmp.Compare(ta.End, tb.End))
	}
	if c != 0 {
		return c < 0
	}
	return a.p.seq < b.p.seq
}

// items is the replay's queue, a binary min-heap in witness order. It
// is container/heap's algorithm written out for item: through
// heap.Interface every Push boxed its 24-byte item into an interface (an
// allocation per item) and every comparison was a dynamic call
// (BENCHMARKS.md "stamps29": three of the engine's allocations per
// transaction at the serializable levels, five at the snapshot levels,
// with the pends below). The layout of q is the one container/heap would give for
// the same calls, so a checkpoint stores and restores it as before.
type items struct {
	e *Engine
	q []item
}

func (h *items) Len() int { return len(h.q) }

// push adds x (container/heap.Push). The sifts move the other items
// into a hole and write x once, where container/heap swaps at each level
// (two writes of an item, and its pointer's write barriers, per level):
// the comparisons are container/heap's, each against x where it sat at
// q[i], so q ends in container/heap's layout (TestItemsAsContainerHeap).
func (h *items) push(x item) {
	h.q = append(h.q, x)
	q := h.q
	j := len(q) - 1
	for j > 0 {
		i := (j - 1) / 2
		if !h.e.less(x, q[i]) {
			break
		}
		q[j] = q[i]
		j = i
	}
	q[j] = x
}

// pop removes and returns the least item (container/heap.Pop: the last
// item moves to the root and down).
func (h *items) pop() item {
	q := h.q
	n := len(q) - 1
	top, x := q[0], q[n]
	i := 0
	for {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && h.e.less(q[j2], q[j]) {
			j = j2
		}
		if !h.e.less(q[j], x) {
			break
		}
		q[i] = q[j]
		i = j
	}
	if n > 0 {
		q[i] = x
	}
	q[n] = item{}
	h.q = q[:n]
	return top
}

// member is a committed member of a session the fast path has seen.
type member struct {
	start, cts, sts int64
}

// session holds the latest committed members of a session in start order
// (release order is start order, but for a late member and what is
// released after it): up to 2*keepMembers, trimmed to keepMembers, cut
// saying that earlier ones were dropped.
type session struct {
	m   []member
	cut bool
}

// keepMembers is how many members of a session the fast path keeps to
// place a late one among: a member that starts before all of them, once
// some were dropped, falls back. At a tick of 100 ms and clients that
// finish a transaction every few milliseconds, a few dozen cover the
// members a tick releases.
const keepMembers = 64

// placeInSession checks session order for a committed member t with
// stamps p against the members seen (each earlier one's commit before
// t's commit, at the snapshot levels before t's snapshot, and t's before
// each later one's) and records it. Stamps that keep session order are
// monotone along the start order, so only t's neighbours are asked.
func (e *Engine) placeInSession(t *history.Txn, p *pend) string {
	s := e.sessions[t.Session]
	if s == nil {
		s = &session{}
		e.sessions[t.Session] = s
	}
	i := len(s.m)
	for i > 0 && s.m[i-1].start >= t.Start {
		i--
	}
	switch {
	case i < len(s.m) && s.m[i].start == t.Start:
		return "two transactions of session " + t.Session + " start at one instant (session order by input position)"
	case i == 0 && s.cut:
		return "txn " + t.ID + " starts before the members kept of its session"
	case i > 0 && (!e.si && p.cts < s.m[i-1].cts || e.si && p.sts <= s.m[i-1].cts):
		return "txn " + t.ID + "'s stamps put it before an earlier transaction of its session"
	case i < len(s.m) && (!e.si && s.m[i].cts < p.cts || e.si && s.m[i].sts <= p.cts):
		return "txn " + t.ID + "'s stamps put it after a later transaction of its session"
	}
	s.m = slices.Insert(s.m, i, member{start: t.Start, cts: p.cts, sts: p.sts})
	if len(s.m) == 2*keepMembers {
		s.m = s.m[:copy(s.m, s.m[keepMembers:])]
		s.cut = true
	}
	return ""
}

// admit takes a released transaction into the fast path: it checks what
// can be checked at arrival (F2: the frontier and session order) and
// queues its items. It returns why the fast path cannot go on, or "".
//
// A late one (a committed writer the window set aside as late, F4 in
// doc.go) may start before transactions already released: the frontier
// check holds it as any other (an item below the frontier was replayed
// already; a commit_ts equal to the frontier is a tie, which the stamps
// leave unordered, and the replay's checks hold whichever order it
// takes), and it takes its place among the members of its session by its
// start (placeInSession). It is never closed (the window never
// released it), so it does not move the frontier.
//
// ids are the log's numbers of t's ops' keys (callLog.keyIDs): the
// replay indexes the keys' states by them.
func (e *Engine) admit(t *history.Txn, f *history.Facts, seq int64, late bool, ids []int32) string {
	if t.Status != history.Committed {
		// Aborted and unknown transactions take no part in the witness
		// (the completion in which no unknown one committed is tried); a
		// read that needs one fails the replay.
		return ""
	}
	need := history.HasCommitTS
	if e.si {
		need |= history.HasStartTS
	}
	if f.Has&need != need {
		return "committed txn " + t.ID + " has no commit_ts" + map[bool]string{true: " and start_ts", false: ""}[e.si]
	}
	p := e.newPend()
	*p = pend{t: *t, ids: append(p.ids[:0], ids...), cts: f.CommitTS, sts: f.StartTS, seq: seq}
	first := p.cts // the item of p that must not sort before the frontier
	if e.si {
		first = p.sts
	}
	if e.haveF && (first < e.frontier || e.si && first == e.frontier) && e.naive&naiveArrival == 0 {
		if late {
			return "late txn " + t.ID + "'s stamps put it before items already replayed"
		}
		return "txn " + t.ID + "'s stamps put it before a transaction that finished before it began"
	}
	if e.opts.Level.SessionOrder() && t.HasSession {
		if why := e.placeInSession(t, p); why != "" {
			return why
		}
	}
	if e.si {
		e.queue.push(item{stamp: p.sts, p: p})
		p.items++
	}
	e.queue.push(item{stamp: p.cts, commit: true, p: p})
	p.items++
	if !late {
		e.open[t.ID] = p.cts
	}
	return ""
}

// closed moves the frontier: a time-closed committed transaction
// precedes in real time every transaction still to come (F1).
func (e *Engine) closed(cts int64) {
	if !e.haveF || cts > e.frontier {
		e.frontier, e.haveF = cts, true
	}
}

// advance replays every queued item at or below the frontier (all of
// them at the end of the input). It returns why the replay failed, or "".
func (e *Engine) advance() string {
	for e.queue.Len() > 0 {
		it := e.queue.q[0]
		if !e.ended && (!e.haveF || it.stamp > e.frontier) && e.naive&naiveFrontier == 0 {
			return ""
		}
		e.queue.pop()
		var why string
		switch {
		case !e.si:
			why = e.serial(it.p)
		case it.commit:
			why = e.commit(it.p)
		default:
			why = e.begin(it.p)
		}
		if why != "" {
			return why
		}
		e.replayed++
		if it.p.items--; it.p.items == 0 {
			e.free(it.p)
		}
	}
	return ""
}

// precedesSome is the real-time check against the transactions already
// placed after t: t must not have ended (widened by Δ twice) at or before
// the latest start among them. It is Options.Precedes without its one
// concurrent corner (two zero-length transactions at one instant), so it
// may fail where the level would not: that costs a fallback, never a
// wrong pass.
func (e *Engine) precedesSome(t *history.Txn) bool {
	return e.opts.Level.RealTime() && e.placed && t.End <= e.maxStart-2*e.opts.Skew && e.naive&naiveRealTime == 0
}

func (e *Engine) place(t *history.Txn) {
	if !e.placed || t.Start > e.maxStart {
		e.maxStart, e.placed = t.Start, true
	}
}

// serial replays p at its place in the commit order: its reads against
// the state so far (its own writes applied as it goes: it runs alone).
func (e *Engine) serial(p *pend) string {
	t := &p.t
	if e.precedesSome(t) {
		return "commit_ts puts txn " + t.ID + " after a transaction that began after it ended"
	}
	for n := range t.Ops {
		op := &t.Ops[n]
		id := p.ids[n]
		k := e.state(id)
		if !e.use(id, k, op) {
			return "key " + string(op.Key) + " is used as a list and as a register"
		}
		switch op.Kind {
		case history.Read:
			if !e.readOK(id, k, op, nil) {
				return "txn " + t.ID + " reads " + op.String() + ", not what the commit_ts order gives"
			}
		default:
			k.apply(op, p)
		}
	}
	e.place(t)
	return ""
}

// own is a transaction's own writes of one key so far (snapshot levels:
// they are applied at its commit, but its later reads see them).
type own struct {
	id   int32 // the key's id (not a *keyState: e.keys may grow and move)
	reg  bool
	val  history.Value
	apps []history.Value
}

// begin replays p's reads against its snapshot: every commit with a
// smaller stamp has been applied, none other, and its own writes on top.
func (e *Engine) begin(p *pend) string {
	t := &p.t
	mine := e.own[:0]
	for n := range t.Ops {
		op := &t.Ops[n]
		id := p.ids[n]
		k := e.state(id)
		if !e.use(id, k, op) {
			return "key " + string(op.Key) + " is used as a list and as a register"
		}
		w := -1
		for i := range mine {
			if mine[i].id == id {
				w = i
				break
			}
		}
		switch op.Kind {
		case history.Write:
			if w < 0 {
				mine = append(mine, own{id: id})
				w = len(mine) - 1
			}
			mine[w].reg, mine[w].val = true, op.Value
		case history.Append:
			if w < 0 {
				mine = append(mine, own{id: id})
				w = len(mine) - 1
			}
			mine[w].apps = append(mine[w].apps, op.Value)
		default:
			var o *own
			if w >= 0 {
				o = &mine[w]
			}
			if !e.readOK(id, k, op, o) {
				return "txn " + t.ID + " reads " + op.String() + ", not what its snapshot at start_ts holds"
			}
		}
	}
	for i := range mine {
		mine[i] = own{apps: mine[i].apps[:0]}
	}
	e.own = mine
	e.place(t)
	return ""
}

// commit checks first committer wins and the level's real time at p's
// commit, then applies its writes.
func (e *Engine) commit(p *pend) string {
	t := &p.t
	if e.precedesSome(t) {
		return "commit_ts of txn " + t.ID + " is not below the start_ts of a transaction that began after it ended"
	}
	for n := range t.Ops {
		op := &t.Ops[n]
		if op.Kind == history.Read {
			continue
		}
		k := e.state(p.ids[n])
		if k.written && k.lastBy != p.seq && k.lastCTS >= p.sts && e.naive&naiveFCW == 0 {
			// The key's latest writer committed inside p's snapshot
			// interval; stamps increase along a key's writers, so the
			// latest is the only one to ask.
			return "txns " + t.ID + " and an earlier writer of key " + string(op.Key) + " overlap (first committer wins)"
		}
		k.apply(op, p)
	}
	return ""
}

// use records the key's kind from op; false on a clash (an input error
// check reports; here it ends the fast path). A register read of Null is
// kind-neutral (it is also the empty list); when a key turns out to be a
// list after such a read bound its unknown initial value, the binding
// becomes the empty list. k is key id's state.
func (e *Engine) use(id int32, k *keyState, op *history.Op) bool {
	var want uint8
	switch {
	case op.Kind == history.Append || op.Kind == history.Read && op.IsList:
		want = kindList
	case op.Kind == history.Write || op.Value != history.Null:
		want = kindReg
	default:
		return true
	}
	switch k.kind {
	case want:
		return true
	case kindNone:
		if want == kindList && k.bound {
			c := &e.cold[id]
			if c.initVal != history.Null {
				return false
			}
			c.init = nil
		}
		k.kind = want
		return true
	}
	return false
}

// apply applies a committed write or append.
func (k *keyState) apply(op *history.Op, p *pend) {
	if op.Kind == history.Write {
		k.val = op.Value
	} else {
		k.apps = append(k.apps, op.Value)
	}
	k.written, k.lastCTS, k.lastBy = true, p.cts, p.seq
}

// readOK reports whether read op returns what the state gives, with o
// the reader's own writes of the key (nil: none); under an unknown
// initial state the first read of an unwritten key binds its value. k is
// key id's state.
func (e *Engine) readOK(id int32, k *keyState, op *history.Op, o *own) bool {
	unknownInit := e.opts.InitialState == history.InitialUnknown
	if k.kind == kindList {
		if !op.IsList && op.Value != history.Null {
			return false
		}
		var tail []history.Value
		if o != nil {
			tail = o.apps
		}
		got := op.List
		n := len(k.apps) + len(tail)
		switch {
		case !unknownInit:
			return len(got) == n && slices.Equal(got[:len(k.apps)], k.apps) && slices.Equal(got[len(k.apps):], tail)
		case k.bound:
			init := e.cold[id].init
			m := len(init)
			return len(got) == m+n && slices.Equal(got[:m], init) && slices.Equal(got[m:m+len(k.apps)], k.apps) && slices.Equal(got[m+len(k.apps):], tail)
		default:
			if len(got) < n {
				return false
			}
			m := len(got) - n
			if !slices.Equal(got[m:m+len(k.apps)], k.apps) || !slices.Equal(got[m+len(k.apps):], tail) {
				return false
			}
			e.cold[id].init, k.bound = slices.Clone(got[:m]), true
			return true
		}
	}
	switch {
	case o != nil && o.reg:
		return op.Value == o.val
	case k.written || !unknownInit:
		return op.Value == k.val
	case k.bound:
		return op.Value == e.cold[id].initVal
	default:
		e.cold[id].initVal, k.bound = op.Value, true
		return true
	}
}

// state returns the state of key id, creating it (and those of the ids
// below it the replay has not met yet: ids are given at release, in
// release order, which is not the witness order). Keys are numbered by
// the call log (callLog.keyIDs: a stampcheck.KeyIndex, a pointer table
// over the decoder's interned keys) when it writes the release, and the
// pend keeps the numbers, so the replay looks no key up: its states are
// one slice indexed by id. The pointer is good until the next call (a
// new key may move the slice): what outlives one op keeps the id.
func (e *Engine) state(id int32) *keyState {
	for int(id) >= len(e.keys) {
		e.keys = append(e.keys, keyState{val: history.Null})
		e.cold = append(e.cold, keyCold{initVal: history.Null})
	}
	return &e.keys[id]
}
