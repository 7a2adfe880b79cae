package incremental

import (
	"math"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// Duplicate values at the snapshot levels (docs/SEMANTICS.md §3,
// "Duplicate values on begin and commit nodes"). The serializable
// encoding's D1 and D2 (prune_dup.go) do not carry over: under first
// committer wins two writers of a key never overlap, whatever they write,
// so every pair of a key's writers keeps an order. On a history of m
// blind writers of x = 1 and R readers of it the BC-polygraph had m²/2
// order variables and R·m read-from literals (issue 24, BENCHMARKS.md
// "peers4": 14 GB without a verdict at 5K + 5K). Call a register key k
// *uniform* when every writer of it in the instance has the same final
// value v_k, and a transaction *blind-uniform* when it reads nothing and
// every key it writes is a uniform register key. Four rules, each exact:
//
//   - SD1, no rw edge on a uniform key: a read of v_k on a uniform key
//     gets no rw edge. Every model's schedule keeps the key's writers
//     apart (the ww edges stay), so the last writer committed before the
//     reader's snapshot is a writer of v_k: that one is a source whose
//     rw edges all hold. On any key, likewise, two writers of one value
//     whose order the search decides (orderPairSI) draw no rw edge for
//     each other's readers (siSameValue).
//   - SB, blind pairs: two blind-uniform writers get no order variable
//     and no ww edge. A blind transaction's begin node has one outgoing
//     edge, to its commit; moving it next to its commit keeps every
//     model's schedule a schedule, and two writers whose begins sit next
//     to their commits never overlap.
//   - SD3, settled by the level's order: a read of v_k on a uniform key
//     by r, where a committed writer u of k precedes r in session order
//     (session levels) or real time (strong SI), has u as its source: the
//     level draws C_u ~> B_r in every model, and by SD1 nothing else is
//     asked of the read.
//   - SD4, one hub per key: the other reads of v_k on a uniform key (two
//     writers or more, known initial state) share one node Z_k: Z_k ->
//     B_r for each reader, C_w -> Z_k under a literal first(w) per writer,
//     and "some first(w)" when a reader is committed. "Every reader has a
//     writer before its snapshot" is "the earliest committed writer is
//     before every reader's snapshot": m + R edges instead of m·R.
//
// Scope: the fast path (pruning on, not guarded, not recording, not
// online), where e.sameValue is set; cores and explanations are found on
// the plain instance. The witness puts each blind-uniform transaction's
// begin right before its commit (witnessSI), the schedule SB's argument
// builds.

// siDupState is the rules' per-encoder state, inside siState, computed
// once the nodes are laid out (siDupInit): a pass over every key's
// writers and every transaction's writes, so that the pair loops ask
// two slice entries per pair.
type siDupState struct {
	uniform  []bool          // per key: a uniform register key with a writer
	val      []history.Value // per uniform key: v_k
	blind    []bool          // per transaction: blind-uniform
	allBlind []bool          // per key: uniform, every writer blind-uniform
	// settlers of SD3, per uniform key, computed on first use: the
	// committed writer with the smallest end (strong SI) and, per session,
	// the committed writer of the key earliest in it (session levels).
	rtFirst   []int32
	sessFirst map[[2]int32][2]int32 // (key, session) -> (rank, writer)
	settlerOf []bool                // per key: settlers computed
	groups    map[int32]*siGroup
	groupKeys []int32 // keys with a hub, in creation order (determinism)
	// counters for the tests that hold each rule to the oracle: reads
	// left without rw edges, pairs left without an order, reads settled,
	// reads grouped, hubs.
	sd1, sb, sd3, sd4, hubs int
	sd1pairs                int // pairs of one value left without rw edges
}

// siGroup is the hub of SD4 for one key.
type siGroup struct {
	z    solver.Node
	need lit // some reader of the group is committed
}

// siDupOn: the fast path of a level of the family.
func (e *encoder) siDupOn() bool {
	return e.si != nil && e.sameValue && !e.guarded && !e.record
}

// siDupInit computes which keys are uniform (prune_dup.go's
// writersUniform: every writer in the instance has the same final value)
// and which transactions are blind-uniform (in the instance, no read,
// register or list, no append, and every key written uniform). A no-op
// off the fast path: the rules stay off (e.si.dup nil).
func (e *encoder) siDupInit() {
	if !e.siDupOn() {
		return
	}
	p := e.p
	nk, nt := len(p.keys), len(p.h.Txns)
	d := &siDupState{uniform: make([]bool, nk), val: make([]history.Value, nk), blind: make([]bool, nt), allBlind: make([]bool, nk)}
	e.si.dup = d
	for k := range p.keys {
		key := int32(k)
		if p.isList[k] || !e.writersUniform(key) {
			continue
		}
		for _, w := range p.writersOf[k] {
			if e.node[w] >= 0 {
				v, _ := p.txns[w].finalValue(key)
				d.val[k], d.uniform[k] = v, true
				break
			}
		}
	}
	for t := range p.txns {
		pt := &p.txns[t]
		ok := e.node[t] >= 0 && len(pt.reads) == 0 && len(pt.appends) == 0 && len(pt.finals) > 0
		for _, kv := range pt.finals {
			ok = ok && d.uniform[kv.key]
		}
		d.blind[t] = ok
	}
	for k := range p.keys {
		if !d.uniform[k] {
			continue
		}
		all, n := true, 0
		for _, w := range p.writersOf[k] {
			if e.node[w] >= 0 {
				n++
				all = all && d.blind[w]
			}
		}
		if d.allBlind[k] = all; all {
			d.sb += n * (n - 1) / 2
		}
	}
}

// siUniform reports whether k is a uniform register key with a writer.
func (e *encoder) siUniform(k int32) bool {
	return e.si != nil && e.si.dup != nil && e.si.dup.uniform[k]
}

// siBlind reports whether t is blind-uniform.
func (e *encoder) siBlind(t int32) bool {
	return e.si != nil && e.si.dup != nil && e.si.dup.blind[t]
}

// siBlindPair is SB: a and b need no order.
func (e *encoder) siBlindPair(a, b int32) bool {
	if d := e.si.dup; d != nil && d.blind[a] && d.blind[b] {
		d.sb++
		return true
	}
	return false
}

// siKeyAllBlind reports whether every writer of k in the instance is
// blind-uniform: its pairs need no loop at all.
func (e *encoder) siKeyAllBlind(k int32) bool {
	return e.si != nil && e.si.dup != nil && e.si.dup.allBlind[k]
}

// siNoRW is SD1: a read of val on key k draws no rw edge.
func (e *encoder) siNoRW(k int32, val history.Value) bool {
	if e.siUniform(k) && e.si.dup.val[k] == val {
		e.si.dup.sd1++
		return true
	}
	return false
}

// siSameValue is SD1 for a pair the search orders: when a and b write
// the same final value of key, the readers of either version need no rw
// edge to the other.
func (e *encoder) siSameValue(key, a, b int32) bool {
	if e.si.dup == nil || !e.sameFinal(key, a, b) {
		return false
	}
	e.si.dup.sd1pairs++
	return true
}

// siWriters returns the writers of uniform key k in the instance.
func (e *encoder) siWriters(k int32) []int32 {
	var ws []int32
	for _, w := range e.p.writersOf[k] {
		if e.node[w] >= 0 {
			ws = append(ws, w)
		}
	}
	return ws
}

// siUniformRead encodes a register read r of transaction t (rv.g set)
// by SD3 or SD4 when they apply. It returns 0 when they do not (the
// caller encodes the read as usual), 1 when the read is settled (rv holds
// its one candidate and goes to e.reads), 2 when it joined its key's hub
// (no choice of its own).
func (e *encoder) siUniformRead(rv *readVar, r *pread) int {
	p := e.p
	k := r.key
	if r.val == history.Null || p.opts.InitialState == history.InitialUnknown || !e.siUniform(k) || e.si.dup.val[k] != r.val {
		return 0
	}
	d := e.si.dup
	n := 0
	for _, w := range p.writersOf[k] {
		if e.node[w] >= 0 && w != rv.txn {
			if n++; n >= 2 {
				break
			}
		}
	}
	if n < 2 {
		// One writer (or none) is one candidate: the usual encoding makes
		// the read forced, which V1 uses.
		return 0
	}
	t := rv.txn
	if u := e.siSettler(k, t); u >= 0 {
		d.sd3++
		e.choice(rv, 1)
		e.cands(rv)[0] = u
		e.chooseOne(rv)
		e.siEdge(e.rfs(rv)[0], litTrue, e.node[u], e.si.begin[t], edgeRec{kind: kindWR, key: k, val: string(r.val), writer: u})
		return 1
	}
	d.sd4++
	g := d.groups[k]
	if g == nil {
		if d.groups == nil {
			d.groups = map[int32]*siGroup{}
		}
		g = &siGroup{z: e.newNode(-1), need: e.newLit()}
		d.groups[k] = g
		d.groupKeys = append(d.groupKeys, k)
		d.hubs++
	}
	e.siEdge(litTrue, litTrue, g.z, e.si.begin[t], edgeRec{kind: kindAux, key: k, writer: -1})
	e.clause(rv.g.not(), g.need)
	return 2
}

// siSettler returns a committed writer of uniform key k that the level
// orders before t's snapshot (C_u ~> B_t by base edges), or -1.
func (e *encoder) siSettler(k, t int32) int32 {
	p := e.p
	d := e.si.dup
	sessions := p.opts.Level.SessionOrder()
	if !sessions && !e.si.snapshotRT {
		return -1
	}
	if d.settlerOf == nil {
		d.settlerOf = make([]bool, len(p.keys))
		d.rtFirst = make([]int32, len(p.keys))
		d.sessFirst = map[[2]int32][2]int32{}
	}
	if !d.settlerOf[k] {
		d.settlerOf[k] = true
		d.rtFirst[k] = -1
		best := int64(math.MaxInt64)
		for _, w := range p.writersOf[k] {
			if e.node[w] < 0 || e.act[w] != litTrue {
				continue
			}
			tw := &p.h.Txns[w]
			if tw.HasTime && tw.End < best {
				best, d.rtFirst[k] = tw.End, w
			}
			if s := p.sessionOf[w]; s >= 0 {
				key := [2]int32{k, s}
				if f, ok := d.sessFirst[key]; !ok || p.sessionRank[w] < f[0] {
					d.sessFirst[key] = [2]int32{p.sessionRank[w], w}
				}
			}
		}
	}
	if s := p.sessionOf[t]; sessions && s >= 0 {
		if f, ok := d.sessFirst[[2]int32{k, s}]; ok && f[0] < p.sessionRank[t] {
			return f[1]
		}
	}
	if u := d.rtFirst[k]; e.si.snapshotRT && e.si.timed && u >= 0 && u != t && p.realTimeBefore(u, t) {
		return u
	}
	return -1
}

// siFinishGroups draws each hub's writer side once every read is
// encoded: first(w) per writer of the key (implying w committed) with
// C_w -> Z_k under it, and "need implies some first(w)". The solver tries
// one writer first, the one that commits earliest by client time or, without
// timestamps, the one created first (where layoutSI put it in a
// topological order of the known edges); every other first(w) starts
// false, so a hub costs one edge in the first model tried.
func (e *encoder) siFinishGroups() {
	d := e.si.dup
	if d == nil {
		return
	}
	for _, k := range d.groupKeys {
		g := d.groups[k]
		ws := e.siWriters(k)
		pref := int32(-1)
		for _, w := range ws {
			if e.act[w] != litTrue {
				continue
			}
			if pref < 0 || (e.si.timed && e.siEnd(w) < e.siEnd(pref)) || (!e.si.timed && e.node[w] < e.node[pref]) {
				pref = w
			}
		}
		some := make([]lit, 0, len(ws)+1)
		some = append(some, g.need.not())
		for _, w := range ws {
			f := e.newLit()
			if e.act[w] != litTrue {
				e.clause(f.not(), e.act[w])
			}
			e.s.SetPhase(solver.Lit(f).Var(), w == pref)
			e.siEdge(f, litTrue, e.node[w], g.z, edgeRec{kind: kindWR, key: k, val: string(d.val[k]), writer: w})
			some = append(some, f)
		}
		e.clause(some...)
	}
}
