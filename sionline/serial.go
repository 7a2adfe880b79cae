package sionline

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// A serial witness from client time for the screen (docs/SEMANTICS.md §5
// "A serial witness for the screen").
//
// The screen's verdict used to come from incremental's SI search, which
// encodes the screen afresh at every step: a cost per step proportional
// to the window, with the solver's constants (BENCHMARKS.md, siflake:
// the SI encoding was a third of the run). Most screens of a healthy
// stream are serializable in an order that client time nearly dictates,
// and a serial order is a completion at strong snapshot isolation: each
// transaction's begin and commit adjacent, every read seeing the last
// version committed before it, no two writers of a key overlapping, and
// real time kept because the order extends it. serialWitness builds such
// an order by executing the screen's transactions one at a time in a
// greedy sweep; each read is compared with the state the order gives, so
// an order it returns is a witness by construction, and a screen it
// cannot order goes to the search as before (nil says nothing about the
// screen). It never decides that a screen is invalid.
//
// Where no serial step fits, a transaction may begin in the past: its
// reads at the state after an earlier commit, its commit now, as SI's
// own witness has it (docs/SEMANTICS.md §5 "Begin and commit apart: a
// begin in the past"). A long reader beside a blind writer, or a write
// skew, then has an order; no commit between its begin and its commit
// may write a key it writes, or precede it in real time or its session.

// NoSerialWitness turns the serial witness off: every screen goes to
// the search (the differential tests run both ways).
var NoSerialWitness = false

// serialCheck, when set (tests), is given every serial witness the
// screen took, with the screen and the options checked: the tests
// replay it against the oracle's rules.
var serialCheck func(h *history.History, opts history.Options, witness []string)

// serialTxn is one participant of the sweep: a committed transaction of
// the screen, or an unknown one whose version a read of the screen
// expects (taken as committed); others are left out (aborted).
type serialTxn struct {
	t   *history.Txn
	kid []int32 // the dense ids of t's ops' keys (sweepKey)
	end int64   // effective end: +∞ for an unknown outcome in doubt
	// pred is the participant just before it in its session (by start),
	// or -1.
	pred int
	done bool
}

