package stampcheck

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
)

// SnapshotRules are the orders a snapshot level adds to plain snapshot
// isolation: strong session SI wants each transaction's snapshot to hold
// its session's earlier transactions (Session), strong SI every
// transaction that finished before it began, widened by Δ (RealTime: C_i
// before B_j), GSI only that such a transaction committed first
// (CommitRealTime: C_i before C_j). RulesFor gives a level's.
type SnapshotRules struct {
	Session        bool
	RealTime       bool
	CommitRealTime bool
	_              struct{}
}

// RulesFor maps a level of the snapshot family to its rules
// (docs/SEMANTICS.md §10 "The snapshot levels with facts"): its session
// order as Session; its real-time order as RealTime when the level puts
// C_i before B_j (strong SI) and as CommitRealTime when it puts C_i before
// C_j only (GSI).
func RulesFor(lv history.Level) SnapshotRules {
	rt := lv.RealTime()
	return SnapshotRules{
		Session:        lv.SessionOrder(),
		RealTime:       rt && lv.SnapshotRealTime(),
		CommitRealTime: rt && !lv.SnapshotRealTime(),
	}
}

// mode is which facts a check reads.
type mode uint8

const (
	stamps mode = iota // commit_ts and start_ts
	pgSnap             // xid and snapshot
)

// analysis is what a snapshot check derives from the facts: per key the
// committed writers in version order, and (PostgreSQL) each external
// read's source.
type analysis struct {
	mode mode
	kx   *keyed        // key ids per op
	name []history.Key // key id -> key (kx.name)
	// Per key id: the committed writers in version order; their commit
	// stamps (stamps mode), kept apart so that a read's binary search
	// touches one contiguous array; each writer's final register value;
	// and for list keys every append of the chain in order, with cum[p]
	// the number of appends of writers 0..p-1.
	chain [][]int32
	cts   [][]int64
	final [][]history.Value
	apps  [][]history.Value
	cum   [][]int32
	list  []bool // kx.list
	// byCommit and byStart (stamps mode): the committed transactions by
	// commit stamp (ties by end, start, index: stampEvents' order) and by
	// start stamp (ties by index), each sorted once.
	byCommit, byStart []int32
	// src[t][n] is the writer whose version read n of txn t saw (-1: the
	// initial version); PostgreSQL mode only (snapshotPins).
	src map[int32]map[int]int32
}

// chains returns the version order of every key, by key.
func (a *analysis) chains() map[history.Key][]int32 {
	m := make(map[history.Key][]int32, len(a.chain))
	for k, ch := range a.chain {
		if len(ch) > 0 {
			m[a.name[k]] = ch
		}
	}
	return m
}

// sees reports whether reader t's snapshot holds committed writer w.
func (a *analysis) sees(h *history.History, t, w int32) bool {
	if t == w {
		return false
	}
	ft, fw := &h.Facts[t], &h.Facts[w]
	if a.mode == stamps {
		return fw.CommitTS < ft.StartTS
	}
	return ft.Snap.Sees(fw.Xid)
}

// CheckSnapshot checks snapshot isolation with the facts: each read of a
// committed transaction sees the state its snapshot holds (commit_ts
// below its start_ts, or PostgreSQL's xid visibility), its own writes on
// top; the committed writers of a key are totally ordered by visibility
// (first committer wins); the rules' orders hold. Witnessed means the
// history is valid at snapshot isolation (with those rules) and
// consistent with its facts; Order is then the commit order (stamps) or
// nil (PostgreSQL, whose facts give visibility, not an order).
func CheckSnapshot(h *history.History, opts history.Options, rules SnapshotRules) Fast {
	f, _ := analyze(h, opts, rules)
	if f.Outcome == Open {
		return pgUnknowns(h, opts, rules, f)
	}
	return f
}

// maxUnknownChoices bounds the unknown writers pgUnknowns decides by
// trying every choice of which of them committed (2^n analyses).
const maxUnknownChoices = 8

