package incremental

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// lit is a solver literal or one of two constants, so that the encoding can
// be written once for the fast path (selectors are constants) and the
// guarded path (selectors are variables).
type lit int32

const (
	litTrue  lit = -1
	litFalse lit = -2
)

func (l lit) not() lit {
	switch l {
	case litTrue:
		return litFalse
	case litFalse:
		return litTrue
	}
	return lit(solver.Lit(l).Not())
}

// edgeKind classifies a dependency for explanations and anomaly names.
type edgeKind uint8

const (
	kindWW edgeKind = iota
	kindWR
	kindRW
	kindSO   // session order
	kindRT   // real time
	kindAux  // chain edges among point nodes
	kindNone // placeholder
)

func (k edgeKind) String() string {
	return [...]string{"ww", "wr", "rw", "process", "realtime", "aux", "?"}[k]
}

// edgeRec records one conditional edge of the instance, for explanations
// of small instances (cores).
type edgeRec struct {
	from, to int32 // solver nodes
	a, b     lit
	kind     edgeKind
	key      int32
	val      string
	// reader/writer name the transactions behind a rw or wr edge: for rw,
	// the reader read writer's version and `to` overwrote it.
	writer int32
	// via says which order decided the version order behind a ww or rw
	// edge when no choice did: kindRT or kindSO (else kindNone).
	via edgeKind
}

// readVar ties a read to its candidate sources. cand -1 is the initial
// version.
// readVar is one read's choice of source. Its candidates and their
// read-from literals sit at [off, off+n) of the encoder's candFlat and
// rfFlat (encoder.cands, encoder.rfs): two slice headers per read were
// 48 of its 64 bytes, 18 MB on a 100K-transaction history.
type readVar struct {
	txn  int32
	read int32 // index in ptxn.reads
	off  int32
	n    int32
	g    lit
}

// choice reserves n candidates and read-from literals for rv.
func (e *encoder) choice(rv *readVar, n int) {
	rv.off, rv.n = int32(len(e.candFlat)), int32(n)
	e.candFlat = slices.Grow(e.candFlat, n)[:len(e.candFlat)+n]
	e.rfFlat = slices.Grow(e.rfFlat, n)[:len(e.rfFlat)+n]
	// Zero, as a fresh array is: a recycled one (recycleFrom) holds an
	// earlier instance's entries past its length.
	clear(e.cands(rv))
	clear(e.rfs(rv))
}

// cands are rv's candidate writers (-1 the initial state, -2 a list
// parse). Valid until the next choice, which may move the arrays.
func (e *encoder) cands(rv *readVar) []int32 {
	return e.candFlat[rv.off : rv.off+rv.n : rv.off+rv.n]
}

// rfs are rv's read-from literals, one per candidate.
func (e *encoder) rfs(rv *readVar) []lit {
	return e.rfFlat[rv.off : rv.off+rv.n : rv.off+rv.n]
}

type listParse struct {
	initLen   int
	appenders []int32
}

type pairVar struct {
	a, b int32
	x    lit // a before b
}

// encoder builds one solver instance for a prepared history. selected
// reports which transactions are in the instance: those outside it are
// absent (their writes still count as possible writers, which makes the
// reads they could explain disappear, as the projection rule says).
type encoder struct {
	p       *prepared
	s       *solver.Solver
	guarded bool
	record  bool // keep edgeRecs for explanations
	// unwalked counts the initial prefixes lastStart spared listParses
	// (tests).
	unwalked int
	// lastStarts counts lastStart's passes over a read's appenders
	// (tests: one per list read, burst20d_laststart_test.go).
	lastStarts int
	// parseMark[t] == parseStamp: t appends in the list parse
	// encodeListRead is drawing. recycleFrom carries both: every mark
	// left by an earlier encoder is below the stamp, so it names no
	// member of a later parse.
	parseMark  []uint32
	parseStamp uint32
	noPrune    bool
	// dropUnobserved: encodeConfig.dropUnobserved.
	dropUnobserved bool
	// sameValue turns on the duplicate-value rules D1 and D2
	// (prune_dup.go): offline, pruning on, not recording edges.
	sameValue bool
	dup       *dupRules
	// chainPred[(k, b)] is the forced source of b's read of k when b
	// writes k too (prune_chain.go); chained counts the pairs that took a
	// chain predecessor's literal.
	chainPred map[[2]int32]int32
	chainBusy map[[2]int32]bool
	chained   int
	kept      [][2]int32
	// keptGuard[i]: kept orders out of position i are edges "if i
	// commits" (an unknown whose commit the config does not decide
	// true; see encodeConfig.kept).
	keptGuard []bool
	// pruned counts read sources and list parses that real time rules
	// out before search (perf_prune.go).
	pruned int

	// Scratch for building one read's candidates and clauses.
	candScratch    []int32
	litScratch     []lit
	writersScratch []int32
	// Scratch of encodeVersionOrder, reused across keys.
	wsScratch, csScratch, unknownScratch []int32
	startScratch                         []startOf
	sufScratch                           []int64
	// candFlat and rfFlat hold every read's candidates and read-from
	// literals (readVar.off, readVar.n).
	candFlat []int32
	rfFlat   []lit

	sel  []lit // per transaction: selector
	act  []lit // per transaction: in the instance and committed
	node []solver.Node
	com  []lit // commit variable of unknown transactions

	unsat bool
	edges []edgeRec

	reads  []readVar
	pairs  map[[2]int32]*pairVar
	pairsL []*pairVar
	inits  map[int32]map[string]lit // key -> initial value -> var
	// parseInit is, under an unknown initial state and for the online
	// engine's instance only (readsToCome), the initial prefix length of
	// each list parse, by its index in candFlat (ParseInitial): the
	// engine keeps the initial list a decided parse names as a fact
	// when the read leaves its instance (docs/SEMANTICS.md §5 "Lists
	// under an unknown initial state"). nil: not kept.
	parseInit map[int32]int32

	prune *pruner // nil: no candidate pruning
	// prunePrev is a recycled encoder's pruner, whose tables newPruner
	// takes over (perf_prune.go).
	prunePrev *pruner
	// vbox: reachability pruning without real time (vbox_prune.go); nil
	// when off.
	vbox *vboxState

	and2cache map[[2]lit]lit
	scratch   []solver.Lit

	nodeTxn []int32 // solver node -> transaction (-1 for point nodes)

	// si is set for the snapshot-isolation family (encode_si.go): begin
	// nodes beside the commit nodes in node.
	si *siState

	ctx       context.Context
	tick      int
	cancelled bool
	// encodeTime is set by callers that time the encoding for Stats.
	encodeTime time.Duration

	// Point chains laid out by layout: session points per transaction,
	// time-chain links, and the attachments of transactions to time points.
	sessQ []solver.Node
	// evScratch is layout's array of events, kept for a recycled encoder.
	evScratch []layoutEvent
	chain     [][2]solver.Node
	timeIn    [][2]int32 // point -> txn
	timeOut   [][2]int32 // txn -> point
}