// serialWitness returns a serial order of the screen h as begin and
// commit events, the ghost first when h has it, or nil when the sweep
// cannot order it. h is the screen as instance builds it (reads of open
// members already dropped; the ghost, if any, anywhere in it, with or
// without its ops); base is the ghost whose versions the screen's ghost
// holds (nil when there is none), looked up per key instead of run: a
// step then costs the members, not the ghost's entries on their keys.
//
// The sweep: the participants are due in the order of their effective
// ends. At each turn the candidates are the participants not yet run
// that nothing not yet run precedes in real time (or session order); of
// these it runs the first, by end, whose reads match the state and whose
// writes overwrite no version another candidate still reads, else the
// first whose reads match, else it gives up. Register keys and list keys,
// under the empty initial state or an unknown one (the first read of a
// key nothing wrote fixes its initial value or list, unless
// SerialEmptyOnly; docs/SEMANTICS.md §5 "The serial witness under an
// unknown initial state"); a written null, a key both written
// and appended, or a non-list read of a list key make it give up (the
// search decides them). Cost: O(n log n) for the sorts, and per turn a
// scan of the candidates (the transactions that overlap the earliest
// end, about the number of sessions). A turn with no safe serial pick
// also walks back over at most maxPastWalk commits per candidate
// (pastBegin), and each register write and list append is logged with
// its commit's number (a map append) for the state at a snapshot.
func (e *Engine) serialWitness(h *history.History, base *ghost) []string {
	unknownInit := e.opts.InitialState == history.InitialUnknown
	if (e.opts.InitialState != history.InitialEmpty && !(unknownInit && !SerialEmptyOnly)) || len(h.Txns) == 0 {
		return nil
	}
	// The ghost, wherever h has it, is no participant: it runs first
	// (W3: it precedes every member), and its versions are base's,
	// looked up per key (the screen may carry it without its ops).
	ghostAt := -1
	nops := 0
	for i := range h.Txns {
		if h.Txns[i].ID == ghostName {
			if base == nil {
				return nil
			}
			ghostAt = i
			continue
		}
		nops += len(h.Txns[i].Ops)
	}
	// Dense key ids: each key the screen's ops name gets an index into
	// ks, looked up once per op here; everything the sweep keeps per key
	// (the ghost's entries, the state, the indexes below) is a field of
	// ks, not a map keyed by the key's text (docs/SEMANTICS.md §5 "Begin
	// and commit apart: a begin in the past", what it costs). kid[i]
	// holds the ids of h.Txns[i]'s ops.
	ids := make(map[history.Key]int32, nops/2+1)
	var keys []history.Key
	flat := make([]int32, nops)
	kid := make([][]int32, len(h.Txns))
	for i := range h.Txns {
		if i == ghostAt {
			continue
		}
		ops := h.Txns[i].Ops
		kid[i], flat = flat[:len(ops):len(ops)], flat[len(ops):]
		for j := range ops {
			k := ops[j].Key
			id, ok := ids[k]
			if !ok {
				id = int32(len(keys))
				ids[k] = id
				keys = append(keys, k)
			}
			kid[i][j] = id
		}
	}
	// Allocated once, in place: a growing slice of these would copy
	// them (and their pointers) at every doubling.
	ks := make([]sweepKey, len(keys))
	for id, k := range keys {
		ks[id].init(k, base, unknownInit)
	}
	// Which keys are lists (appended, or read as lists), and which
	// versions the unknown transactions write: an unknown writer joins
	// the sweep when a read expects one of its versions that no
	// committed transaction also writes.
	type kv struct {
		k int32
		v history.Value
	}
	unknownW := map[kv]uint8{} // bit 1: a read expects it; bit 2: a committed transaction writes it
	for i := range h.Txns {
		if i == ghostAt {
			continue
		}
		t := &h.Txns[i]
		for j, op := range t.Ops {
			switch {
			case op.Kind == history.Append || op.IsList:
				ks[kid[i][j]].list = true
			case op.Kind == history.Write && op.Value == history.Null:
				return nil
			}
			if op.Kind != history.Read && t.Status == history.Unknown {
				unknownW[kv{kid[i][j], op.Value}] = 0
			}
		}
	}
	if base != nil {
		// The ghost is committed: a version it holds needs no unknown
		// writer.
		for x, f := range unknownW {
			if k := &ks[x.k]; (k.hasBase && k.base == x.v) || slices.Contains(k.baseList, x.v) {
				unknownW[x] = f | 2
			}
		}
	}
	for i := range h.Txns {
		if i == ghostAt {
			continue
		}
		t := &h.Txns[i]
		for j, op := range t.Ops {
			k := &ks[kid[i][j]]
			if !op.IsList && op.Kind != history.Append && k.isList() {
				return nil // a register write or read of a list key
			}
			if unknownInit && (op.IsList || op.Kind == history.Append) && k.regInGhost() {
				return nil // a list op on a register the ghost holds
			}
			if len(unknownW) == 0 {
				continue
			}
			switch x := (kv{kid[i][j], op.Value}); {
			case op.Kind != history.Read:
				if f, ok := unknownW[x]; ok && t.Status == history.Committed {
					unknownW[x] = f | 2
				}
			case op.IsList:
				for _, v := range op.List {
					if f, ok := unknownW[kv{x.k, v}]; ok {
						unknownW[kv{x.k, v}] = f | 1
					}
				}
			default:
				if f, ok := unknownW[x]; ok {
					unknownW[x] = f | 1
				}
			}
		}
	}
	var ps []serialTxn
	for i := range h.Txns {
		if i == ghostAt {
			continue
		}
		t := &h.Txns[i]
		if !t.HasTime {
			return nil
		}
		switch t.Status {
		case history.Committed:
		case history.Unknown:
			need := false
			for j, op := range t.Ops {
				if op.Kind != history.Read && unknownW[kv{kid[i][j], op.Value}] == 1 {
					need = true
					break
				}
			}
			if !need {
				continue
			}
		default:
			continue
		}
		ps = append(ps, serialTxn{t: t, kid: kid[i], end: e.opts.EffectiveEnd(t), pred: -1})
	}
	if len(ps) == 0 {
		return nil
	}
	// Start order (stable: release order breaks ties), then session
	// predecessors.
	slices.SortStableFunc(ps, func(a, b serialTxn) int { return cmp.Compare(a.t.Start, b.t.Start) })
	last := map[string]int{}
	for i := range ps {
		if t := ps[i].t; t.HasSession {
			if p, ok := last[t.Session]; ok {
				ps[i].pred = p
			}
			last[t.Session] = i
		}
	}
	byEnd := make([]int, len(ps))
	for i := range byEnd {
		byEnd[i] = i
	}
	slices.SortStableFunc(byEnd, func(a, b int) int { return cmp.Compare(ps[a].end, ps[b].end) })

	// The state: what the participants run so far wrote, over base
	// (sweepKey's rlog, cur and llog). Under an unknown initial state
	// also the initial values and lists the reads run so far fixed
	// (rinit, linit; base's pins before them): the first read of a key
	// nothing wrote fixes its initial value, as the oracle's replay does
	// (docs/SEMANTICS.md §5 "The serial witness under an unknown initial
	// state").
	//
	// regValue is k's current value, and false when it is the initial
	// value of an unknown initial state that no read has fixed yet
	// (any value then reads right, and fixes it).
	regValue := func(k int32) (history.Value, bool) {
		x := &ks[k]
		if n := len(x.rlog); n > 0 {
			return x.rlog[n-1].v, true
		}
		return x.regBefore(unknownInit)
	}
	// initList is k's initial list, and false when it is not fixed yet
	// (unknown initial state only).
	initList := func(k int32) ([]history.Value, bool) {
		if !unknownInit {
			return nil, true
		}
		x := &ks[k]
		if x.hasLinit {
			return x.linit, true
		}
		if x.hasPinList {
			return x.pinList, true
		}
		return nil, false
	}
	listOf := func(k int32) []history.Value {
		if x := &ks[k]; x.hasCur {
			return x.cur
		}
		return ks[k].baseList
	}
	// The versions the participants run so far committed, per key, in
	// commit order (a begin in the past reads the state at an earlier
	// commit: docs/SEMANTICS.md §5 "Begin and commit apart: a begin in
	// the past"). A register's entry holds the value, a list's the
	// length of listOf(k) after the commit; at is the commit's number
	// (1 for the first participant run; 0 is the ghost, base).
	//
	// lastAt is the last entry of vs committed at or before snapshot s.
	lastAt := func(vs []ver, s int) (ver, bool) {
		for q := len(vs) - 1; q >= 0; q-- {
			if int(vs[q].at) <= s {
				return vs[q], true
			}
		}
		return ver{}, false
	}
	// regAt and listAt are regValue and listOf at snapshot s (the state
	// after the s-th commit); s < 0 is the current state.
	regAt := func(k int32, s int) (history.Value, bool) {
		if s < 0 {
			return regValue(k)
		}
		if x, ok := lastAt(ks[k].rlog, s); ok {
			return x.v, true
		}
		return ks[k].regBefore(unknownInit)
	}
	listAt := func(k int32, s int) []history.Value {
		l := listOf(k)
		if s < 0 {
			return l
		}
		if x, ok := lastAt(ks[k].llog, s); ok {
			return l[:x.n:x.n]
		}
		n := len(ks[k].baseList)
		return l[:n:n]
	}
	// reads says whether t's reads match the state: every read, own
	// writes visible, as the serial order would give it. An initial
	// value or list not fixed yet is fixed by t's first read of it, for
	// t's later reads (tent: this call's fixes, a handful).
	type fix struct {
		k    int32
		v    history.Value
		l    []history.Value
		list bool
	}
	var tent []fix
	// awaited says whether a participant not run yet, that ps[i] does
	// not precede, writes v as its last write on register k: ps[i]'s
	// read of v then waits for it rather than fix the initial value to
	// v (the sweep's choice: either is a witness when it completes, and
	// the writer is the source a stream's values nearly always mean).
	var awaited func(i int, k int32, v history.Value) bool
	tentOf := func(k int32) (fix, bool) {
		for _, f := range tent {
			if f.k == k {
				return f, true
			}
		}
		return fix{}, false
	}
	// readsAt is reads at snapshot s (s < 0: the current state).
	var readsAt func(i int, s int) bool
	reads := func(i int) bool { return readsAt(i, -1) }
	readsAt = func(i int, s int) bool {
		t, kid := ps[i].t, ps[i].kid
		tent = tent[:0]
		for j, op := range t.Ops {
			if op.Kind != history.Read {
				continue
			}
			k := kid[j]
			// Own writes and appends before the read, looked up among
			// the ops before it (a handful: no map).
			var own history.Value
			wrote, appended := false, 0
			for jj, o := range t.Ops[:j] {
				if kid[jj] != k {
					continue
				}
				switch o.Kind {
				case history.Write:
					own, wrote = o.Value, true
				case history.Append:
					appended++
				}
			}
			if op.IsList {
				l := listAt(k, s)
				ini, fixed := initList(k)
				if !fixed {
					if f, ok := tentOf(k); ok {
						ini, fixed = f.l, true
					}
				}
				if !fixed {
					if len(op.List) < len(l)+appended {
						return false
					}
					ini = op.List[:len(op.List)-len(l)-appended]
					tent = append(tent, fix{k: k, l: ini, list: true})
				}
				n := len(ini)
				if len(op.List) != n+len(l)+appended || !slices.Equal(op.List[:n], ini) || !slices.Equal(op.List[n:n+len(l)], l) {
					return false
				}
				if appended > 0 && !slices.Equal(op.List[n+len(l):], ownAppends(t.Ops[:j], op.Key, appended)) {
					return false
				}
				continue
			}
			if !wrote {
				v, fixed := regAt(k, s)
				if !fixed {
					if f, ok := tentOf(k); ok {
						v, fixed = f.v, true
					}
				}
				if !fixed {
					if awaited(i, k, op.Value) {
						return false
					}
					tent = append(tent, fix{k: k, v: op.Value})
					continue
				}
				own = v
			}
			if op.Value != own {
				return false
			}
		}
		return true
	}
	// Per participant, each key it reads first (the version before it)
	// and each key it writes, once; per register key the participants
	// that read it first (with the value they read), its writers, per
	// list key its first readers and its appenders (entries of
	// participants run are dropped as met).
	// write is one key a participant writes: its first op on the key,
	// the last value it writes there (registers), the values it appends
	// there (lists).
	type write struct {
		op   int32
		last history.Value
		apps []history.Value
	}
	type use struct {
		first []int32 // op positions of first reads
		write []write
	}
	uses := make([]use, len(ps))
	// The indexes' slices carved out of one array each, sized by a
	// count first (per key a handful of entries: appends from nil were
	// a third of the sweep's time), and each participant's first reads
	// and writes out of arrays of the screen's op count.
	{
		nr := make([]int32, 4*len(ks)) // per key: readers, list readers, writers, appenders
		for i := range ps {
			ops, kid := ps[i].t.Ops, ps[i].kid
			fs := newFirsts(ops)
			for j := range ops {
				k := kid[j]
				switch {
				case ops[j].Kind == history.Read:
					if !fs.first(j) {
						continue
					}
					if ops[j].IsList {
						nr[4*k+1]++
					} else {
						nr[4*k]++
					}
				case !writtenBefore(ops, kid, j):
					if ops[j].Kind == history.Append {
						nr[4*k+3]++
					} else {
						nr[4*k+2]++
					}
				}
			}
		}
		var sr, sl, sw, sa int32
		for k := range ks {
			sr += nr[4*k]
			sl += nr[4*k+1]
			sw += nr[4*k+2]
			sa += nr[4*k+3]
		}
		fr := make([]firstRead, sr)
		ints := make([]int, sl+sw+sa)
		for k := range ks {
			x := &ks[k]
			c := nr[4*k]
			x.readers, fr = fr[:0:c], fr[c:]
			c = nr[4*k+1]
			x.listReaders, ints = ints[:0:c], ints[c:]
			c = nr[4*k+2]
			x.writers, ints = ints[:0:c], ints[c:]
			c = nr[4*k+3]
			x.appenders, ints = ints[:0:c], ints[c:]
		}
	}
	firstArr := make([]int32, 0, nops)
	writeArr := make([]write, 0, nops)
	for i := range ps {
		t, kid := ps[i].t, ps[i].kid
		// Per key met: its position in w (q), or -1 for a key read
		// first and not written so far. Looked up among the writes so
		// far (a participant holds a handful of ops); past smallTxn
		// ops, a map (at).
		w := writeArr[:0:len(t.Ops)]
		uses[i].first = firstArr[:0:len(t.Ops)]
		fs := newFirsts(t.Ops)
		var at map[int32]int
		if len(t.Ops) > smallTxn {
			at = make(map[int32]int, len(t.Ops))
		}
		for j := range t.Ops {
			op := &t.Ops[j]
			k := kid[j]
			q := -1
			if at != nil {
				if y, ok := at[k]; ok {
					q = y
				}
			} else {
				for y := range w {
					if kid[w[y].op] == k {
						q = y
						break
					}
				}
			}
			switch {
			case op.Kind == history.Read:
				if !fs.first(j) {
					continue // a later or an internal read
				}
				uses[i].first = append(uses[i].first, int32(j))
				if op.IsList {
					ks[k].listReaders = append(ks[k].listReaders, i)
				} else {
					ks[k].readers = append(ks[k].readers, firstRead{i, op.Value})
				}
			case q >= 0:
				w[q].last = op.Value
				if op.Kind == history.Append {
					w[q].apps = append(w[q].apps, op.Value)
				}
			default:
				if at != nil {
					at[k] = len(w)
				}
				x := write{op: int32(j), last: op.Value}
				if op.Kind == history.Append {
					x.apps = []history.Value{op.Value}
					ks[k].appenders = append(ks[k].appenders, i)
				} else {
					ks[k].writers = append(ks[k].writers, i)
				}
				w = append(w, x)
			}
		}
		uses[i].write = w
		// The rest of the arrays for the next participant (these never
		// grow again).
		writeArr = writeArr[len(w):len(w)]
		firstArr = firstArr[len(uses[i].first):len(uses[i].first)]
	}
	awaited = func(i int, k int32, v history.Value) bool {
		t := ps[i].t
		for _, w := range ks[k].writers {
			if ps[w].done || w == i || e.opts.Precedes(t, ps[w].t) {
				continue
			}
			for _, x := range uses[w].write {
				if ps[w].kid[x.op] == k {
					if x.last == v {
						return true
					}
					break
				}
			}
		}
		return false
	}
	// pending drops the participants run from xs, in place.
	pending := func(xs []int) []int {
		out := xs[:0]
		for _, x := range xs {
			if !ps[x].done {
				out = append(out, x)
			}
		}
		return out
	}
	// clobbers says whether running ps[i] now spoils a read not run yet:
	// it overwrites a register version a participant that real time does
	// not order after ps[i] still reads first; it writes a version a
	// participant reads first while another writer of the key not run
	// must precede that reader (and would overwrite it); or it appends to
	// a list so that the list is no longer a prefix of a first read the
	// current list is a prefix of.
	clobbers := func(i int) bool {
		t := ps[i].t
		for _, x := range uses[i].write {
			op := &t.Ops[x.op]
			k := ps[i].kid[x.op]
			if op.Kind == history.Write {
				cur, fixed := regValue(k)
				// Not fixed: the initial value, which every first
				// reader of k may still want.
				for _, r := range ks[k].readers {
					if (!fixed || r.v == cur) && r.i != i && !ps[r.i].done && !e.opts.Precedes(t, ps[r.i].t) {
						return true
					}
				}
				last, any := x.last, false
				for _, r := range ks[k].readers {
					if r.v == last {
						any = true
						break
					}
				}
				if !any {
					continue
				}
				ws := pending(ks[k].writers)
				ks[k].writers = ws
				for _, r := range ks[k].readers {
					if r.v != last || r.i == i || ps[r.i].done {
						continue
					}
					for _, w := range ws {
						if w != i && e.opts.Precedes(ps[w].t, ps[r.i].t) {
							return true
						}
					}
				}
				continue
			}
			rs := pending(ks[k].listReaders)
			ks[k].listReaders = rs
			if len(rs) == 0 {
				continue
			}
			cur := listOf(k)
			if ini, fixed := initList(k); !fixed {
				// The initial list, not fixed: a first read ending in
				// the current appends may still be read, one ending in
				// them no longer once these go after them.
				after := append(cur[:len(cur):len(cur)], x.apps...)
				for _, r := range rs {
					if r == i {
						continue
					}
					for _, f := range uses[r].first {
						if rd := &ps[r].t.Ops[f]; ps[r].kid[f] == k && hasSuffix(rd.List, cur) && !hasSuffix(rd.List, after) {
							return true
						}
					}
				}
				continue
			} else if len(ini) > 0 {
				cur = append(slices.Clone(ini), cur...)
			}
			after := append(cur[:len(cur):len(cur)], x.apps...)
			for _, r := range rs {
				if r == i {
					continue
				}
				for _, f := range uses[r].first {
					if rd := &ps[r].t.Ops[f]; ps[r].kid[f] == k && hasPrefix(rd.List, cur) && !hasPrefix(rd.List, after) {
						return true
					}
				}
			}
		}
		return false
	}
	// preferLower is the sweep's tie-break between writers of a register
	// key, or appenders to a list key, that client time leaves unordered
	// (docs/SEMANTICS.md §5 "The sweep orders concurrent writers by their
	// values"): from the safe pick p, while another safe candidate
	// writes, on a register key p writes, a smaller integer than p's last
	// write there, or appends to a list key p appends to a smaller
	// integer first than p does, that one runs first. Which safe candidate
	// runs is the sweep's free choice: the order stays a witness by
	// construction, only which completion it finds changes.
	inCand := make([]int, len(ps)) // turn while a candidate this turn
	turn := 0
	var lower []int
	preferLower := func(p int, cands []int) int {
		turn++
		for _, c := range cands {
			inCand[c] = turn
		}
		for range cands {
			next := -1
			for _, x := range uses[p].write {
				op := &ps[p].t.Ops[x.op]
				k := ps[p].kid[x.op]
				// A register key: p's last write there; a list key: p's
				// first append there.
				mine, others := x.last, ks[k].writers
				if op.Kind == history.Append {
					mine, others = x.apps[0], ks[k].appenders
				}
				if !isInt(mine) {
					continue
				}
				// A register's version now, when it is a fixed integer:
				// a smaller candidate value that does not pass it is a
				// value the key held before (a repeat), which says
				// nothing of the order (docs/SEMANTICS.md §5 "A repeated
				// value gives no order (si31)").
				var floor history.Value
				if op.Kind == history.Write && !NoRepeatValueOrder {
					if cur, fixed := regValue(k); fixed && isInt(cur) {
						floor = cur
					}
				}
				// The other candidates writing the key a smaller integer,
				// gathered first: clobbers compacts the writers in place.
				lower = lower[:0]
				for _, c := range others {
					if c == p || ps[c].done || inCand[c] != turn {
						continue
					}
					for _, y := range uses[c].write {
						o := &ps[c].t.Ops[y.op]
						if ps[c].kid[y.op] != k || o.Kind != op.Kind {
							continue
						}
						theirs := y.last
						if o.Kind == history.Append {
							theirs = y.apps[0]
						}
						if intLess(theirs, mine) && (floor == "" || intLess(floor, theirs)) {
							lower = append(lower, c)
						}
						break
					}
				}
				for _, c := range lower {
					if reads(c) && !clobbers(c) {
						next = c
						break
					}
				}
				if next >= 0 {
					break
				}
			}
			if next < 0 {
				return p
			}
			inCand[p] = 0 // never back to a writer already passed over
			p = next
		}
		return p
	}
	// run applies ps[i]'s writes and appends as the at-th commit. With
	// fixReads, a read of an initial value or list not fixed fixes it as
	// the current state has it (ps[i] begins at the current state); a
	// begin in the past fixes them from tent instead (emit).
	run := func(i int, at int, fixReads bool) {
		for j, op := range ps[i].t.Ops {
			k := ps[i].kid[j]
			x := &ks[k]
			switch op.Kind {
			case history.Read:
				// The first read of an initial value or list not fixed
				// fixes it (reads checked it against the state; own
				// writes and appends before it are in the state
				// already).
				if !unknownInit || !fixReads {
					continue
				}
				if op.IsList {
					if _, fixed := initList(k); !fixed {
						l := listOf(k)
						x.linit, x.hasLinit = op.List[:len(op.List)-len(l)], true
					}
				} else if _, fixed := regValue(k); !fixed {
					x.rinit, x.hasRinit = op.Value, true
				}
			case history.Write:
				x.rlog = append(x.rlog, ver{at: int32(at), v: op.Value})
			case history.Append:
				l := listOf(k)
				x.cur, x.hasCur = append(l[:len(l):len(l)], op.Value), true
				x.llog = append(x.llog, ver{at: int32(at), n: int32(len(l) + 1)})
			}
		}
	}
	out := make([]string, 0, 2*len(ps))
	// Skip lists over the participants not run, in start order (nxS)
	// and by end (nxE): find(nx, i) is the first position from i whose
	// participant has not run, path-compressed, so that a participant
	// that stays unrun for long does not make every turn walk over those
	// run since.
	nxS := make([]int, len(ps)+1)
	nxE := make([]int, len(ps)+1)
	posE := make([]int, len(ps))
	for q := range nxS {
		nxS[q], nxE[q] = q, q
	}
	for q, i := range byEnd {
		posE[i] = q
	}
	find := func(nx []int, q int) int {
		r := q
		for nx[r] != r {
			r = nx[r]
		}
		for nx[q] != r {
			nx[q], q = r, nx[q]
		}
		return r
	}
	// committed[j] is the participant of the j-th commit (committed[0]:
	// the ghost, or nothing); bsnap[i] the snapshot participant i began
	// at, the number of the commit its begin follows.
	committed := make([]int, 1, len(ps)+1)
	committed[0] = -1
	bsnap := make([]int32, len(ps))
	past, npast := false, 0
	// emit runs ps[i]: its begin at snapshot s (s < 0: the current
	// state, a serial step), its commit now.
	emit := func(i, s int) {
		ps[i].done = true
		nxS[i], nxE[posE[i]] = i+1, posE[i]+1
		at := len(committed)
		committed = append(committed, i)
		if s < 0 {
			bsnap[i] = int32(at - 1)
			run(i, at, true)
			out = append(out, "begin "+ps[i].t.ID, "commit "+ps[i].t.ID)
			return
		}
		// A begin in the past: its reads checked at s again, for tent
		// (the fixes of initial values they make), which then holds.
		if !readsAt(i, s) {
			panic("sionline: a begin in the past that no longer reads right")
		}
		for _, f := range tent {
			if x := &ks[f.k]; f.list {
				x.linit, x.hasLinit = f.l, true
			} else {
				x.rinit, x.hasRinit = f.v, true
			}
		}
		past = true
		npast++
		bsnap[i] = int32(s)
		run(i, at, false)
	}
	// pastBegin returns a snapshot s before the current state at which
	// ps[i] may begin and still commit now, or -1 (docs/SEMANTICS.md §5
	// "Begin and commit apart: a begin in the past"): walking back over
	// the commits from the last, it stops at the first that must
	// precede ps[i]'s begin (its session predecessor, a transaction
	// that precedes it in real time) or that writes a key ps[i] writes
	// (the two would overlap); before each commit that writes a key
	// ps[i] reads, the reads are tried at the snapshot just before it.
	pastBegin := func(i int) int {
		t := ps[i].t
		n := len(committed) - 1
		for j := n; j >= 1 && n-j < maxPastWalk; j-- {
			x := committed[j]
			if x == ps[i].pred || e.opts.Precedes(ps[x].t, t) {
				return -1
			}
			touches := false
			for _, wx := range uses[x].write {
				kx := ps[x].kid[wx.op]
				for _, wi := range uses[i].write {
					if ps[i].kid[wi.op] == kx {
						return -1
					}
				}
				for _, f := range uses[i].first {
					if ps[i].kid[f] == kx {
						touches = true
					}
				}
			}
			if touches && readsAt(i, j-1) {
				return j - 1
			}
		}
		return -1
	}
	// blocked says whether a participant not run precedes ps[i] in real
	// time: those by end from the earliest not run on, while their end
	// is at or before ps[i]'s start less 2Δ.
	blocked := func(i int) bool {
		s := ps[i].t.Start - 2*e.opts.Skew
		for q := find(nxE, 0); q < len(ps); q = find(nxE, q+1) {
			a := byEnd[q]
			if ps[a].end > s {
				return false
			}
			if a != i && e.opts.Precedes(ps[a].t, ps[i].t) {
				return true
			}
		}
		return false
	}
	if ghostAt >= 0 {
		// The ghost precedes every member (W3): it runs first, its
		// state being base's.
		out = append(out, "begin "+ghostName, "commit "+ghostName)
	}
	var cands []int
	for range ps {
		// The candidates: in start order, up to the first whose start
		// the earliest end not run rules out (every later one starts no
		// earlier).
		minEnd := ps[byEnd[find(nxE, 0)]].end
		cands = cands[:0]
		for i := find(nxS, 0); i < len(ps); i = find(nxS, i+1) {
			if blocked(i) {
				if ps[i].t.Start-2*e.opts.Skew >= minEnd {
					break
				}
				continue
			}
			if p := ps[i].pred; p >= 0 && !ps[p].done {
				continue
			}
			cands = append(cands, i)
		}
		// By end, the first that reads right and clobbers no other
		// candidate's read; else the first that reads right at an
		// earlier snapshot and clobbers none (a begin in the past); else
		// the first that reads right; else the first that reads right
		// at an earlier snapshot.
		slices.SortFunc(cands, func(a, b int) int { return cmp.Compare(ps[a].end, ps[b].end) })
		pick := -1
		for _, c := range cands {
			if !reads(c) {
				continue
			}
			if !clobbers(c) {
				pick = c
				break
			}
			if pick == -1 {
				pick = -2 - c // the fallback, kept apart from a safe pick
			}
		}
		if pick >= 0 {
			if !NoValueOrder {
				pick = preferLower(pick, cands)
			}
			emit(pick, -1)
			continue
		}
		if !NoPastBegin {
			pp, ps0 := -1, -1 // the first past begin that clobbers a read
			done := false
			for _, c := range cands {
				if reads(c) {
					continue // it reads right now, and clobbers
				}
				s := pastBegin(c)
				if s < 0 {
					continue
				}
				if !clobbers(c) {
					emit(c, s)
					done = true
					break
				}
				if pp < 0 {
					pp, ps0 = c, s
				}
			}
			if done {
				continue
			}
			if pick == -1 && pp >= 0 {
				emit(pp, ps0)
				continue
			}
		}
		if pick == -1 {
			return nil
		}
		emit(-2-pick, -1)
	}
	if past {
		e.pastBegins += npast
		// Begins apart from their commits: the events rebuilt by
		// snapshot, each begin after the commit it follows.
		begins := make([][]int, len(committed))
		for _, i := range committed[1:] {
			begins[bsnap[i]] = append(begins[bsnap[i]], i)
		}
		out = out[:0]
		if ghostAt >= 0 {
			out = append(out, "begin "+ghostName, "commit "+ghostName)
		}
		for s := range committed {
			for _, i := range begins[s] {
				out = append(out, "begin "+ps[i].t.ID)
			}
			if s+1 < len(committed) {
				out = append(out, "commit "+ps[committed[s+1]].t.ID)
			}
		}
	}
	return out
}