// pgUnknowns decides a history with PostgreSQL's facts that the
// completion "no unknown transaction committed" left open (a read that
// an unknown writer might explain). An unknown writer with an xid and a
// snapshot, taken as committed, is constrained by its facts as exactly as
// a committed one (docs/SEMANTICS.md §10), so "valid with the facts" is
// "some choice of which unknown writers committed is witnessed": each
// choice is analyzed with the chosen ones committed and the others
// aborted. Up to maxUnknownChoices unknown writers, all with facts, and
// at levels without real-time order; otherwise f stays open.
func pgUnknowns(h *history.History, opts history.Options, rules SnapshotRules, f Fast) Fast {
	if rules.RealTime || rules.CommitRealTime || h.Facts == nil {
		return f
	}
	pgFull := func(i int) bool {
		return h.Facts[i].Has&(history.HasXid|history.HasSnapshot) == history.HasXid|history.HasSnapshot
	}
	var unk []int
	for i := range h.Txns {
		t := &h.Txns[i]
		switch {
		case t.Status == history.Committed && (!pgFull(i) || h.Facts[i].Has&history.HasCommitTS != 0):
			return f // not PostgreSQL's facts throughout
		case t.Status == history.Unknown && t.Writes():
			if !pgFull(i) {
				return f
			}
			unk = append(unk, i)
		}
	}
	if len(unk) == 0 || len(unk) > maxUnknownChoices {
		return f
	}
	c := &history.History{Txns: slices.Clone(h.Txns), Facts: h.Facts}
	for mask := 1; mask < 1<<len(unk); mask++ {
		for j, u := range unk {
			c.Txns[u].Status = history.Aborted
			if mask&(1<<j) != 0 {
				c.Txns[u].Status = history.Committed
			}
		}
		switch g, _ := analyze(c, opts, rules); g.Outcome {
		case Witnessed:
			return g
		case Open:
			return f
		}
	}
	return Fast{Outcome: Contradicted, Why: f.Why + "; no choice of which unknown transactions committed keeps the facts"}
}

func analyze(h *history.History, opts history.Options, rules SnapshotRules) (Fast, *analysis) {
	if h.Facts == nil {
		return Fast{Outcome: Open, Why: "the history carries no database facts"}, nil
	}
	var committed []int32
	unknownWriter := ""
	allStamps, allPG := true, true
	for i := range h.Txns {
		t, f := &h.Txns[i], &h.Facts[i]
		switch t.Status {
		case history.Aborted:
			continue
		case history.Unknown:
			if unknownWriter == "" && t.Writes() {
				unknownWriter = t.ID
			}
			continue // tried as not committed, as in CheckSerial
		}
		allStamps = allStamps && f.Has&(history.HasCommitTS|history.HasStartTS) == history.HasCommitTS|history.HasStartTS
		allPG = allPG && f.Has&(history.HasXid|history.HasSnapshot) == history.HasXid|history.HasSnapshot
		committed = append(committed, int32(i))
	}
	a := &analysis{}
	switch {
	case allStamps:
		a.mode = stamps
	case allPG:
		a.mode = pgSnap
		a.src = map[int32]map[int]int32{}
		if rules.RealTime || rules.CommitRealTime {
			return Fast{Outcome: Open, Why: "PostgreSQL's snapshots give no commit order to hold real time against"}, nil
		}
	default:
		return Fast{Outcome: Open, Why: "some committed transaction lacks a snapshot fact (start_ts and commit_ts, or xid and snapshot)"}, nil
	}
	// Number the keys once (list keys marked as history.ListKeys does).
	a.kx = numberKeys(h)
	a.name, a.list = a.kx.name, a.kx.list
	if a.mode == stamps {
		a.byCommit, a.byStart = stampOrders(h, opts, committed)
		// The common case, a history its stamps explain, in one pass
		// over begins and commits (stream.go); anything it does not
		// pass goes through the per-key chains below, which say what
		// failed and who took part.
		if a.stream(h, opts) {
			if fr := checkRules(h, opts, rules, a, committed); fr != nil {
				return *fr, nil
			}
			return Fast{Outcome: Witnessed, Order: a.byCommit, Events: stampEvents(h, a.byCommit, a.byStart)}, a
		}
	}
	nk := len(a.name)
	a.chain = make([][]int32, nk)
	a.cts, a.final = make([][]int64, nk), make([][]history.Value, nk)
	a.apps, a.cum = make([][]history.Value, nk), make([][]int32, nk)
	if a.mode == stamps {
		if f := a.stampChains(h); f != nil {
			return *f, nil
		}
	} else if f := a.pgChains(h, committed); f != nil {
		return *f, nil
	}
	if fr := checkRules(h, opts, rules, a, committed); fr != nil {
		return *fr, nil
	}
	readers := committed
	if a.mode == stamps {
		readers = a.byStart
	}
	if m := a.reads(h, opts, readers, unknownWriter != ""); m != nil {
		if unknownWriter != "" && !m.internal {
			return Fast{Outcome: Open, Why: fmt.Sprintf("%s (txn %s is unknown and writes: it may have committed)", m.why, unknownWriter)}, nil
		}
		return Fast{Outcome: Contradicted, Why: m.why, Seed: m.seed}, nil
	}
	if a.mode == stamps {
		return Fast{Outcome: Witnessed, Order: a.byCommit, Events: stampEvents(h, a.byCommit, a.byStart)}, a
	}
	events, cycle := a.pgEvents(h, committed, rules)
	if cycle != nil {
		return Fast{Outcome: Contradicted, Why: "the versions PostgreSQL's snapshots fix admit no sequence of begins and commits (a cycle of the level)", Seed: cycle}, a
	}
	return Fast{Outcome: Witnessed, Events: events}, a
}

