package incremental

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// The snapshot-isolation family on the same solver: Viper's
// BC-polygraphs (Viper §4-§5; docs/SEMANTICS.md §1). Each transaction t of
// the instance is two nodes, B_t (its snapshot) and C_t (its commit), with
// B_t -> C_t. e.node[t] is C_t, so that the witness (the solver's
// topological order of transaction nodes) is the commit order; siState
// holds the begin nodes. The choices are those of the serializable
// encoding: one read-from literal per candidate writer (duplicates and
// unknown outcomes as there), one order variable per unordered pair of
// writers of a key, commit literals of unknown transactions. The edges:
//
//	begin-commit  B_t -> C_t                     if act(t)
//	wr            C_w -> B_r                     if rf(r, w)
//	ww            C_a -> B_b                     if x(a, b) and act(a)
//	              (SI writers of a key never overlap: first committer wins)
//	rw            B_r -> C_b                     if rf(r, a) and x(a, b)
//	rw (initial)  B_r -> C_b                     if rf(r, init_k), b writes k
//	list parse    C_a1 -> B_a2 -> ... , C_an -> B_r, B_r -> C_a (a not in it)
//	session       C_i -> Q_i -> ... -> B_j       (strong session SI, strong SI)
//	real time     C_i -> E(e_i+Δ) -> ... -> S(s_j-Δ) -> B_j (strong SI)
//	                                           or -> C_j (GSI)
//
// One variable per pair orders every key the two share: under SI a
// version order of one key fixes which of the two committed before the
// other began, and so every key's. The encoding keeps I1-I3 of the
// serializable one (every edge leaving a transaction's nodes is
// conditioned on act(t) or on a literal that implies it; the guarded
// reads' conditions mirror the projection; later transactions in real
// time or session are no candidates), so cores are found and shrunk by
// the same code (check.go).
//
// What it leaves out: pairs of writers ordered by real time get no
// variable (both SI real-time orders put a before b: C_a -> C_b with
// non-overlap forces C_a -> B_b) and edges only to their minimal time
// successors among the key's committed writers (the rest follow through
// them, Vbox §3.2-3.3). Unknown writers, and every writer in the guarded
// encoding, get explicit edges, since a writer that may be absent cannot
// carry the order to those behind it. Without real time (or without
// timestamps), V1 (vbox_si.go) makes the pairs that known edges order
// constants and draws their edges only to the nearest writers.

// siState is the begin-commit half of an encoder of the family.
type siState struct {
	begin []solver.Node // per transaction: B_t, -1 outside the instance
	// beginTxn maps a node to the transaction whose begin node it is, -1
	// for other nodes or past its end (explanations, siImplied, the
	// witness). A slice: as a map its lookups in siImplied were a tenth
	// of the encoding at 100K transactions.
	beginTxn []int32
	// points are the time-chain points: e.chain, e.timeOut as layout
	// draws them; timeIn attaches a point to B_j or C_j.
	snapshotRT bool
	// timed: every transaction of the instance has client timestamps
	// (layoutSI draws the time chain only then).
	timed bool
	// dup: the duplicate-value rules' state (si_dup.go); nil where they
	// are off (siDupInit).
	dup *siDupState
}

