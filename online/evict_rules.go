package online

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// The eviction rules of docs/SEMANTICS.md §5, one method each, over one
// step's indexes (evictStep). doc.go gives the argument each rests on;
// evict applies them in this order to every time-closed member, in start
// order, and repeats the pass while a pass evicts:
//
//	r1Candidates   R1: time-closed (or an unknown decided not to commit),
//	               not pinned by a pending alert
//	r3Neighbours   R3: every neighbour time-closed
//	r4Earlier      R4 without a probe: no earlier writer of a key still here
//	r2Decided      R2: every constraint on t decided (probes)
//	r4LiveVersion  R4: t follows the live version, precedes the other
//	               writers, and the reads of the version it overwrites are
//	               decided
//	fixInitial     fixed initial values (unknown initial state)
//	r5Remove       R5: t leaves; orders through it become kept edges
//	becomeGhost    t stays as the live version of its keys, without reads
//	keepFacts      facts outlive the transactions that proved them
//
// The irrelevance rule (fixIrrelevant, evict.go) runs once per step
// before the passes.

// evictStep is one step's eviction: the reduced instance r, its prober,
// and the indexes the rules share, built once per step (newEvictStep).
type evictStep struct {
	o      *Online
	ctx    context.Context
	r      *reduced
	st     *evictState
	p      *incremental.Prepared
	e      *incremental.Encoder
	pr     *prober
	pinned map[int]bool
	// openSess: by session, its open committed members (session_overlap.go).
	openSess map[int32][]int32

	// readsOf and pairsOf list, by position, each transaction's read
	// choices and writer pairs; accessors, by interned key, who reads or
	// writes it (window members with their whole bodies), openAccessors
	// the open ones alone, opKeys each position's interned keys in op
	// order.
	readsOf       [][]int
	pairsOf       [][]*incremental.PairVar
	accessors     [][]int32
	openAccessors [][]int32
	opKeys        [][]int32
	listTxn       []bool
	// removed is a slice: a map lookup per neighbour visited was 70% of
	// the evicting engine's CPU.
	removed []bool
	to      *timeOrder
	sb      *sessionBounds // built at the first removal that needs it
	// Buffers for the solver's fixed edges, one per place that walks
	// them (none of those walks reaches another): a new slice per call
	// was an allocation per removal and per member.
	feRemove, feClosed, feGhost []solver.Node
	keptOut, keptIn             [][]int32
	outside                     [][2]int // kept orders with an end not built this step
	// keptSet indexes keptOut[a] once it is long: a transaction that
	// stays (a pinned one) gathers a kept order to most of a burst that
	// one step evicts, and a scan per addKept made that step quadratic
	// (issue 20, item 7). Short lists are scanned; the set never changes
	// keptOut's order, which the rest of the step follows.
	keptSet map[int32]keptBits
	// livePosOf caches livePos (plus one; 0: not looked up).
	livePosOf []int32
	// heldBy is, per list key folded this step, the position of the
	// last transaction that folded into its prefix (evict_list.go): it
	// may have left, its prefix passed to the initial node, and a later
	// fold in the same step must still follow it.
	heldBy map[history.Key]int32
	// lastEarlier is the writer r4Earlier found last for t, plus one.
	lastEarlier []int32
	stuck       []bool
	// tried: the member was tried this step (evictOne); an earlier writer
	// that was tried and stayed no longer holds a later writer back
	// without a probe (r4Earlier), it may be overtaken (r4LiveVersion).
	tried []bool
	// why is, by position, the rule that last kept the member (pin).
	why []PinReason
	// openCommit: unknown members whose commit a probe left undecided
	// this step (noCommit asks no more).
	openCommit map[int32]bool
	// openLit: literals a probe of this step left undecided (decideOnce,
	// burst_probe.go).
	openLit map[incremental.Lit]bool
	// byVersion indexes the instance's reads by (key, candidate writer)
	// (readsOfVersion, r4_reads.go); nil until R4 first asks.
	byVersion map[[2]int32]int32
	versions  [][]int32 // byVersion's lists (live_scratch.go)
	// wLeft: per interned key, its writers not removed this step
	// (writersLeft, r4_writers.go); nil until first asked.
	wLeft     [][]int32
	wLeftInit []bool
	// unkIdx indexes the unknowns for r5Remove (burst_unknowns.go).
	unkIdx *unknownIdx
	// bx: the list rule's readers and R4's writer facts, by index
	// (burst_listreads.go).
	bx burstIdx
	// backoffSeen caches backoffOver per position for the step (1: over,
	// -1: still backed off, backedOffNow: backed off at this step).
	backoffSeen map[int32]int8
	// r2Other is the other transaction of the constraint r2Decided last
	// found undecided (-1: none, or t's own commit).
	r2Other int32
	// sx holds the step's arrays, reused from the last step's
	// (live_scratch.go).
	sx *evictScratch
	// lx: R4's cut and firstAfterInitial's cursors (burst20c_later.go),
	// taken from a pool at the first question and given back at the
	// step's end.
	lx *r4Later
	// keyGen counts, per interned key, the changes of its part of the
	// instance this step; tailGen, per (tail ghost, key) whose fold
	// failed, keyGen plus one then (rmw30_tailretry.go).
	keyGen  []uint32
	tailGen map[[2]int32]uint32
}

// replacement is a read of another member that t's eviction replaces by
// the edges it implied: reader read key from prev (-1: the initial
// version), and precedes every writer in after (the writers of the key
// that follow prev in every completion and are still in the instance
// once t has left: t itself when t overwrites prev; see "Overtaking" in
// docs/SEMANTICS.md §5).
type replacement struct {
	reader int32
	key    history.Key
	prev   int32
	after  []int32
}

// replaceReads replaces each read of repl by the orders it implied (its
// source before the reader, the reader before every later writer), the
// step shared by a writer's eviction and a list fold.
func (s *evictStep) replaceReads(repl []replacement) {
	r, st := s.r, s.st
	for _, rp := range repl {
		ri := r.pos[rp.reader]
		st.Replaced[ri] = append(st.Replaced[ri], rp.key)
		s.keyNameChanged(rp.key) // rmw30_tailretry.go
		if rp.prev >= 0 {
			s.addKept(rp.prev, rp.reader)
		}
		for _, w := range rp.after {
			s.addKept(rp.reader, w)
		}
	}
}

