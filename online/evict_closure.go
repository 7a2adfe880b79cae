package online

import (
	"fmt"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/closure"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// The compact closure in the eviction loop (issue 22). Eviction asks, for
// pairs of members, "does a precede b in every completion?" (R4's version
// order, the irrelevance rule's I2). A model that orders them the other
// way answers no for free (prober.rank); a yes cost a probe, a solve
// under the opposite edge. Many yeses are already implied by facts the
// engine keeps: a path of kept orders and real-time orders. closure/
// (Vbox's compact closure) answers those without the solver.
//
// The closure lives across steps (docs/SEMANTICS.md §5 "The compact
// closure across steps"): a member is appended when it first appears in a
// step (members are released in start order), each kept order is
// inserted once, when keepFacts first keeps it (Italiano insertion), an
// order a probe proves is inserted at once, and a member that leaves the
// instance is evicted from the closure, which keeps every path through it
// (R5's contraction, done by closure.Evict). Rebuilding it at every step
// cost about what it saved (BENCHMARKS.md "The compact closure on and
// off"); kept, a step pays only for what changed.
//
// It answers yes only for an order every completion has: its edges are
// kept orders (facts of every completion, §5), orders a probe proved, and
// real time between transactions whose commit is known (a transaction
// whose outcome is unknown is not in the closure: real time leaves only a
// transaction that commits, incremental I1, and its kept orders could
// vanish with it if it does not). Anything that changes the instance
// other than a step's own evictions (a quarantine, in place or by replay,
// a rewind, a restore, a rebuild after a disagreement, a step cut short)
// throws the closure away; the next step builds it again from the
// members and the kept orders. sync detects those changes instead of
// being told about them: since its last sync the only change a step's
// instance may show is members released after it.

// ClosureStats count, per engine, the order questions ("does a precede
// b in every completion?") the live closure answered and the probes they
// cost otherwise: Hits proved by a path in the closure, Around through
// one fixed edge at an end it does not hold (reachesAround), Probes the
// questions a solve under the opposite edge answered, Builds the times the
// closure was built from scratch (once, plus once per change sync could
// not follow). With OnlineConfig.NoClosure every question is a probe.
type ClosureStats struct{ Hits, Around, Probes, Builds int }

// liveClosure is the closure of the instance's fixed orders, kept across
// steps; it is not in a snapshot (a restored engine builds it again).
type liveClosure struct {
	c *closure.Closure
	// id maps every member, by released index, to its closure ID, or -1
	// for a member the closure does not hold (no timestamps, an outcome
	// that is not known committed, or released out of start order).
	id map[int]closure.ID
	// kept is st.Kept as of the last sync, every pair of it inserted.
	kept [][2]int
	// maxSeen is the largest released index synced: a member at or below
	// it that id does not hold came back (a replay or a restore).
	maxSeen int
	// synced is the number of instance flags at the last sync: every
	// member below it was synced then, so the members at or above it
	// are the new ones.
	synced int
	// inPlace and rewound are o.inPlaceCount and o.rewound at the last
	// sync: a quarantine in place removes members without an eviction, a
	// replay from a rewind point puts back an earlier state.
	inPlace, rewound int
	// nodeID maps the current step's solver nodes to closure IDs (-1:
	// none); built on the step's first question, nodeStep says for which
	// step.
	nodeID []closure.ID
	// broken: an insertion closed a cycle; the closure is not used again.
	broken bool
	// ghosts are held members that became ghosts, oldest first, until
	// afterEvict retires them; queued marks them.
	ghosts []int
	queued map[int]bool
}

// SetNoClosure turns the closure off or on (OnlineConfig.NoClosure) for a
// restored engine: the switch is configuration, not state, so a snapshot
// does not carry it. Either setting is exact at any moment: the closure
// only answers yes where a probe would (docs/SEMANTICS.md §5 "The closure
// switch"); syncClosure drops the closure while it is off and builds it
// again when it comes back on.
func (o *Online) SetNoClosure(off bool) { o.noClosure = off }

// syncClosure brings the live closure up to the instance at the start of
// a step (after build): it appends the members released since the last
// sync, or builds it afresh if the instance changed in any other way. It
// returns nil when the closure is off or cannot be used.
func (o *Online) syncClosure() *liveClosure {
	st := &o.ev
	if o.noClosure || !o.opts.Level.RealTime() {
		st.cl = nil
		return nil
	}
	lc := st.cl
	if lc != nil && (lc.broken || lc.inPlace != o.inPlaceCount || lc.rewound != o.rewound || !slices.Equal(lc.kept, st.Kept)) {
		lc = nil
	}
	// The members released since the last sync are those at or after
	// the flags it saw; the rest must be exactly the ones held. Their
	// number is the instance's size less the new ones (runFlags.count),
	// not a visit of every member (ghosts: one per key ever written;
	// docs/SEMANTICS.md §5 "The closure's sync without a visit of every
	// member").
	var members []int
	if lc != nil {
		members = st.membersFrom(lc.synced)
		if st.Member.count()-len(members) != len(lc.id) {
			lc = nil // a member left other than by eviction, or came back
		} else if selfCheck.Load() {
			checkSyncSuffix(st, lc, members)
		}
	}
	if lc != nil && lc.c.Chunks() > 4*(lc.c.Len()/256+1)+16 {
		// Members that stay while those around them leave (pinned
		// ones, ghosts not yet retired) each hold a chunk of 256
		// slots: built afresh from the members alone, the closure is
		// dense again. Only kept orders and real time go in, as at any
		// build: the paths through evicted transactions are kept
		// orders among the members already (R5).
		lc = nil
	}
	fresh := lc == nil
	if fresh {
		o.closureStats.Builds++
		members = st.memberList()
		lc = &liveClosure{c: closure.New(closure.Options{RealTime: true}), id: make(map[int]closure.ID, len(members)), maxSeen: -1, queued: map[int]bool{}}
	}
	lc.synced = st.Member.len()
	for _, i := range members {
		lc.maxSeen = max(lc.maxSeen, i)
		tx := o.log.at(i)
		if !tx.HasTime || tx.Status != history.Committed {
			lc.id[i] = -1
			continue
		}
		iv := closure.IntervalOf(&o.opts, tx)
		if iv.AdjStart < lc.c.LastStart() || iv.AdjStart == math.MaxInt64 {
			lc.id[i] = -1 // out of start order: not held, never asked
			continue
		}
		lc.id[i] = lc.c.Append(iv.AdjStart, iv.AdjEnd)
		if st.GhostKeys[i] != nil {
			// Only a fresh build meets ghosts here; afterEvict
			// retires them when old, as those that become ghosts.
			lc.queued[i] = true
			lc.ghosts = append(lc.ghosts, i)
		}
	}
	lc.inPlace, lc.rewound = o.inPlaceCount, o.rewound
	if fresh {
		lc.kept = lc.kept[:0]
		if !lc.insert(st.Kept) {
			st.cl = nil
			return nil
		}
	}
	st.cl = lc
	return lc
}

// membersFrom returns the members at or after released index from, in
// released order: a pass over the flags since from, not over the
// members.
func (st *evictState) membersFrom(from int) []int {
	var out []int
	for i := from; i < st.Member.len(); i++ {
		if st.Member.get(i) {
			out = append(out, i)
		}
	}
	return out
}

// checkSyncSuffix holds, under selfCheck, a sync that keeps the closure
// to the visit of every member it replaced: that visit keeps it too (the
// members listed up to the last one synced are as many as it holds) and
// finds the same new members.
func checkSyncSuffix(st *evictState, lc *liveClosure, members []int) {
	all := st.memberList()
	since, _ := slices.BinarySearch(all, lc.maxSeen+1)
	if since != len(lc.id) || !slices.Equal(all[since:], members) {
		panic(fmt.Sprintf("online self-check: the closure's sync took %d new members (%d held), the visit of every member %d (%d below them)", len(members), len(lc.id), len(all)-since, since))
	}
}

// insert adds kept orders; false: one closed a cycle, which the facts of
// a satisfiable instance cannot, so the closure is not used.
func (lc *liveClosure) insert(pairs [][2]int) bool {
	for _, k := range pairs {
		a, okA := lc.id[k[0]]
		b, okB := lc.id[k[1]]
		if !okA || !okB || a < 0 || b < 0 || a == b {
			continue
		}
		if _, cycle := lc.c.AddEdge(a, b); cycle != nil {
			return false
		}
	}
	lc.kept = append(lc.kept, pairs...)
	return true
}

// afterEvict follows a step's evictions (after keepFacts): members of r
// that left are evicted from the closure (their paths kept), orders kept
// for the first time are inserted, and old ghosts are retired. Only
// members of r can leave during a step; anything else that removes one
// is caught by the next sync.
func (o *Online) afterEvict(r *reduced) {
	st := &o.ev
	lc := st.cl
	gone := o.goneAbsent
	o.goneAbsent = o.goneAbsent[:0]
	if lc == nil || lc.broken {
		st.cl = nil
		return
	}
	// Ghosts that left without being in r (dropGhostKey, a ghost the
	// step's instance did without: evict_bypass.go) leave the closure as
	// members of r do, paths kept; their bodies may be spilled already.
	for _, i := range gone {
		if id, ok := lc.id[i]; ok {
			if id >= 0 {
				lc.c.Evict(id)
			}
			delete(lc.id, i)
		}
		delete(lc.queued, i)
	}
	cutoff := int64(math.MaxInt64)
	for t, i := range r.pos {
		if i < 0 {
			continue
		}
		id, ok := lc.id[i]
		if !ok {
			continue
		}
		switch {
		case !st.Member.get(i):
			if id >= 0 {
				lc.c.Evict(id)
			}
			delete(lc.id, i)
		case r.ghost[t]:
			if id >= 0 && !lc.queued[i] {
				lc.queued[i] = true
				lc.ghosts = append(lc.ghosts, i)
			}
		default:
			cutoff = min(cutoff, closure.IntervalOf(&o.opts, &r.h.Txns[t]).AdjStart)
		}
	}
	// A ghost that ends before every window member starts precedes each
	// of them, and every later one, in real time: the level answers
	// every question about it with a window member, and in the closure
	// it would only hold its chunk of 256 slots for as long as it stays
	// the live version of a cold key (RSS grew with the stream). It is
	// evicted from the closure (paths through it kept) and no longer
	// held.
	for len(lc.ghosts) > 0 {
		i := lc.ghosts[0]
		id, ok := lc.id[i]
		if ok && id >= 0 {
			if closure.IntervalOf(&o.opts, o.log.at(i)).AdjEnd >= cutoff {
				break
			}
			lc.c.Evict(id)
			lc.id[i] = -1
		}
		delete(lc.queued, i)
		lc.ghosts = lc.ghosts[1:]
	}
	// Both lists are sorted: the pairs of st.Kept not in lc.kept are new.
	var added [][2]int
	old := lc.kept
	for _, k := range st.Kept {
		for len(old) > 0 && cmpPair(old[0], k) < 0 {
			old = old[1:]
		}
		if len(old) > 0 && old[0] == k {
			continue
		}
		added = append(added, k)
	}
	lc.kept = append(lc.kept[:0], st.Kept...)
	for _, k := range added {
		a, okA := lc.id[k[0]]
		b, okB := lc.id[k[1]]
		if !okA || !okB || a < 0 || b < 0 || a == b {
			continue
		}
		if _, cycle := lc.c.AddEdge(a, b); cycle != nil {
			st.cl = nil
			return
		}
	}
	lc.inPlace, lc.rewound = o.inPlaceCount, o.rewound
}

func cmpPair(x, y [2]int) int {
	switch {
	case x[0] != y[0]:
		return x[0] - y[0]
	default:
		return x[1] - y[1]
	}
}

// stepClosure is the live closure as one step's prober asks it, by
// solver node.
type stepClosure struct {
	lc *liveClosure
	id []closure.ID // by solver node; -1: not held
}

// forStep maps r's solver nodes to the live closure's IDs and inserts
// the orders r has fixed among them at level 0 (this step's read choices
// made units, say): keepFacts keeps every one of them at the step's end,
// so the closure gets them now instead. It returns nil if one closes a
// cycle.
func (lc *liveClosure) forStep(r *reduced) *stepClosure {
	s := r.e.Solver()
	ids := incrementalReuseIDs(lc.nodeID, s.NumNodes())
	for t := range r.h.Txns {
		n := r.e.Node()[t]
		if n < 0 {
			continue
		}
		if i := r.pos[t]; i >= 0 {
			if id, ok := lc.id[i]; ok {
				ids[n] = id
			}
		}
	}
	lc.nodeID = ids
	var buf []solver.Node
	for n, a := range ids {
		if a < 0 {
			continue
		}
		buf = s.FixedEdges(solver.Node(n), true, buf[:0])
		for _, h := range buf {
			if b := ids[h]; b >= 0 && b != a && !lc.c.Reaches(a, b) {
				if _, cycle := lc.c.AddEdge(a, b); cycle != nil {
					lc.broken = true
					return nil
				}
			}
		}
	}
	return &stepClosure{lc: lc, id: ids}
}

// incrementalReuseIDs returns n IDs set to -1, reusing ids' array.
func incrementalReuseIDs(ids []closure.ID, n int) []closure.ID {
	if cap(ids) < n {
		ids = make([]closure.ID, n)
	}
	ids = ids[:n]
	for i := range ids {
		ids[i] = -1
	}
	return ids
}

// reaches reports whether the closure orders from before to.
func (sc *stepClosure) reaches(from, to solver.Node) bool {
	if int(from) >= len(sc.id) || int(to) >= len(sc.id) {
		return false
	}
	a, b := sc.id[from], sc.id[to]
	return a >= 0 && b >= 0 && a != b && sc.lc.c.Reaches(a, b)
}

// add inserts an order a probe proved. It reports false if the closure
// can no longer be used (the order closes a cycle, which a satisfiable
// instance does not have).
func (sc *stepClosure) add(from, to solver.Node) bool {
	if int(from) >= len(sc.id) || int(to) >= len(sc.id) {
		return true
	}
	a, b := sc.id[from], sc.id[to]
	if a < 0 || b < 0 || a == b {
		return true
	}
	_, cycle := sc.lc.c.AddEdge(a, b)
	return cycle == nil
}

// aroundMax bounds the fixed edges reachesAround looks at on each side.
const aroundMax = 64

// reachesAround answers "does from precede to in every model?" when an end
// is not held by the closure (an unknown outcome, appended to no closure:
// §5 "The compact closure across steps"), through one edge at that end
// fixed in this step's solver: from -> a (a base edge, or one whose
// literals are true at level 0) and a reaches to in the closure, or the
// same at to's side, or both. Each piece is in every model of the step's
// instance (FixedEdges' edges by definition, the closure's by the
// argument of that section), so the answer is the one a probe gives
// (docs/SEMANTICS.md §5 "Orders around an unknown in doubt"); it only
// spares the probe, whose budget went on these orders: every later writer
// of a key that an unknown in doubt wrote asks its order with the unknown,
// for as long as the in-doubt horizon keeps it in the window.
func (sc *stepClosure) reachesAround(s *solver.Solver, from, to solver.Node) bool {
	as, direct := sc.aroundSide(s, from, to, true)
	if direct {
		return true
	}
	bs, direct := sc.aroundSide(s, to, from, false)
	if direct || as == nil || bs == nil || len(as) == 1 && len(bs) == 1 && as[0] == from && bs[0] == to {
		return direct // both held: reaches answered already
	}
	for _, a := range as {
		for _, b := range bs {
			if a == b || sc.reaches(a, b) {
				return true
			}
		}
	}
	return false
}

// aroundSide is reachesAround's view of one end n: n itself if the
// closure holds it, else the held members joined to n by an edge fixed in
// s (leaving n if forward, entering it otherwise), at most aroundMax;
// direct reports that such an edge joins n to other itself.
func (sc *stepClosure) aroundSide(s *solver.Solver, n, other solver.Node, forward bool) (held []solver.Node, direct bool) {
	holds := func(x solver.Node) bool { return int(x) < len(sc.id) && sc.id[x] >= 0 }
	if holds(n) {
		return []solver.Node{n}, false
	}
	for _, x := range s.FixedEdges(n, forward, nil) {
		if x == other {
			return nil, true
		}
		if holds(x) && len(held) < aroundMax {
			held = append(held, x)
		}
	}
	return held, false
}