// layoutSI creates B_t and C_t for every transaction of the instance,
// and the time points, in a sweep over time (begins at their starts,
// commits at their ends): the solver's order starts as creation order,
// so the base edges cost little reordering.
func (e *encoder) layoutSI() {
	p := e.p
	n := len(p.h.Txns)
	e.si = &siState{begin: make([]solver.Node, n), snapshotRT: p.opts.Level.SnapshotRealTime()}
	e.sessQ = make([]solver.Node, n)
	var txns []int32
	for i := range p.h.Txns {
		if e.node[i] == 0 && e.act[i] != litFalse {
			txns = append(txns, int32(i))
		}
		e.node[i], e.si.begin[i], e.sessQ[i] = -1, -1, -1
	}
	timed := true
	for _, t := range txns {
		timed = timed && p.h.Txns[t].HasTime
	}
	placeBegin := func(t int32) {
		b := e.newNode(-1)
		e.si.begin[t] = b
		for int(b) >= len(e.si.beginTxn) {
			e.si.beginTxn = append(e.si.beginTxn, -1)
		}
		e.si.beginTxn[b] = t
	}
	sessions := p.opts.Level.SessionOrder()
	placeCommit := func(t int32) {
		if e.node[t] < 0 {
			e.node[t] = e.newNode(t)
			// The session point right after the commit: created in
			// the sweep, the session chain's base edges follow the
			// creation order and cost the solver no reordering (made
			// after every transaction node, they cost 10 s of encoding
			// on 10K transactions).
			if sessions && p.sessionOf[t] >= 0 {
				e.sessQ[t] = e.newNode(-1)
			}
		}
	}
	e.si.timed = timed
	if e.sameValue && !e.guarded && (!p.opts.Level.RealTime() || !timed) {
		// V1 at the snapshot levels (vbox_si.go): known edges collected
		// while encoding; without timestamps the nodes are created along
		// the forced reads and session order.
		e.vbox = &vboxState{known: make([][2]int32, 0, 4*len(txns))}
		if !timed {
			e.vboxLayout(txns)
		}
	}
	if !timed {
		for _, t := range txns {
			placeBegin(t)
			placeCommit(t)
		}
		return
	}
	rt := p.opts.Level.RealTime()
	type event struct {
		p     timePoint
		txn   int32
		end   bool
		order int8 // begins before commits at one instant
	}
	ev := make([]event, 0, 2*len(txns))
	for _, i := range txns {
		t := &p.h.Txns[i]
		start := t.Start - p.opts.Skew
		end := p.opts.EffectiveEnd(t)
		if end != math.MaxInt64 && end+p.opts.Skew == start {
			// The zero-length corner of Options.Precedes (see layout).
			ev = append(ev, event{timePoint{start, rankZin}, i, false, 0}, event{timePoint{start, rankZout}, i, true, 0})
			continue
		}
		ev = append(ev, event{timePoint{start, rankStart}, i, false, 0})
		if end != math.MaxInt64 {
			ev = append(ev, event{timePoint{end + p.opts.Skew, rankEnd}, i, true, 0})
		}
	}
	slices.SortStableFunc(ev, func(a, b event) int { return a.p.compare(b.p) })
	endAt := make([]int32, n)
	var cur solver.Node = -1
	var last timePoint
	for _, x := range ev {
		if x.end {
			placeCommit(x.txn)
			if !rt {
				continue
			}
			if cur < 0 || x.p != last {
				pt := e.newNode(-1)
				if cur >= 0 {
					e.chain = append(e.chain, [2]solver.Node{cur, pt})
				}
				cur, last = pt, x.p
			}
			endAt[x.txn] = int32(cur)
			continue
		}
		placeBegin(x.txn)
		if p.opts.EffectiveEnd(&p.h.Txns[x.txn]) == math.MaxInt64 {
			// An unknown transaction without an end commits, if at
			// all, at some time after its start: its commit node goes
			// right after its begin. Placed after every other node (as
			// it was), each wr edge from it was a backward insertion
			// that reordered most of the graph: 84 s of encoding at
			// 100K transactions with 2% unknown.
			placeCommit(x.txn)
		}
		if rt && cur >= 0 {
			e.timeIn = append(e.timeIn, [2]int32{int32(cur), x.txn})
		}
	}
	for _, i := range txns {
		placeCommit(i) // unknown transactions without an end
		if end := p.opts.EffectiveEnd(&p.h.Txns[i]); rt && end != math.MaxInt64 {
			e.timeOut = append(e.timeOut, [2]int32{i, endAt[i]})
		}
	}
}

