package history

import "slices"

// The lattice of isolation levels, written down once. latticeEdges is the
// one table of inclusions: {a, b} means every history valid at a is valid
// at b (a is stronger). docs/LEVELS.md draws it (a test holds the drawing
// equal to this table) and the inclusion tests take their pairs from it.
//
// The levels do not form a chain. Adya's levels (serializable, repeatable
// read, PL-2+, read committed) have no session order; Cerone et al.'s read
// atomic and causal include it, so they sit below the strong-session
// levels, not below serializable. Snapshot isolation (generalized, no
// session order) and repeatable read are incomparable. Strong session SI
// (Cerone's and Daudjee's SI) is SI plus session order. The edges follow
// Elle's consistency-model graph (jepsen-io/elle, consistency_model.clj)
// restricted to the levels below, with Elle's sessionless causal chain
// moved under the session levels as Cerone defines them.
//
// Only the levels in the registry (Levels) are checked; the others are
// named here so that their issues add a file, not a new picture. Each
// later level's issue confirms its edges with its own inclusion test.
var latticeNodes = []LatticeNode{
	{Name: "strict-serializable"},
	{Name: "strong-session-serializable"},
	{Name: "serializable", ElleAliases: []string{"PL-3"}},
	{Name: "strong-snapshot-isolation"},
	{Name: "generalized-snapshot-isolation"},
	{Name: "strong-session-snapshot-isolation"},
	{Name: "snapshot-isolation"},
	{Name: "repeatable-read", ElleAliases: []string{"PL-2.99"}},
	{Name: "parallel-snapshot-isolation"},
	{Name: "prefix"},
	{Name: "pl-2+", ElleAliases: []string{"consistent-view", "PL-2+"}},
	{Name: "causal", ElleAliases: []string{"causal-cerone"}},
	{Name: "read-atomic"},
	{Name: "read-committed", ElleAliases: []string{"PL-2"}},
}

var latticeEdges = [][2]string{
	{"strict-serializable", "strong-session-serializable"},
	{"strict-serializable", "strong-snapshot-isolation"},
	{"strong-session-serializable", "serializable"},
	{"strong-session-serializable", "strong-session-snapshot-isolation"},
	{"strong-snapshot-isolation", "strong-session-snapshot-isolation"},
	{"strong-snapshot-isolation", "generalized-snapshot-isolation"},
	{"generalized-snapshot-isolation", "snapshot-isolation"},
	{"strong-session-snapshot-isolation", "snapshot-isolation"},
	{"strong-session-snapshot-isolation", "parallel-snapshot-isolation"},
	{"strong-session-snapshot-isolation", "prefix"},
	{"serializable", "snapshot-isolation"},
	{"serializable", "repeatable-read"},
	{"snapshot-isolation", "pl-2+"},
	{"parallel-snapshot-isolation", "causal"},
	{"prefix", "causal"},
	{"causal", "read-atomic"},
	{"repeatable-read", "read-committed"},
	{"pl-2+", "read-committed"},
	{"read-atomic", "read-committed"},
}

// LatticeNode is a level of the lattice, checked or not.
type LatticeNode struct {
	// Name is the Elle name; ElleAliases are Elle's other names for it.
	Name        string
	ElleAliases []string
	// Checked reports whether the level is in the registry (Levels):
	// whether any streamcheck command checks it today.
	Checked bool
}

// Lattice returns every level of the lattice (checked or not, strongest
// first) and its covering pairs {stronger, weaker}.
func Lattice() ([]LatticeNode, [][2]string) {
	nodes := make([]LatticeNode, len(latticeNodes))
	for i, n := range latticeNodes {
		n.Checked = slices.Contains(LevelNames(), n.Name)
		nodes[i] = n
	}
	return nodes, slices.Clone(latticeEdges)
}

// ImpliesName reports whether level a implies level b by name along the
// lattice (reflexive and transitive): every history valid at a is valid at
// b.
func ImpliesName(a, b string) bool {
	seen := map[string]bool{a: true}
	stack := []string{a}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == b {
			return true
		}
		for _, e := range latticeEdges {
			if e[0] == n && !seen[e[1]] {
				seen[e[1]] = true
				stack = append(stack, e[1])
			}
		}
	}
	return false
}

// Implies reports whether l implies m (l is m or stronger).
func (l Level) Implies(m Level) bool { return ImpliesName(l.String(), m.String()) }

// Implied returns the checked levels l implies, l excluded, weakest
// first: the levels a verdict at l also decides when it is valid.
func (l Level) Implied() []Level {
	var out []Level
	for _, d := range levels {
		if d.Level != l && l.Implies(d.Level) {
			out = append(out, d.Level)
		}
	}
	return out
}

// Strongest returns the checked level that implies every other checked
// level (the lattice restricted to the registry has a top today; ok is
// false if a later level breaks that).
func Strongest() (top Level, ok bool) {
	for _, d := range levels {
		all := true
		for _, e := range levels {
			all = all && d.Level.Implies(e.Level)
		}
		if all {
			return d.Level, true
		}
	}
	return 0, false
}

// sameOnItems are pairs of levels that the lattice keeps apart but that
// accept the same histories without predicate reads, which is every
// history streamcheck reads (docs/SEMANTICS.md §1 "Repeatable read and
// PL-2+"): Adya's PL-2.99 differs from PL-3 only by predicate
// anti-dependencies (G2 against G2-item). The lattice's edge between them
// stays a strict inclusion in general; the inclusion tests hold each pair
// equal instead of looking for a history that sets them apart.
var sameOnItems = [][2]string{
	{"serializable", "repeatable-read"},
}

// SameOnItems reports whether levels a and b accept the same histories
// when no read is a predicate read (sameOnItems, either way round).
func SameOnItems(a, b Level) bool {
	for _, p := range sameOnItems {
		if (p[0] == a.String() && p[1] == b.String()) || (p[1] == a.String() && p[0] == b.String()) {
			return true
		}
	}
	return false
}

// ImpliesOnItems reports whether every history without predicate reads
// that is valid at l is valid at m: l implies m along the lattice, or a
// level the same as l on such histories does.
func ImpliesOnItems(l, m Level) bool {
	if l.Implies(m) {
		return true
	}
	for _, d := range levels {
		if SameOnItems(l, d.Level) && d.Level.Implies(m) {
			return true
		}
	}
	return false
}
