package online

import (
	"context"
	"math"
	"slices"
	"sync/atomic"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// Eviction (docs/SEMANTICS.md §5; docs/INTERNALS.md has the argument).
//
// The engine judges each step on a reduced instance instead of the whole
// released history: the transactions still in the window, plus what the
// evicted ones proved. Evicted transactions are of three kinds:
//
//   - ghosts: an evicted writer that is still the live version of some keys
//     stays in the instance with its timestamps and session and only those
//     writes, so later reads of a live value have their writer and later
//     writers follow it (R4: writers leave in version order);
//   - removed: every other evicted transaction leaves the instance; the
//     orders that ran through it are kept as base edges among the rest
//     (R5), and a read that it explained is replaced by the edges the read
//     implied once its writer is overwritten;
//   - fixed initial values: under an unknown initial state, an evicted read
//     of the initial version fixes the key's initial value, kept as a
//     writer before everything.
//
// A transaction is evicted only when it is time-closed (R1), every
// transaction it shares a constraint with is time-closed (R3), and every
// constraint that mentions it is decided (R2): each edge literal, read-from
// choice, commit choice and version order involving it is fixed at level 0
// or by a backbone probe, made a unit. The instance the decisions are made
// on drops the reads of open transactions (the alert instance), which has
// every completion of window + future among its own: a future writer can
// only add a source to an open read. A decision there holds in every
// completion of the whole history and its future.
//
// The reduced instance decides alerts only as a trigger: an alert is
// confirmed, and its core found, on the released bodies (all of them; the
// evicted ones are read back from the spill, spill.go), so a fact kept wrongly
// could cost a missed anomaly but never a false alarm; a disagreement is
// counted and heals by rebuilding the instance from the bodies. After an
// alert the instance is rebuilt from the bodies minus the quarantine, which
// is the rule "replay stored bodies with the larger quarantine set".
//
// Not evicted yet (pinned until the end of input or an alert): members of
// pending alerts, transactions touching list keys, and transactions with a
// constraint that no probe decides and that the irrelevance rule
// (fixIrrelevant) cannot fix.

// pinTrace, when set (by tests, to find what pins a window), is told why
// a transaction stays.
var pinTrace func(*history.Txn, string)

// irrelevanceTrace, when set (by tests), is told per step how many writer
// pairs and read sources the irrelevance rule considered, oriented and
// fixed.
var irrelevanceTrace func(pairs, reads, oriented, fixed int)

// probeTrace, when set (TestProbeBudgetTrace), is told of every probe
// and whether it decided: where a step's probe budget goes.
var probeTrace func(kind string, decided bool)

// tracePin tells pinTrace why t stays; why is built only when it listens.
func tracePin(t *history.Txn, why func() string) {
	if pinTrace != nil {
		pinTrace(t, why())
	}
}

// evictState is the reduced instance's bookkeeping, per released index.
type evictState struct {
	Member runFlags // in the instance: in the window, or a ghost
	// GhostKeys are the keys an evicted member is the live version of.
	GhostKeys map[int][]history.Key
	// LiveOf is the ghost holding each key's live version (absent: the
	// initial version).
	LiveOf map[history.Key]int
	// Replaced are reads (by key) of window members that were replaced by
	// kept edges when their writer was overwritten.
	Replaced map[int][]history.Key
	// Kept are orders proven between members, as base edges.
	Kept [][2]int
	// Decided are commit decisions of unknown members (only members: an
	// entry goes when its transaction leaves the instance).
	Decided map[int]bool
	// InitVal fixes initial values decided under an unknown initial state.
	InitVal map[history.Key]history.Value
	// ListPrefix is, per list key, the committed prefix: the appends of
	// the appenders that left the instance, in list order; LiveOf names
	// the ghost that appends it in the instance (evict_list.go, L1-L3).
	ListPrefix map[history.Key][]history.Value `json:",omitempty"`
	// InitList is, under an unknown initial state, the initial list of
	// each list key that a read which left the instance named, decided
	// (evict_list_init.go, IL1-IL3).
	InitList map[history.Key][]history.Value `json:",omitempty"`
	// Folded are, per window member, the list keys whose prefix holds
	// its appends: they leave its ops, and a key it holds (LiveOf) is
	// appended whole instead.
	Folded map[int][]history.Key `json:",omitempty"`
	// Tail are, per ghost, its appends to the list keys of its
	// GhostKeys whose prefix they have not joined (a tail ghost,
	// evict_list_tail.go): its only ops on those keys in the instance.
	Tail map[int][]history.Op `json:",omitempty"`
	// Taint lists, per (key, value), the quarantined or unchecked writers:
	// a read with one of them as a possible writer is dropped (§3).
	Taint map[string][]int
	// Backoff are the window members whose R2 probe came back undecided
	// and that are not probed again yet (evict_backoff.go).
	Backoff map[int]probeBackoff `json:",omitempty"`
	// Parked are the isolated groups parked out of the instance, by
	// their first member, and ParkSeen the releases checked for
	// arrivals that re-admit one (park_group.go). // park22
	Parked   map[int]parkedGroup `json:",omitempty"` // park22
	ParkSeen int                 `json:",omitempty"` // park22

	park parkIndex // park22: derived from Parked, not in a snapshot

	Evicted, Ghosts, Disagreements int

	// members lists the indexes with Member set, in released order, with
	// stale entries dropped lazily, so that a step costs the instance and
	// not the whole stream; listed says whether it is built.
	members []int
	listed  bool
	// gx finds the ghosts a step's instance holds from the window's keys
	// (ghost_index.go; derived, not in a snapshot).
	gx ghostIndex

	// What build keeps from one step to the next (none of it in a
	// snapshot: each is rebuilt from the fields above when missing or
	// stale). ghostOps holds each ghost's writes as last built, checked
	// against its GhostKeys before reuse; touched is build's scratch
	// set.
	ghostOps map[int][]history.Op
	touched  map[history.Key]bool
	// keptAt is build's set of the kept orders' ends, as touched.
	keptAt map[int]bool
	// mk indexes the members' bodies by key across steps, mkOut is its
	// answer (build22_keyidx.go; derived, not in a snapshot).
	mk    memberKeys
	mkOut []int
	// listOpsOf holds each list prefix's appends as last built (listOps),
	// rebuilt when the prefix has grown.
	listOpsOf map[history.Key][]history.Op
	// scc is componentsUnder's scratch, scratch evict's.
	// pinnedBy counts the pinned members by reason at the last step that
	// evicted (evictStep.countPinned; derived, not in a snapshot).
	pinnedBy PinnedBy
	scc      sccScratch
	// hg is the irrelevance rule's graph, split once per step
	// (build22_hgraph.go).
	hg      hScratch
	scratch evictScratch
}

// evictScratch holds evict's lists from one step to the next, emptied at
// each (nothing in them outlives a step).
type evictScratch struct {
	readsOf                                   [][]int
	pairsOf                                   [][]*incremental.PairVar
	accessors, openAccessors, keptOut, keptIn [][]int32
	// The step's flat per-position and per-key arrays and its time
	// indexes (live_scratch.go): zeroed or emptied at each step, as the
	// fresh arrays they replace were.
	opKeys, wLeft                             [][]int32
	removed, stuck, tried, listTxn, wLeftInit []bool
	lastEarlier, livePosOf                    []int32
	why                                       []PinReason
	to                                        timeOrder
	sb                                        sessionBounds
	// readsOfVersion's index (r4_reads.go).
	byVersion map[[2]int32]int32
	versions  [][]int32
}

// emptied returns n empty lists, reusing *s's lists and their arrays.
// What the last step wrote is cleared first, so that no pointer of an
// earlier step stays reachable through them.
func emptied[T any](s *[][]T, n int) [][]T {
	for _, l := range *s {
		clear(l)
	}
	if cap(*s) < n {
		*s = append((*s)[:cap(*s)], make([][]T, n-cap(*s))...)
	}
	ls := (*s)[:n]
	for i := range ls {
		ls[i] = ls[i][:0]
	}
	*s = ls
	return ls
}

// memberList returns the members in released order.
func (st *evictState) memberList() []int {
	if !st.listed {
		st.members = st.members[:0]
		for i := range st.Member.len() {
			m := st.Member.get(i)
			if m {
				st.members = append(st.members, i)
			}
		}
		st.listed = true
		return st.members
	}
	keep := st.members[:0]
	for _, i := range st.members {
		if st.Member.get(i) {
			keep = append(keep, i)
		}
	}
	st.members = keep
	return keep
}

// admit makes released index i a member.
func (st *evictState) admit(i int) {
	for st.Member.len() <= i {
		st.Member.push(false)
	}
	st.Member.set(i, true)
	if st.listed {
		if len(st.members) == cap(st.members) && cap(st.members) >= 64 {
			// The stale entries go before the list grows: memberList,
			// which drops them, runs only on steps that ask for every
			// member (an unknown in doubt, a replay), so on a stream
			// without unknowns the list kept every transaction ever
			// admitted, 8 bytes each for the life of the run. Growing
			// when it stays more than half full keeps admit amortized
			// O(1).
			st.memberList()
			if len(st.members) > cap(st.members)/2 {
				st.members = slices.Grow(st.members, cap(st.members))
			}
		}
		st.members = append(st.members, i)
	}
	if st.gx.winListed {
		st.gx.win = append(st.gx.win, i)
	}
}

func newEvictState() evictState {
	return evictState{Decided: map[int]bool{}, GhostKeys: map[int][]history.Key{}, LiveOf: map[history.Key]int{}, Replaced: map[int][]history.Key{}, InitVal: map[history.Key]history.Value{}, Taint: map[string][]int{}, ListPrefix: map[history.Key][]history.Value{}, Folded: map[int][]history.Key{}}
}

func taintKey(k history.Key, v history.Value) string { return string(k) + "\x00" + string(v) }

// resetInstance puts every released, unquarantined transaction back in the
// instance with its whole body: the state of a non-evicting engine.
func (o *Online) resetInstance() error {
	if o.evicting && o.floor > 0 && len(o.rewinds) > 0 {
		// The bodies before the floor are gone: the oldest rewind point
		// is where a rebuild can start.
		return o.replay(context.Background(), o.rewinds[0].Pos)
	}
	st := newEvictState()
	st.Taint = o.ev.Taint
	st.Evicted, st.Disagreements = o.ev.Evicted, o.ev.Disagreements
	st.Member = makeFlags(o.log.len())
	for i := range o.log.len() {
		if m := !o.quar.get(i); m {
			st.Member.set(i, m)
			if err := o.unstub(i); err != nil {
				return err
			}
		}
	}
	o.ev = st
	return nil
}

// initTime places fixed initial values before every transaction in real
// time, with room for the skew arithmetic.
const initTime = math.MinInt64 / 4

// reduced is one step's instance.
type reduced struct {
	h   *history.History
	pos []int // history position -> released index (-1: a fixed initial value)
	at  map[int]int32
	// ghost[t]: position t is a ghost (in GhostKeys), kept in step with
	// GhostKeys while evict changes it: a map lookup per test was a
	// twentieth of a step.
	ghost []bool
	// folded are the ghosts folded into the initial node (live_fold.go),
	// foldSet the same as a set, initAt the initial node's position (-1:
	// none).
	folded  []int
	foldSet map[int]bool
	initAt  int32
	p       *incremental.Prepared
	e       *incremental.Encoder
}

func (o *Online) finalWrite(t *history.Txn, k history.Key) (history.Value, bool) {
	v, ok := history.Value(""), false
	for _, op := range t.Ops {
		if op.Kind == history.Write && op.Key == k {
			v, ok = op.Value, true
		}
	}
	return v, ok
}

// tainted reports whether a read of (k, v) by released transaction r has a
// quarantined or unchecked possible writer: one that wrote (k, v), or, for
// a value other than null, an unchecked one that may have written or
// appended any value to k, or to any key (Wild). A wildcard never explains
// a read of null: the model has no delete, so no write makes a key absent
// (an op that claims to, such as a write of null, is kept as a write of
// null instead).
func (o *Online) tainted(r int, k history.Key, v history.Value) bool {
	if len(o.ev.Taint) == 0 {
		// Most runs quarantine nothing: no key to build per read.
		return false
	}
	return o.taintedBy(r, taintKey(k, v)) || v != history.Null && o.wildTainted(r, k)
}

// wildTainted reports whether an unchecked writer that may have written
// or appended anything to k (or to every key) could have written for r.
func (o *Online) wildTainted(r int, k history.Key) bool {
	if o.wild == 0 {
		return false
	}
	return o.taintedBy(r, taintKey(k, Wild)) || o.taintedBy(r, taintKey(Wild, Wild))
}

// taintedBy: some writer listed under tk is a possible writer for r. A
// writer without trusted times (HasTime unset: an unchecked writer whose
// times could not be believed) may lie anywhere in time, so real time
// never rules it out.
func (o *Online) taintedBy(r int, tk string) bool {
	for _, w := range o.ev.Taint[tk] {
		if w == r {
			continue
		}
		if wt := o.log.at(w); !wt.HasTime || !o.opts.Precedes(o.log.at(r), wt) {
			return true
		}
	}
	return false
}

// build assembles the reduced alert instance: the window members and
// the ghosts they can meet (instanceGhosts, ghost_index.go), in released
// order.
func (o *Online) build() *reduced {
	o.unparkArrivals() // park22: park_group.go
	st := &o.ev
	window := st.windowList()
	o.markInDoubt(window) // evict_unknown.go
	if st.touched == nil {
		st.touched = map[history.Key]bool{}
	}
	// clear keeps the map's buckets: the set is about the same size at
	// every step.
	touched := st.touched
	clear(touched)
	if o.bypass == nil {
		o.bypass, o.bypassSess = map[history.Key]bypassKey{}, map[string][]sessEntry{}
	}
	clear(o.bypass)
	for _, i := range window {
		replaced := o.ev.Replaced[i]
		for j, op := range o.log.at(i).Ops {
			// A register read the instance drops (windowOps) meets
			// no ghost: what a member touches is what its ops in the
			// instance read or write (docs/SEMANTICS.md §5 "Touched
			// by the instance's ops").
			if op.Kind == history.Read && !op.IsList && o.dropsRead(i, &o.log.at(i).Ops[j], replaced) {
				continue
			}
			touched[op.Key] = true
			o.noteBypass(i, &o.log.at(i).Ops[j]) // evict_bypass.go
		}
	}
	// The kept orders' ends, in a set kept from one step to the next
	// (cleared: nothing in it outlives build; st.Kept names every member
	// a kept order holds, which at 100K transactions is most ghosts, and
	// a fresh map grew to that size at every step).
	if st.keptAt == nil {
		st.keptAt = map[int]bool{}
	}
	keptAt := st.keptAt
	clear(keptAt)
	for _, k := range st.Kept {
		keptAt[k[0]], keptAt[k[1]] = true, true
	}
	covered := o.keptCover() // evict_cover.go
	ghosts := o.instanceGhosts(touched, keptAt, covered)
	if selfCheck.Load() {
		o.buildCheck(window, ghosts, touched, keptAt, covered)
	}
	o.foldNow = o.foldNow[:0]
	ghosts = o.bypassGhosts(window, ghosts, keptAt, covered) // evict_bypass.go
	members := mergeSorted(st.gx.inst[:0], window, ghosts)
	st.gx.inst = members
	r := &reduced{h: &history.History{Txns: incremental.ReuseEmpty(o.droppedTxns, len(members)+1)}, at: o.droppedAt}
	if r.at == nil {
		r.at = make(map[int]int32, len(members))
	} else {
		clear(r.at)
	}
	o.droppedTxns, o.droppedAt = nil, nil
	initLists := st.initialLists(st.initialListReads(touched), touched) // evict_list_init.go, evict_list.go
	// The fixed initial values of the keys a member touches, in key
	// order: InitVal holds one per key ever read from its initial
	// version, the touched set only the window's.
	var initKeys []history.Key
	for k := range touched {
		if _, ok := st.InitVal[k]; ok {
			initKeys = append(initKeys, k)
		}
	}
	initKeys = o.foldInit(touched, initKeys) // live_fold.go
	slices.Sort(initKeys)
	r.initAt = -1
	r.folded, r.foldSet = o.foldNow, o.foldSet
	if len(initLists) > 0 || len(initKeys) > 0 {
		// One transaction holds every fixed initial value: it precedes
		// everything in real time, as each would alone, and one node
		// instead of one per key keeps the real-time order of the
		// instance small.
		init := history.Txn{ID: "\x00init", Start: initTime, End: initTime + 1, HasTime: true, Status: history.Committed}
		init.Ops = make([]history.Op, 0, len(initKeys)+len(initLists))
		for _, k := range initKeys {
			init.Ops = append(init.Ops, history.Op{Kind: history.Write, Key: k, Value: o.initValue(k)})
		}
		init.Ops = append(init.Ops, initLists...)
		r.initAt = int32(len(r.h.Txns))
		r.h.Txns = append(r.h.Txns, init)
		r.pos = append(r.pos, -1)
		r.ghost = append(r.ghost, false)
	}
	for _, i := range members {
		t := *o.log.at(i)
		gk := st.GhostKeys[i]
		o.sessEndOf(i, &t) // rmw31_sessend.go
		if gk != nil {
			t.Ops = o.ghostOps(i, gk)
		} else {
			t.Ops = o.foldedOps(i, o.windowOps(i, t.Ops))
		}
		r.at[i] = int32(len(r.h.Txns))
		r.h.Txns = append(r.h.Txns, t)
		r.pos = append(r.pos, i)
		r.ghost = append(r.ghost, gk != nil)
	}
	var kept [][2]int32
	for _, k := range st.Kept {
		a, okA := r.at[k[0]]
		b, okB := r.at[k[1]]
		if okA && okB {
			kept = append(kept, [2]int32{a, b})
		}
	}
	decided := map[int32]bool{}
	for i, d := range st.Decided {
		if at, ok := r.at[i]; ok {
			if !d && o.doubt.off && !o.closed.get(i) {
				// solveHeld's build leaves out the reads of the
				// unknowns in doubt, and so what they decided
				// (docs/SEMANTICS.md §5 "A decision that rests on the
				// reads of an unknown in doubt").
				continue
			}
			decided[at] = d
		}
	}
	// A reused array keeps no transaction of an earlier step past the
	// end.
	clear(r.h.Txns[len(r.h.Txns):cap(r.h.Txns)])
	r.p = incremental.PrepareReusing(o.dropped, r.h, o.opts)
	o.dropped = nil
	cfg := incremental.WindowEncodeConfig(kept, decided)
	if !o.noRecycle {
		cfg = incremental.WithRecycled(cfg, o.droppedEnc)
	}
	o.droppedEnc = nil
	r.e = incremental.NewEncoder(r.p, cfg)
	return r
}

// ghostOps returns ghost i's ops on its live keys gk: its final write of
// each register key (registerGhostOps) and, for each list key whose
// prefix it holds, the appends of the whole prefix (listOps).
func (o *Online) ghostOps(i int, gk []history.Key) []history.Op {
	st := &o.ev
	if tail := st.Tail[i]; tail != nil {
		// A tail ghost's own appends (evict_list_tail.go).
		rest := slices.DeleteFunc(slices.Clone(gk), func(k history.Key) bool { return tailHas(tail, k) })
		return append(slices.Clone(o.heldGhostOps(i, rest)), tail...)
	}
	return o.heldGhostOps(i, gk)
}

// heldGhostOps is ghostOps for the keys ghost i holds the live version
// or the whole prefix of.
func (o *Online) heldGhostOps(i int, gk []history.Key) []history.Op {
	st := &o.ev
	if len(st.ListPrefix) == 0 || !slices.ContainsFunc(gk, func(k history.Key) bool { _, l := st.ListPrefix[k]; return l }) {
		return o.registerGhostOps(i, gk)
	}
	var regs, lists []history.Key
	for _, k := range gk {
		if _, l := st.ListPrefix[k]; l {
			lists = append(lists, k)
		} else {
			regs = append(regs, k)
		}
	}
	ops := slices.Clone(o.registerGhostOps(i, regs))
	for _, k := range lists {
		ops = append(ops, o.listOps(k)...)
	}
	return ops
}

// registerGhostOps returns ghost i's writes of its live register keys gk,
// its final write of each: the ones built at an earlier step while gk is
// unchanged (evict only shortens a ghost's keys or gives it new ones), so
// that a ghost costs a scan of its body once and not at every step.
func (o *Online) registerGhostOps(i int, gk []history.Key) []history.Op {
	st := &o.ev
	if ops, ok := st.ghostOps[i]; ok && len(ops) == len(gk) {
		same := true
		for j, k := range gk {
			if ops[j].Key != k {
				same = false
				break
			}
		}
		if same {
			return ops
		}
	}
	if st.ghostOps == nil || len(st.ghostOps) > 2*len(st.GhostKeys)+64 {
		// Drop the entries of transactions no longer ghosts.
		fresh := make(map[int][]history.Op, len(st.GhostKeys))
		for g, ops := range st.ghostOps {
			if st.GhostKeys[g] != nil {
				fresh[g] = ops
			}
		}
		st.ghostOps = fresh
	}
	// Mostly gk lost a key since (evict deletes in place, keeping the
	// order): the other values are the ones built before. A new slice,
	// since earlier instances may still hold the old one.
	old := st.ghostOps[i]
	body := o.log.at(i)
	ops := make([]history.Op, 0, len(gk))
	for _, k := range gk {
		for len(old) > 0 && old[0].Key != k {
			old = old[1:]
		}
		if len(old) > 0 {
			ops = append(ops, old[0])
			old = old[1:]
			continue
		}
		v, _ := o.finalWrite(body, k)
		ops = append(ops, history.Op{Kind: history.Write, Key: k, Value: v})
	}
	st.ghostOps[i] = ops
	return ops
}

// windowOps returns window member i's ops without the reads the instance
// drops: all reads while i is open, replaced reads and tainted reads.
// Most members drop none once closed, and share their body's ops (no one
// writes a history's ops) instead of a copy per step.
func (o *Online) windowOps(i int, ops []history.Op) []history.Op {
	replaced := o.ev.Replaced[i]
	drop := func(op *history.Op) bool { return o.dropsRead(i, op, replaced) }
	first := -1
	for j := range ops {
		if drop(&ops[j]) {
			first = j
			break
		}
	}
	if first < 0 {
		return ops[:len(ops):len(ops)]
	}
	out := make([]history.Op, first, len(ops))
	copy(out, ops[:first])
	for j := first + 1; j < len(ops); j++ {
		if !drop(&ops[j]) {
			out = append(out, ops[j])
		}
	}
	return out
}

// dropsRead reports whether window member i's op is a read the instance
// drops (windowOps): every read while i is open, a replaced read
// (replaced is ev.Replaced[i]), a tainted one.
func (o *Online) dropsRead(i int, op *history.Op, replaced []history.Key) bool {
	if op.Kind != history.Read {
		return false
	}
	if !o.closed.get(i) && !o.closedBySession(i) || slices.Contains(replaced, op.Key) {
		return true
	}
	if !op.IsList && o.tainted(i, op.Key, op.Value) {
		return true
	}
	return op.IsList && o.listTainted(i, *op)
}

func (o *Online) listTainted(r int, op history.Op) bool {
	// Each element (never null) may come from a wildcard appender; an
	// empty list read cannot.
	for _, el := range op.List {
		if o.tainted(r, op.Key, el) {
			return true
		}
	}
	return false
}

// solve encodes and solves the instance.
func (r *reduced) solve(ctx context.Context) solver.Status {
	r.e.EncodeCtx(ctx)
	return r.e.Solve(ctx)
}

// prober decides literals of a satisfiable instance, making each decided
// one a unit so that later checks and the edges it carries see it.
type prober struct {
	ctx   context.Context
	s     *solver.Solver
	model bool
	// rank is the current model's topological order, computed on demand:
	// a model that orders two nodes one way answers "is the other way
	// forced?" without a probe.
	rank []int32
	// rankBuf is rank's array, refilled for each model: a model per
	// probe made a node-sized allocation each.
	rankBuf []int32
	// orderBuf holds the model's order while rank is filled from it.
	orderBuf []solver.Node
	// budget bounds the probes of one step; an undecided answer for want
	// of budget only delays an eviction to a later step. cheap bounds
	// the probes the solver answers from its saved model, which the
	// budget gives back (solve).
	budget int
	cheap  int
	// noProbe: the member asked about is backed off (evict_backoff.go):
	// only level-0 facts, the model's order and the closure answer.
	noProbe bool
	// proven are the orders forced has proven.
	proven map[[2]solver.Node]bool
	// o builds the step's closure at its first question (build, set
	// when the closure is on); cl is it (evict_closure.go), nil before
	// that question or once it is dropped (noCl).
	o     *Online
	build bool
	noCl  bool
	cl    *stepClosure
	r     *reduced
	// stats is the engine's closure counters (Online.closureStats).
	stats *ClosureStats
	// ms and claimed: the models seen (burst_probe.go).
	ms      modelsSeen
	claimed bool
}

// closure is the step's closure, built at its first question (nil: off,
// or dropped for a cycle of facts).
func (pr *prober) closure() *stepClosure {
	if pr.cl == nil && pr.build && !pr.noCl {
		if pr.cl = pr.o.buildStepClosure(pr.r); pr.cl == nil {
			pr.noCl = true
		}
	}
	return pr.cl
}

// probeBudget is the probes one step may spend. Each probe is a solve,
// and one after a unit pays a level-0 simplification of the instance.
const probeBudget = 256

// cheapBudget is the probes one step may have refunded: a probe the
// solver answers from its saved model without a search (F2) costs a
// propagation and a copy of the order, not a search, and gives its unit
// of probeBudget back while this lasts. A step so makes at most
// probeBudget + cheapBudget probes (SEMANTICS.md §5, "Probes answered
// from the saved model do not spend the budget").
const cheapBudget = 4 * probeBudget

// solve is a probe's solve under one assumption, spent beforehand: if
// the solver answered it from the saved model and cheap lasts, the
// probe goes back to the budget. It changes how many probes a step
// makes, never an answer.
func (pr *prober) solve(assume solver.Lit) solver.Status {
	k := pr.s.Stats().KeptModelSolves
	st := pr.s.Solve(pr.ctx, assume)
	if st == solver.Sat && pr.cheap > 0 && !noCheapRefund && pr.s.Stats().KeptModelSolves > k {
		pr.cheap--
		pr.budget++
		cheapRefunds.Add(1)
	}
	return st
}

// noCheapRefund (tests) turns the refund off; cheapRefunds counts the
// probes given back.
var (
	noCheapRefund bool
	cheapRefunds  atomic.Int64
)

func (pr *prober) ensureModel() bool {
	if pr.model {
		return true
	}
	pr.rank = nil
	pr.model = pr.s.Solve(pr.ctx) == solver.Sat
	if pr.model {
		pr.noteModel() // burst_probe.go
	}
	return pr.model
}

func (pr *prober) spend() bool {
	if pr.budget <= 0 || pr.noProbe {
		return false
	}
	pr.budget--
	return true
}

// decide returns l's value in every completion, if it has one.
func (pr *prober) decide(l incremental.Lit) (bool, bool) {
	switch l {
	case incremental.LitTrue:
		return true, true
	case incremental.LitFalse:
		return false, true
	}
	sl := solver.Lit(l)
	if v, ok := fixedLit(pr.s, l); ok {
		return v, true
	}
	if pr.noProbe {
		return false, false
	}
	if !pr.ensureModel() {
		return false, false
	}
	m := pr.s.Value(sl)
	other := sl
	if m {
		other = sl.Not()
	}
	if pr.seenBoth(sl) { // burst_probe.go: models seen set it both ways
		return false, false
	}
	if !pr.spend() {
		pr.claimed = false
		return false, false
	}
	pr.fillRank() // the model outlives the probe (burst_probe.go)
	st := pr.solve(other)
	pr.checkSeenClaim(st)
	if probeTrace != nil {
		probeTrace("decide", st == solver.Unsat)
	}
	switch st {
	case solver.Unsat:
		pr.s.AddClause(other.Not())
		return m, true
	case solver.Sat:
		pr.model, pr.rank = true, nil
		pr.noteModel()
	default:
		pr.model = false
	}
	return false, false
}

// edgeDecided reports whether an edge on p (and q) is present in every
// completion or in none.
func (pr *prober) edgeDecided(p, q solver.Lit, two bool) bool {
	vp, okp := pr.decide(incremental.Lit(p))
	if okp && !vp {
		return true
	}
	if !two {
		return okp
	}
	vq, okq := pr.decide(incremental.Lit(q))
	if okq && !vq {
		return true
	}
	return okp && okq
}

// forced reports whether from precedes to in every completion: the edge
// to -> from cannot be added.
func (pr *prober) forced(from, to solver.Node) bool {
	if pr.ensureModel() && pr.fillRank() {
		if pr.rank[to] < pr.rank[from] {
			// This model puts to first. (checkNotForced: tests only,
			// burst_probe.go.)
			pr.checkNotForced(from, to)
			return false
		}
	}
	if pr.proven[[2]solver.Node{from, to}] {
		return true
	}
	cl := pr.closure()
	if cl != nil && cl.reaches(from, to) {
		// A path of fixed edges and real-time orders: every completion
		// has it, no probe needed.
		pr.stats.Hits++
		return true
	}
	if cl != nil && cl.reachesAround(pr.s, from, to) {
		// The same through one fixed edge at an end the closure does not
		// hold (an unknown outcome in doubt): see reachesAround.
		pr.stats.Around++
		pr.prove(from, to)
		return true
	}
	if !pr.spend() {
		return false
	}
	pr.stats.Probes++
	sel := pr.s.NewSelector()
	pr.s.AddEdge(sel, to, from)
	st := pr.solve(sel)
	if st == solver.Sat {
		// The solver's values are now the probe's model, and pr.rank
		// the old model's order: a flip test (F1) mixing the two could
		// say "not decided" where neither model does. Take the order
		// of the new model before AddClause drops it.
		pr.rank = nil
		pr.fillRank()
	}
	if probeTrace != nil {
		probeTrace("forced", st == solver.Unsat)
	}
	pr.s.AddClause(sel.Not())
	// The model stays one (burst_probe.go).
	if st != solver.Unsat {
		return false
	}
	pr.prove(from, to)
	return true
}

// prove records an order every model has: the order is a fact, kept as a
// base edge (the end of evict keeps it across steps), and asked again (R4
// asks it of a writer and again of the one after it) it costs no probe.
func (pr *prober) prove(from, to solver.Node) {
	if pr.proven == nil {
		pr.proven = map[[2]solver.Node]bool{}
	}
	pr.proven[[2]solver.Node{from, to}] = true
	pr.s.AddBaseEdge(from, to)
	if pr.cl != nil && !pr.cl.add(from, to) {
		// A cycle of facts: not a satisfiable instance's. The closure
		// is dropped for the rest of the step.
		pr.cl, pr.noCl = nil, true
	}
}

func touchesList(p *incremental.Prepared, t *history.Txn) bool {
	for _, op := range t.Ops {
		if k, ok := p.KeyIndex()[op.Key]; ok && p.ListKeys()[k] {
			return true
		}
	}
	return false
}

// fixedLit is solver.Fixed for the encoder's literals, constants included.
func fixedLit(s *solver.Solver, l incremental.Lit) (bool, bool) {
	switch l {
	case incremental.LitTrue:
		return true, true
	case incremental.LitFalse:
		return false, true
	}
	return s.Fixed(solver.Lit(l))
}

// irrelevanceBudget bounds the probes the irrelevance rule may spend in one
// step, so that the eviction loop after it keeps the rest of probeBudget.
const irrelevanceBudget = probeBudget / 2

// maxEvictPasses bounds the eviction passes of one step.
const maxEvictPasses = 64

// fixIrrelevant is the irrelevance rule (docs/SEMANTICS.md §5, "Pinning" (b)):
// it fixes orders of writer pairs that no probe decides when turning any
// completion's orders of those pairs around cannot create a cycle, so
// that blind writes nobody reads (history P) can leave. Let x be "a
// before b" for an undecided pair of writers a, b sharing keys; the edges
// that hold only under x are a->b and u->b for every reader u of a's
// version of a shared key (anti-dependencies), and under ¬x the mirror
// ones. The rule fixes a set of such literals (x, or ¬x with the roles of
// a and b exchanged; the order of the step's model when both would do) when:
//
//   - I1 a and b are committed, time-closed window members with their
//     bodies, touching no list key and in no pending core;
//   - I2 no read outside the instance can read a's version of a shared
//     key: no open member reads that value (open reads are not in the
//     instance) and a committed time-closed writer of the key follows a in
//     every completion (a future read follows every closed transaction);
//   - I3 no edge on a fixed literal lies on a cycle of the graph H of
//     every edge some completion may hold once the literals are fixed:
//     fixed edges, edges whose literals are not fixed false nor against a
//     fixed literal (an edge on a fixed literal counts even against real
//     time or session order: fixing the literal may force it, and then a
//     cycle with them), the anti-dependencies of the reads the instance
//     dropped (to every writer of the key that does not precede the
//     reader), and a node through which every closed transaction may
//     precede every open member. Literals whose edges do lie on a cycle
//     are left out, and H recomputed, until none does.
//
// Why the orders are then free (the exchange argument): take any
// completion of the history and a future, as the set E of its edges
// (fixed, read-from, version-order and anti-dependency edges). Let E' be E
// without its edges on the negations of the fixed literals and with the
// edges on the fixed literals whose other literal E satisfies: every read
// keeps its source, and each key's version order still agrees with it (b
// after a, the readers of a's version before b; by I2 no reader outside
// the instance read a's version). Restricted to the instance, any path of
// E' has one in H: a step into an open member has the extra node, a step
// out of one an anti-dependency or an edge of the instance, and a path
// cannot return from a future transaction to a closed one (that would be
// a cycle of E with real time), while every tail of an added edge is
// closed. E without the removed edges is acyclic, so a cycle of E' would
// use an added edge, which I3 rules out; a topological order of E' is a
// completion with every fixed literal. So fixing them keeps satisfiable
// every future that was.
//
// I4, read sources. Under an unknown initial state a read of the first
// writer w's value may also have read the initial version (its value
// unknown), and no probe tells the two apart while nothing else reads or
// writes the key. For a read by r (an I1 endpoint that does not write the
// key) whose only undecided sources are w (committed, time-closed, in no
// pending core) and the initial version, the rule fixes "r read w", with
// I3 for its edges (w->r, and r to the writers after w). The exchange: in
// a completion E where r read the initial version, r precedes every
// writer of the key; let E' be E with r reading w instead, the version
// order and the initial value unchanged. E' adds only w->r (r's other new
// edges, to the writers after w, are in E already), so a cycle of E' runs
// through w->r, which I3 rules out as above.
//
// I5, duplicate values (docs/SEMANTICS.md §5 "Duplicate values: the
// source of a closed read"). A read by r (an I1 endpoint that does not
// write the key) of a value several closed committed writers wrote has
// two or more undecided sources; the rule fixes "r read w" for w the
// model's source (else the first closed committed writer among them,
// never the initial version), with I3 for its edges (w->r, and r to the
// writer after w) and the other sources left out of H. The exchange: in a
// completion E where r read w', let E' be E with r reading w, every
// version order and initial value unchanged; r writes no version of the
// key, so only r's edges change, and the added ones are all on the fixed
// literal, which I3 keeps off every cycle. I4 above is the case where
// w' is the initial version.
//
// Pairs are fixed together, not one at a time: three writers of one key
// that overlap in time (often, with 32 sessions) each have a possible
// path through the third, so no single pair is free, but the three start
// orders together close no cycle.
//
// docs/SEMANTICS.md states the rule with Z (no open ancestor), "neither can be
// the last closed writer of a shared key nor a possible source of any
// read", and the order of a model of the strict instance. That form fixes
// orders that a later read refutes:
//
//	C[0,100] w k1, w z1 · R[25,35] r z1, w x1 · W[27,29] w x2 ·
//	Y[30,40] w k2 · D[50,60] w x3 · F[110,120] r k1
//
// is valid (W Y C R D F). At W=101 R and W are unread, covered by D on x
// and in Z; a model may order R<W, which forces C<R<W<Y, and F's read of
// k1 from C then needs Y<C. Here the edge R->W lies on the cycle
// R->W->Y->C->R of H (Y->C is possible), so only W<R is fixed.
//
// A fixed order is a level-0 unit of this step's instance; the end of
// evict keeps it as an order between members, so later steps have it too.
// It returns the number of pairs fixed.
func (o *Online) fixIrrelevant(ctx context.Context, r *reduced, pr *prober, pinned map[int]bool) int {
	p, e := r.p, r.e
	member := func(t int32) bool {
		return r.pos[t] >= 0 && !r.ghost[t]
	}
	// Values that open members read: their writers may be the sources.
	openReads := map[string]bool{}
	for t := range r.h.Txns {
		if i := r.pos[t]; member(int32(t)) && !o.closed.get(i) {
			for _, op := range o.log.at(i).Ops {
				if op.Kind == history.Read {
					openReads[taintKey(op.Key, op.Value)] = true
				}
			}
		}
	}
	endpoints := map[int32]bool{}
	endpoint := func(t int32) bool { // I1
		v, seen := endpoints[t]
		if !seen {
			i := r.pos[t]
			v = member(t) && o.closed.get(i) && !pinned[i] && e.Node()[t] >= 0 && !p.Txns()[t].Dropped() &&
				r.h.Txns[t].Status == history.Committed && !touchesList(p, &r.h.Txns[t])
			endpoints[t] = v
		}
		return v
	}
	var cands []*incremental.PairVar
	for _, pv := range e.PairsL() {
		if _, fixed := fixedLit(e.Solver(), pv.X()); fixed {
			continue
		}
		if endpoint(pv.A()) && endpoint(pv.B()) {
			cands = append(cands, pv)
		}
	}
	// Reads of a closed member that may come from several sources: the
	// initial version and one closed writer (under an unknown initial
	// state, the first writer's value may also be the initial one, I4), or
	// several writers of a duplicate value (I5): the rule fixes a writer.
	source := func(w int32) bool {
		i := r.pos[w]
		return i >= 0 && o.closed.get(i) && !pinned[i] && e.Node()[w] >= 0 && !p.Txns()[w].Dropped() && r.h.Txns[w].Status == history.Committed
	}
	type rfCand struct {
		reader, writer int32
		l              solver.Lit
		others         []solver.Lit // the read's other undecided sources
	}
	var rfCands []rfCand
	var model bool // whether pr holds a model (asked once, lazily)
	var modelAsked bool
	for ri := range e.Reads() {
		rv := &e.Reads()[ri]
		if rv.N() < 2 || !endpoint(rv.Txn()) {
			continue
		}
		rd := &p.Txns()[rv.Txn()].Reads()[rv.Read()]
		if rd.IsList() {
			continue
		}
		if _, writes := p.Txns()[rv.Txn()].FinalValue(rd.Key()); writes {
			continue
		}
		cs, ls := e.Cands(rv), e.Rfs(rv)
		// The sources still open: every candidate whose literal is not
		// fixed. One fixed true decides the read (nothing to fix).
		decided := false
		open := 0
		for ci := range cs {
			if cs[ci] < -1 {
				decided = true // a list parse: not a register read
				break
			}
			if v, fixed := fixedLit(e.Solver(), ls[ci]); fixed {
				if v {
					decided = true
					break
				}
				continue
			}
			if ls[ci] < 0 {
				decided = true // a constant: nothing to choose
				break
			}
			open++
		}
		if decided || open < 2 {
			continue
		}
		// The source to fix: the one the step's model chose when it is a
		// closed committed writer (I4 holds for any, the model's agrees
		// with every fixed fact), else the first such writer. Never the
		// initial version: "r read the initial version" needs the initial
		// value to be r's, which the exchange does not give.
		if !modelAsked {
			model, modelAsked = pr.ensureModel(), true
		}
		pick := -1
		for ci, c := range cs {
			if _, fixed := fixedLit(e.Solver(), ls[ci]); fixed || c < 0 || !source(c) {
				continue
			}
			if pick < 0 {
				pick = ci
			}
			if model && pr.s.Value(solver.Lit(ls[ci])) {
				pick = ci
				break
			}
		}
		if pick < 0 {
			continue
		}
		rc := rfCand{reader: rv.Txn(), writer: cs[pick], l: solver.Lit(ls[pick])}
		for ci := range cs {
			if _, fixed := fixedLit(e.Solver(), ls[ci]); ci != pick && !fixed {
				rc.others = append(rc.others, solver.Lit(ls[ci]))
			}
		}
		rfCands = append(rfCands, rc)
	}
	if len(cands) == 0 && len(rfCands) == 0 {
		return 0
	}
	budget := pr.budget
	pr.budget = min(budget, irrelevanceBudget)
	defer func() { pr.budget = budget - (min(budget, irrelevanceBudget) - pr.budget) }()
	// hidden is I2 for first on key k, second being the other writer.
	hidden := func(first, second, k int32) bool {
		v, _ := p.Txns()[first].FinalValue(k)
		if openReads[taintKey(p.Keys()[k], v)] {
			return false
		}
		var later []int32
		for _, c := range p.WritersOf()[k] {
			if c == first || c == second || r.pos[c] < 0 || !o.closed.get(r.pos[c]) || e.Node()[c] < 0 {
				continue
			}
			if status := r.h.Txns[c].Status; status != history.Committed {
				if com, dec := fixedLit(e.Solver(), e.Act()[c]); !dec || !com || status == history.Aborted {
					continue
				}
			}
			if p.Before(first, c) {
				return true
			}
			later = append(later, c)
		}
		for _, c := range later {
			if pr.forced(e.Node()[first], e.Node()[c]) {
				return true
			}
		}
		return false
	}
	// Orient each candidate: the order of the model the step found if a
	// read outside the instance cannot see its first writer, else the
	// other way (I2). Orders that one model holds agree with every fixed
	// edge and with each other; start order, tried first before, could
	// contradict a kept fact (a -> c -> b with b starting first), and then
	// each step dropped the pair again by I3 and the window behind it grew
	// without bound (1M-transaction blindw-rw stream).
	modelFirst := make([]bool, len(cands))
	if pr.ensureModel() {
		for i, pv := range cands {
			modelFirst[i] = pr.s.Value(solver.Lit(pv.X()))
		}
	}
	hiddenAll := func(first, second int32) bool {
		for _, kv := range p.Txns()[first].Finals() {
			if _, shared := p.Txns()[second].FinalValue(kv.Key()); shared && !hidden(first, second, kv.Key()) {
				return false
			}
		}
		return true
	}
	chosen := map[solver.Var]solver.Lit{}
	var fix []orientation
	for i, pv := range cands {
		if ctx.Err() != nil {
			return 0
		}
		first, second, l := pv.A(), pv.B(), pv.X()
		if !modelFirst[i] {
			first, second, l = pv.B(), pv.A(), pv.X().Not()
		}
		if !hiddenAll(first, second) {
			if l = l.Not(); !hiddenAll(second, first) {
				continue
			}
		}
		chosen[solver.Lit(l).Var()] = solver.Lit(l)
		fix = append(fix, orientation{l: solver.Lit(l), ends: [2]solver.Node{e.Node()[pv.A()], e.Node()[pv.B()]}})
	}
	for _, rc := range rfCands {
		chosen[rc.l.Var()] = rc.l
		also := make([]solver.Lit, 0, len(rc.others))
		for _, o := range rc.others {
			chosen[o.Var()] = o.Not()
			also = append(also, o.Not())
		}
		fix = append(fix, orientation{l: rc.l, ends: [2]solver.Node{e.Node()[rc.writer], e.Node()[rc.reader]}, also: also})
	}
	// I3 for all of them at once: drop the orders whose edges close a
	// cycle, until none does.
	if irrelevanceTrace != nil {
		oriented := len(fix)
		defer func() { irrelevanceTrace(len(cands), len(rfCands), oriented, len(fix)) }()
	}
	// H is read from the solver once for all rounds (build22_hgraph.go).
	hs := &o.ev.hg
	hs.reset()
	for len(fix) > 0 {
		comp := o.componentsRound(hs, r, chosen)
		kept := fix[:0]
		for _, f := range fix {
			if f.cyclic(e.Solver(), comp) {
				delete(chosen, f.l.Var())
				for _, a := range f.also {
					delete(chosen, a.Var())
				}
			} else {
				kept = append(kept, f)
			}
		}
		if len(kept) == len(fix) {
			break
		}
		fix = kept
	}
	for _, f := range fix {
		e.Solver().AddClause(f.l)
	}
	if !keepStaleModel { // tests only (burst_probe.go)
		pr.model, pr.rank = false, nil
	}
	return len(fix)
}

// orientation is an order the irrelevance rule may fix: l, a pair
// literal, and the pair's two writers, where every edge on l ends.
type orientation struct {
	l    solver.Lit
	ends [2]solver.Node
	// also are literals that fixing l implies (the other source of a read
	// whose source the rule fixes), left out of H with it.
	also []solver.Lit
}

// cyclic reports whether an edge on f.l joins two nodes of one component
// of the graph componentsUnder numbered: whether fixing it may close a
// cycle.
func (f orientation) cyclic(s *solver.Solver, comp []int32) bool {
	cyclic := false
	for _, n := range f.ends {
		s.IncidentEdges(n, func(other solver.Node, _ bool, a, b solver.Lit, two bool) {
			if (a == f.l || (two && b == f.l)) && comp[other] == comp[n] {
				cyclic = true
			}
		})
	}
	return cyclic
}

// componentsUnder numbers the strongly connected components of the graph
// of every edge some completion may hold once the orders in chosen (pair
// variable -> literal) are fixed: fixed edges, edges whose literals are
// not fixed false nor against chosen, and those of the reads the instance
// dropped (an open read may precede every writer of its key that does not
// precede the reader). A last node stands for every way a time-closed
// transaction may come to precede an open member: each closed transaction
// has an edge to it and it has one to each open member. That covers the
// read-from edges of the dropped reads, and paths through future
// transactions (which follow every closed one).
func (o *Online) componentsUnder(r *reduced, chosen map[solver.Var]solver.Lit) []int32 {
	p, e := r.p, r.e
	n := e.Solver().NumNodes()
	future := int32(n)
	// The graph's lists and Tarjan's arrays are the last call's, emptied:
	// the rule builds H once or more per step, about the size of the
	// instance each time.
	sc := &o.ev.scc
	for len(sc.adj) < n+1 {
		sc.adj = append(sc.adj, nil)
	}
	adj := sc.adj[:n+1]
	for u := range adj {
		adj[u] = adj[u][:0]
	}
	possible := func(q solver.Lit) bool {
		if c, ok := chosen[q.Var()]; ok {
			return q == c
		}
		v, fixed := e.Solver().Fixed(q)
		return !fixed || v
	}
	var buf []solver.Node
	for u := 0; u < n; u++ {
		from := e.NodeTxn()[u]
		buf = e.Solver().FixedEdges(solver.Node(u), true, buf[:0])
		for _, m := range buf {
			adj[u] = append(adj[u], int32(m))
		}
		e.Solver().IncidentEdges(solver.Node(u), func(other solver.Node, out bool, a, b solver.Lit, two bool) {
			if !out || !possible(a) || (two && !possible(b)) {
				return
			}
			_, on := chosen[a.Var()]
			if two {
				_, onB := chosen[b.Var()]
				on = on || onB
			}
			if to := e.NodeTxn()[other]; !on && from >= 0 && to >= 0 && (p.Before(to, from) || o.anchoredBefore(r, to, from)) {
				// Against the level's own order: in no completion. An
				// edge on a fixed literal stays: fixing it would add it.
				// Into an unknown in doubt whose session anchor precedes
				// from: on a cycle in every completion that commits it,
				// and on none in the others.
				return
			}
			adj[u] = append(adj[u], int32(other))
		})
	}
	o.addFutureEdges(adj, r, future)
	return sc.components(adj)
}

// addFutureEdges adds to adj the part of H no chosen variable decides:
// each closed member's edge to future, future's edge to each open
// member, and the edges of the reads the instance dropped (an open
// read may precede every writer of its key that real time does not put
// before the reader). componentsUnder and split (build22_hgraph.go)
// both build it.
func (o *Online) addFutureEdges(adj [][]int32, r *reduced, future int32) {
	p, e := r.p, r.e
	for t := range r.h.Txns {
		i, u := r.pos[t], e.Node()[t]
		if u < 0 {
			continue
		}
		if i < 0 || r.ghost[t] || o.closed.get(i) || o.closedBySession(i) {
			// An unknown in doubt closed by its session counts as
			// closed: its reads are in the instance, and what is still
			// to come follows its anchor in real time (anchoredBefore).
			adj[u] = append(adj[u], future)
			continue
		}
		adj[future] = append(adj[future], int32(u))
		for _, op := range o.log.at(i).Ops {
			if op.Kind != history.Read {
				continue
			}
			if k, has := p.KeyIndex()[op.Key]; has {
				for _, w := range p.WritersOf()[k] {
					if w != int32(t) && e.Node()[w] >= 0 && !p.Before(w, int32(t)) && !o.anchoredBefore(r, w, int32(t)) {
						adj[u] = append(adj[u], int32(e.Node()[w]))
					}
				}
			}
		}
	}
	if !noListOrderEdges {
		addListOrderEdges(adj, r)
	}
}

// noListOrderEdges (tests) leaves the list orders out of H, as before
// they were added: TestListOrderInHNaive shows the disagreement.
var noListOrderEdges bool

// addListOrderEdges adds to adj the orders a read still to come may put
// between two appenders of a list key (docs/SEMANTICS.md §5 "H holds the
// orders a later list read may show"): it shows both appends, in the
// order the database chose, so it orders the two directly, not through
// itself as a register read does. Each appender a of a list key gets an
// edge to every other appender b that the level does not put before a.
// Without them H missed the cycle a fixed read source closed with such
// an order, and the list rule folded a prefix a later read contradicted.
func addListOrderEdges(adj [][]int32, r *reduced) {
	p, e := r.p, r.e
	node := e.Node()
	for k, isList := range p.ListKeys() {
		if !isList {
			continue
		}
		ws := p.WritersOf()[k]
		for _, a := range ws {
			na := node[a]
			if na < 0 {
				continue
			}
			for _, b := range ws {
				if nb := node[b]; b != a && nb >= 0 && !p.Before(b, a) {
					adj[na] = append(adj[na], int32(nb))
				}
			}
		}
	}
}

// sccScratch holds componentsUnder's graph and Tarjan's arrays from one
// call to the next; the numbering returned is valid until the next call.
type sccScratch struct {
	adj              [][]int32
	index, low, comp []int32
	stack            []int32
	onStack          []bool
	calls            []sccFrame
}

type sccFrame struct{ v, next int32 }

// components numbers the strongly connected components of adj (Tarjan's
// algorithm, iterative: the graphs are as deep as the window is long).
func (sc *sccScratch) components(adj [][]int32) []int32 {
	n := len(adj)
	sc.index, sc.low, sc.comp = incremental.Reuse(sc.index, n), incremental.Reuse(sc.low, n), incremental.Reuse(sc.comp, n)
	sc.onStack = incremental.Reuse(sc.onStack, n)
	index, low, comp, onStack := sc.index, sc.low, sc.comp, sc.onStack
	for i := range index {
		index[i], comp[i] = -1, -1
	}
	stack := sc.stack[:0]
	calls := sc.calls[:0]
	defer func() { sc.stack, sc.calls = stack[:0], calls[:0] }()
	var counter, comps int32
	for root := range adj {
		if index[root] >= 0 {
			continue
		}
		calls = append(calls[:0], sccFrame{int32(root), 0})
		index[root], low[root] = counter, counter
		counter++
		stack = append(stack, int32(root))
		onStack[root] = true
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := f.v
			if int(f.next) < len(adj[v]) {
				w := adj[v][f.next]
				f.next++
				switch {
				case index[w] < 0:
					index[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					calls = append(calls, sccFrame{w, 0})
				case onStack[w]:
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = comps
					if w == v {
						break
					}
				}
				comps++
			}
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				u := calls[len(calls)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return comp
}

// replayChunk is how many released transactions one replay step adds (a
// variable for the tests, which replay in small chunks).
var replayChunk = 4096

// replay rebuilds the reduced instance from the bodies after an alert (the
// rule "replay stored bodies with the larger quarantine set"): the
// released history minus the quarantine goes through the engine again in
// release order, a chunk per step, as the stream first did. Putting it
// all back at once (resetInstance) made the next step hold the whole
// history: minutes and the memory of every body once the stream is long.
//
// Each replay step is a step the stream could have had: transactions
// released up to the chunk's end, and time-closed those that closed
// before the next one started (effEnd+2Δ below its start; later
// transactions start no earlier, released in start order) and are closed
// now. The last step has the real closings. A replay step that is not
// satisfiable is another anomaly: the rest goes back at once, and the
// caller's loop finds it on the bodies.
//
// It starts from the latest rewind point at or before from, the first
// newly quarantined transaction (rewind.go), or else from the first
// transaction.
func (o *Online) replay(ctx context.Context, from int) error {
	old := o.ev.memberList()
	st := newEvictState()
	start := 0
	if p, ok, inexact := o.rewindTo(from); ok {
		var err error
		if st, err = o.rewoundState(p, inexact); err != nil {
			return err
		}
		start = p.Pos
		o.rewound++
		if inexact {
			o.inexactRewinds++
		}
	} else {
		st.Taint = o.ev.Taint
		st.Evicted, st.Disagreements = o.ev.Evicted, o.ev.Disagreements
	}
	n := o.log.len()
	for st.Member.len() < n {
		st.Member.push(false)
	}
	o.ev = st
	// A member before the point that the point's state had evicted cannot
	// be (nothing evicted comes back but by a replay, which drops later
	// points); should one be, it goes to the spill rather than staying in
	// memory for ever.
	for _, i := range old {
		if i < start && !o.ev.Member.get(i) {
			o.spillBody(i)
		}
	}
	closed := o.closed
	o.closed = makeFlags(closed.len())
	defer func() { o.closed = closed }()
	for lo := start; lo < n; lo += replayChunk {
		hi := min(lo+replayChunk, n)
		for i := lo; i < hi; i++ {
			if !o.quar.get(i) {
				if err := o.unstub(i); err != nil {
					return err
				}
				o.ev.admit(i)
			}
		}
		next := int64(math.MaxInt64)
		if hi < n {
			// hi may be spilled, its stub dropped with its chunk.
			t, err := o.body(hi)
			if err != nil {
				return err
			}
			next = t.Start
		}
		for _, i := range o.ev.memberList() {
			o.closed.set(i, closed.get(i) && (hi == n || o.closedBefore(i, next)))
		}
		r := o.build()
		if len(r.h.Txns) == 0 {
			continue
		}
		o.checks++
		status := r.solve(ctx)
		o.conflicts += r.e.Solver().Stats().Conflicts
		r, status, held := o.solveHeld(ctx, r, status)
		if status != solver.Sat {
			for i := hi; i < n; i++ {
				if !o.quar.get(i) {
					if err := o.unstub(i); err != nil {
						return err
					}
					o.ev.admit(i)
				}
			}
			return nil
		}
		if !held {
			o.evict(ctx, r)
		}
		o.drop(r)
		o.takeRewind(hi)
	}
	return nil
}

// drop hands the tables of r, which no one uses any more, to the next
// build. Only they are kept until then, not the history: the encoder
// and its solver go with their arrays, which the next build's encoder
// takes over (WithRecycled), and hold none of the history.
func (o *Online) drop(r *reduced) {
	p := r.p
	p.Drop()
	o.dropped, o.droppedTxns, o.droppedAt = p, r.h.Txns, r.at
	o.droppedEnc = r.e
	r.e = nil
}

// closedBefore reports whether released transaction i time-closes before
// a transaction starting at start: effEnd+2Δ < start.
func (o *Online) closedBefore(i int, start int64) bool {
	end := o.opts.EffectiveEnd(o.log.at(i))
	return end != math.MaxInt64 && end <= math.MaxInt64-2*o.opts.Skew && end+2*o.opts.Skew < start
}

// anchoredBefore: w is an unknown in doubt closed by its session whose
// anchor precedes t in real time, so w precedes t in every completion
// that commits w (docs/SEMANTICS.md §5 "The irrelevance rule around an
// unknown in doubt").
func (o *Online) anchoredBefore(r *reduced, w, t int32) bool {
	i := r.pos[w]
	if i < 0 {
		return false
	}
	k, ok := o.doubt.closedBy[i]
	if !ok {
		return false
	}
	a, in := r.at[k]
	return in && r.p.Before(a, t)
}