// Event is one step of a snapshot witness: transaction Txn (an index into
// the history) begins, or commits.
type Event struct {
	Txn    int32
	Commit bool
}

// stampOrders sorts the committed transactions by commit stamp (ties by
// end, start, index) and by start stamp (ties by index).
func stampOrders(h *history.History, opts history.Options, committed []int32) (byCommit, byStart []int32) {
	byCommit, byStart = slices.Clone(committed), slices.Clone(committed)
	sortByStamp(byCommit, func(i int32) int64 { return h.Facts[i].CommitTS }, func(x, y int32) int {
		tx, ty := &h.Txns[x], &h.Txns[y]
		return cmp.Or(cmp.Compare(opts.EffectiveEnd(tx), opts.EffectiveEnd(ty)), cmp.Compare(tx.Start, ty.Start), cmp.Compare(x, y))
	})
	sortByStamp(byStart, func(i int32) int64 { return h.Facts[i].StartTS }, nil)
	return byCommit, byStart
}

// stampChains builds every key's chain in stamps mode: its committed
// writers in commit order, with their commit stamps, final register
// values or appends, in two passes over the writers' operations in commit
// order (a count per key, then a fill of flat arrays the per-key slices
// share), so that no chain is sorted or grown. Then first committer wins
// along each chain.
func (a *analysis) stampChains(h *history.History) *Fast {
	nk := len(a.name)
	type mine struct{ k, at int32 }
	var scratch []mine
	seen := func(k int32) int32 {
		for _, m := range scratch {
			if m.k == k {
				return m.at
			}
		}
		return -1
	}
	cnt := make([]int32, nk+1)
	for _, i := range a.byCommit {
		scratch = scratch[:0]
		for n, op := range h.Txns[i].Ops {
			if op.Kind == history.Read {
				continue
			}
			if k := a.kx.of(i, n); seen(k) < 0 {
				scratch = append(scratch, mine{k, 0})
				cnt[k+1]++
			}
		}
	}
	for k := 0; k < nk; k++ {
		cnt[k+1] += cnt[k]
	}
	total := cnt[nk]
	w := make([]int32, total)
	cts := make([]int64, total)
	fin := make([]history.Value, total)
	next := slices.Clone(cnt[:nk])
	for _, i := range a.byCommit {
		scratch = scratch[:0]
		c := h.Facts[i].CommitTS
		for n, op := range h.Txns[i].Ops {
			if op.Kind == history.Read {
				continue
			}
			k := a.kx.of(i, n)
			at := seen(k)
			if at < 0 {
				at = next[k]
				next[k]++
				w[at], cts[at], fin[at] = i, c, history.Null
				scratch = append(scratch, mine{k, at})
				if a.list[k] {
					a.cum[k] = append(a.cum[k], int32(len(a.apps[k])))
				}
			}
			if op.Kind == history.Write {
				fin[at] = op.Value
			} else {
				a.apps[k] = append(a.apps[k], op.Value)
			}
		}
	}
	bad := int32(-1) // the key, smallest by name, whose chain breaks first committer wins
	var bx, by int32
	for k := int32(0); k < int32(nk); k++ {
		lo, hi := cnt[k], cnt[k+1]
		a.chain[k], a.cts[k] = w[lo:hi:hi], cts[lo:hi:hi]
		if a.list[k] {
			a.cum[k] = append(a.cum[k], int32(len(a.apps[k])))
		} else {
			a.final[k] = fin[lo:hi:hi]
		}
		// First committer wins: each writer's snapshot holds the one
		// before it. Consecutive pairs suffice: c_i < s_{i+1} <= c_{i+1}
		// makes commit stamps strictly increase along the chain, so every
		// earlier writer is below s_{i+1} too.
		ch := a.chain[k]
		for p := 1; p < len(ch); p++ {
			if h.Facts[ch[p-1]].CommitTS >= h.Facts[ch[p]].StartTS {
				if bad < 0 || a.name[k] < a.name[bad] {
					bad, bx, by = k, ch[p-1], ch[p]
				}
				break
			}
		}
	}
	if bad >= 0 {
		f := fcw(h, a.name[bad], bx, by)
		return &f
	}
	return nil
}