// evict runs after a satisfiable step: it evicts every transaction the
// rules allow, in release order, and updates the summaries.
func (o *Online) evict(ctx context.Context, r *reduced) {
	s := newEvictStep(ctx, o, r)
	defer s.releaseLater() // burst20c_later.go
	o.fixIrrelevant(ctx, r, s.pr, s.pinned)
	s.pr.startSeen() // burst_probe.go: the models seen from here on
	order := s.r1Candidates()
	// Transactions go in start order, and one may wait for a writer that
	// starts later (R4: it must follow it) or for one its eviction held
	// back: passes repeat while they evict, so that a step drains what it
	// can instead of one layer of such waits per step, which let the
	// window grow when steps are large.
	//
	// R3 once failed fails for the rest of the step (closedness is fixed
	// within a step and the solver only gains edges and fixed literals),
	// so a later pass skips those transactions: the passes after the first
	// re-checked about as many as the first, most of them stuck on R3.
	st := s.st
	for pass := 0; pass < maxEvictPasses; pass++ {
		evicted := st.Evicted
		s.foldTails() // evict_list_tail.go
		if pass > 0 {
			order = slices.DeleteFunc(order, func(t int32) bool { return s.removed[t] || s.stuck[t] || r.ghost[t] })
		}
		for _, t := range order {
			if ctx.Err() != nil {
				return
			}
			s.evictOne(t)
		}
		if st.Evicted == evicted {
			break
		}
	}
	for t, gone := range s.removed {
		if i := r.pos[t]; gone && i >= 0 || i >= 0 && r.ghost[t] && st.tailOnly(i) {
			o.spillBody(i) // a tail ghost's too (evict_list_tail.go)
		}
	}
	s.keepFacts()
	st.dropBackoffs()
	s.countPinned()
}

// evictOne applies the rules to t, once in a pass.
func (s *evictStep) evictOne(t int32) {
	r, p, st := s.r, s.p, s.st
	tx := &r.h.Txns[t]
	s.tried[t] = true
	if p.Txns()[t].Dropped() || tx.Status == history.Aborted || s.o.voided(r.pos[t]) {
		s.r5Remove(t, false)
		st.Evicted++
		return
	}
	folded, tailOK := true, true
	var tail []listEntry
	if s.listTxn[t] {
		if !s.listEvictable() {
			s.stuck[t] = true
			s.pin(t, PinList)
			tracePin(tx, func() string { return "a list key" })
			return
		}
		// Its appends may join their lists' prefixes even if it stays
		// for another reason (foldLists).
		nf, ni := len(st.Folded[r.pos[t]]), len(st.InitList)
		folded, tailOK, tail = s.foldLists(t)
		if len(st.Folded[r.pos[t]]) != nf || len(st.InitList) != ni {
			// rmw30_tailretry.go: a fold, or an initial list kept
			// (evict_list_init.go, IL1).
			s.keysChanged(t)
		}
	}
	if i := r.pos[t]; i >= 0 && s.o.doubt.anchor[i] {
		// It stands for the order "this unknown precedes every later
		// transaction" (evict_unknown.go).
		s.stuck[t] = true
		s.pin(t, PinOpenNeighbour)
		tracePin(tx, func() string { return "R3: the session anchor of an unknown in doubt" })
		return
	}
	if !s.r3Neighbours(t) || s.openOverlapBefore(t) {
		s.stuck[t] = true
		s.pin(t, PinOpenNeighbour)
		tracePin(tx, func() string { return "R3: an open neighbour" })
		return
	}
	if w := s.r4Earlier(t); w >= 0 {
		s.pin(t, PinEarlierWriter)
		tracePin(tx, func() string { return "R4: an earlier writer is still here: " + r.h.Txns[w].ID })
		return // R4, without a probe: a writer it follows is still here
	}
	committed, ok := s.r2Probed(t) // evict_backoff.go
	if !ok {
		return
	}
	var live []history.Key
	var liveK []int32
	var keepPrev []bool
	var repl []replacement
	if committed {
		if live, liveK, keepPrev, repl, ok = s.r4LiveVersion(t); !ok {
			s.pin(t, PinVersionOrder)
			return
		}
	}
	if committed && s.listTxn[t] && !folded && !(tailOK && listTailRule) {
		// The list rule (evict_list.go): t leaves once its appends
		// joined every list's prefix, or the lists it could not join
		// only for want of an order with another appender (a tail).
		s.pin(t, PinList)
		return
	}
	s.fixInitial(t)
	s.replaceReads(repl)
	i := r.pos[t]
	for j, k := range live {
		if g, has := st.LiveOf[k]; has && !keepPrev[j] {
			s.dropGhostKey(g, k)
		}
		st.LiveOf[k] = i
		s.livePosOf[liveK[j]] = t + 1
	}
	// The list keys t holds the prefix of pass to the initial node
	// (evict_list.go, listsToInitial): t leaves as if it appended none.
	s.listsToInitial(i)
	if committed {
		live = append(live, s.keepTail(i, tail)...)
	}
	st.Evicted++
	if len(live) == 0 {
		s.r5Remove(t, committed)
		return
	}
	s.becomeGhost(t, live)
}

// dropGhostKey takes key k from ghost g, overwritten (a register) or its
// prefix passed on (a list); a ghost left with no key leaves (R5).
func (s *evictStep) dropGhostKey(g int, k history.Key) {
	r, st := s.r, s.st
	gk := slices.DeleteFunc(st.GhostKeys[g], func(x history.Key) bool { return x == k })
	st.GhostKeys[g] = gk
	s.keyNameChanged(k)   // rmw30_tailretry.go
	st.ghostDropKey(g, k) // ghost_index.go
	st.dropTailKey(g, k)  // evict_list_tail.go
	if len(gk) == 0 {
		if at, in := r.at[g]; in {
			s.r5Remove(at, true)
		} else {
			// A ghost not in this step's instance (evict_bypass.go).
			st.Member.set(g, false)
			st.ghostGone(g) // ghost_index.go
			delete(st.GhostKeys, g)
			delete(st.Decided, g)
			s.o.spillBody(g)
		}
	}
}