type encodeConfig struct {
	guarded bool
	record  bool
	// noPrune turns off the fast path's encode-time pruning (perf_prune.go
	// and unread unknown transactions), for the differential test.
	noPrune bool
	// readsToCome says reads not yet in the history may still read its
	// transactions (the online engine's reduced instance): unknown
	// transactions nobody reads yet are kept. Pruning by real time stays:
	// it rules out only what the instance's own base edges rule out.
	readsToCome bool
	// kept are orders between transactions (positions) that hold in every
	// completion that commits their first end: facts the online engine
	// kept when it evicted the transactions that proved them
	// (docs/SEMANTICS.md §5, R5). Base edges, except an order out of an
	// unknown transaction whose commit decided does not fix: the edge
	// then holds if it commits (I1; docs/SEMANTICS.md §5 "Reads guarded
	// by their reader's commit").
	kept [][2]int32
	// decided are commit decisions of unknown transactions (positions) that
	// the online engine kept: units on their commit choice. Their status
	// stays unknown, so their real-time end stays the in-doubt horizon.
	decided map[int32]bool
	// dropUnobserved leaves out the order variable of two writers of a
	// key when no read in the instance can read either's version of it
	// (unless another shared key needs the variable). Such an order
	// constrains nothing but itself: any acyclic completion of the rest
	// orients it along a topological order. Only for a complete history:
	// online, a read still to come could observe either version, so the
	// online instance (whose decided orders gate eviction) keeps it.
	dropUnobserved bool
	// conflictBudget bounds the solver's conflicts per Solve (0: none);
	// a spent budget answers Unknown.
	conflictBudget int64
	// recycled is an encoder no one uses any more whose arrays, and its
	// solver's, the new one takes over (recycleFrom; the online engine's
	// last step, WithRecycled). It changes no answer.
	recycled *encoder
}

func newEncoder(p *prepared, cfg encodeConfig) *encoder {
	n := len(p.h.Txns)
	sopts := solver.Options{Seed: vboxSeed(p, cfg), TheoryPropagationLimit: propagationLimit, ConflictBudget: cfg.conflictBudget, Reanchor: true, RestartBase: checkerRestartBase, PruneLimit: vboxPruneLimit(p, cfg)}
	e := &encoder{
		guarded: cfg.guarded, record: cfg.record, noPrune: cfg.noPrune, kept: cfg.kept, dropUnobserved: cfg.dropUnobserved,
		sameValue: cfg.dropUnobserved && !cfg.noPrune && !cfg.record && !cfg.readsToCome,
	}
	if old := cfg.recycled; old != nil {
		e.recycleFrom(old, n, sopts)
	} else {
		e.s = solver.New(sopts)
		e.sel, e.act, e.node, e.com = make([]lit, n), make([]lit, n), make([]solver.Node, n), make([]lit, n)
		e.pairs, e.inits, e.and2cache = map[[2]int32]*pairVar{}, map[int32]map[string]lit{}, map[[2]lit]lit{}
	}
	e.p = p
	if cfg.readsToCome && p.opts.InitialState == history.InitialUnknown {
		e.parseInit = map[int32]int32{}
	}
	// Capacity hints, the least a large history needs (a transaction node
	// and an end point each, three edges per transaction); append grows
	// large slices by a quarter at a time beyond that, which wastes less
	// than a generous guess (blind-write histories need a third of the
	// edges of list-heavy ones).
	e.s.Reserve(2*n, 3*n)
	var unread []bool
	if !cfg.guarded && !cfg.record && !cfg.noPrune && !cfg.readsToCome {
		unread = p.possiblyRead()
	}
	for i := range p.h.Txns {
		t := &p.h.Txns[i]
		e.node[i] = -1
		if p.txns[i].dropped {
			// Write-free unknown transactions explain nothing and need
			// nothing explained: they are not part of any instance.
			e.sel[i], e.act[i], e.com[i] = litFalse, litFalse, litFalse
			continue
		}
		e.sel[i] = litTrue
		if cfg.guarded {
			e.sel[i] = e.newLit()
		}
		switch t.Status {
		case history.Aborted:
			// Not a node, but a possible writer: its selector still
			// decides which reads a projection keeps (I2).
			e.com[i], e.act[i] = litFalse, litFalse
			continue
		case history.Unknown:
			if unread != nil && !unread[i] {
				// Fast path only: an unknown transaction that no read can
				// read from may be taken as aborted. Any model that commits
				// it stays a model without it: its outgoing edges vanish
				// (I1) and no read's choice needs it, so removing a node
				// with only incoming edges keeps the graph acyclic. It
				// would otherwise pair with every later writer of its keys
				// (its end is +inf) and cost conflicts.
				e.sel[i], e.act[i], e.com[i] = litFalse, litFalse, litFalse
				continue
			}
			e.com[i] = e.newLit()
			d, ok := cfg.decided[int32(i)]
			if ok {
				if d {
					e.clause(e.com[i])
				} else {
					e.clause(e.com[i].not())
				}
			}
			if !d && len(cfg.kept) > 0 {
				if e.keptGuard == nil {
					e.keptGuard = make([]bool, len(p.h.Txns))
				}
				e.keptGuard[i] = true
			}
		default:
			e.com[i] = litTrue
		}
		e.act[i] = e.and2(e.sel[i], e.com[i])
		e.node[i] = 0 // a node is created by layout
	}
	if p.opts.Level.BeginCommit() {
		e.layoutSI() // encode_si.go
		return e
	}
	if e.vboxOn() && !p.opts.Level.RealTime() {
		e.vbox = &vboxState{known: make([][2]int32, 0, 2*n)}
	}
	e.layout()
	return e
}