// encodeSI builds the whole instance of a level of the family.
func (e *encoder) encodeSI() {
	p := e.p
	for _, ia := range p.internal {
		g := e.act[ia.txn]
		if ia.isList && e.guarded {
			ws, _ := p.possibleWriters(ia.txn, &pread{key: ia.key, lr: &listRead{full: ia.full}})
			for _, w := range ws {
				g = e.and2(g, e.sel[w])
			}
		}
		e.clause(g.not())
	}
	for t := range p.h.Txns {
		if e.node[t] >= 0 {
			e.siEdge(e.act[t], litTrue, e.si.begin[t], e.node[t], edgeRec{kind: kindAux, key: -1, writer: -1})
		}
	}
	e.siDupInit() // si_dup.go
	if p.opts.Level.SessionOrder() {
		e.encodeSessionsSI()
	}
	if p.opts.Level.RealTime() {
		for _, c := range e.chain {
			e.siEdge(litTrue, litTrue, c[0], c[1], edgeRec{kind: kindAux, key: -1, writer: -1})
		}
		for _, a := range e.timeIn {
			to := e.node[a[1]]
			if e.si.snapshotRT {
				to = e.si.begin[a[1]]
			}
			e.siEdge(litTrue, litTrue, solver.Node(a[0]), to, edgeRec{kind: kindRT, key: -1, writer: -1})
		}
		for _, a := range e.timeOut {
			e.siEdge(e.act[a[0]], litTrue, e.node[a[0]], solver.Node(a[1]), edgeRec{kind: kindRT, key: -1, writer: -1})
		}
	}
	if e.si.snapshotRT {
		// Real-time pruning of read sources and list parses
		// (perf_prune.go) holds under strong SI, where real time orders
		// a commit before the later transaction's snapshot
		// (docs/SEMANTICS.md §3, "Pruning the search at strong snapshot
		// isolation"); nil in the guarded and recorded encodings and
		// with Config.NoPrune.
		e.prune = newPruner(e)
	}
	e.encodeReadsSI()
	if e.stopped() {
		return
	}
	e.encodeVersionOrderSI()
	e.vboxSettle() // V1c over the finished instance (vbox_prune.go)
	e.encodeInitialValues()
}

// siEdge adds from -> to when a and b hold, recording it for
// explanations. Unlike edge it never leaves out an edge the level's order
// implies: under GSI real time orders commits, not snapshots.
func (e *encoder) siEdge(a, b lit, from, to solver.Node, rec edgeRec) {
	if from < 0 || to < 0 || from == to || a == litFalse || b == litFalse {
		return
	}
	if !e.record && (rec.kind == kindWR || rec.kind == kindWW || rec.kind == kindRW) && e.siImplied(rec.kind, from, to) {
		return
	}
	if a == litTrue {
		a, b = b, a
	}
	switch {
	case a == litTrue:
		if !e.s.AddBaseEdge(from, to) {
			e.unsat = true
		}
		e.noteKnown(from, to) // V1 at the snapshot levels (vbox_si.go)
	case b == litTrue:
		e.s.AddEdge(solver.Lit(a), from, to)
	default:
		e.s.AddEdge2(solver.Lit(a), solver.Lit(b), from, to)
	}
	if e.record {
		rec.from, rec.to, rec.a, rec.b = int32(from), int32(to), a, b
		e.edges = append(e.edges, rec)
	}
}

// siImplied reports whether the level's own orders already draw a
// dependency edge between two transactions' nodes, as edge leaves out
// what session and real time imply. Every such edge is conditioned on a
// literal that implies its source transaction is active (I1), which is
// the condition of the chain path: an rw edge B_u -> C_v when u precedes
// v at all (B_u -> C_u, then C_u reaches B_v or C_v); a wr or ww edge
// C_u -> B_v when the order reaches v's begin (session order, and real
// time under strong SI; under GSI real time reaches only C_v).
// Explanations (record) keep them, so their cycles name the dependency.
func (e *encoder) siImplied(kind edgeKind, from, to solver.Node) bool {
	u, _ := siNode(e, int32(from))
	v, _ := siNode(e, int32(to))
	if u < 0 || v < 0 || u == v {
		return false
	}
	p := e.p
	if kind == kindRW {
		return p.before(u, v)
	}
	if p.opts.Level.SessionOrder() && p.sessionOf[u] >= 0 && p.sessionOf[u] == p.sessionOf[v] && p.sessionRank[u] < p.sessionRank[v] {
		return true
	}
	return e.si.snapshotRT && p.realTimeBefore(u, v)
}

