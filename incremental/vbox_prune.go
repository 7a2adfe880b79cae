package incremental

import (
	"cmp"
	"slices"

	"github.com/streamcheck/streamcheck/closure"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// Reachability pruning without timestamps (docs/SEMANTICS.md §3,
// "Pruning by reachability without timestamps (V1)"; Vbox §4-5 and
// Cobra's pruning): the known edges of the instance (base edges: forced
// read-from, session order) go into a closure.Static. V1a: a pair of
// writers of a key one of which reaches the other through them is ordered
// in every model, so it needs no order variable and no ww edge, and the
// readers of the earlier one need rw edges only to the nearest later
// writers (the others are reached through those and the known path).
// V1b: a writer that reaches a forced reader of the other's version
// precedes it; that decision's edges become known edges, and the loop
// repeats to a fixpoint. closure.Static is sound but may miss far paths;
// a pair it cannot decide keeps its variable, so incompleteness costs only
// speed.
//
// Only the fast path (every transaction present, constant selectors) at
// levels without real time (those order writers by time, orderByTime):
// in the guarded encoding a deselected transaction cuts known paths.
// Invariant: every edge in the index is an edge already drawn in the
// solver (an rw edge V1a leaves out must be implied by drawn edges).

// vboxState holds the known edges collected while encoding and the index
// built from them.
type vboxState struct {
	known [][2]int32
	reach *closure.Static
	built bool
	// decided counts pairs ordered by reachability; covered the rw edges
	// left out because a nearer later writer carries them.
	decided, covered int
	// forced counts pairs ordered because one writer reaches a forced
	// reader of the other's version.
	forced int
	rounds int
	// readers is encodeVersionOrder's reader index, for vboxDecide.
	readers *readerIndex
	// scratch
	byPos []int32
	rows  []uint64
	cover []uint64
	// settled counts the lemmas vboxSettle added, settleRounds its
	// rounds.
	settled, settleRounds int
}

// vboxOn: fast path, pruning on, a complete history.
func (e *encoder) vboxOn() bool {
	return e.sameValue && !e.guarded && e.si == nil
}

// noteKnown records a base edge between solver nodes.
func (e *encoder) noteKnown(from, to solver.Node) {
	if e.vbox != nil && e.vbox.known != nil {
		e.vbox.known = append(e.vbox.known, [2]int32{int32(from), int32(to)})
	}
}

// vboxIndex runs the pruning loop once and returns the final index: build
// the index from the known edges, decide every pair of writers that the
// known edges order through a forced reader (vboxDecide), add what that
// decides as known edges, rebuild, and repeat until a round decides
// nothing (Vbox's fixpoint; at most vboxRounds rounds, each later one over
// the pairs still open).
func (e *encoder) vboxIndex() *closure.Static {
	v := e.vbox
	if v == nil {
		return nil
	}
	if v.built {
		return v.reach
	}
	v.built = true
	var open [][3]int32
	for round := 0; round < vboxRounds; round++ {
		v.reach = closure.NewStatic(e.s.NumNodes(), v.known)
		if v.reach == nil || e.stopped() {
			break
		}
		n := v.forced
		if e.si != nil {
			open = e.vboxDecideSI(open, round == 0) // vbox_si.go
		} else {
			open = e.vboxDecide(open, round == 0)
		}
		v.rounds++
		if !vboxAnotherRound(v.forced-n, e.s.NumNodes()) || len(open) == 0 {
			break
		}
	}
	v.known = nil
	return v.reach
}

// vboxAnotherRound says whether a round of the pruning loop that gained
// gained decisions (pairs, or permanent edges) on an instance of nodes
// nodes is worth another: each round rebuilds the index, O(edges x band),
// and the tail of the fixpoint gains a few each (a generated 20K history:
// 18,549, 3,694, 657, 141, 26, 6 pairs; V1c's rounds 18,120, 1,444, 60,
// 3, 2 permanent edges). Stopping early leaves the rest to the search.
func vboxAnotherRound(gained, nodes int) bool {
	return gained > 0 && gained*200 >= nodes
}

// vboxRounds bounds the fixpoint: on a generated 20K history the rounds
// decided 18,567, 3,694, 657, 141, 26, 6, 4 and 0 pairs.
const vboxRounds = 6

// vboxDecide decides pairs of writers whose order a known path through a
// forced reader proves, and returns the pairs still open. The first round
// visits every pair of writers of every register key; later rounds only
// the open ones. A decided pair's ww edge is drawn now as a base edge
// and so are its forced readers' rw edges; both join the known edges.
func (e *encoder) vboxDecide(open [][3]int32, first bool) [][3]int32 {
	v := e.vbox
	x := v.reach
	var next [][3]int32
	try := func(key, a, b int32) {
		if _, ok := e.pairs[[2]int32{min(a, b), max(a, b)}]; ok {
			return
		}
		na, nb := int32(e.node[a]), int32(e.node[b])
		if x.Reaches(na, nb) || x.Reaches(nb, na) {
			return
		}
		if e.sameFinal(key, a, b) {
			// D1: readers of one's value need no rw edge to the other, so
			// a path to a reader proves nothing about this pair.
			return
		}
		var w, l int32 = -1, -1 // w before l
		switch {
		case e.vboxReachesReader(b, key, a, e.vbox.readers):
			w, l = b, a
		case e.vboxReachesReader(a, key, b, e.vbox.readers):
			w, l = a, b
		default:
			if !(e.dropUnobserved && len(e.vbox.readers.get(key, a)) == 0 && len(e.vbox.readers.get(key, b)) == 0) {
				next = append(next, [3]int32{key, a, b})
			}
			return
		}
		e.vboxFix(w, l)
		// The forced readers' rw edges are drawn now, as base edges: the
		// index's paths must consist of drawn edges only, since vboxKey
		// leaves out an rw edge that an index path implies (an edge
		// left for later could be the very path that excuses it).
		via := e.p.orderVia(w, l)
		for _, rd := range e.vbox.readers.get(key, w) {
			if rd.rf == litTrue && rd.txn != l && e.node[rd.txn] >= 0 {
				e.edge(litTrue, litTrue, e.node[rd.txn], e.node[l], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: w, via: via})
			}
		}
	}
	if !first {
		for _, q := range open {
			try(q[0], q[1], q[2])
		}
		return next
	}
	e.vboxUnorderedPairs(e.writersUniform, try)
	return next
}