// pgChains builds every key's chain from PostgreSQL's facts: the
// committed writers ordered by visibility, every pair compared (snapshots
// give no order to trust), first committer wins holding when each writer
// sees every earlier one and none sees a later one.
func (a *analysis) pgChains(h *history.History, committed []int32) *Fast {
	entries := make([][]entry, len(a.name))
	type mine struct{ k, at int32 }
	var scratch []mine
	for _, i := range committed {
		scratch = scratch[:0]
		for n, op := range h.Txns[i].Ops {
			if op.Kind == history.Read {
				continue
			}
			k := a.kx.of(i, n)
			at := int32(-1)
			for _, m := range scratch {
				if m.k == k {
					at = m.at
					break
				}
			}
			if at < 0 {
				at = int32(len(entries[k]))
				entries[k] = append(entries[k], entry{w: i, fin: history.Null})
				scratch = append(scratch, mine{k, at})
			}
			e := &entries[k][at]
			if op.Kind == history.Write {
				e.fin = op.Value
			} else {
				e.apps = append(e.apps, op.Value)
			}
		}
	}
	order := make([]int32, len(a.name))
	for k := range order {
		order[k] = int32(k)
	}
	slices.SortFunc(order, func(x, y int32) int { return cmp.Compare(a.name[x], a.name[y]) }) // deterministic reports
	for _, k := range order {
		es := entries[k]
		ch := make([]int32, len(es))
		for p := range es {
			ch[p] = es[p].w
		}
		a.chain[k] = ch
		sort.SliceStable(ch, func(x, y int) bool { return a.sees(h, ch[y], ch[x]) })
		for p := range ch {
			for q := p + 1; q < len(ch); q++ {
				if !a.sees(h, ch[q], ch[p]) || a.sees(h, ch[p], ch[q]) {
					f := fcw(h, a.name[k], ch[p], ch[q])
					return &f
				}
			}
		}
		a.fill(k, es)
	}
	return nil
}