// encodeSessionsSI draws C_i -> B_j along each session through one point
// per member: C_t -> Q_t (if act(t)), Q_prev -> Q_t, Q_prev -> B_t, so a
// member that is absent or uncommitted does not cut the order between
// the others.
func (e *encoder) encodeSessionsSI() {
	p := e.p
	for _, all := range p.sessionMembers {
		var prevQ solver.Node = -1
		for _, t := range all {
			if e.node[t] < 0 {
				continue
			}
			q := e.sessQ[t] // layoutSI
			if prevQ >= 0 {
				e.siEdge(litTrue, litTrue, prevQ, e.si.begin[t], edgeRec{kind: kindSO, key: -1, writer: -1})
				e.siEdge(litTrue, litTrue, prevQ, q, edgeRec{kind: kindAux, key: -1, writer: -1})
			}
			e.siEdge(e.act[t], litTrue, e.node[t], q, edgeRec{kind: kindSO, key: -1, writer: -1})
			prevQ = q
		}
	}
}

// encodeReadsSI creates the read-from choices (I2, I3) and wr edges into
// the readers' begin nodes. In two passes: the register reads with one
// candidate of a committed reader (their read-from literal is true, the
// wr edge a base edge) first, the others after. The solver's search at
// insertion (P1, docs/SEMANTICS.md §3) rebuilds its index of permanent
// edges as they change; interleaved, the forced reads' base edges kept
// it stale through the choices' edges (PostgreSQL REPEATABLE READ 12K:
// half the check in index rebuilds). The choices, edges and candidates
// are the same either way (every read's candidates are listed in the
// first pass): only which implied lemmas the search at insertion adds
// can differ, and those remove no model.
func (e *encoder) encodeReadsSI() {
	p := e.p
	type later struct {
		rv    readVar
		cands []int32
	}
	var multi []later
	for ti := range p.h.Txns {
		if e.node[ti] < 0 {
			continue
		}
		if e.stopped() {
			return
		}
		pt := &p.txns[ti]
		for ri := range pt.reads {
			r := &pt.reads[ri]
			rv := readVar{txn: int32(ti), read: int32(ri)}
			if !r.isList() && e.siUniform(r.key) {
				// SD3 and SD4 (si_dup.go) before the candidates are
				// listed: on a uniform key that list is every writer.
				rv.g = e.act[ti]
				switch e.siUniformRead(&rv, r) {
				case 1:
					e.reads = append(e.reads, rv)
					continue
				case 2:
					continue
				}
			}
			ws, initial := p.possibleWritersTo(nil, int32(ti), r)
			g := e.act[ti]
			if e.guarded {
				for _, w := range ws {
					g = e.and2(g, e.sel[w])
				}
			}
			rv.g = g
			if g == litFalse {
				continue
			}
			if r.isList() {
				e.encodeListReadSI(&rv, r)
				e.reads = append(e.reads, rv)
				continue
			}
			cands := e.registerCandidates(rv.txn, r, ws, initial)
			if len(cands) != 1 || g != litTrue {
				multi = append(multi, later{rv, slices.Clone(cands)})
				continue
			}
			e.encodeRegisterReadSI(&rv, r, cands)
		}
	}
	for i := range multi {
		if e.stopped() {
			return
		}
		rv := &multi[i].rv
		e.encodeRegisterReadSI(rv, &p.txns[rv.txn].reads[rv.read], multi[i].cands)
	}
	e.siFinishGroups()
}

// encodeRegisterReadSI makes a register read's choice over its candidate
// sources cands (-1 the initial version), its wr edges, and appends it
// to e.reads.
func (e *encoder) encodeRegisterReadSI(rv *readVar, r *pread, cands []int32) {
	e.choice(rv, len(cands))
	copy(e.cands(rv), cands)
	e.chooseOne(rv)
	if len(cands) == 1 && e.rfs(rv)[0] == litTrue {
		// U2 at strong SI: a committed reader's only source
		// is committed and before the reader's snapshot.
		e.prune.noteForced(rv.txn, cands[0])
	}
	for i, w := range e.cands(rv) {
		if w >= 0 {
			e.siEdge(e.rfs(rv)[i], litTrue, e.node[w], e.si.begin[rv.txn], edgeRec{kind: kindWR, key: r.key, val: string(r.val), writer: w})
		}
	}
	e.reads = append(e.reads, *rv)
}