// vboxUnorderedPairs calls try for every pair of writers of a register
// key (skip aside) that have a node and that the index orders in
// neither direction: the first round of vboxDecide and vboxDecideSI.
// List readers are not in the reader index, so list keys are left out.
func (e *encoder) vboxUnorderedPairs(skip func(key int32) bool, try func(key, a, b int32)) {
	p := e.p
	for k := range p.keys {
		if p.isList[k] || e.stopped() {
			continue
		}
		key := int32(k)
		if skip != nil && skip(key) {
			continue
		}
		ws := e.wsScratch[:0]
		for _, w := range p.writersOf[k] {
			if e.node[w] >= 0 {
				ws = append(ws, w)
			}
		}
		e.wsScratch = ws
		byPos, rows, w := e.vboxReachSets(ws)
		for i, a := range byPos {
			row := rows[i*w : (i+1)*w]
			for j := i + 1; j < len(byPos); j++ {
				if row[j/64]&(1<<(j%64)) == 0 {
					try(key, a, byPos[j])
				}
			}
		}
	}
}

// vboxReachSets sorts the writers ws of a key by the index's topological
// position and returns, for the i-th of them, a row of w words whose bit j
// (j > i) is set iff the index proves that it reaches the j-th. Rows are
// filled from the last writer back: once i reaches j, the row of j is
// ORed in (i reaches all that j reaches, a proven path through j), so the
// index is asked only about the writers no earlier answer covers. On a
// key whose writers the known edges order into a chain that is one query
// per writer instead of one per pair (the pair loops made the 100K
// history's encoding quadratic: 12M pairs asked). The rows stay valid
// until the next call.
func (e *encoder) vboxReachSets(ws []int32) (byPos []int32, rows []uint64, w int) {
	v := e.vbox
	x := v.reach
	byPos = append(v.byPos[:0], ws...)
	slices.SortFunc(byPos, func(a, b int32) int {
		return cmp.Compare(x.Pos(int32(e.node[a])), x.Pos(int32(e.node[b])))
	})
	v.byPos = byPos
	n := len(byPos)
	w = (n + 63) / 64
	rows = slices.Grow(v.rows[:0], n*w)[:n*w]
	clear(rows)
	v.rows = rows
	for i := n - 1; i >= 0; i-- {
		row := rows[i*w : (i+1)*w]
		na := int32(e.node[byPos[i]])
		for j := i + 1; j < n; j++ {
			if row[j/64]&(1<<(j%64)) != 0 || !x.Reaches(na, int32(e.node[byPos[j]])) {
				continue
			}
			row[j/64] |= 1 << (j % 64)
			for k, word := range rows[j*w : (j+1)*w] {
				row[k] |= word
			}
		}
	}
	return byPos, rows, w
}