// NoPastBegin keeps the sweep serial: no begin in the past (the tests'
// reference, and the naive model of the screens it now orders).
var NoPastBegin = false

// maxPastWalk bounds how many commits a begin in the past walks back
// over (precision only: a snapshot further back is not tried).
var maxPastWalk = 512

// sweepKey is what the sweep keeps per key of the screen, under the
// key's dense id: the ghost's entries (looked up once per key, not per
// op), the state the participants run so far left, and the indexes of
// who reads and writes the key.
type sweepKey struct {
	list bool // appended or read as a list in the screen
	// The ghost's entries: its version (base), its list (baseList, nil
	// for none), and under an unknown initial state its pin.
	base, pin         history.Value
	hasBase, hasPin   bool // hasPin: a register pin
	baseList, pinList []history.Value
	hasList           bool // the ghost holds a list for the key
	hasPinList        bool
	// The state: the versions committed by the participants run so far
	// (rlog: register values; llog: list lengths, cur the list), and
	// the initial value or list the reads fixed.
	rlog, llog []ver
	cur        []history.Value
	hasCur     bool
	rinit      history.Value
	hasRinit   bool
	linit      []history.Value
	hasLinit   bool
	// The indexes: the participants reading the key first as a
	// register (with the value read) or as a list, writing it, and
	// appending to it.
	readers            []firstRead
	listReaders        []int
	writers, appenders []int
}

