package online

import (
	"cmp"
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
// The closure is built at a step's first question, from that step's
// instance alone, and dropped with the step (docs/SEMANTICS.md §5 "The
// closure built at a step's first question"). Kept across steps
// (Italiano insertion as orders were kept, closure.Evict as members
// left) it cost its upkeep at every step, asked or not: on the
// PostgreSQL recording about one step in five asks, and that upkeep made
// the closure 0.82x off's CPU (BENCHMARKS.md "live22"). Built from the
// step's instance it also needs no sync: nothing a quarantine, a rewind,
// a restore or a rebuild did to the instance can be out of date in it.
//
// It answers yes only for an order every completion has: its edges are
// the step's fixed orders (base edges, among them the kept orders, facts
// of every completion, §5; literals fixed at level 0), orders a probe
// proved, and real time between transactions whose commit is known (a
// transaction whose outcome is unknown is not in the closure: real time
// leaves only a transaction that commits, incremental I1).

// ClosureStats count, per engine, the order questions ("does a precede
// b in every completion?") the step's closure answered and the probes they
// cost otherwise: Hits proved by a path in the closure, Around through
// one fixed edge at an end it does not hold (reachesAround), Probes the
// questions a solve under the opposite edge answered, Builds the steps
// whose first question built the closure (a step that asks none builds
// none). With OnlineConfig.NoClosure every question is a probe.
type ClosureStats struct{ Hits, Around, Probes, Builds int }

// SetNoClosure turns the closure off or on (OnlineConfig.NoClosure) for a
// restored engine: the switch is configuration, not state, so a snapshot
// does not carry it. Either setting is exact at any moment: the closure
// only answers yes where a probe would (docs/SEMANTICS.md §5 "The closure
// switch"), and it is built from the step's own instance whenever it is
// asked, so nothing of it outlives a step.
func (o *Online) SetNoClosure(off bool) { o.noClosure = off }

// closureOn reports whether a step may build the closure at its first
// question: the switch is on and the level orders by real time (the
// closure's time edges are the level's).
func (o *Online) closureOn() bool {
	return !o.noClosure && o.opts.Level.RealTime()
}

// stepClosure is the compact closure of one step's instance, by solver
// node (docs/SEMANTICS.md §5 "The closure built at a step's first
// question"). It is built when the step first asks an order question
// (prober.closure) and dropped with the step: a step that asks nothing,
// most steps of a recording whose members leave by level-0 facts and the
// model's order, pays nothing for it.
type stepClosure struct {
	c  *closure.Closure
	id []closure.ID // by solver node; -1: not held
}

// closureScratch holds a build's arrays from one step to the next
// (emptied at each): the held transactions, their intervals and the
// fixed orders among them.
type closureScratch struct {
	held  []closureMember
	ivs   []closure.Interval
	pairs []closure.Pair
	fe    []solver.Node
	ids   []closure.ID
}

// closureMember is one transaction the step's closure holds: its solver
// node and adjusted interval.
type closureMember struct {
	n  solver.Node
	iv closure.Interval
}

// buildStepClosure builds the closure of r's fixed orders: every
// transaction of r that has a node, timestamps and the status committed
// (real time leaves only a transaction that commits; one whose outcome is
// unknown is not held, and reachesAround reaches it through its fixed
// edges), in start order, with every edge fixed in r's solver between two
// of them (base edges, the kept orders among them; literals true at level
// 0). It returns nil if they close a cycle, which a satisfiable
// instance's facts cannot: the step then asks the solver alone.
func (o *Online) buildStepClosure(r *reduced) *stepClosure {
	sx := &o.clScratch
	s := r.e.Solver()
	held := sx.held[:0]
	for t := range r.h.Txns {
		n := r.e.Node()[t]
		tx := &r.h.Txns[t]
		if n < 0 || !tx.HasTime || tx.Status != history.Committed {
			continue
		}
		iv := closure.IntervalOf(&o.opts, tx)
		if iv.AdjStart == math.MaxInt64 {
			continue
		}
		held = append(held, closureMember{n, iv})
	}
	// Build numbers the transactions in start order (ties by node, so
	// the order does not depend on the instance's layout).
	slices.SortFunc(held, func(a, b closureMember) int {
		if c := cmp.Compare(a.iv.AdjStart, b.iv.AdjStart); c != 0 {
			return c
		}
		return cmp.Compare(a.n, b.n)
	})
	ids := incrementalReuseIDs(sx.ids, s.NumNodes())
	ivs := sx.ivs[:0]
	for k, m := range held {
		ids[m.n] = closure.ID(k)
		ivs = append(ivs, m.iv)
	}
	pairs, fe := sx.pairs[:0], sx.fe
	for _, m := range held {
		a := ids[m.n]
		fe = s.FixedEdges(m.n, true, fe[:0])
		for _, h := range fe {
			if int(h) < len(ids) {
				if b := ids[h]; b >= 0 && b != a {
					pairs = append(pairs, closure.Pair{From: a, To: b})
				}
			}
		}
	}
	sx.held, sx.ivs, sx.pairs, sx.fe, sx.ids = held, ivs, pairs, fe, ids
	c, cycle := closure.Build(closure.Options{RealTime: true}, ivs, pairs)
	if cycle != nil {
		return nil
	}
	o.closureStats.Builds++
	return &stepClosure{c: c, id: ids}
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
	return a >= 0 && b >= 0 && a != b && sc.c.Reaches(a, b)
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
	_, cycle := sc.c.AddEdge(a, b)
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