// layout creates the nodes in an order that is already topological for
// the base graph: a sweep over time in which each transaction follows its
// start point and precedes its session point and end point. The solver's
// dynamic topological order starts as creation order, so the base edges
// (most of the graph) cost no reordering.
func (e *encoder) layout() {
	p := e.p
	n := len(p.h.Txns)
	e.sessQ = reuse(e.sessQ, n) // every entry is set below
	var txns []int32
	for i := range p.h.Txns {
		if e.node[i] == 0 && e.act[i] != litFalse {
			txns = append(txns, int32(i))
		}
		e.node[i] = -1
		e.sessQ[i] = -1
	}
	// Stable, as sort.SliceStable was (the same algorithm without
	// reflection): the node order must not change with the sort. It is
	// session order's own (bySessionRank: start, a tie by end then id),
	// since a session's edges join its members in node order.
	slices.SortStableFunc(txns, bySessionRank(p.h))
	if e.vbox != nil {
		e.vboxLayout(txns) // vbox_prune.go: follow the forced reads
	}
	sessions := p.opts.Level.SessionOrder()
	place := func(t int32) {
		e.node[t] = e.newNode(t)
		if sessions && p.sessionOf[t] >= 0 && e.sessionChained(p.sessionOf[t]) {
			e.sessQ[t] = e.newNode(-1)
		}
	}
	if !p.opts.Level.RealTime() {
		for _, t := range txns {
			place(t)
		}
		return
	}
	// Time points exist only for ends: a chain of (time, rank) points in
	// which t -> E(e_t+Δ) and the last point at or before s_u-Δ -> u, so t
	// reaches u iff e_t+Δ <= s_u-Δ. A zero-length transaction (Δ = 0,
	// s = e = τ) has its own rank: it is entered from (τ, rankEnd) and
	// leaves to (τ, rankZout), so it reaches neither itself nor another
	// zero-length transaction at τ (history.Options.Precedes).
	type event = layoutEvent
	ev := reuseEmpty(e.evScratch, 2*len(txns))
	defer func() { e.evScratch = ev[:0] }()
	for _, i := range txns {
		t := &p.h.Txns[i]
		start := t.Start - p.opts.Skew
		end := p.opts.EffectiveEnd(t)
		if end != math.MaxInt64 && end+p.opts.Skew == start {
			ev = append(ev, event{timePoint{start, rankZin}, i, false}, event{timePoint{start, rankZout}, i, true})
			continue
		}
		ev = append(ev, event{timePoint{start, rankStart}, i, false})
		if end != math.MaxInt64 {
			ev = append(ev, event{timePoint{end + p.opts.Skew, rankEnd}, i, true})
		}
	}
	// Stable, as sort.SliceStable was: points that tie keep their order.
	slices.SortStableFunc(ev, func(a, b event) int { return a.p.compare(b.p) })
	// Equal points are adjacent once sorted (a transaction's event never
	// has a point's rank), so a point is new unless it equals the last
	// one: no map of points. endAt[t] is the point t's end leads to.
	endAt := make([]int32, n)
	var cur solver.Node = -1
	var last timePoint
	e.timeIn = e.timeIn[:0]
	for _, x := range ev {
		if x.end {
			if cur < 0 || x.p != last {
				n := e.newNode(-1)
				if cur >= 0 {
					e.chain = append(e.chain, [2]solver.Node{cur, n})
				}
				cur, last = n, x.p
			}
			endAt[x.txn] = int32(cur)
			continue
		}
		place(x.txn)
		if cur >= 0 {
			e.timeIn = append(e.timeIn, [2]int32{int32(cur), x.txn})
		}
	}
	for _, i := range txns {
		if end := p.opts.EffectiveEnd(&p.h.Txns[i]); end != math.MaxInt64 {
			e.timeOut = append(e.timeOut, [2]int32{i, endAt[i]})
		}
	}
}

// layoutEvent is an event of layout's sweep over time.
type layoutEvent struct {
	p   timePoint
	txn int32 // the transaction starting, or the one a point ends
	end bool  // a point
}

const (
	rankEnd int8 = iota
	rankZin
	rankZout
	rankStart
)

type timePoint struct {
	time int64
	rank int8
}

func (a timePoint) compare(b timePoint) int {
	if a.time != b.time {
		return cmp.Compare(a.time, b.time)
	}
	return cmp.Compare(a.rank, b.rank)
}

func (e *encoder) newLit() lit { return lit(solver.PosLit(e.s.NewVar())) }

func (e *encoder) newNode(txn int32) solver.Node {
	n := e.s.NewNode()
	e.nodeTxn = append(e.nodeTxn, txn)
	return n
}

// and2 is a Tseitin conjunction, cached.
func (e *encoder) and2(a, b lit) lit {
	switch {
	case a == litFalse || b == litFalse:
		return litFalse
	case a == litTrue:
		return b
	case b == litTrue:
		return a
	case a == b:
		return a
	}
	if a > b {
		a, b = b, a
	}
	if v, ok := e.and2cache[[2]lit{a, b}]; ok {
		return v
	}
	v := e.newLit()
	e.clause(v.not(), a)
	e.clause(v.not(), b)
	e.clause(v, a.not(), b.not())
	e.and2cache[[2]lit{a, b}] = v
	return v
}

// clause adds a clause over lits with constants folded.
func (e *encoder) clause(lits ...lit) {
	out := e.scratch[:0]
	for _, l := range lits {
		switch l {
		case litTrue:
			return
		case litFalse:
			continue
		}
		out = append(out, solver.Lit(l))
	}
	e.scratch = out
	if !e.s.AddClause(out...) {
		e.unsat = true
	}
}