// encodeListReadSI: the ways the list is the concatenation of whole
// append sequences after an optional initial prefix (as
// encodeListRead), each a candidate. A parse orders its appenders
// (C_a -> B_next: their versions of the key follow one another), puts
// the last before the reader's snapshot and every other appender of the
// key after it (B_r -> C_a).
func (e *encoder) encodeListReadSI(rv *readVar, r *pread) {
	appenders, parses, unknownInit := e.listParses(rv, r)
	if e.prune != nil {
		before := len(parses)
		parses = e.prune.parses(rv.txn, appenders, parses)
		e.pruned += before - len(parses)
	}
	e.choice(rv, len(parses))
	for i := range e.cands(rv) {
		e.cands(rv)[i] = -2
	}
	e.chooseOne(rv)
	var val string
	if e.record {
		val = joinValues(r.lr.list)
	}
	rfs := e.rfs(rv)
	inParse := map[int32]bool{}
	for i, ps := range parses {
		rf := rfs[i]
		clear(inParse)
		for _, a := range ps.appenders {
			inParse[a] = true
		}
		for j, a := range ps.appenders {
			e.clause(rf.not(), e.act[a])
			if j+1 < len(ps.appenders) {
				e.siEdge(rf, litTrue, e.node[a], e.si.begin[ps.appenders[j+1]], edgeRec{kind: kindWW, key: r.key, writer: a})
			}
		}
		if n := len(ps.appenders); n > 0 {
			last := ps.appenders[n-1]
			e.siEdge(rf, litTrue, e.node[last], e.si.begin[rv.txn], edgeRec{kind: kindWR, key: r.key, val: val, writer: last})
		}
		for _, a := range appenders {
			if !inParse[a] {
				e.siEdge(rf, litTrue, e.si.begin[rv.txn], e.node[a], edgeRec{kind: kindRW, key: r.key, val: val, writer: -1})
			}
		}
		if unknownInit {
			e.clause(rf.not(), e.initVar(r.key, joinValues(r.lr.list[:ps.initLen])))
		}
	}
}

// encodeVersionOrderSI orders every pair of writers of every key (lists
// included: two appenders of a list may not overlap either) and draws
// the ww edges and the rw edges of register reads; with V1 on
// (vbox_si.go), per key through vboxKeySI.
func (e *encoder) encodeVersionOrderSI() {
	p := e.p
	readersOf := newReaderIndex(len(p.keys))
	initReaders := map[int32][]readerRef{}
	for ri := range e.reads {
		rv := &e.reads[ri]
		r := &p.txns[rv.txn].reads[rv.read]
		if r.isList() {
			continue
		}
		noRW := e.siNoRW(r.key, r.val) // SD1 (si_dup.go)
		for i, w := range e.cands(rv) {
			if w == -1 {
				initReaders[r.key] = append(initReaders[r.key], readerRef{rv.txn, e.rfs(rv)[i], r.val})
				if p.opts.InitialState == history.InitialUnknown {
					e.clause(e.rfs(rv)[i].not(), e.initVar(r.key, string(r.val)))
				}
				continue
			}
			if !noRW {
				readersOf.add(r.key, w, readerRef{rv.txn, e.rfs(rv)[i], r.val})
			}
		}
	}
	readersOf.build()
	// Without timestamps the real-time levels have no time chain
	// (layoutSI): their writers are paired as the others'.
	rt := p.opts.Level.RealTime() && e.si.timed
	if e.vbox != nil {
		e.vbox.readers = readersOf
	}
	reach := e.vboxIndex() // nil: off, or the known edges have a cycle
	for k := range p.keys {
		key := int32(k)
		var ws []int32
		for _, w := range p.writersOf[k] {
			if e.node[w] >= 0 {
				ws = append(ws, w)
			}
		}
		if !rt && reach != nil {
			e.vboxKeySI(key, ws, readersOf, initReaders[key])
			continue
		}
		if !rt {
			allBlind := e.siKeyAllBlind(key)
			for i := 0; i < len(ws) && !allBlind; i++ {
				if e.stopped() {
					return
				}
				for j := i + 1; j < len(ws); j++ {
					e.orderPairSI(key, ws[i], ws[j], readersOf)
				}
			}
			for _, rd := range initReaders[key] {
				for _, b := range ws {
					if b != rd.txn {
						e.siEdge(rd.rf, litTrue, e.si.begin[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: -1})
					}
				}
			}
			continue
		}
		e.orderByTimeSI(key, ws, readersOf, initReaders[key])
	}
}