// newEvictStep builds the step's indexes: who touches which key, and each
// transaction's read choices, by position and interned key (maps keyed by
// position or key string were a sixth of a step). The per-position and
// per-key lists reuse the last step's arrays (emptied): allocating them
// afresh was most of evict's allocations.
func newEvictStep(ctx context.Context, o *Online, r *reduced) *evictStep {
	st := &o.ev
	p, e := r.p, r.e
	s := &evictStep{o: o, ctx: ctx, r: r, st: st, p: p, e: e}
	s.pr = &prober{ctx: ctx, s: e.Solver(), model: true, budget: probeBudget, cheap: cheapBudget, stats: &o.closureStats}
	s.pr.o, s.pr.build, s.pr.r = o, o.closureOn(), r
	s.pinned = map[int]bool{}
	for _, a := range o.pending {
		for _, id := range a.Core {
			if i, ok := o.member(a, id); ok {
				s.pinned[i] = true
			}
		}
	}
	nt := len(r.h.Txns)
	sx := o.scratchFor() // live_scratch.go
	s.sx = sx
	readsOf := emptied(&sx.readsOf, nt)
	for ri := range e.Reads() {
		readsOf[e.Reads()[ri].Txn()] = append(readsOf[e.Reads()[ri].Txn()], ri)
	}
	s.readsOf = readsOf
	pairsOf := emptied(&sx.pairsOf, nt)
	for _, pv := range e.Pairs() {
		pairsOf[pv.A()] = append(pairsOf[pv.A()], pv)
		pairsOf[pv.B()] = append(pairsOf[pv.B()], pv)
	}
	s.pairsOf = pairsOf
	// keyOf interns a key: the instance's keys as prepare numbered them,
	// then those only an open member's dropped reads touch.
	extraKeys := map[history.Key]int32{}
	keyOf := func(k history.Key) int32 {
		if i, ok := p.KeyIndex()[k]; ok {
			return i
		}
		i, ok := extraKeys[k]
		if !ok {
			i = int32(len(p.Keys()) + len(extraKeys))
			extraKeys[k] = i
		}
		return i
	}
	// Who reads or writes each key, by position. Window members count with
	// their whole bodies: the reads an open transaction has in the
	// instance dropped are constraints to come (R3). opKeys[t] are t's
	// interned keys, in op order.
	accessors := emptied(&sx.accessors, len(p.Keys()))
	opKeys := zeroed(&sx.opKeys, nt)
	// touchesList, once per transaction rather than once per pass: from
	// the keys prepare interned for the instance's ops where it kept t
	// (the same keys touchesList looks up, one lookup per op).
	s.listTxn = zeroed(&sx.listTxn, nt)
	lists := slices.Contains(p.ListKeys(), true)
	next := 0 // the next kept transaction's first entry of p.opKeys
	for t := range r.h.Txns {
		ops := r.h.Txns[t].Ops
		var prepped []int32 // the keys prepare interned, if it kept t
		if !p.Txns()[t].Dropped() {
			prepped = p.OpKeys()[next : next+len(ops) : next+len(ops)]
			next += len(ops)
			if lists {
				s.listTxn[t] = slices.ContainsFunc(prepped, func(k int32) bool { return p.ListKeys()[k] })
			}
		} else if lists {
			s.listTxn[t] = touchesList(p, &r.h.Txns[t])
		}
		if i := r.pos[t]; i >= 0 && !r.ghost[t] {
			body := o.log.at(i).Ops
			if len(body) != len(ops) || len(ops) > 0 && &body[0] != &ops[0] {
				// Reads were dropped from the instance: intern the
				// body's keys here.
				prepped = nil
			}
			ops = body
		}
		ks := prepped
		if ks == nil {
			ks = make([]int32, len(ops))
		}
		for oi, op := range ops {
			k := ks[oi]
			if prepped == nil {
				k = keyOf(op.Key)
				ks[oi] = k
			}
			for int(k) >= len(accessors) {
				accessors = append(accessors, nil)
			}
			if as := accessors[k]; len(as) == 0 || as[len(as)-1] != int32(t) {
				accessors[k] = append(as, int32(t))
			}
		}
		opKeys[t] = ks
	}
	s.accessors, s.opKeys = accessors, opKeys
	// The open accessors alone, for R3: a few per key, where all of them
	// are tens.
	openAccessors := emptied(&sx.openAccessors, len(accessors))
	for k, as := range accessors {
		for _, u := range as {
			if !s.closedFor(u) && r.h.Txns[u].Status != history.Aborted {
				openAccessors[k] = append(openAccessors[k], u)
			}
		}
	}
	s.openAccessors = openAccessors
	s.removed = zeroed(&sx.removed, nt)
	s.to = newTimeOrderIn(r, &sx.to)
	s.keptOut = emptied(&sx.keptOut, nt)
	s.keptIn = emptied(&sx.keptIn, nt)
	for _, k := range st.Kept {
		a, okA := r.at[k[0]]
		b, okB := r.at[k[1]]
		if okA && okB {
			s.keptOut[a] = append(s.keptOut[a], b)
			s.keptIn[b] = append(s.keptIn[b], a)
		} else {
			s.outside = append(s.outside, k)
		}
	}
	s.keptSet = map[int32]keptBits{}
	s.livePosOf = zeroed(&sx.livePosOf, len(p.Keys()))
	s.lastEarlier = zeroed(&sx.lastEarlier, nt)
	s.stuck = zeroed(&sx.stuck, nt)
	s.tried = zeroed(&sx.tried, nt)
	s.why = zeroed(&sx.why, nt)
	return s
}

// closedAt: position t is time-closed (a fixed initial value always is).
func (s *evictStep) closedAt(t int32) bool {
	i := s.r.pos[t]
	return i < 0 || s.o.closed.get(i)
}

// closedFor is closedAt for R3: an unknown member in doubt that its
// session closes (evict_unknown.go) counts as closed, its reads being in
// the instance.
func (s *evictStep) closedFor(t int32) bool {
	i := s.r.pos[t]
	return i < 0 || s.o.closed.get(i) || s.o.closedBySession(i)
}