// edge adds from -> to present when a and b hold.
//
// An edge between transactions that the level already orders (real time,
// session) is left out: every edge leaving a transaction is conditioned on
// something that implies it is present and committed (I1), which is the
// condition of the chain path that orders them, so the chain implies it.
// Most wr edges (reads of finished writes) and many rw edges are of this
// kind. Explanations (record) keep them, so their cycles name the
// dependency rather than the clock.
func (e *encoder) edge(a, b lit, from, to solver.Node, rec edgeRec) {
	if e.divertPL(a, b, from, to, rec) { // check_pl.go: pl-2+ keeps rw edges out of the theory
		return
	}
	if from < 0 || to < 0 || from == to || a == litFalse || b == litFalse {
		return
	}
	if !e.record && (rec.kind == kindWR || rec.kind == kindWW || rec.kind == kindRW) {
		if u, v := e.nodeTxn[from], e.nodeTxn[to]; u >= 0 && v >= 0 && e.p.before(u, v) {
			return
		}
	}
	if a == litTrue {
		a, b = b, a
	}
	switch {
	case a == litTrue: // both true
		if !e.s.AddBaseEdge(from, to) {
			e.unsat = true
		}
		e.noteKnown(from, to)
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

// encode builds the whole instance.
// encodeCtx encodes, giving up (cancelled) once ctx is done: the quadratic
// pair loops of levels without real time can outlast any --timeout.
func (e *encoder) encodeCtx(ctx context.Context) {
	e.ctx = ctx
	e.encode()
}

// stopped polls the context at the first call and every 256 calls
// after: a history of a few transactions (one of them a long list) calls
// it a few times only.
func (e *encoder) stopped() bool {
	if e.cancelled {
		return true
	}
	e.tick++
	if e.ctx != nil && e.tick&255 == 1 && e.ctx.Err() != nil {
		e.cancelled = true
	}
	return e.cancelled
}

func (e *encoder) encode() {
	if e.si != nil {
		e.encodeSI() // encode_si.go
		return
	}
	p := e.p
	for _, ia := range p.internal {
		// A transaction that disagrees with its own writes cannot be
		// committed; for a list read, only while the read is kept (I2).
		g := e.act[ia.txn]
		if ia.isList && e.guarded {
			ws, _ := p.possibleWriters(ia.txn, &pread{key: ia.key, lr: &listRead{full: ia.full}})
			for _, w := range ws {
				g = e.and2(g, e.sel[w])
			}
		}
		e.clause(g.not())
	}
	if p.opts.Level.SessionOrder() {
		e.encodeSessions()
	}
	if p.opts.Level.RealTime() {
		e.encodeRealTime()
	}
	for _, k := range e.kept {
		g := litTrue
		if e.keptGuard != nil && e.keptGuard[k[0]] {
			// Out of an unknown whose commit is open: the order holds
			// in the completions that commit it (I1).
			g = e.act[k[0]]
		}
		e.edge(g, litTrue, e.node[k[0]], e.node[k[1]], edgeRec{kind: kindAux, writer: -1})
	}
	e.prune = newPruner(e)
	e.encodeReads()
	e.encodeVersionOrder()
	e.vboxSettle()
	e.encodeInitialValues()
}

func (e *encoder) encodeSessions() {
	p := e.p
	var members []int32
	for si, all := range p.sessionMembers {
		// sessionMembers is in rank order: the instance's members of the
		// session are a filter of it, no map and no sort.
		members = members[:0]
		for _, t := range all {
			if e.node[t] >= 0 {
				members = append(members, t)
			}
		}
		if len(members) == 0 {
			continue
		}
		s := int32(si)
		if !e.sessionChained(s) {
			// All committed and nothing to project away: direct edges,
			// and none where real time already orders the pair.
			for i := 1; i < len(members); i++ {
				a, b := members[i-1], members[i]
				if p.opts.Level.RealTime() && p.opts.Precedes(&p.h.Txns[a], &p.h.Txns[b]) {
					continue
				}
				e.edge(litTrue, litTrue, e.node[a], e.node[b], edgeRec{kind: kindSO, writer: -1})
			}
			continue
		}
		// Q_{i-1} -> T_i -> Q_i, Q_{i-1} -> Q_i.
		var prevQ solver.Node = -1
		for _, t := range members {
			q := e.sessQ[t]
			if prevQ >= 0 {
				e.edge(litTrue, litTrue, prevQ, e.node[t], edgeRec{kind: kindSO, writer: -1})
				e.edge(litTrue, litTrue, prevQ, q, edgeRec{kind: kindAux, writer: -1})
			}
			e.edge(e.act[t], litTrue, e.node[t], q, edgeRec{kind: kindSO, writer: -1})
			prevQ = q
		}
	}
}

// sessionChained reports whether session s needs its point chain: in the
// guarded encoding (a deselected member must not cut the order between
// the others) and where a member may not commit (likewise).
func (e *encoder) sessionChained(s int32) bool {
	return e.guarded || e.p.sessionHasUnknown[s]
}

// encodeRealTime draws real-time order through the chain of time points
// that layout created: t -> E(e_t+Δ) -> ... -> S(s_u-Δ) -> u, so t reaches
// u iff e_t+Δ <= s_u-Δ (history.Options.Precedes).
func (e *encoder) encodeRealTime() {
	for _, c := range e.chain {
		if c[0] >= 0 {
			e.edge(litTrue, litTrue, c[0], c[1], edgeRec{kind: kindAux, writer: -1})
		}
	}
	for _, a := range e.timeIn {
		e.edge(litTrue, litTrue, solver.Node(a[0]), e.node[a[1]], edgeRec{kind: kindRT, writer: -1})
	}
	for _, a := range e.timeOut {
		e.edge(e.act[a[0]], litTrue, e.node[a[0]], solver.Node(a[1]), edgeRec{kind: kindRT, writer: -1})
	}
}

// encodeReads creates read-from choices (I2, I3) and the wr edges.
func (e *encoder) encodeReads() {
	p := e.p
	total := 0
	for ti := range p.txns {
		total += len(p.txns[ti].reads)
	}
	// A recycled encoder's arrays when they are large enough (recycleFrom).
	e.reads = reuseEmpty(e.reads, total)
	// Most reads have one candidate.
	e.candFlat = reuseEmpty(e.candFlat, total+total/4)
	e.rfFlat = reuseEmpty(e.rfFlat, total+total/4)
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
			if c := e.freeCandidate(int32(ti), r); c >= 0 {
				// D2: the read's source is fixed without listing the
				// other writers of its value.
				rv.g = e.act[ti]
				var one [1]int32
				e.pruned += len(p.writersOfValue(r.key, r.val, &one)) - 1
				e.choice(&rv, 1)
				e.cands(&rv)[0] = c
				e.chooseOne(&rv)
				e.edge(e.rfs(&rv)[0], litTrue, e.node[c], e.node[ti], edgeRec{kind: kindWR, key: r.key, val: string(r.val), writer: c})
				e.reads = append(e.reads, rv)
				continue
			}
			var ws []int32
			initial := p.opts.InitialState == history.InitialUnknown || !r.isList() || len(r.lr.full) == 0
			if !r.isList() || e.guarded {
				// A list read's possible writers matter only for its
				// guard; its parses come from appendersOf.
				ws, initial = p.possibleWritersTo(e.writersScratch, int32(ti), r)
				e.writersScratch = ws
			}
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
				// A long list read is a long step of its own.
				if len(r.lr.list) > 4096 && e.ctx != nil && e.ctx.Err() != nil {
					e.cancelled = true
					return
				}
				e.encodeListRead(&rv, r, initial)
			} else {
				e.encodeRegisterRead(&rv, r, ws, initial)
			}
			e.reads = append(e.reads, rv)
		}
	}
}