// ver is one version of a key committed by the sweep: at is the
// commit's number, v a register's value, n a list's length after it.
type ver struct {
	at int32
	n  int32
	v  history.Value
}

// firstRead is a participant (i) reading a register key first, and the
// value it reads (v).
type firstRead struct {
	i int
	v history.Value
}

// init looks up k's entries in the ghost base (nil: none).
func (x *sweepKey) init(k history.Key, base *ghost, unknownInit bool) {
	if base == nil {
		return
	}
	x.base, x.hasBase = base.Reg[k]
	x.baseList, x.hasList = base.List[k]
	if unknownInit {
		if p, ok := base.Pin[k]; ok {
			if p.IsList {
				x.pinList, x.hasPinList = p.List, true
			} else {
				x.pin, x.hasPin = p.Value, true
			}
		}
	}
}

// writtenBefore says whether an op before ops[j] writes or appends to
// its key (kid: the ops' key ids).
func writtenBefore(ops []history.Op, kid []int32, j int) bool {
	for i := 0; i < j; i++ {
		if kid[i] == kid[j] && ops[i].Kind != history.Read {
			return true
		}
	}
	return false
}

// isList says whether the key is a list: the screen appends to it or
// reads it as one, or the ghost holds a list for it (or, under an
// unknown initial state, pins an initial list).
func (x *sweepKey) isList() bool { return x.list || x.hasList || x.hasPinList }