// commitOpen: u is an unknown member whose commit is not decided this
// step (one probe per member and step, noCommit).
func (s *evictStep) commitOpen(u int32) bool {
	if u < 0 || s.r.h.Txns[u].Status != history.Unknown || s.r.pos[u] < 0 || s.p.Txns()[u].Dropped() {
		return false
	}
	if !s.openCommit[u] {
		if _, ok := fixedLit(s.e.Solver(), s.e.Act()[u]); ok {
			return false
		}
		s.noCommit(u, true)
	}
	return s.openCommit[u]
}

// fixedEdge: an edge on p (and q) is decided at level 0.
func (s *evictStep) fixedEdge(p, q solver.Lit, two bool) bool {
	vp, okP := fixedLit(s.e.Solver(), incremental.Lit(p))
	if okP && !vp {
		return true
	}
	if !two {
		return okP
	}
	vq, okQ := fixedLit(s.e.Solver(), incremental.Lit(q))
	return okQ && !vq || okP && okQ
}

// noCommit: member w is an unknown transaction that does not commit in
// any completion (its commit literal is false at level 0, or a probe
// proves it when probe is set). A writer that does not commit is in no
// version order and has no outgoing edge: its pairs constrain nothing.
func (s *evictStep) noCommit(w int32, probe bool) bool {
	if s.r.h.Txns[w].Status != history.Unknown || s.r.pos[w] < 0 || s.p.Txns()[w].Dropped() {
		return false
	}
	if v, ok := fixedLit(s.e.Solver(), s.e.Act()[w]); ok {
		return !v
	}
	if !probe || s.openCommit[w] {
		return false
	}
	c, ok := s.commitOf(w)
	if !ok && !s.pr.noProbe {
		// Asked once a step: an unknown in doubt pairs with every later
		// writer of its keys, and a probe per pair spent the step's
		// budget on one undecided commit.
		if s.openCommit == nil {
			s.openCommit = map[int32]bool{}
		}
		s.openCommit[w] = true
	}
	return ok && !c
}

// keptSetMin is the length of keptOut[a] from which hasKept indexes it.
const keptSetMin = 32

// hasKept reports whether a -> b is a kept order of this step.
func (s *evictStep) hasKept(a, b int32) bool {
	if r5PairsNaive {
		return slices.Contains(s.keptOut[a], b) // the reference (tests)
	}
	if bs, ok := s.keptSet[a]; ok {
		return bs.has(b)
	}
	if len(s.keptOut[a]) < keptSetMin {
		return slices.Contains(s.keptOut[a], b)
	}
	return s.keptRow(a).has(b)
}

// keptRow is keptSet[a], made from keptOut[a] at the first question.
func (s *evictStep) keptRow(a int32) keptBits {
	if bs, ok := s.keptSet[a]; ok {
		return bs
	}
	bs := make(keptBits, (len(s.r.h.Txns)+63)/64)
	for _, x := range s.keptOut[a] {
		bs.set(x)
	}
	s.keptSet[a] = bs
	return bs
}

// keptBits is a row of keptSet: a bit per position of the step's
// instance. A map per row was a lookup with cache misses per pair: on a
// 300K burst the rows of unknowns in doubt hold ten thousand orders each,
// and R5 asks each of them about a thousand pairs per removal (a fifth
// of run's CPU). A row is a bit per position (an eighth of a byte per
// transaction of the step), made only for the few members with long
// kept lists, and dropped with the step.
type keptBits []uint64

func (bs keptBits) has(b int32) bool { return bs[b>>6]&(1<<(uint(b)&63)) != 0 }
func (bs keptBits) set(b int32)      { bs[b>>6] |= 1 << (uint(b) & 63) }

// addKept keeps a -> b unless the level or an earlier kept order already
// gives it, or an end has left.
func (s *evictStep) addKept(a, b int32) {
	if a == b || s.removed[a] || s.removed[b] || s.p.Before(a, b) || s.hasKept(a, b) {
		return
	}
	s.keptOut[a] = append(s.keptOut[a], b)
	s.keptIn[b] = append(s.keptIn[b], a)
	if bs, ok := s.keptSet[a]; ok {
		bs.set(b)
	}
}

// commitOf is t's commit decision, if decided (probing).
//
// An unknown whose commit a probe of this step left undecided is not
// probed again in the step (openCommit, as noCommit does): the list rule
// asks for the commit of every appender and reader of a key at each
// fold it tries, and an unknown in doubt, undecided until its horizon,
// cost a solve of the window per question (40% of the CPU on mixed list
// streams with 2% unknowns). Answering "not decided" without asking
// only keeps members longer: a later step asks again.
func (s *evictStep) commitOf(t int32) (bool, bool) {
	r, p := s.r, s.p
	switch {
	case r.pos[t] < 0:
		return true, true
	case p.Txns()[t].Dropped() || r.h.Txns[t].Status == history.Aborted:
		return false, true
	}
	return s.commitOfLit(t)
}

// commitOfLit is commitOf for a member t that prepare kept and that did
// not abort (burst_session.go asks it of a session's unknowns, whose
// commit is a literal of the encoding: the two tests above are false
// for them, and each was a cache miss per question).
func (s *evictStep) commitOfLit(t int32) (bool, bool) {
	act := s.e.Act()[t]
	if s.openCommit[t] {
		if v, ok := fixedLit(s.e.Solver(), act); ok {
			return v, true
		}
		return false, false
	}
	v, ok := s.pr.decide(act)
	if !ok && !s.pr.noProbe {
		if s.openCommit == nil {
			s.openCommit = map[int32]bool{}
		}
		s.openCommit[t] = true
	}
	return v, ok
}

// r1Candidates is R1: the time-closed members (and the unknowns decided
// not to commit, evict_unknown_void.go, and those that end with their
// session, rmw31_sessend.go) that are neither ghosts nor pinned by a
// pending alert, in start order.
func (s *evictStep) r1Candidates() []int32 {
	r := s.r
	order := make([]int32, 0, len(r.h.Txns))
	for t := range r.h.Txns {
		i := r.pos[t]
		if i < 0 || r.ghost[t] || !s.o.closed.get(i) && !s.o.voided(i) && !s.o.ended(i) || s.pinned[i] {
			continue
		}
		order = append(order, int32(t))
	}
	return order
}