// vboxBefore reports a proven known path from a's node to b's node.
func (e *encoder) vboxBefore(a, b int32) bool {
	if e.vbox == nil || e.vbox.reach == nil {
		return false
	}
	na, nb := e.node[a], e.node[b]
	if na < 0 || nb < 0 {
		return false
	}
	return e.vbox.reach.Reaches(int32(na), int32(nb))
}

// vboxKey orders the writers ws of register key by reachability: for
// each a, every later writer (in the index's topological order) is
// either reached by a (decided: a before b) or not known to be (the pair
// gets its order literal, orderPair). A later writer cannot reach an
// earlier one. For decided pairs only the readers of a matter (a's version
// is overwritten by b, so they precede b); their rw edges go to the
// minimal decided writers after a only: a reader r of a with r -> m and m
// reaching b through known edges reaches b in every model. D1 still holds:
// a writer of a's value needs no edge and so covers nothing. The rows of
// vboxReachSets are closed under proven paths, so "m reaches b" is one
// bit, and every minimal writer is found (no cap on the nearer writers).
func (e *encoder) vboxKey(key int32, ws []int32, readersOf *readerIndex) {
	v := e.vbox
	byPos, rows, w := e.vboxReachSets(ws)
	cover := slices.Grow(v.cover[:0], w)[:w]
	v.cover = cover
	for i, a := range byPos {
		if e.stopped() {
			return
		}
		readers := readersOf.get(key, a)
		row := rows[i*w : (i+1)*w]
		clear(cover)
		for j := i + 1; j < len(byPos); j++ {
			b := byPos[j]
			bit := uint64(1) << (j % 64)
			if row[j/64]&bit == 0 {
				e.orderPair(key, a, b, readersOf)
				continue
			}
			v.decided++
			if len(readers) == 0 {
				continue
			}
			if e.sameFinal(key, a, b) {
				e.dups().d1++
				continue
			}
			if cover[j/64]&bit != 0 {
				v.covered += len(readers)
				continue
			}
			for k, word := range rows[j*w : (j+1)*w] {
				cover[k] |= word
			}
			via := e.p.orderVia(a, b)
			for _, rd := range readers {
				if rd.txn != b {
					e.edge(rd.rf, litTrue, e.node[rd.txn], e.node[b], edgeRec{kind: kindRW, key: key, val: string(rd.val), writer: a, via: via})
				}
			}
		}
	}
}

// vboxReachesReader reports a proven known path from u to a reader of w's
// version of key whose read is forced (its read-from literal is true),
// other than u itself.
func (e *encoder) vboxReachesReader(u, key, w int32, readersOf *readerIndex) bool {
	x := e.vbox.reach
	for _, rd := range readersOf.get(key, w) {
		if rd.rf == litTrue && rd.txn != u && e.node[rd.txn] >= 0 && x.Reaches(int32(e.node[u]), int32(e.node[rd.txn])) {
			return true
		}
	}
	return false
}

// vboxFix makes "a before b" a constant of the pair (its ww edge becomes
// a base edge; orderPair then draws the readers' rw edges without a
// literal).
func (e *encoder) vboxFix(a, b int32) {
	e.vbox.forced++
	if a < b {
		e.newPair(a, b, litTrue)
	} else {
		e.newPair(b, a, litFalse)
	}
}

func (e *encoder) vboxDebug() {
	if e.vbox == nil {
		return
	}
	lits := 0
	for _, pv := range e.pairsL {
		if pv.x != litTrue && pv.x != litFalse {
			lits++
		}
	}
	println("vbox decided", e.vbox.decided, "forced", e.vbox.forced, "rounds", e.vbox.rounds, "covered", e.vbox.covered, "pairs", len(e.pairsL), "literal pairs", lits, "nil index", e.vbox.reach == nil)
}