// regInGhost says whether the ghost holds the key as a register (a
// version, or a fixed initial value under an unknown initial state): a
// list op on it sends the screen to the search.
func (x *sweepKey) regInGhost() bool { return x.hasBase || x.hasPin }

// regBefore is the key's value before every commit of the sweep: the
// ghost's version, else the empty initial state's null, else the
// ghost's pin, else the initial value a read fixed (false: not fixed).
func (x *sweepKey) regBefore(unknownInit bool) (history.Value, bool) {
	if x.hasBase {
		return x.base, true
	}
	if !unknownInit {
		return history.Null, true
	}
	if x.hasPin {
		return x.pin, true
	}
	return x.rinit, x.hasRinit
}

// firsts says, per op of one transaction, whether it is the first op
// on its key. A transaction holds a handful of ops, so first scans the
// ops before (a map per transaction per step was most of the sweep's
// and summarize's map growth); past smallTxn ops, where the scan's
// quadratic cost would show, the answers are computed once with a map.
// The answers are the same either way.
type firsts struct {
	ops  []history.Op
	flag []bool // nil: scan
}

// smallTxn is the most ops a transaction may have for firsts and the
// sweep to scan (a var: the tests set it to 0 to run the map paths).
var smallTxn = 32

func newFirsts(ops []history.Op) firsts {
	f := firsts{ops: ops}
	if len(ops) > smallTxn {
		f.flag = make([]bool, len(ops))
		seen := make(map[history.Key]bool, len(ops))
		for j := range ops {
			f.flag[j] = !seen[ops[j].Key]
			seen[ops[j].Key] = true
		}
	}
	return f
}