// r5Remove takes t out of the instance, keeping the orders through it
// (R5). Nothing passes through a transaction that does not commit: its
// outgoing edges, real time included, vanish (I1).
func (s *evictStep) r5Remove(t int32, committed bool) {
	r, p, e, st, removed := s.r, s.p, s.e, s.st, s.removed
	s.keysChanged(t) // rmw30_tailretry.go
	var preds, succs []int32
	if n := e.Node()[t]; n >= 0 && committed {
		s.feRemove = e.Solver().FixedEdges(n, false, s.feRemove[:0])
		for _, m := range s.feRemove {
			if u := e.NodeTxn()[m]; u >= 0 {
				preds = append(preds, u)
			}
		}
		s.feRemove = e.Solver().FixedEdges(n, true, s.feRemove[:0])
		for _, m := range s.feRemove {
			if u := e.NodeTxn()[m]; u >= 0 {
				succs = append(succs, u)
			}
		}
	}
	if committed {
		// Session and real-time edges leave only a transaction that
		// commits (I1). An order through t that depends on a commit
		// still open keeps t, as a skeleton without ops, unless the
		// unknown's anchor precedes t (rules29_skeleton.go) or it is
		// time-closed: its orders through t are kept out of it below
		// (rules29_through.go).
		if s.undecidedUnknownBefore(t) >= 0 { // burst_unknowns.go
			if i := r.pos[t]; i >= 0 {
				s.o.setGhostKeys(i, []history.Key{}) // ghost_index.go
				r.ghost[t] = true
			}
			return
		}
		// Session neighbours that real time does not already order go
		// with the other predecessors and successors; the real-time
		// ones are found by time below.
		if ss := p.SessionOf()[t]; ss >= 0 && p.Opts().Level.SessionOrder() {
			preds, succs = s.sessionNeighbours(t, ss, preds, succs) // burst_session.go
		}
	}
	if committed {
		// A kept order out of t holds if t commits (the orders out of
		// an unknown whose commit is open are guarded by it,
		// evict_guarded.go): none passes through one that does not.
		preds = append(preds, s.keptIn[t]...)
		succs = append(succs, s.keptOut[t]...)
		preds, succs = s.guardedNeighbours(t, preds, succs) // evict_guarded.go
		preds = s.closedUnknownsBefore(t, preds)            // rules29_through.go
	}
	removed[t] = true
	s.keepPairs(preds, succs) // burst20c_pairs.go
	// An order a -> t -> b with both steps real time is itself real
	// time (e_a+2Δ <= s_t <= e_t <= s_b-2Δ), so those pairs, old ghosts
	// times the window, need no kept edge. Of the pairs with one
	// real-time step only the ones real time does not order already
	// are visited: a real-time successor b of t starting after
	// effEnd(a)+2Δ, or a real-time predecessor a of t ending before
	// start(b)-2Δ, is ordered with the other end by real time.
	if committed && p.Opts().Level.RealTime() {
		for _, a := range preds {
			s.keepAfter(a, t) // evict_cover.go; bounded by succBound (evict_unknown.go)
		}
		for _, b := range succs {
			s.keepBefore(b, t) // evict_cover.go
		}
	}
	i := r.pos[t]
	if i >= 0 {
		st.Member.set(i, false)
		st.ghostGone(i) // ghost_index.go
		delete(st.GhostKeys, i)
		r.ghost[t] = false
		delete(st.Replaced, i)
		delete(st.Folded, i)
		delete(st.Tail, i)
		// A decision is read only for members (build): kept for those
		// gone, Decided grew with every unknown outcome ever released,
		// and build walked all of it at every step.
		delete(st.Decided, i)
	}
}

// r3Neighbours is R3: every neighbour of t is time-closed.
func (s *evictStep) r3Neighbours(t int32) bool {
	p, e := s.p, s.e
	ok := true
	if n := e.Node()[t]; n >= 0 {
		e.Solver().IncidentEdges(n, func(other solver.Node, _ bool, _, _ solver.Lit, _ bool) {
			if u := e.NodeTxn()[other]; u >= 0 && !s.closedFor(u) {
				ok = false
			}
		})
		for _, fw := range []bool{false, true} {
			s.feClosed = e.Solver().FixedEdges(n, fw, s.feClosed[:0])
			for _, m := range s.feClosed {
				if u := e.NodeTxn()[m]; u >= 0 && !p.Before(u, t) && !p.Before(t, u) && !s.closedFor(u) {
					ok = false
				}
			}
		}
	}
	// An open transaction sharing a key is a neighbour unless it
	// follows t by session or real time: then every constraint it can
	// have with t on that key is an order the level already fixes, or
	// a stale read that the live version (t, or its overwriter) still
	// exposes once t has left.
	for _, k := range s.opKeys[t] {
		for _, u := range s.openAccessors[k] {
			if u != t && !p.Before(t, u) {
				ok = false
			}
		}
	}
	return ok
}