// vboxLayout reorders txns (the transactions about to get nodes, in the
// layout's order) along the known edges that prepare already determines:
// a read whose value has a single writer in the instance (and cannot be
// the initial one) and session order where the level keeps it. Without
// timestamps the layout's order is the history's listing order, and the
// solver anchors its topological order and its order-guided phases to
// node creation order (solver.Options.Reanchor); an order that already
// follows the forced reads makes the remaining decisions agree with them
// from the start. Only the order of node creation changes, not the
// instance. A cycle leaves txns as they are (the solver will prove it).
func (e *encoder) vboxLayout(txns []int32) {
	p := e.p
	idx := make([]int32, len(p.h.Txns))
	for i := range idx {
		idx[i] = -1
	}
	for i, t := range txns {
		idx[t] = int32(i)
	}
	var edges [][2]int32
	var one [1]int32
	for i, t := range txns {
		pt := &p.txns[t]
		for ri := range pt.reads {
			r := &pt.reads[ri]
			if r.isList() || r.val == history.Null || p.opts.InitialState == history.InitialUnknown {
				continue
			}
			src := int32(-1)
			n := 0
			for _, w := range p.writersOfValue(r.key, r.val, &one) {
				if w == t || idx[w] < 0 {
					continue
				}
				if v, ok := p.txns[w].finalValue(r.key); ok && v == r.val {
					src = w
					n++
				}
			}
			if n == 1 {
				edges = append(edges, [2]int32{idx[src], int32(i)})
			}
		}
	}
	if p.opts.Level.SessionOrder() {
		for _, all := range p.sessionMembers {
			prev := int32(-1)
			for _, t := range all {
				if idx[t] < 0 {
					continue
				}
				if prev >= 0 {
					edges = append(edges, [2]int32{prev, idx[t]})
				}
				prev = idx[t]
			}
		}
	}
	order, _, _ := closure.TopoOrder(len(txns), edges)
	if order == nil {
		return
	}
	out := make([]int32, len(txns))
	for i, j := range order {
		out[i] = txns[j]
	}
	copy(txns, out)
}

// vboxSeed is the solver seed for an encoding: 0 (no activity jitter, so
// untouched variables are decided in creation order) in V1's scope, the
// fast path at a level without real time (vboxOn and !RealTime), else 1.
//
// Why: with the jitter the first descent decides the instance's
// variables in a random order, so the literals of one cycle sit at
// random decision levels and a conflict's learned clause backjumps, on
// average, over a sixth of the instance (a generated 10K history without
// timestamps: 1,591 decisions per conflict, 9,655 variables). Created in
// order, a region's variables sit at neighbouring levels and its
// conflicts undo less: on a generated 20K history 765 conflicts and
// 2.43M decisions became 312 and 672K, and the check's CPU went from
// 12.6 s to 6.1 s. A seed changes only which model or violating set the
// search meets first, never whether one exists (the instance is the
// same); cores are still shrunk in their fixed order (docs/SEMANTICS.md
// §3). The other encodings keep the seed their tests and recorded
// figures were taken with.
func vboxSeed(p *prepared, cfg encodeConfig) uint64 {
	fast := cfg.dropUnobserved && !cfg.noPrune && !cfg.record && !cfg.readsToCome && !cfg.guarded
	if fast && !p.opts.Level.BeginCommit() && !p.opts.Level.RealTime() {
		return 0
	}
	return 1
}