// registerCandidates lists the writers in ws (in the instance) whose final
// value of r's key is the value r read, then the initial state (-1) when
// it may be the source, leaving out what the pruning proves impossible
// (and counting it). The slice is e.candScratch, valid until the next
// call. The serializable and snapshot encoders share it, so that a read's
// candidates are the same at every level.
func (e *encoder) registerCandidates(reader int32, r *pread, ws []int32, initial bool) []int32 {
	p := e.p
	cands := e.candScratch[:0]
	for _, w := range ws {
		if e.node[w] < 0 {
			continue
		}
		if v, ok := p.txns[w].finalValue(r.key); ok && v == r.val {
			if e.prune.impossible(r.key, reader, w) {
				e.pruned++
			} else {
				cands = append(cands, w)
			}
		}
	}
	if initial {
		if e.prune.impossible(r.key, reader, -1) {
			e.pruned++
		} else {
			cands = append(cands, -1)
		}
	}
	e.candScratch = cands
	return cands
}

func (e *encoder) encodeRegisterRead(rv *readVar, r *pread, ws []int32, initial bool) {
	cands := e.registerCandidates(rv.txn, r, ws, initial)
	e.choice(rv, len(cands))
	copy(e.cands(rv), cands)
	e.chooseOne(rv)
	rf := e.rfs(rv)
	if len(cands) == 1 && rf[0] == litTrue {
		e.prune.noteForced(rv.txn, cands[0])
		e.noteChain(r.key, rv.txn, cands[0])
	}
	for i, w := range cands {
		if w >= 0 {
			e.edge(rf[i], litTrue, e.node[w], e.node[rv.txn], edgeRec{kind: kindWR, key: r.key, val: string(r.val), writer: w})
		}
	}
}

// chooseOne creates the exactly-one choice over e.cands(rv), conditioned on
// rv.g, with each choice implying its writer is active (register reads;
// a list parse's appenders are tied to its choice by the caller).
func (e *encoder) chooseOne(rv *readVar) {
	rf, cands := e.rfs(rv), e.cands(rv)
	if len(rf) == 1 {
		rf[0] = rv.g
	} else {
		for i := range rf {
			rf[i] = e.newLit()
			e.clause(rf[i].not(), rv.g)
		}
	}
	at := append(e.litScratch[:0], rv.g.not())
	at = append(at, rf...)
	e.litScratch = at
	e.clause(at...)
	e.atMostOne(rf)
	for i, w := range cands {
		if w >= 0 {
			e.clause(rf[i].not(), e.act[w])
		}
	}
}

func (e *encoder) atMostOne(ls []lit) {
	if len(ls) <= 6 {
		for i := range ls {
			for j := i + 1; j < len(ls); j++ {
				e.clause(ls[i].not(), ls[j].not())
			}
		}
		return
	}
	// Sequential counter: s_i = "some of ls[0..i] holds".
	prev := ls[0]
	for i := 1; i < len(ls); i++ {
		s := e.newLit()
		e.clause(prev.not(), s)
		e.clause(ls[i].not(), s)
		e.clause(prev.not(), ls[i].not())
		prev = s
	}
}

// encodeListRead enumerates the ways the list can be the concatenation of
// whole append sequences (one per appender) after an optional initial
// prefix, and makes them the read's candidates. Each parse orders its
// appenders, puts them before the reader, and every other appender of the
// key after it.
func (e *encoder) encodeListRead(rv *readVar, r *pread, initial bool) {
	appenders, parses, unknownInit := e.listParses(rv, r)
	if e.prune != nil {
		before := len(parses)
		parses = e.prune.parses(rv.txn, appenders, parses)
		e.pruned += before - len(parses)
	}
	e.choice(rv, len(parses))
	for i := range e.cands(rv) {
		e.cands(rv)[i] = -2 // list parse
	}
	_ = initial
	e.chooseOne(rv) // list parses (cands -2) imply no single writer
	// Explanations only: joining a long list for every edge dominated
	// the encoding of long histories.
	var val string
	if e.record {
		val = joinValues(r.lr.list)
	}
	rfs := e.rfs(rv)
	// inParse: the parse's appenders, as a stamp per transaction (a
	// transaction is in the current parse iff its stamp is the current
	// one) rather than a map cleared and filled per parse.
	if len(e.parseMark) < len(e.p.txns) {
		e.parseMark, e.parseStamp = make([]uint32, len(e.p.txns)), 0
	}
	for i, ps := range parses {
		rf := rfs[i]
		if e.parseStamp == math.MaxUint32 {
			// Stamps carried from encoder to encoder (recycleFrom) wrap
			// only after 2^32 parses: start over from a clean slate.
			clear(e.parseMark)
			e.parseStamp = 0
		}
		e.parseStamp++
		for _, a := range ps.appenders {
			e.parseMark[a] = e.parseStamp
		}
		for j, a := range ps.appenders {
			e.clause(rf.not(), e.act[a])
			if j+1 < len(ps.appenders) {
				e.edge(rf, litTrue, e.node[a], e.node[ps.appenders[j+1]], edgeRec{kind: kindWW, key: r.key, writer: a})
			}
		}
		if n := len(ps.appenders); n > 0 {
			last := ps.appenders[n-1]
			e.edge(rf, litTrue, e.node[last], e.node[rv.txn], edgeRec{kind: kindWR, key: r.key, val: val, writer: last})
		}
		for _, a := range appenders {
			if e.parseMark[a] != e.parseStamp { // a set: a parse may hold every appender
				e.edge(rf, litTrue, e.node[rv.txn], e.node[a], edgeRec{kind: kindRW, key: r.key, val: val, writer: -1})
			}
		}
		if unknownInit {
			e.clause(rf.not(), e.initVar(r.key, joinValues(r.lr.list[:ps.initLen])))
			if e.parseInit != nil {
				e.parseInit[rv.off+int32(i)] = int32(ps.initLen)
			}
		}
	}
}