// r2Decided is R2 for t: every edge at t, every read choice of t's reads,
// every writer pair with t and t's commit are decided (probing). It
// returns whether t commits.
func (s *evictStep) r2Decided(t int32) (committed bool, ok bool) {
	r, e, pr := s.r, s.e, s.pr
	s.r2Other = -1
	n := e.Node()[t]
	if n < 0 {
		return false, true
	}
	all := true
	e.Solver().IncidentEdges(n, func(other solver.Node, _ bool, a, b solver.Lit, two bool) {
		if u := e.NodeTxn()[other]; u >= 0 && s.noCommit(u, false) {
			return // moot: the other end commits in no completion (I1)
		}
		if u := e.NodeTxn()[other]; u >= 0 && s.behindAnchor(u, t) {
			return // implied or impossible: evict_unknown.go
		}
		if u := e.NodeTxn()[other]; u >= 0 && s.guardedEdge(u, a, two) {
			return // holds exactly when u commits; R5 keeps it (evict_guarded.go)
		}
		if all && s.commitOpen(e.NodeTxn()[other]) && !s.fixedEdge(a, b, two) {
			// An edge with an unknown whose commit a probe left open
			// this step holds in the completions that commit it only:
			// no probe is spent on it (the step's budget went on them).
			all = false
			tracePin(&r.h.Txns[t], func() string { return "R2: an edge with an unknown in doubt" })
			return
		}
		if all && !pr.edgeDecided(a, b, two) {
			all = false
			s.r2Other = e.NodeTxn()[other]
			if u := e.NodeTxn()[other]; u >= 0 {
				tracePin(&r.h.Txns[t], func() string { return "R2: an edge with " + r.h.Txns[u].Compact() })
			}
		}
	})
	if !all {
		s.pin(t, PinEdge)
		return false, false
	}
	for _, ri := range s.readsOf[t] {
		rv := &e.Reads()[ri]
		if _, ok := pr.decide(rv.G()); !ok {
			s.pin(t, PinReadSource)
			return false, false
		}
		for ci, l := range e.Rfs(rv) {
			if w := e.Cands(rv)[ci]; w >= 0 && s.commitOpen(w) {
				if _, fixed := fixedLit(e.Solver(), l); !fixed {
					s.pin(t, PinReadSource) // as for edges: no probe
					return false, false
				}
			}
			if _, ok := pr.decide(l); !ok {
				s.r2Other = e.Cands(rv)[ci]
				tracePin(&r.h.Txns[t], func() string { return fmt.Sprintf("R2: a read's source (candidate %d of %v)", ci, e.Cands(rv)) })
				s.pin(t, PinReadSource)
				return false, false
			}
		}
	}
	for _, pv := range s.pairsOf[t] {
		other := pv.A()
		if other == t {
			other = pv.B()
		}
		if s.noCommit(other, true) {
			continue // moot: the other writer never commits
		}
		if s.behindAnchor(other, t) {
			continue // other first whenever it commits: evict_unknown.go
		}
		if _, ok := pr.decide(pv.X()); !ok {
			s.r2Other = other
			tracePin(&r.h.Txns[t], func() string { return "R2: a writer pair " + r.h.Txns[pv.A()].ID + " " + r.h.Txns[pv.B()].ID })
			s.pin(t, PinWriterPair)
			return false, false
		}
	}
	c, ok := pr.decide(e.Act()[t])
	if !ok {
		s.pin(t, PinCommit)
	}
	return c, ok
}

// livePos is the position of key k's live version in the instance (-1:
// the initial version, or a ghost not built this step), from LiveOf
// once per key and step and kept as evictions change it: two map
// lookups per writer and key were a twentieth of a step.
func (s *evictStep) livePos(k int32) int32 {
	if at := s.livePosOf[k]; at != 0 {
		return at - 1
	}
	prev := int32(-1)
	if g, has := s.st.LiveOf[s.p.Keys()[k]]; has {
		if at, in := s.r.at[g]; in {
			prev = at
		} else if s.r.foldedLive(g) && s.r.initAt >= 0 {
			// Its version is the initial node's (live_fold.go).
			prev = s.r.initAt
		}
	}
	s.livePosOf[k] = prev + 1
	return prev
}

// holdsBack: member w writes before t by session or real time, is still
// a window member and has not been tried this step, so t waits for it
// (R4) rather than probe its way past. A writer tried this step that
// stayed (pinned) holds t back no more: t may overtake it
// (r4LiveVersion, "Overtaking" in docs/SEMANTICS.md §5). tried only gets
// set within a step, so a writer that stops holding t back never starts
// again (r4Earlier's cache).
func (s *evictStep) holdsBack(w, t int32) bool {
	r, p := s.r, s.p
	return w != t && !s.removed[w] && !s.tried[w] && r.pos[w] >= 0 && !r.ghost[w] && r.h.Txns[w].Status != history.Aborted && !p.Txns()[w].Dropped() && p.Before(w, t) && !s.noCommit(w, false) && !s.untriable(w)
}

// untriable: member w is no R1 candidate of this step, so no pass tries
// it, and waiting for it would hold t for the whole step: an unknown in
// doubt that its session closes (evict_unknown.go) precedes every later
// writer of its session until its in-doubt horizon. t may overtake it as
// it overtakes a writer tried that stayed (docs/SEMANTICS.md §5
// "Overtaking an unknown in doubt").
func (s *evictStep) untriable(w int32) bool {
	i := s.r.pos[w]
	return !s.o.closed.get(i) && !s.o.voided(i) && !s.o.ended(i) && s.o.closedBySession(i)
}

// r4Earlier is R4 without a probe: a member that writes one of t's keys
// and precedes t by session or real time is still in the instance, so t
// cannot leave yet. It returns that writer, or -1.
//
// Writers are listed by position, which is start order (released in
// start order, the fixed initial values first), and every order of the
// level puts a later start after: the scan stops there.
//
// Within a step a writer that does not hold t back never comes to:
// removed and ghost only get set. So the writer found in one pass, if it
// still holds t back, is still the first the scan would find, and the
// next pass asks it alone (lastEarlier, plus one) before scanning.
func (s *evictStep) r4Earlier(t int32) int32 {
	r, p := s.r, s.p
	if w := s.lastEarlier[t] - 1; w >= 0 && s.holdsBack(w, t) {
		return w
	}
	start := r.h.Txns[t].Start
	for _, kv := range p.Txns()[t].Finals() {
		for _, w := range s.writersStartingBy(kv.Key(), start) { // burst20c_later.go
			if r.h.Txns[w].Start > start {
				break
			}
			if s.holdsBack(w, t) {
				s.lastEarlier[t] = w + 1
				return w
			}
		}
	}
	return -1
}