// vboxPruneLimit is the solver's PruneLimit for an encoding: -1 (no
// search at edge insertion) where V1 and V1c run, the fast path at a
// serializable-family level without real time (docs/SEMANTICS.md §3,
// "V1c replaces the search at insertion"); 0 (the solver's default)
// elsewhere.
//
// Why: there the solver's search at insertion asks, for an edge that is
// backward in its order, whether its head already reaches its tail over
// permanent edges. vboxSettle asks the same question of every edge once
// the instance is finished, from an index over every permanent edge, and
// repeats it to a fixpoint; the search at insertion only asked it
// earlier, of fewer edges. Every pair V1 leaves open draws one backward
// ww edge, and where the answer was no, the search paid its whole
// budget for it (a generated 100K history: 122K searched edges, 2.0 of
// 11.6 CPU s, and 4 snapshot index builds, 0.5 s). Without it the
// settled instance is the same (the same 156,935 level-0 propagations
// and 236,240 edges there) and the check took 9.8 CPU s. The lemmas are
// implied by the instance either way, so the set of models is unchanged.
// pl-2+ keeps the default: its rw edges stay outside the theory
// (check_pl.go) and vboxSettle sees only the rest.
func vboxPruneLimit(p *prepared, cfg encodeConfig) int {
	fast := cfg.dropUnobserved && !cfg.noPrune && !cfg.record && !cfg.readsToCome && !cfg.guarded
	if fast && !p.opts.Level.BeginCommit() && !p.opts.Level.RealTime() && p.opts.Level != history.PL2Plus {
		return -1
	}
	return 0
}

// vboxSettle is Vbox's pruning loop run once more over the finished
// instance (docs/SEMANTICS.md §3, "V1c: settling over the finished
// instance"). The index vboxKey used was built before the rw edges of the
// pairs it decided were drawn, and before the solver fixed anything at
// level 0; those edges close paths the index could not see, and a choice
// whose edge runs against such a path was left to the search, where each
// such wrong guess cost a conflict whose learned clause is a unit (a
// backjump to level 0 and every decision redone). Here the index is
// rebuilt over every edge present in every model (solver.FixedEdges:
// base edges and edges whose literals are fixed at level 0), and every
// edge still attached to literals that runs from a node to one that
// provably reaches it gets the lemma "not all of its literals" (it would
// close a cycle of permanent edges: VeriStrong's 1-width pruning, with
// the index instead of a bounded search). Lemmas fix literals, which
// makes more edges permanent; the loop repeats until a round adds none.
// Lemmas are implied by the instance, so the set of models is unchanged.
func (e *encoder) vboxSettle() {
	v := e.vbox
	if v == nil || v.reach == nil || e.unsat {
		return
	}
	n := e.s.NumNodes()
	var known [][2]int32
	var heads []solver.Node
	type lemma struct {
		p, q solver.Lit
		two  bool
	}
	var lemmas []lemma
	prev := -1
	for round := 0; round < vboxRounds && !e.stopped(); round++ {
		known = known[:0]
		for u := 0; u < n; u++ {
			heads = e.s.FixedEdges(solver.Node(u), true, heads[:0])
			for _, h := range heads {
				known = append(known, [2]int32{int32(u), int32(h)})
			}
		}
		if prev >= 0 && !vboxAnotherRound(len(known)-prev, n) {
			// Few lemmas made an edge permanent: the index would be
			// nearly the same, and its binary lemmas (which fix nothing)
			// would be added again.
			return
		}
		prev = len(known)
		x := closure.NewStatic(n, known)
		if x == nil {
			return // a cycle of permanent edges: the solver proves it
		}
		lemmas = lemmas[:0]
		for u := 0; u < n; u++ {
			e.s.IncidentEdges(solver.Node(u), func(w solver.Node, out bool, p, q solver.Lit, two bool) {
				if !out || !x.Reaches(int32(w), int32(u)) {
					return
				}
				if val, ok := e.s.Fixed(p); ok && !val {
					return
				}
				if two {
					if val, ok := e.s.Fixed(q); ok && !val {
						return
					}
				}
				lemmas = append(lemmas, lemma{p, q, two})
			})
		}
		for _, l := range lemmas {
			if l.two && vboxSettleNaive == naiveOneLiteral {
				e.clause(lit(l.q).not())
				continue
			}
			if l.two {
				e.clause(lit(l.p).not(), lit(l.q).not())
			} else {
				e.clause(lit(l.p).not())
			}
		}
		v.settled += len(lemmas)
		v.settleRounds++
		if len(lemmas) == 0 || e.unsat {
			return
		}
	}
}

// vboxSettleNaive selects, for the regression tests only, the naive
// version of vboxSettle that the brute-force sweep must catch
// (docs/SEMANTICS.md §3, V1c): naiveOneLiteral fixes only the second
// literal of a conjunction edge (an rw edge whose read-from literal is
// open is cut by deciding the writers' order alone, as if the read were
// forced). Zero in every build.
var vboxSettleNaive int

const naiveOneLiteral = 1