// orderPairSI: the pair's order literal (a variable unless the level's
// order fixes it), its ww edges and the rw edges of the readers of either
// version.
func (e *encoder) orderPairSI(key, a, b int32, readersOf *readerIndex) {
	if e.siBlindPair(a, b) {
		return // SB (si_dup.go)
	}
	x := e.pairVarSI(a, b)
	via := e.p.orderVia(a, b)
	same := e.siSameValue(key, a, b) // SD1 (si_dup.go)
	for _, rd := range readersOf.get(key, a) {
		if rd.txn != b && !same {
			e.siEdge(rd.rf, x, e.si.begin[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: a, via: via})
		}
	}
	for _, rd := range readersOf.get(key, b) {
		if rd.txn != a && !same {
			e.siEdge(rd.rf, x.not(), e.si.begin[rd.txn], e.node[a], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: b, via: via})
		}
	}
}

// pairVarSI returns the order variable of a pair (a's versions first),
// creating it with its ww edges C_a -> B_b / C_b -> B_a on first use.
// A pair the level orders (session order: C_a -> B_b; real time: C_a ->
// C_b, and then C_b -> B_a would close a cycle) is a constant.
func (e *encoder) pairVarSI(a, b int32) lit {
	if a > b {
		return e.pairVarSI(b, a).not()
	}
	if pv, ok := e.pairs[[2]int32{a, b}]; ok {
		return pv.x
	}
	var x lit
	switch {
	case e.p.before(a, b) || e.prune.orderedBefore(a, b) || e.vboxBefore(a, b):
		x = litTrue
	case e.p.before(b, a) || e.prune.orderedBefore(b, a) || e.vboxBefore(b, a):
		x = litFalse
	default:
		x = e.newLit()
		e.phaseByCommitSI(x, a, b)
	}
	return e.newPairSI(a, b, x)
}

// newPairSI records the pair (a < b) with literal x and draws its ww
// edges.
func (e *encoder) newPairSI(a, b int32, x lit) lit {
	pv := &pairVar{a: a, b: b, x: x}
	e.pairs[[2]int32{a, b}] = pv
	e.pairsL = append(e.pairsL, pv)
	via := e.p.orderVia(a, b)
	e.siEdge(x, e.act[a], e.node[a], e.si.begin[b], edgeRec{kind: kindWW, key: -1, writer: a, via: via})
	e.siEdge(x.not(), e.act[b], e.node[b], e.si.begin[a], edgeRec{kind: kindWW, key: -1, writer: b, via: via})
	return x
}