// r4LiveVersion is R4 with probes for committed t, per key k it writes
// last:
//
//   - t follows k's live version prev (a ghost, or the initial version);
//   - every other member writer of k is decided against t: after t, or
//     before t (an earlier writer t overtakes, still in the instance with
//     its body; "Overtaking" in docs/SEMANTICS.md §5);
//   - the reads of prev's version are decided.
//
// t becomes the live version of k, unless the live version already
// follows t (t was overtaken on k): then t's version of k is overwritten
// for good, its reads decided, and t leaves k without becoming its live
// version. It returns the keys t becomes the live version of (interned
// in liveK) and the reads its eviction replaces, each with the writers
// the reader precedes.
func (s *evictStep) r4LiveVersion(t int32) (live []history.Key, liveK []int32, keepPrev []bool, repl []replacement, ok bool) {
	r, p, e, pr, removed, st := s.r, s.p, s.e, s.pr, s.removed, s.st
	tx := &r.h.Txns[t]
	ok = true
	before := func(a, b int32) bool { // a precedes b in every completion
		return p.Before(a, b) || pr.forced(e.Node()[a], e.Node()[b])
	}
	for _, kv := range p.Txns()[t].Finals() {
		k := kv.Key()
		prev := s.livePos(k)
		// overtaken: prev, the live version, follows t: t's version of
		// k is overwritten (an earlier eviction overtook t).
		overtaken, stale := false, false
		var earlier, later []int32 // member writers of k decided before / after t
		// The writers up to the cut, then those after it only if t is
		// overtaken on k: else they follow t in real time and are
		// reached through t (burst20c_later.go).
		bound, cut := s.r4Cut(k, t, prev)
		var pre []int32
		if cut {
			pre = s.writersUpTo(k, bound)
		} else {
			pre = s.writersLeft(k)
		}
		for phase := 0; phase < 2; phase++ {
			list := pre
			if phase == 1 {
				if !cut {
					break
				}
				if r4LaterCount != nil {
					r4LaterCount(overtaken)
				}
				if !overtaken {
					s.r4SuffixUnknowns(k, t, bound)
					break
				}
				list = s.writersLeft(k)[len(pre):]
			}
			for _, w := range list { // r4_writers.go
				if s.r4Skip(w, t) { // burst_listreads.go
					continue
				}
				if i := r.pos[w]; w != prev && i >= 0 && r.ghost[w] && !slices.Contains(st.GhostKeys[i], p.Keys()[k]) {
					// A ghost that an eviction earlier in this step
					// overwrote on k: it precedes prev, which t must
					// follow, so it holds t back no more than prev.
					continue
				}
				if w == prev || r.pos[w] < 0 {
					if overtaken {
						continue
					}
					if !before(w, t) {
						if before(t, w) && w == prev {
							// The live version follows t: overtaken.
							overtaken = true
							continue
						}
						ok = false
						tracePin(tx, func() string { return "R4: not after the live version " + r.h.Txns[w].Compact() })
					}
					continue
				}
				switch {
				case p.Before(t, w):
					later = append(later, w)
				case p.Before(w, t) || s.behindAnchor(w, t): // evict_unknown.go
					earlier = append(earlier, w)
				case pr.forced(e.Node()[t], e.Node()[w]):
					later = append(later, w)
				case pr.forced(e.Node()[w], e.Node()[t]):
					earlier = append(earlier, w)
				default:
					ok = false
					tracePin(tx, func() string { return "R4: not ordered with writer " + r.h.Txns[w].Compact() })
				}
			}
		}
		if !ok {
			break
		}
		// The version whose reads this eviction replaces: prev's, which t
		// overwrites; or, overtaken, t's own, which prev's line
		// overwrites. Each reader of it precedes every writer of k that
		// follows that version: t, or the live version, and the member
		// writers decided after it.
		from := prev
		var after []int32
		if overtaken {
			from = t
			after = append(after, prev)
			after = append(after, later...)
		} else {
			// An earlier writer t overtakes follows prev, unless an
			// eviction before overtook it too (then it precedes prev):
			// a reader of prev's version precedes only the former.
			after = append(after, t)
			after = append(after, later...)
			for _, w := range earlier {
				switch {
				case prev >= 0 && s.behindAnchor(w, prev):
					// Before the live version whenever it commits
					// (evict_unknown.go): as decided before it.
				case g4BothWays && prev >= 0 && s.undecidedAgainst(w, prev) && s.g4Before(w, prev):
					// Before prev whenever it commits (its session, real
					// time from its horizon's end, a kept order): decided
					// before it, so not G4's (rmw34_g4.go). Asked only
					// where G4 or the pin below would take w: g4Before
					// scans w's edges, and every other w is settled by
					// the cases below as before.
				case g4Naive && prev >= 0 && s.undecidedAgainst(w, prev) && r.ghost[prev] && !s.o.closedBySession(r.pos[w]):
					// The naive rule (tests only, rmw34_g4.go): as if
					// decided before prev.
				case prev >= 0 && s.undecidedAgainst(w, prev) && staleForUnknown && r.ghost[prev] && !s.o.closedBySession(r.pos[w]):
					// Past its horizon, its commit open: prev keeps
					// its version, as a stale ghost (evict_guarded.go).
					stale = true
				case prev >= 0 && s.undecidedAgainst(w, prev): // evict_unknown.go
					ok = false
					tracePin(tx, func() string {
						return "R4: an unknown overtaken writer, commit open, not ordered with the live version " + r.h.Txns[w].Compact()
					})
				case prev < 0 || before(prev, w):
					after = append(after, w)
				case before(w, prev):
				default:
					ok = false
					tracePin(tx, func() string {
						return "R4: an overtaken writer not ordered with the live version " + r.h.Txns[w].Compact()
					})
				}
			}
			if !ok {
				break
			}
		}
		if stale {
			// prev keeps its version of k and every read of it, as a
			// stale ghost does ("Stale ghosts" in docs/SEMANTICS.md §5):
			// an overtaken unknown is not ordered with it.
			live = append(live, p.Keys()[k])
			liveK = append(liveK, k)
			keepPrev = append(keepPrev, true)
			continue
		}
		var kr []replacement
		undecided := false
		// The reads with from's version of k as a candidate, in the
		// order of the instance's reads (r4_reads.go).
		for _, ri := range s.readsOfVersion(k, from) {
			rv := &e.Reads()[ri]
			u := rv.Txn()
			if u == t && !overtaken || removed[u] {
				continue
			}
			for ci, w := range e.Cands(rv) {
				if w != from && !(w == -1 && from < 0) {
					continue
				}
				v, dec := s.decideOnce(e.Rfs(rv)[ci])
				if !dec && guardedReads && s.guardedRead(u, ri, e.Rfs(rv)[ci], k, from) {
					// It reads from's version in every completion that
					// commits u, and is no read in the others: replaced
					// by orders out of u, which hold if u commits
					// (evict_guarded.go).
					v, dec = true, true
				}
				if !dec {
					undecided = true
					tracePin(tx, func() string {
						return "R4: a read of the version it overwrites is not decided: " + r.h.Txns[u].Compact()
					})
				} else if v {
					kr = append(kr, replacement{u, p.Keys()[k], from, after})
				}
			}
		}
		keep := false
		if undecided {
			// A read of the overwritten version is not decided. If that
			// version is a ghost's, the ghost keeps it ("Stale ghosts" in
			// docs/SEMANTICS.md §5): no read is replaced, and t leaves
			// as if it overwrote nothing still read. Else t stays.
			// The initial version stays too, a candidate of those
			// reads in every later instance (evict_guarded.go, G5).
			if overtaken || from >= 0 && !r.ghost[from] || from < 0 && !staleInitial {
				ok = false
				break
			}
			keep, kr = true, nil
		} else if !overtaken && from >= 0 && r.ghost[from] && s.firstAfterInitialAt(k, from) { // burst20c_later.go
			// prev is the first version after the initial one, whose
			// reads are not all decided: it keeps its version of k
			// (G5).
			keep = true
		}
		repl = append(repl, kr...)
		if overtaken {
			continue
		}
		live = append(live, p.Keys()[k])
		liveK = append(liveK, k)
		keepPrev = append(keepPrev, keep)
	}
	return live, liveK, keepPrev, repl, ok
}

