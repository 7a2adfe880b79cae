package online

import (
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// The prober's model outlives its probes (docs/SEMANTICS.md §5, "The
// prober's model outlives its probes").
//
// A probe adds to the solver only what every model of the step's instance
// already satisfies, or what the model in hand satisfies: forced adds a
// fresh selector's edge and then the clause that turns it off, plus, when
// the probe is unsatisfiable, the base edge from -> to, which the model
// orders the same way (forced probes only after the model put from
// first); decide adds, when its probe is unsatisfiable, the unit that
// the model already holds. So the model found before the probe is still
// a model afterwards, and the next question need not solve the whole
// instance again. Solving again after every probe was most of the
// eviction's CPU on a burst of 100K transactions in one tick (issue 20,
// item 7): each solve is linear in the window, and a step spends up to
// probeBudget probes.
//
// The model only ever answers "not forced" (some completion orders the
// other way) and picks which side decide probes; every "forced" or
// "decided" answer comes from an unsatisfiable probe or a fact. A stale
// model could so only cost evictions, never a wrong one; and it is not
// stale, by the argument above.
//
// The model's values are the solver's saved model (Value reads it until
// the next satisfiable solve), its order is rank. rank must be filled
// before a probe replaces the saved order: once a clause is added the
// solver no longer gives its order out.

// fillRank fills rank from the solver's saved order, if it is not
// filled, and reports whether it holds the model's order. When the
// solver has no order to give (it should not happen: every path that
// keeps the model fills rank first), the model is dropped and the next
// question solves again.
func (pr *prober) fillRank() bool {
	if pr.rank != nil {
		return true
	}
	n := pr.s.NumNodes()
	pr.orderBuf = pr.s.AppendOrder(pr.orderBuf[:0])
	if len(pr.orderBuf) != n {
		pr.model = false
		return false
	}
	pr.rankBuf = incremental.Reuse(pr.rankBuf, n)
	pr.rank = pr.rankBuf
	for i, node := range pr.orderBuf {
		pr.rank[node] = int32(i)
	}
	return true
}

// Test switches (burst_probe_test.go): verifyModel makes forced check
// every "not forced" the model gives by a probe, counting in modelLies
// the ones the probe refutes (the model was no model); keepStaleModel
// keeps the model even past the irrelevance rule's clauses, which a
// model need not satisfy (the broken rule the check must catch).
var (
	verifyModel, keepStaleModel bool
	modelLies                   int
)

// checkNotForced is verifyModel's probe: some completion puts to before
// from, as the model does, or the model lied.
func (pr *prober) checkNotForced(from, to solver.Node) {
	if !verifyModel {
		return
	}
	sel := pr.s.NewSelector()
	pr.s.AddEdge(sel, to, from)
	if pr.s.Solve(pr.ctx, sel) == solver.Unsat {
		modelLies++
	}
	pr.s.AddClause(sel.Not())
}

// decideOnce is prober.decide asked at most once a step per literal that
// a probe left undecided: R4 asks, for every later writer of a key it
// tries, whether each read of the live version's value is decided, and
// a read with two sources nothing tells apart (a duplicate value, or the
// initial version under an unknown initial state, until the irrelevance
// rule fixes it) cost a solve of the window per writer and pass: two
// thirds of the CPU on mixed list streams with 2% unknowns. Answering
// "not decided" without asking again only keeps members longer (a unit
// another probe adds later in the step could have decided it); every
// "decided" still comes from a fact or an unsatisfiable probe, and the
// next step asks again.
func (s *evictStep) decideOnce(l incremental.Lit) (bool, bool) {
	if s.openLit[l] {
		if v, ok := fixedLit(s.e.Solver(), l); ok {
			return v, true
		}
		return false, false
	}
	v, ok := s.pr.decide(l)
	if !ok && !s.pr.noProbe {
		if s.openLit == nil {
			s.openLit = map[incremental.Lit]bool{}
		}
		s.openLit[l] = true
	}
	return v, ok
}
