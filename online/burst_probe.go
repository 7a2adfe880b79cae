package online

import (
	"sync/atomic"

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

// The models seen (docs/SEMANTICS.md §5, "Models seen answer 'not
// decided'"). After the irrelevance rule, everything a step adds to its
// solver holds in every model of the instance (a decided probe's unit, a
// proven order) or is switched off (a forced probe's selector), as the
// header above argues: so every model a solve of the eviction loop
// found is still a model of the solver, restricted to the variables it
// had. A variable that some of those models set true and some set false
// is decided in no way: a probe of either side is satisfiable, and the
// answer "not decided" is the probe's. decide answers so without the
// probe. On a burst about half of the eviction loop's decide probes were
// of such a literal (the last probe's model had flipped it); each was a
// solve of the whole window.
//
// seen keeps, per variable, whether some model seen set it true (bit 0)
// and false (bit 1): two bits per variable, not a model each.
type modelsSeen struct {
	on   bool
	seen []uint8
	// flipBuf is assumed's scratch: the literals the second model sets
	// the other way.
	flipBuf []solver.Lit
}

// startSeen starts the record once the irrelevance rule has added its
// clauses (a model need not satisfy them): evict's hook. The model in
// hand, if any, is its first entry: fixIrrelevant drops the model when it
// adds a clause, so one still held satisfies the solver as it is
// (keepStaleModel, a test's broken rule, holds one that need not).
func (pr *prober) startSeen() {
	pr.ms.on = !noModelsSeen
	pr.ms.seen = pr.ms.seen[:0]
	// From here every probe is a solve under one assumption whose model
	// is mostly the last one: the solver answers the satisfiable ones
	// from its saved model where it can (solver F2).
	// The tests that confirm the prober's answers by probes (verifySeen,
	// verifyModel) get probes that search.
	pr.s.SetProbeFromModel(!noAssume && !verifySeen && !verifyModel)
	if pr.model && !keepStaleModel {
		pr.noteModel()
	}
}

// noteModel adds the solver's saved model, just found by a satisfiable
// solve, to the models seen.
func (pr *prober) noteModel() {
	if !pr.ms.on {
		return
	}
	n := pr.s.NumVars()
	if len(pr.ms.seen) < n {
		pr.ms.seen = append(pr.ms.seen, make([]uint8, n-len(pr.ms.seen))...)
	}
	seen := pr.ms.seen
	for v := range n {
		if pr.s.Value(solver.PosLit(solver.Var(v))) {
			seen[v] |= 1
		} else {
			seen[v] |= 2
		}
	}
}

// seenBoth reports whether models seen set l's variable both ways, or
// the model in hand does with the variable flipped (solver F1;
// docs/SEMANTICS.md §5, "A flip of the model answers 'not decided'"): l
// is not decided. With verifySeen
// (tests) it answers false after checking the claim by the probe decide
// then makes, so that the engine runs as without the record.
func (pr *prober) seenBoth(l solver.Lit) bool {
	if !pr.ms.on {
		return false
	}
	v := int(l.Var())
	both := v < len(pr.ms.seen) && pr.ms.seen[v] == 3
	if !both && pr.flipped(l.Var()) {
		both = true
		if v < len(pr.ms.seen) {
			pr.ms.seen[v] = 3
		}
	}
	if !both && pr.assumed(l) {
		both = true
	}
	if both && verifySeen {
		seenClaims++
		pr.claimed = true
		return false
	}
	return both
}

// flipped reports whether the model in hand with v flipped is a model
// too (solver.FlipKeepsModel, against the model's order, rank). decide
// asks it only with the model in hand, which is a model of the solver as
// it is once the record of models seen is on (startSeen), as the header
// argues; a "yes" on a model that was not one would only keep a member
// longer.
func (pr *prober) flipped(v solver.Var) bool {
	if noFlip || !pr.model || !pr.fillRank() {
		return false
	}
	if !pr.s.FlipKeepsModel(v, pr.rank) {
		return false
	}
	flipHits.Add(1)
	return true
}

// assumed reports whether the solver's saved model, with l's variable
// set the way it does not set it and the values that propagating that
// literal forces put in place of its own, is a model too (solver F2,
// ProbeKeepsModel; docs/SEMANTICS.md §5, "A probe answered from the
// kept model under its assumption"): then the probe decide would make
// is satisfiable, and l is not decided. The test checks the second model
// against the instance as it is, so the answer holds whatever the
// prober's model is. The saved model stays (the prober's rank is its
// order); the second one goes into the models seen: every variable it
// sets the other way is not decided either.
func (pr *prober) assumed(l solver.Lit) bool {
	if noAssume || !pr.model {
		return false
	}
	other := l
	if pr.s.Value(l) {
		other = l.Not()
	}
	ok, fl := pr.s.ProbeKeepsModel(other, false, pr.ms.flipBuf[:0])
	pr.ms.flipBuf = fl
	if !ok {
		return false
	}
	assumeHits.Add(1)
	if n := pr.s.NumVars(); len(pr.ms.seen) < n {
		pr.ms.seen = append(pr.ms.seen, make([]uint8, n-len(pr.ms.seen))...)
	}
	for _, q := range fl {
		if q.IsNeg() {
			pr.ms.seen[q.Var()] |= 2
		} else {
			pr.ms.seen[q.Var()] |= 1
		}
	}
	return true
}

// checkSeenClaim is verifySeen's check of a claim seenBoth made about
// the literal decide just probed: the probe must have been satisfiable.
func (pr *prober) checkSeenClaim(st solver.Status) {
	if !pr.claimed {
		return
	}
	pr.claimed = false
	if st == solver.Unsat {
		seenLies++
	}
}

// Test switches (burst_probe_test.go): noModelsSeen turns the record
// off; verifySeen probes every literal it calls undecided, counting the
// claims in seenClaims and the ones a probe refutes in seenLies.
var (
	noModelsSeen, verifySeen bool
	seenClaims, seenLies     int
)

// noFlip (tests) turns the flip test off; flipHits counts the literals
// it called undecided.
var (
	noFlip   bool
	flipHits atomic.Int64
)

// noAssume (tests) turns the test under the assumption off; assumeHits
// counts the literals it called undecided.
var (
	noAssume   bool
	assumeHits atomic.Int64
)