// ParseInitial returns the initial list that rv's i-th candidate, a list
// parse, names under an unknown initial state (the list as read up to
// the parse's initial prefix length): the online engine keeps it as a
// fact once the parse is decided (docs/SEMANTICS.md §5 "Lists under an
// unknown initial state"). ok is false when the candidate is no list
// parse or the encoder keeps no prefixes (not the online instance, or
// not an unknown initial state).
func (e *encoder) ParseInitial(rv *readVar, i int) (init []history.Value, ok bool) {
	n, ok := e.parseInit[rv.off+int32(i)]
	if !ok {
		return nil, false
	}
	r := &e.p.txns[rv.txn].reads[rv.read]
	return r.lr.list[:n:n], true
}

// initVar is the variable "the initial value of key k is v" (unknown
// initial state). At most one per key holds.
func (e *encoder) initVar(k int32, v string) lit {
	m := e.inits[k]
	if m == nil {
		m = map[string]lit{}
		e.inits[k] = m
	}
	if l, ok := m[v]; ok {
		return l
	}
	l := e.newLit()
	m[v] = l
	return l
}

func (e *encoder) encodeInitialValues() {
	keys := make([]int32, 0, len(e.inits))
	for k := range e.inits {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		vals := make([]string, 0, len(e.inits[k]))
		for v := range e.inits[k] {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		ls := make([]lit, len(vals))
		for i, v := range vals {
			ls[i] = e.inits[k][v]
		}
		e.atMostOne(ls)
	}
}

// encodeVersionOrder creates one order variable per pair of writers that
// share a register key and are not ordered by the level, and the ww and
// derived rw edges of every shared key; a read of the initial version gets
// rw edges to the key's writers.
//
// Under real-time levels most pairs are ordered by time, and enumerating
// them would cost O(writers^2) per key. Those need no variable and no ww
// edge (the time chain already orders them); a reader of a's version needs
// an rw edge only to a's minimal time successors, the committed writers
// after a by time that follow no other writer after a (Vbox §3.2-3.3
// constraint avoidance): the rest are reached through time edges. Unknown
// writers get explicit edges, since their outgoing time edges are
// conditional.
func (e *encoder) encodeVersionOrder() {
	p := e.p
	readersOf := newReaderIndex(len(p.keys)) // (key, writer) -> readers
	total := 0
	for ri := range e.reads {
		total += int(e.reads[ri].n)
	}
	readersOf.pending = make([]readerEntry, 0, total)
	initReaders := map[int32][]readerRef{}
	for ri := range e.reads {
		rv := &e.reads[ri]
		r := &p.txns[rv.txn].reads[rv.read]
		if r.isList() {
			continue
		}
		for i, w := range e.cands(rv) {
			if w == -1 {
				initReaders[r.key] = append(initReaders[r.key], readerRef{rv.txn, e.rfs(rv)[i], r.val})
				if p.opts.InitialState == history.InitialUnknown {
					e.clause(e.rfs(rv)[i].not(), e.initVar(r.key, string(r.val)))
				}
				continue
			}
			readersOf.add(r.key, w, readerRef{rv.txn, e.rfs(rv)[i], r.val})
		}
	}
	readersOf.build()
	rt := p.opts.Level.RealTime()
	if e.vbox != nil {
		e.vbox.readers = readersOf
	}
	reach := e.vboxIndex() // nil: off, or the known edges have a cycle
	for k := range p.keys {
		if p.isList[k] {
			continue
		}
		key := int32(k)
		ws := e.wsScratch[:0]
		for _, w := range p.writersOf[k] {
			if e.node[w] >= 0 {
				ws = append(ws, w)
			}
		}
		e.wsScratch = ws
		if !rt {
			// A key whose writers all write one value has no pair that
			// needs an order (D1): the quadratic loop is skipped.
			uniform := e.sameValue && e.writersUniform(key)
			if uniform {
				e.dups().d1 += len(ws) * (len(ws) - 1) / 2
			}
			if !uniform && reach != nil {
				e.vboxKey(key, ws, readersOf)
			}
			for i := 0; i < len(ws) && !uniform && reach == nil; i++ {
				if e.stopped() {
					return
				}
				for j := i + 1; j < len(ws); j++ {
					e.orderPair(key, ws[i], ws[j], readersOf)
				}
			}
			for _, rd := range initReaders[key] {
				for _, b := range ws {
					if b != rd.txn {
						e.edge(rd.rf, litTrue, e.node[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: -1})
					}
				}
			}
			continue
		}
		e.orderByTime(key, ws, readersOf, initReaders[key])
	}
}

type readerRef struct {
	txn int32
	rf  lit
	val history.Value
}

// orderPair handles one pair of writers of key: its order literal (a
// variable unless the level orders them) and the rw edges it implies.
func (e *encoder) orderPair(key, a, b int32, readersOf *readerIndex) {
	if e.dropUnobserved && len(readersOf.get(key, a)) == 0 && len(readersOf.get(key, b)) == 0 {
		return
	}
	if e.sameValue && e.sameFinal(key, a, b) {
		// D1 (prune_dup.go): neither's readers need an rw edge to the
		// other, so this key needs no order of the pair.
		e.dups().d1++
		return
	}
	x := e.pairLit(key, a, b)
	via := e.p.orderVia(a, b)
	for _, rd := range readersOf.get(key, a) {
		if rd.txn != b {
			e.edge(rd.rf, x, e.node[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: a, via: via})
		}
	}
	for _, rd := range readersOf.get(key, b) {
		if rd.txn != a {
			e.edge(rd.rf, x.not(), e.node[rd.txn], e.node[a], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: b, via: via})
		}
	}
}

