package online

import (
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
// under the opposite edge. Many yeses are already implied by what the
// step's instance has fixed: a path of fixed edges (base edges, kept
// orders, level-0 edges) and real-time orders. closure/ (Vbox's compact
// closure) answers those without the solver: built once per step from the
// members' intervals and the fixed edges among them (closure.Build), kept
// current with each order a probe proves (AddEdge, Italiano insertion),
// and asked before a probe is spent. It only ever answers yes for an
// order every completion has (its graph is a subgraph of every
// completion's), so it changes no decision a probe would not have made;
// it saves probes and the step's probe budget.
//
// Real time leaves only a transaction that commits (incremental I1): a
// member whose commit is not decided true gets an unbounded interval
// (it precedes nothing by time), so the closure never orders through it
// by time.

// useClosure turns the closure on (tests and benchmarks turn it off to
// measure it; the answers, and so the steps, are the same either way
// except for the probes saved).
var useClosure = true

// closureStats counts, for the benchmarks, the orders the closure proved
// and the probes forced spent.
var closureStats struct{ Hits, Probes, Builds int }

// stepClosure is one step's closure over the instance's transaction nodes.
type stepClosure struct {
	c  *closure.Closure
	id []closure.ID // by solver node; -1: not a transaction node
}

// newStepClosure builds the closure of r's fixed edges and real-time
// orders, or returns nil if it cannot (a cycle, which a satisfiable
// instance does not have).
func newStepClosure(r *reduced) *stepClosure {
	p, e := r.p, r.e
	s := e.Solver()
	opts := p.Opts()
	type member struct {
		node solver.Node
		iv   closure.Interval
	}
	var ms []member
	for t := range r.h.Txns {
		n := e.Node()[t]
		if n < 0 {
			continue
		}
		tx := &r.h.Txns[t]
		iv := closure.IntervalOf(opts, tx)
		committed := tx.Status == history.Committed && !p.Txns()[t].Dropped()
		if !committed {
			if v, ok := fixedLit(s, e.Act()[t]); !ok || !v || tx.Status == history.Aborted {
				iv.AdjEnd = math.MaxInt64
			}
		}
		ms = append(ms, member{n, iv})
	}
	slices.SortStableFunc(ms, func(a, b member) int {
		switch {
		case a.iv.AdjStart < b.iv.AdjStart:
			return -1
		case a.iv.AdjStart > b.iv.AdjStart:
			return 1
		}
		return 0
	})
	sc := &stepClosure{id: make([]closure.ID, s.NumNodes())}
	for i := range sc.id {
		sc.id[i] = -1
	}
	ivs := make([]closure.Interval, len(ms))
	for i, m := range ms {
		ivs[i] = m.iv
		sc.id[m.node] = closure.ID(i)
	}
	var edges []closure.Pair
	var buf []solver.Node
	for _, m := range ms {
		buf = s.FixedEdges(m.node, true, buf[:0])
		for _, h := range buf {
			if to := sc.id[h]; to >= 0 && to != sc.id[m.node] {
				edges = append(edges, closure.Pair{From: sc.id[m.node], To: to})
			}
		}
	}
	c, cycle := closure.Build(closure.Options{RealTime: opts.Level.RealTime()}, ivs, edges)
	if c == nil || cycle != nil {
		return nil
	}
	closureStats.Builds++
	sc.c = c
	return sc
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