// first says whether ops[j] is the first op on its key.
func (f firsts) first(j int) bool {
	if f.flag != nil {
		return f.flag[j]
	}
	k := f.ops[j].Key
	for i := 0; i < j; i++ {
		if f.ops[i].Key == k {
			return false
		}
	}
	return true
}

// hasSuffix says whether l ends with p.
func hasSuffix(l, p []history.Value) bool {
	return len(l) >= len(p) && slices.Equal(l[len(l)-len(p):], p)
}

// SerialEmptyOnly makes the sweep give up under an unknown initial
// state, as it did before it fixed initial values (the tests' reference
// path: the search decides those screens).
var SerialEmptyOnly = false

// hasPrefix says whether l begins with p.
func hasPrefix(l, p []history.Value) bool {
	return len(l) >= len(p) && slices.Equal(l[:len(p)], p)
}

// ownAppends returns the first n values ops append to k.
func ownAppends(ops []history.Op, k history.Key, n int) []history.Value {
	out := make([]history.Value, 0, n)
	for _, op := range ops {
		if op.Kind == history.Append && op.Key == k && len(out) < n {
			out = append(out, op.Value)
		}
	}
	return out
}

// NoValueOrder turns off the sweep's preference for the smaller integer
// among concurrent writers of a key (preferLower): the tests' naive
// model, and a switch for streams whose values do not grow with commit
// order (it is precision only either way).
var NoValueOrder = false

// NoRepeatValueOrder lets preferLower prefer a register value that does
// not pass the key's current version (the rule before docs/SEMANTICS.md
// §5 "A repeated value gives no order (si31)"; the tests compare).
var NoRepeatValueOrder = false

// isInt says whether v is a non-negative decimal integer without a
// leading zero (how such values compare: intLess).
func isInt(v history.Value) bool {
	if len(v) == 0 || len(v) > 18 || (len(v) > 1 && v[0] == '0') {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// intLess compares two values as non-negative integers; false unless
// both are (isInt).
func intLess(a, b history.Value) bool {
	if !isInt(a) || !isInt(b) {
		return false
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