// fixInitial keeps, under an unknown initial state, the initial values
// t's reads fixed: a read of the initial version decided in every
// completion names the key's initial value.
func (s *evictStep) fixInitial(t int32) {
	if s.o.opts.InitialState != history.InitialUnknown {
		return
	}
	s.noteListInitials(t) // evict_list_init.go, IL1
	p, e, pr, st := s.p, s.e, s.pr, s.st
	for _, ri := range s.readsOf[t] {
		rv := &e.Reads()[ri]
		rd := &p.Txns()[t].Reads()[rv.Read()]
		for ci, w := range e.Cands(rv) {
			if v, _ := pr.decide(e.Rfs(rv)[ci]); w == -1 && v && !rd.IsList() {
				k := p.Keys()[rd.Key()]
				if _, has := st.LiveOf[k]; !has {
					st.InitVal[k] = rd.Val()
				}
			}
		}
	}
}

// becomeGhost keeps evicted t as the live version of the keys live: its
// reads go, the orders they proved stay.
func (s *evictStep) becomeGhost(t int32, live []history.Key) {
	r, e, st := s.r, s.e, s.st
	i := r.pos[t]
	s.o.setGhostKeys(i, live) // ghost_index.go
	r.ghost[t] = true
	s.keysChanged(t) // rmw30_tailretry.go
	if r.h.Txns[t].Status == history.Unknown {
		st.Decided[i] = true
	}
	delete(st.Replaced, i)
	delete(st.Folded, i)
	s.keepOutOfClosedUnknowns(t) // rules29_through.go
	if n := e.Node()[t]; n >= 0 {
		s.feGhost = e.Solver().FixedEdges(n, false, s.feGhost[:0])
		for _, m := range s.feGhost {
			if u := e.NodeTxn()[m]; u >= 0 {
				s.addKept(u, t)
			}
		}
		s.feGhost = e.Solver().FixedEdges(n, true, s.feGhost[:0])
		for _, m := range s.feGhost {
			if u := e.NodeTxn()[m]; u >= 0 {
				s.addKept(t, u)
			}
		}
	}
}

// keepFacts: facts outlive the transactions that proved them (§5). Every
// order and commit decision fixed now among the remaining members is
// kept, since the next step's instance may no longer hold its reason;
// the kept orders are stored by released index.
func (s *evictStep) keepFacts() {
	r, p, e, st, removed := s.r, s.p, s.e, s.st, s.removed
	for t := range r.h.Txns {
		t32 := int32(t)
		i := r.pos[t]
		if i < 0 || removed[t32] {
			continue
		}
		if r.h.Txns[t].Status == history.Unknown && !p.Txns()[t].Dropped() {
			if v, ok := fixedLit(e.Solver(), e.Act()[t]); ok {
				st.Decided[i] = v
			}
		}
		if n := e.Node()[t]; n >= 0 {
			s.feGhost = e.Solver().FixedEdges(n, true, s.feGhost[:0])
			for _, m := range s.feGhost {
				if u := e.NodeTxn()[m]; u >= 0 && r.pos[u] >= 0 {
					s.addKept(t32, u)
				}
			}
		}
	}
	for _, pv := range e.Pairs() {
		v, ok := fixedLit(e.Solver(), pv.X())
		if !ok || r.pos[pv.A()] < 0 || r.pos[pv.B()] < 0 {
			continue
		}
		ca, okA := s.commitOf(pv.A())
		cb, okB := s.commitOf(pv.B())
		if okA && okB && ca && cb {
			if v {
				s.addKept(pv.A(), pv.B())
			} else {
				s.addKept(pv.B(), pv.A())
			}
		}
	}
	// Store the kept orders by released index.
	st.Kept = st.Kept[:0]
	for _, k := range s.outside {
		if st.Member.get(k[0]) && st.Member.get(k[1]) {
			st.Kept = append(st.Kept, k)
		}
	}
	for a, bs := range s.keptOut {
		for _, b := range bs {
			if !removed[a] && !removed[b] && r.pos[a] >= 0 && r.pos[b] >= 0 {
				st.Kept = append(st.Kept, [2]int{r.pos[a], r.pos[b]})
			}
		}
	}
	slices.SortFunc(st.Kept, func(x, y [2]int) int {
		if c := cmp.Compare(x[0], y[0]); c != 0 {
			return c
		}
		return cmp.Compare(x[1], y[1])
	})
	st.Kept = slices.Compact(st.Kept)
	st.Ghosts = len(st.GhostKeys)
}