// orderByTimeSI is orderByTime for the family: pairs that may overlap
// get a variable; a writer's readers get rw edges, and the writer a ww
// edge, only to its minimal time successors among the committed writers
// of the key and to every unknown writer after it (every later writer in
// the guarded encoding).
func (e *encoder) orderByTimeSI(key int32, ws []int32, readersOf *readerIndex, initReaders []readerRef) {
	p := e.p
	byStart := make([]startOf, 0, len(ws))
	for _, w := range ws {
		byStart = append(byStart, startOf{e.adjStart(w), w})
	}
	slices.SortFunc(byStart, func(a, b startOf) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.w, b.w)
	})
	ws = slices.Clone(ws)
	for i := range byStart {
		ws[i] = byStart[i].w
	}
	// An unknown writer forced by a committed reader ends, for pairing,
	// with that reader (pairEnd, U2; docs/SEMANTICS.md §3, "Pruning the
	// search at strong snapshot isolation"): adjEnd without the pruner.
	allBlind := e.siKeyAllBlind(key) // SB (si_dup.go): no pair at all
	for i, a := range ws {
		ea := e.pairEnd(a)
		for j := i + 1; j < len(ws) && byStart[j].start <= ea && !allBlind; j++ {
			e.orderPairSI(key, a, ws[j], readersOf)
		}
	}
	var cs, unknown []int32
	for _, w := range ws {
		if p.h.Txns[w].Status == history.Committed || e.forcedCommitted(w) {
			cs = append(cs, w)
		} else {
			unknown = append(unknown, w)
		}
	}
	suf1 := make([]int64, len(cs)+1)
	suf2 := make([]int64, len(cs)+1)
	suf1[len(cs)], suf2[len(cs)] = math.MaxInt64, math.MaxInt64
	for i := len(cs) - 1; i >= 0; i-- {
		end := e.pairEnd(cs[i])
		suf1[i], suf2[i] = suf1[i+1], suf2[i+1]
		switch {
		case end < suf1[i]:
			suf1[i], suf2[i] = end, suf1[i]
		case end < suf2[i]:
			suf2[i] = end
		}
	}
	minimalFrom := func(j0 int, t int64, f func(b int32)) {
		if j0 < len(cs) {
			m := suf2[j0]
			if e.guarded {
				m = math.MaxInt64
			}
			for j := j0; j < len(cs) && e.adjStart(cs[j]) <= m; j++ {
				f(cs[j])
			}
		}
		for _, u := range unknown {
			if e.adjStart(u) > t {
				f(u)
			}
		}
	}
	minimalAfter := func(t int64, f func(b int32)) {
		minimalFrom(sort.Search(len(cs), func(i int) bool { return e.adjStart(cs[i]) > t }), t, f)
	}
	for _, a := range ws {
		ea := e.pairEnd(a)
		if ea == math.MaxInt64 {
			continue
		}
		readers := readersOf.get(key, a)
		minimalAfter(ea, func(b int32) {
			if !p.before(a, b) && !e.prune.orderedBefore(a, b) {
				return
			}
			via := p.orderVia(a, b)
			e.pairVarSI(a, b) // a constant (true): draws C_a -> B_b
			for _, rd := range readers {
				if rd.txn != b {
					e.siEdge(rd.rf, litTrue, e.si.begin[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: a, via: via})
				}
			}
		})
	}
	for _, rd := range initReaders {
		minimalFrom(0, math.MinInt64, func(b int32) {
			if b != rd.txn {
				e.siEdge(rd.rf, litTrue, e.si.begin[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: -1})
			}
		})
	}
}

// witnessSI is the solver's topological order as begin and commit
// events ("begin ID", "commit ID") of the committed transactions and the
// unknown ones the model commits: a schedule in which every read sees
// the last version committed before its begin and no writers of a key
// overlap (oracle.ReplayWitness checks it).
func (e *encoder) witnessSI() []string {
	out := make([]string, 0, 2*len(e.p.h.Txns))
	for _, n := range e.s.Order() {
		t, begin := siNode(e, int32(n))
		if t < 0 {
			continue
		}
		if c := e.com[t]; c != litTrue && !e.s.Value(solver.Lit(c)) {
			continue
		}
		// A blind-uniform transaction begins right before it commits:
		// the schedule SB's argument builds (si_dup.go), in which such
		// writers never overlap though no ww edge orders them.
		blind := e.siBlind(t)
		switch {
		case begin && blind:
		case begin:
			out = append(out, "begin "+e.p.h.Txns[t].ID)
		case blind:
			out = append(out, "begin "+e.p.h.Txns[t].ID, "commit "+e.p.h.Txns[t].ID)
		default:
			out = append(out, "commit "+e.p.h.Txns[t].ID)
		}
	}
	return out
}
