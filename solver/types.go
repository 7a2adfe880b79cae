package solver

import "fmt"

// Var is a propositional variable, numbered from 0.
type Var int32

// Lit is a literal: 2*v for v, 2*v+1 for ¬v (doc.go, "Literals").
type Lit int32

// litUndef marks "no literal" in internal tables (the second literal of a
// single-literal edge, the first one of a base edge).
const litUndef Lit = -1

// PosLit returns the positive literal of v.
func PosLit(v Var) Lit { return Lit(v) << 1 }

// NegLit returns the negative literal of v.
func NegLit(v Var) Lit { return Lit(v)<<1 | 1 }

// Var returns the variable of l.
func (l Lit) Var() Var { return Var(l >> 1) }

// Not returns the complement of l.
func (l Lit) Not() Lit { return l ^ 1 }

// IsNeg reports whether l is a negative literal.
func (l Lit) IsNeg() bool { return l&1 == 1 }

// DIMACS returns l in DIMACS notation: v+1 or -(v+1).
func (l Lit) DIMACS() int {
	if l.IsNeg() {
		return -int(l.Var()) - 1
	}
	return int(l.Var()) + 1
}

// LitFromDIMACS converts a non-zero DIMACS literal. It panics on 0, which
// DIMACS reserves as the clause terminator.
func LitFromDIMACS(d int) Lit {
	switch {
	case d > 0:
		return PosLit(Var(d - 1))
	case d < 0:
		return NegLit(Var(-d - 1))
	}
	panic("solver: DIMACS literal 0")
}

func (l Lit) String() string { return fmt.Sprint(l.DIMACS()) }

// Status is the answer of Solve. The values match the exit codes of the SAT
// competition, so a command can exit with int(status).
type Status int8

const (
	Unknown Status = 0
	Sat     Status = 10
	Unsat   Status = 20
)

func (st Status) String() string {
	switch st {
	case Sat:
		return "SAT"
	case Unsat:
		return "UNSAT"
	}
	return "UNKNOWN"
}

// Node is a vertex of the acyclicity theory, numbered from 0.
type Node int32

// Options tunes a Solver. The zero value is a good default.
type Options struct {
	// Seed makes the search deterministic for a given value; different
	// seeds perturb the initial variable order.
	Seed uint64
	// ConflictBudget bounds the conflicts of one Solve call; 0 means
	// unlimited. A spent budget yields Unknown.
	ConflictBudget int64
	// RestartBase is the unit of the Luby restart sequence in conflicts
	// (default 100).
	RestartBase int
	// ReduceBase is the number of conflicts before the first learned
	// clause reduction, ReduceInc the growth of that interval after each
	// reduction (glucose style; defaults 2000 and 300).
	ReduceBase, ReduceInc int
	// TheoryPropagationLimit bounds the nodes each side of the
	// reachability search visits when an inserted edge is checked for
	// edges it now forbids (default 32; negative disables theory
	// propagation, leaving only conflict detection).
	TheoryPropagationLimit int
	// PruneLimit bounds the search, when an edge is added, for a path
	// back over permanent edges (base and level-0 true); if one is found
	// the edge's literals get a level-0 lemma (default 256; negative
	// disables). The search visits at most 16*PruneLimit edges.
	PruneLimit int
	// ChronoThreshold, if positive, makes a conflict that would backjump
	// more than this many levels backtrack one level only (experimental;
	// off by default, see handleConflict).
	ChronoThreshold int
	// AlwaysOrderPhase recomputes the order-guided phase at every
	// decision (VeriStrong §6.2 literally); by default it only sets the
	// first phase of a variable and phase saving takes over.
	AlwaysOrderPhase bool
	// Reanchor, at every restart, resets the topological order to the
	// one closest to node id order and forgets the saved phases of
	// variables that carry edges, so that the order-guided phase again
	// follows the caller's node order (for a checker: time). Without it,
	// reordering on edge insertion drifts away from that order after the
	// first conflicts, saved phases follow the drift, and search on
	// large satisfiable instances can run for minutes (doc.go, "Phase").
	Reanchor bool

	_ struct{}
}

// Stats counts the work of a Solver over its lifetime.
type Stats struct {
	Solves             int64
	Conflicts          int64
	Decisions          int64
	Propagations       int64
	Restarts           int64
	Learned            int64 // learned clauses added (units included)
	Deleted            int64 // learned clauses removed by reduction
	GCs                int64 // clause arena compactions
	TheoryConflicts    int64 // cycles found among present edges
	TheoryPropagations int64 // edge literals set false because of a path
	TheoryExplanations int64 // lazily built reasons for those
	EdgeInsertions     int64
	PruneLemmas        int64 // edges pruned when added (doc.go, T5)
	PruneIndexHits     int64 // of those, proven by the snapshot index
	PruneIndexBuilds   int64 // snapshots built (reachindex.go)
	KeptModelSolves    int64 // solves answered from the saved model (flip_prop.go, F2)
	LazyUnits          int64 // learnt units that undid one level (burst34_lazyunit.go)
}

// ReachOracle tells base reachability that the solver does not hold as
// explicit edges (for example the checker's transitive closure). Reaches
// must be a transitive relation that only grows while the solver uses it;
// Path returns the nodes of one such path, from and to included.
type ReachOracle interface {
	Reaches(from, to Node) bool
	Path(from, to Node) []Node
}