func (e *encoder) adjStart(t int32) int64 { return e.p.h.Txns[t].Start - e.p.opts.Skew }

func (e *encoder) adjEnd(t int32) int64 {
	end := e.p.opts.EffectiveEnd(&e.p.h.Txns[t])
	if end == math.MaxInt64 {
		return end
	}
	return end + e.p.opts.Skew
}

func (e *encoder) orderByTime(key int32, ws []int32, readersOf *readerIndex, initReaders []readerRef) {
	p := e.p
	// By start, then position: a total order. Sorted with their starts,
	// which the comparisons would otherwise look up again and again.
	byStart := e.startScratch[:0]
	for _, w := range ws {
		byStart = append(byStart, startOf{e.adjStart(w), w})
	}
	e.startScratch = byStart
	slices.SortFunc(byStart, func(a, b startOf) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.w, b.w)
	})
	for i := range byStart {
		ws[i] = byStart[i].w
	}
	// Pairs that may overlap: b starts no later than a ends (an unknown
	// writer that a committed read forces ends, for this purpose, with its
	// first forced reader: pairEnd, U2).
	for i, a := range ws {
		ea := e.pairEnd(a)
		for j := i + 1; j < len(ws) && byStart[j].start <= ea; j++ {
			e.orderPair(key, a, ws[j], readersOf)
		}
	}
	// Committed writers by start, with suffix minima of their ends.
	cs, unknown := e.csScratch[:0], e.unknownScratch[:0]
	defer func() { e.csScratch, e.unknownScratch = cs[:0], unknown[:0] }()
	for _, w := range ws {
		if p.h.Txns[w].Status == history.Committed || e.forcedCommitted(w) {
			cs = append(cs, w)
		} else {
			unknown = append(unknown, w)
		}
	}
	// Suffix minima of the committed writers' ends: the smallest and the
	// second smallest. A committed writer c of a suffix S (writers by
	// start) follows another writer of S by time iff it starts after that
	// writer's end; every c starting after the second smallest end of S
	// does (one of the two smallest is not c, and the comparison is
	// strict, so the zero-length corner of Options.Precedes cannot arise).
	// The rest is reached through them. Extra edges would be harmless:
	// this only bounds how many are drawn.
	suf := slices.Grow(e.sufScratch[:0], 2*len(cs)+2)[:2*len(cs)+2]
	e.sufScratch = suf
	suf1, suf2 := suf[:len(cs)+1], suf[len(cs)+1:]
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
	// minimalFrom calls f for the committed writers of the suffix from j0
	// that are not after another writer of it by time, and for every
	// unknown writer starting after t.
	minimalFrom := func(j0 int, t int64, f func(b int32)) {
		if j0 < len(cs) {
			m := suf2[j0]
			if e.guarded {
				// A deselected writer has no outgoing edge, so the
				// writers behind it would not be reached through it:
				// every later writer gets its edge.
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
		readers := readersOf.get(key, a)
		ea := e.pairEnd(a)
		if len(readers) == 0 || ea == math.MaxInt64 {
			continue
		}
		minimalAfter(ea, func(b int32) {
			if !p.before(a, b) && !(e.dropUnobserved && e.prune.orderedBefore(a, b)) {
				return
			}
			for _, rd := range readers {
				if rd.txn != b {
					e.edge(rd.rf, litTrue, e.node[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: a, via: p.orderVia(a, b)})
				}
			}
		})
	}
	// The initial version precedes every writer: its readers need edges to
	// the minimal ones (those starting before any committed writer ends),
	// and to every unknown writer.
	for _, rd := range initReaders {
		edgeTo := func(b int32) {
			if b != rd.txn {
				e.edge(rd.rf, litTrue, e.node[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: -1})
			}
		}
		minimalFrom(0, math.MinInt64, edgeTo)
	}
}

// pairVar returns the order variable of a pair (a before b), creating it
// with its ww edges on first use. Pairs ordered by session or real time
// are constants.
func (e *encoder) pairVar(a, b int32) lit {
	if a > b {
		return e.pairVar(b, a).not()
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
	}
	return e.newPair(a, b, x)
}

// newPair records the order literal x of the pair a < b and draws its ww
// edges.
func (e *encoder) newPair(a, b int32, x lit) lit {
	pv := &pairVar{a: a, b: b, x: x}
	e.pairs[[2]int32{a, b}] = pv
	e.pairsL = append(e.pairsL, pv)
	via := e.p.orderVia(a, b)
	e.edge(x, e.act[a], e.node[a], e.node[b], edgeRec{kind: kindWW, key: -1, writer: a, via: via})
	e.edge(x.not(), e.act[b], e.node[b], e.node[a], edgeRec{kind: kindWW, key: -1, writer: b, via: via})
	return x
}

// checkerRestartBase is the Luby unit of the checker's restarts: with
// solver.Options.Reanchor each restart re-aligns the order-guided phase
// with time, and on 10K-transaction serializable blind-write histories a
// unit of 30 took 19-5,795 conflicts (8 seeds) against 19-8,059 with the
// solver's default 100.
const checkerRestartBase = 30

// propagationLimit bounds the solver's theory propagation per inserted
// edge (solver.Options.TheoryPropagationLimit).
var propagationLimit = -1

// listParses enumerates the ways r's list can be the concatenation of
// whole append sequences (one per appender, none the reader) after a
// prefix of the initial list (only the empty one unless the initial state
// is unknown), up to maxParses; appenders are the key's other writers in
// the instance. Both encodings (one node per transaction, and begin and
// commit nodes) turn the parses into the read's candidates.
func (e *encoder) listParses(rv *readVar, r *pread) (appenders []int32, parses []listParse, unknownInit bool) {
	p := e.p
	for _, w := range p.writersOf[r.key] {
		if e.node[w] >= 0 && w != rv.txn {
			appenders = append(appenders, w)
		}
	}
	unknownInit = p.opts.InitialState == history.InitialUnknown
	const maxParses = 256
	starts := []int{0}
	if unknownInit {
		// lastStart once per read: in the loop's condition it was
		// called again for every prefix, each call a pass over the
		// key's appenders (O(list length x appenders) per read, the
		// superlinear part of the encode on a burst, issue 20 item 7).
		last := e.lastStart(rv, r, appenders)
		starts = starts[:0]
		for j := 0; j <= last; j++ {
			starts = append(starts, j)
		}
	}
	parses, _ = p.parseList(r.key, r.lr.list, starts, func(a int32) bool { return e.node[a] >= 0 && a != rv.txn }, maxParses)
	return appenders, parses, unknownInit
}

// noStartBound turns lastStart's bound off (tests: the encoding with it
// must equal the one without).
var noStartBound bool

// lastStart bounds the initial prefixes listParses tries for a list read
// under an unknown initial state (docs/SEMANTICS.md §3 "List parses: the
// initial prefix ends before a preceding appender"): it returns the
// longest prefix length j from which a parse can survive the pruner, or
// -1 if none can. The pruner (perf_prune.go, parses) drops every parse
// that leaves out a committed appender a preceding the reader by the
// level's order; a parse from prefix j places its appenders at positions
// j and beyond, where their appends match the list, so it holds a only if
// a's appends occur in the list at some position p >= j. So j is at most
// the last such p of every such a. Without it a read of a list of length
// L walked L+1 prefixes, each to the end of the list, and built parses
// the pruner then dropped: quadratic in L, on every list read of a burst
// inside one tick (issue 20, item 7). Without the pruner nothing is
// bounded: every parse stays in the instance.
func (e *encoder) lastStart(rv *readVar, r *pread, appenders []int32) int {
	list := r.lr.list
	if e.prune == nil || noStartBound {
		return len(list)
	}
	e.lastStarts++
	p := e.p
	bound := len(list)
	// at lists each value's positions in the list, last first, built at
	// the first preceding appender: one pass over the list per read
	// rather than one per appender.
	var at map[history.Value][]int
	for _, a := range appenders {
		if p.h.Txns[a].Status != history.Committed || !p.before(a, rv.txn) {
			continue
		}
		app := p.txns[a].appendsTo(r.key)
		last := -1
		if len(list) <= lastStartScanMax {
			// A short list (most reads of a burst): a scan from the end
			// costs less than the map, and finds the same position.
			bound = min(bound, lastOccurrence(list, app))
			if bound < 0 {
				break
			}
			continue
		}
		if at == nil {
			at = make(map[history.Value][]int, len(list))
			for q := len(list) - 1; q >= 0; q-- {
				at[list[q]] = append(at[list[q]], q)
			}
		}
		if len(app) > 0 {
			for _, q := range at[app[0]] {
				if q+len(app) <= len(list) && equalValues(list[q:q+len(app)], app) {
					last = q
					break
				}
			}
		}
		if bound = min(bound, last); bound < 0 {
			break
		}
	}
	e.unwalked += len(list) - bound
	return bound
}

// lastStartScanMax is the longest list lastStart scans from the end for
// each preceding appender instead of indexing its values in a map (the
// map was a third of lastStart on a 100K burst, whose lists hold a few
// values each). Tests set it to -1 to compare the map with the scan.
var lastStartScanMax = 16

// lastOccurrence is the last position q at which app occurs in list as a
// contiguous run (list[q:q+len(app)] equals app), or -1: also for an
// empty app, as lastStart's map lookup has it.
func lastOccurrence(list, app []history.Value) int {
	if len(app) == 0 {
		return -1
	}
	for q := len(list) - len(app); q >= 0; q-- {
		if list[q] == app[0] && equalValues(list[q:q+len(app)], app) {
			return q
		}
	}
	return -1
}

// recycleFrom gives e, an encoder of n transactions under construction,
// the arrays of old, an encoder no one uses any more, and its solver's
// (solver.Recycle, R1 in solver/recycle.go): each array is emptied or
// zeroed as a fresh one is, so the encoding, the search and every answer
// are those of a fresh encoder (TestRecycledEncoderMatchesFresh,
// online's TestRecycleStepByStep). old is zeroed: a stale use fails at
// once.
func (e *encoder) recycleFrom(old *encoder, n int, opts solver.Options) {
	e.s = solver.Recycle(old.s, opts)
	e.sel, e.act = reuse(old.sel, n), reuse(old.act, n)
	e.node, e.com = reuse(old.node, n), reuse(old.com, n)
	clear(old.pairs)
	clear(old.inits)
	clear(old.and2cache)
	e.pairs, e.inits, e.and2cache = old.pairs, old.inits, old.and2cache
	e.pairsL = old.pairsL[:0]
	e.reads, e.candFlat, e.rfFlat = old.reads[:0], old.candFlat[:0], old.rfFlat[:0]
	e.candScratch, e.litScratch, e.writersScratch = old.candScratch[:0], old.litScratch[:0], old.writersScratch[:0]
	e.wsScratch, e.csScratch, e.unknownScratch = old.wsScratch[:0], old.csScratch[:0], old.unknownScratch[:0]
	e.startScratch, e.sufScratch = old.startScratch[:0], old.sufScratch[:0]
	e.scratch = old.scratch[:0]
	e.nodeTxn = old.nodeTxn[:0]
	e.sessQ, e.evScratch = old.sessQ[:0], old.evScratch[:0]
	e.chain, e.timeIn, e.timeOut = old.chain[:0], old.timeIn[:0], old.timeOut[:0]
	e.prunePrev = old.prune
	e.parseMark, e.parseStamp = old.parseMark, old.parseStamp
	*old = encoder{}
}
