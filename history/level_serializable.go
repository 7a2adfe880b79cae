package history

// Serializable is Adya's PL-3 over committed transactions: no session
// order, no real time.
const Serializable Level = 0

var serializable = LevelInfo{
	Level:   Serializable,
	Name:    "serializable",
	Meaning: "some serial order of the committed transactions explains every read",
	Definition: "the direct serialization graph of the committed transactions, for some " +
		"version order of each key consistent with the reads, has no cycle (G0, G1c, G2); " +
		"no aborted or intermediate read (G1a, G1b)",
	Reference: "Adya, Weak Consistency, MIT PhD thesis 1999, §3.2.3 (PL-3) and §4.2.3",
	Orders:    0,
	Forbids: []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder,
		G0, G1c, GSingle, GNonadjacent, G2Item},
	Backend: BackendSAT,
	Online:  true,
}