// stampEvents is the witness the stamps give: each committed transaction
// begins at its start_ts and commits at its commit_ts. On equal stamps a
// begin goes first (commit_ts(w) = start_ts(t) means t does not see w),
// and tied commits go in order of (end, start), which keeps GSI's real
// time among them (a that precedes b ends first, or ends at b's start
// with an earlier start of its own): stampOrders' byCommit. A linear
// merge of the two orders.
func stampEvents(h *history.History, byCommit, byStart []int32) []Event {
	events := make([]Event, 0, 2*len(byCommit))
	b := 0
	for _, c := range byCommit {
		for b < len(byStart) && h.Facts[byStart[b]].StartTS <= h.Facts[c].CommitTS {
			events = append(events, Event{Txn: byStart[b]})
			b++
		}
		events = append(events, Event{Txn: c, Commit: true})
	}
	return events
}

// pgEvents orders begins and commits by what PostgreSQL's facts fixed:
// each transaction begins after the commit of every version it read and
// of every earlier writer in its keys' chains, and before the commit of
// the version after the one it read; it begins after its own session's
// previous transaction commits (rules.Session). A topological order of
// that graph is a witness; a cycle means no sequence of begins and
// commits gives the reads their facts' sources, and the cycle's
// transactions are returned instead.
func (a *analysis) pgEvents(h *history.History, committed []int32, rules SnapshotRules) ([]Event, []int32) {
	// Node 2i is B_i, 2i+1 is C_i.
	n := 2 * len(h.Txns)
	var from, to []int32
	edge := func(x, y int32) { from, to = append(from, x), append(to, y) }
	for _, i := range committed {
		edge(2*i, 2*i+1)
	}
	for k, ch := range a.chain {
		_ = k
		for p := 1; p < len(ch); p++ {
			edge(2*ch[p-1]+1, 2*ch[p])
		}
	}
	nextOf := func(k int32, w int32) int32 {
		ch := a.chain[k]
		if w < 0 {
			if len(ch) > 0 {
				return ch[0]
			}
			return -1
		}
		for p, x := range ch {
			if x == w && p+1 < len(ch) {
				return ch[p+1]
			}
		}
		return -1
	}
	// Sources in a fixed order, so that the witness is deterministic.
	readers := make([]int32, 0, len(a.src))
	for t := range a.src {
		readers = append(readers, t)
	}
	slices.Sort(readers)
	for _, t := range readers {
		ops := make([]int, 0, len(a.src[t]))
		for op := range a.src[t] {
			ops = append(ops, op)
		}
		slices.Sort(ops)
		for _, op := range ops {
			w := a.src[t][op]
			if w >= 0 {
				edge(2*w+1, 2*t)
			}
			if nx := nextOf(a.kx.of(t, op), w); nx >= 0 && nx != t {
				edge(2*t, 2*nx+1)
			}
		}
	}
	if rules.Session {
		isCommitted := make([]bool, len(h.Txns))
		for _, i := range committed {
			isCommitted[i] = true
		}
		for _, s := range sessions(h) {
			var prev int32 = -1
			for _, i := range s {
				if !isCommitted[i] {
					continue
				}
				if prev >= 0 {
					edge(2*prev+1, 2*i)
				}
				prev = i
			}
		}
	}
	// Kahn's algorithm over a CSR of the edges, smallest node first.
	start := make([]int32, n+1)
	indeg := make([]int32, n)
	for e := range from {
		start[from[e]+1]++
		indeg[to[e]]++
	}
	for v := 0; v < n; v++ {
		start[v+1] += start[v]
	}
	adj := make([]int32, len(from))
	fill := slices.Clone(start[:n])
	for e := range from {
		adj[fill[from[e]]] = to[e]
		fill[from[e]]++
	}
	live := make([]bool, n)
	for _, i := range committed {
		live[2*i], live[2*i+1] = true, true
	}
	var queue []int32
	for v := int32(0); v < int32(n); v++ {
		if live[v] && indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	events := make([]Event, 0, 2*len(committed))
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		events = append(events, Event{Txn: v / 2, Commit: v%2 == 1})
		for _, w := range adj[start[v]:start[v+1]] {
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	if len(events) == 2*len(committed) {
		return events, nil
	}
	// A cycle among the nodes left: every node left still has an edge
	// from another node left (its in-degree counts exactly those), so
	// walking backwards from one repeats a node.
	left := func(v int32) bool { return live[v] && indeg[v] > 0 }
	pred := make(map[int32]int32)
	for e := range from {
		if left(from[e]) && left(to[e]) {
			pred[to[e]] = from[e]
		}
	}
	var v int32
	for v = 0; !left(v); v++ {
	}
	at := map[int32]int{}
	var path []int32
	for {
		if p, ok := at[v]; ok {
			path = path[p:]
			break
		}
		at[v] = len(path)
		path = append(path, v)
		v = pred[v]
	}
	var cyc []int32
	for _, v := range path {
		cyc = append(cyc, v/2)
	}
	return nil, dedup(cyc)
}

// entry is one committed writer of a key: its final register value, or
// its appends in order.
type entry struct {
	w    int32
	fin  history.Value
	apps []history.Value
}

// fill derives key k's per-writer arrays from its ordered chain; es are
// its writers' entries (in chain order in stamps mode, in any order with
// snapshots, whose chain was sorted after).
func (a *analysis) fill(k int32, es []entry) {
	ch := a.chain[k]
	byW := es
	if len(es) > 1 {
		at := make(map[int32]int, len(es))
		for p := range es {
			at[es[p].w] = p
		}
		byW = slices.Clone(es)
		for p, w := range ch {
			byW[p] = es[at[w]]
		}
	}
	if !a.list[k] {
		fin := make([]history.Value, len(ch))
		for p := range byW {
			fin[p] = byW[p].fin
		}
		a.final[k] = fin
		return
	}
	cum := make([]int32, len(ch)+1)
	var apps []history.Value
	for p := range byW {
		apps = append(apps, byW[p].apps...)
		cum[p+1] = int32(len(apps))
	}
	a.apps[k], a.cum[k] = apps, cum
}

func fcw(h *history.History, k history.Key, x, y int32) Fast {
	return Fast{Outcome: Contradicted, Why: fmt.Sprintf("txns %s and %s both write %s and their snapshots do not order them (first committer wins)", h.Txns[x].ID, h.Txns[y].ID, k), Seed: []int32{min(x, y), max(x, y)}}
}

// checkRules holds the strong variants' orders: an earlier transaction of
// the session, or one that finished before in widened real time, is in
// the snapshot.
func checkRules(h *history.History, opts history.Options, rules SnapshotRules, a *analysis, committed []int32) *Fast {
	isCommitted := make(map[int32]bool, len(committed))
	for _, i := range committed {
		isCommitted[i] = true
	}
	// PostgreSQL's facts claim visibility only between transactions that
	// share a key (docs/SEMANTICS.md §10): their session order is an edge
	// of pgEvents' graph, not a question to the snapshot.
	if rules.Session && a.mode == stamps {
		for _, s := range sessions(h) {
			var earlier []int32
			for _, i := range s {
				if !isCommitted[i] {
					continue
				}
				// Commit stamps are transitive (c_a < s_b <= c_b < s_c),
				// so the previous member suffices; snapshots are not, and
				// every earlier member is asked.
				from := 0
				if a.mode == stamps {
					from = max(0, len(earlier)-1)
				}
				for _, prev := range earlier[from:] {
					if !a.sees(h, i, prev) {
						return &Fast{Outcome: Contradicted, Why: fmt.Sprintf("txn %s's snapshot misses %s, earlier in its session", h.Txns[i].ID, h.Txns[prev].ID), Seed: []int32{min(prev, i), max(prev, i)}}
					}
				}
				earlier = append(earlier, i)
			}
		}
	}
	if a.mode == stamps && (rules.RealTime || rules.CommitRealTime) {
		// Strong SI: C_a before B_b, so a with commit_ts(a) >= start_ts(b)
		// may not precede b. GSI: C_a before C_b, so a with commit_ts(a) >
		// commit_ts(b) may not (equal stamps leave the pair unordered).
		need := func(b int32) int64 { return h.Facts[b].StartTS }
		what := "txn %s's snapshot misses %s, which finished before it began"
		if !rules.RealTime {
			need = func(b int32) int64 { return h.Facts[b].CommitTS + 1 }
			what = "txn %s commits before %s by the stamps, but %[2]s finished before it began"
		}
		if x, y, ok := realTimeInversion(h, opts, committed, need); ok {
			return &Fast{Outcome: Contradicted, Why: fmt.Sprintf(what, h.Txns[y].ID, h.Txns[x].ID), Seed: []int32{min(x, y), max(x, y)}}
		}
	}
	return nil
}

// realTimeInversion finds committed a, b with a before b in widened real
// time (Options.Precedes) and commit_ts(a) >= need(b), in O(n log n):
// transactions b in decreasing order of need(b) meet the a's whose commit
// stamp reaches it, and among those only the one with the smallest
// (effective end, start) has to be asked. If any a precedes b, that one
// does: it ends no later, and on an equal end it starts no later, so the
// one corner Options.Precedes calls concurrent (two zero-length
// transactions at one instant, Δ = 0) would make the other a
// zero-length at that instant too. b itself among the a's hides nothing
// by the same argument.
func realTimeInversion(h *history.History, opts history.Options, committed []int32, need func(int32) int64) (int32, int32, bool) {
	byCommit := slices.Clone(committed)
	slices.SortFunc(byCommit, func(x, y int32) int { return cmp.Compare(h.Facts[y].CommitTS, h.Facts[x].CommitTS) })
	byNeed := slices.Clone(committed)
	slices.SortFunc(byNeed, func(x, y int32) int { return cmp.Compare(need(y), need(x)) })
	var best int32 = -1
	p := 0
	for _, b := range byNeed {
		for p < len(byCommit) && h.Facts[byCommit[p]].CommitTS >= need(b) {
			c := byCommit[p]
			if best < 0 || cmp.Or(cmp.Compare(opts.EffectiveEnd(&h.Txns[c]), opts.EffectiveEnd(&h.Txns[best])), cmp.Compare(h.Txns[c].Start, h.Txns[best].Start)) < 0 {
				best = c
			}
			p++
		}
		if best >= 0 && opts.Precedes(&h.Txns[best], &h.Txns[b]) {
			return best, b, true
		}
	}
	return 0, 0, false
}

// reads replays every committed transaction's reads against its snapshot.
//
// With scanAll (an unknown transaction writes, so an external mismatch
// may be its write and only leaves the history open) it goes on past
// external mismatches and returns an internal one if there is any, so
// that the outcome does not depend on the order reads are visited in.
func (a *analysis) reads(h *history.History, opts history.Options, committed []int32, scanAll bool) *mismatch {
	var external *mismatch
	unknownInit := opts.InitialState == history.InitialUnknown
	initReg := map[int32]history.Value{}
	initList := map[int32][]history.Value{}
	binder := map[int32]int32{}
	var own ownWrites
	var wix *writerIndex
	// With stamps, readers go in start_ts order, so that the version a
	// read sees only moves forward along its key's chain: a cursor per
	// key replaces a binary search per read (which misses the cache once
	// per step on a long history).
	var cursor []int32
	if a.mode == stamps {
		cursor = make([]int32, len(a.chain))
	}
	for _, ti := range committed {
		t := &h.Txns[ti]
		own = own[:0]
		for n, op := range t.Ops {
			k := a.kx.of(ti, n)
			switch op.Kind {
			case history.Write:
				if w := own.find(k); w != nil {
					w.reg, w.val = true, op.Value
				} else {
					own = append(own, ownWrite{k: k, reg: true, val: op.Value})
				}
				continue
			case history.Append:
				if w := own.find(k); w != nil {
					w.apps = append(w.apps, op.Value)
				} else {
					own = append(own, ownWrite{k: k, apps: []history.Value{op.Value}})
				}
				continue
			}
			ch := a.chain[k]
			last := -1 // position in ch of the version seen
			if a.mode == stamps {
				s := h.Facts[ti].StartTS
				cts, c := a.cts[k], cursor[k]
				for int(c) < len(cts) && cts[c] < s {
					c++
				}
				cursor[k] = c
				last = int(c) - 1
			} else {
				for p := len(ch) - 1; p >= 0; p-- {
					if a.sees(h, ti, ch[p]) {
						last = p
						break
					}
				}
				// The versions a snapshot sees are a prefix of the
				// version order: seeing a version and not one it
				// overwrote is no state the database ever held.
				for p := 0; p < last; p++ {
					if !a.sees(h, ti, ch[p]) {
						m := &mismatch{
							why:  fmt.Sprintf("txn %s's snapshot sees %s's version of %s but not %s's, which it overwrote", t.ID, h.Txns[ch[last]].ID, op.Key, h.Txns[ch[p]].ID),
							seed: dedup([]int32{ti, ch[p], ch[last]}),
						}
						if !scanAll {
							return m
						}
						if external == nil {
							external = m
						}
						break
					}
				}
			}
			ok, internal := true, false
			var want string
			mine := own.find(k)
			if a.list[k] {
				snap := a.apps[k][:a.cum[k][last+1]]
				var tail []history.Value
				if mine != nil {
					tail = mine.apps
				}
				got := op.List
				if !op.IsList && op.Value != history.Null {
					ok = false
				} else {
					switch init, bound := initList[k]; {
					case !unknownInit:
						ok = equalConcat(got, nil, snap, tail)
					case bound:
						ok = equalConcat(got, init, snap, tail)
					default:
						n := len(snap) + len(tail)
						ok = len(got) >= n && equalConcat(got[len(got)-n:], nil, snap, tail)
						if ok {
							initList[k], binder[k] = slices.Clone(got[:len(got)-n]), ti
						}
					}
					want = fmt.Sprint(append(slices.Clone(snap), tail...))
				}
			} else if mine != nil && mine.reg {
				ok, internal, want = op.Value == mine.val, true, string(mine.val)
			} else if last >= 0 {
				v := a.final[k][last]
				ok, want = op.Value == v, string(v)
			} else if !unknownInit {
				ok, want = op.Value == history.Null, "null"
			} else if v, bound := initReg[k]; bound {
				ok, want = op.Value == v, string(v)
			} else {
				initReg[k], binder[k] = op.Value, ti
			}
			if ok {
				if !internal && a.src != nil {
					m := a.src[ti]
					if m == nil {
						m = map[int]int32{}
						a.src[ti] = m
					}
					m[n] = -1
					if last >= 0 {
						m[n] = ch[last]
					}
				}
				continue
			}
			if wix == nil {
				wix = newWriterIndex(h)
			}
			seed := []int32{ti}
			if !internal {
				seed = append(seed, ch[:last+1]...)
				if last >= 0 && !a.list[k] {
					seed = append(seed[:1], ch[last])
				}
				if b, ok := binder[k]; ok {
					seed = append(seed, b)
					seed = append(seed, wix.possible(&h.Txns[b], op.Key)...)
				}
				seed = append(seed, wix.writersOf(op)...)
			}
			m := &mismatch{
				why:      fmt.Sprintf("txn %s op %d (%s) reads %s where its snapshot holds %s", t.ID, n, op, readText(op), want),
				seed:     dedup(seed),
				internal: internal,
			}
			if internal || !scanAll {
				return m
			}
			if external == nil {
				external = m
			}
		}
	}
	return external
}

// equalConcat reports whether got is a ++ b ++ c.
func equalConcat(got, a, b, c []history.Value) bool {
	if len(got) != len(a)+len(b)+len(c) {
		return false
	}
	return slices.Equal(got[:len(a)], a) && slices.Equal(got[len(a):len(a)+len(b)], b) && slices.Equal(got[len(a)+len(b):], c)
}

// ownWrite is one key a transaction has written so far: its last register
// value, or the values it appended.
type ownWrite struct {
	k    int32
	reg  bool
	val  history.Value
	apps []history.Value
}

// ownWrites holds one transaction's writes so far, for the snapshot
// analysis and the one-pass path alike: few per transaction, so a slice
// searched linearly beats a map made for each.
type ownWrites []ownWrite

func (o ownWrites) find(k int32) *ownWrite {
	for i := range o {
		if o[i].k == k {
			return &o[i]
		}
	}
	return nil
}
