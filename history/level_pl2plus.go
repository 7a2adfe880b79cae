package history

// PL2Plus is Adya's PL-2+ over committed transactions (Elle's
// consistent-view): read committed, and no cycle with exactly one
// anti-dependency. No session order, no real time.
const PL2Plus Level = 9

// pl2Plus follows Adya's definition (thesis §4.1): PL-2 (no G0, G1a, G1b,
// G1c) and no G-single, a cycle of the direct serialization graph with
// exactly one anti-dependency edge. Equivalently (for a fixed version
// order): ww ∪ wr is acyclic and no rw edge a -> b has a path of ww and wr
// edges from b back to a. Cycles with two or more anti-dependencies (write
// skew, long fork) are allowed. It is what "consistent view" promises:
// each transaction sees a state that includes everything its observed
// writers depended on (Adya §4.1), the weakest level that forbids lost
// updates and read skew.
//
// Back end: the SAT engine with the anti-dependencies kept out of the
// acyclicity theory (incremental/check_pl.go): the theory keeps ww ∪ wr
// acyclic, and a model whose rw edge closes a cycle with a ww/wr path is
// refuted by a clause over that cycle's literals and solved again (lazy
// clause generation). Search is needed for the same reason as at
// serializable: the version order of each key is not observed, and a
// choice of it that removes one G-single can create another. A history
// that is serializable is PL-2+ (serializable implies PL-2+), so the check
// first asks the serializable engine, whose real-time pre-check settles
// recorded histories fast. List keys are checked too: every pair of a list
// key's appenders gets an order variable, as register writers do here,
// because a ww edge between two appenders no read shows can close a
// G-single (a lost update in Elle's form).
var pl2Plus = LevelInfo{
	Level:   PL2Plus,
	Name:    "pl-2+",
	Aliases: []string{"consistent-view", "PL-2+"},
	Meaning: "Adya's consistent view: read committed and no cycle with exactly one anti-dependency (no lost update, no read skew; write skew allowed)",
	Definition: "for some version order of each key consistent with the reads, the direct " +
		"serialization graph of the committed transactions has no cycle of ww and wr edges " +
		"(G0, G1c) and no cycle with exactly one rw edge (G-single); no aborted or intermediate " +
		"read (G1a, G1b); no session order",
	Reference: "Adya, Weak Consistency, MIT PhD thesis 1999, §4.1 (PL-2+, G-single); Elle's consistent-view",
	Orders:    0,
	Forbids:   []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder, G0, G1c, GSingle},
	Backend:   BackendSAT,
	Online:    false,
}
