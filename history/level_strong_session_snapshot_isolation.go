package history

// StrongSessionSnapshotIsolation is SI in which a session's later
// transaction sees its earlier ones: C_i before B_j for i before j in a
// session (Elle's strong-session-snapshot-isolation; equivalent to
// prefix-consistent SI, Daudjee & Salem 2006).
const StrongSessionSnapshotIsolation Level = 5

// Online (run, canary): package sionline checks strong-snapshot-isolation,
// the weakest level of the family with real time that implies this one
// (without real time no read closes); an alert that needs the assumed
// real time says needs_realtime (docs/SEMANTICS.md §5 "The window at the
// snapshot levels").
var strongSessionSnapshotIsolation = LevelInfo{
	Level:      StrongSessionSnapshotIsolation,
	Name:       "strong-session-snapshot-isolation",
	Meaning:    "snapshot-isolation, and each transaction's snapshot includes its session's earlier transactions",
	Definition: "snapshot-isolation with C_i before B_j whenever i precedes j in session order",
	Reference: "Daudjee & Salem, Lazy Database Replication with Snapshot Isolation, VLDB 2006 " +
		"(strong session SI); Viper §2.2; Elle's strong-session-snapshot-isolation",
	Orders: OrderBeginCommit | OrderSession,
	Forbids: append(append([]string(nil), siForbids...),
		G0+ProcessSuffix, G1c+ProcessSuffix, GSingle+ProcessSuffix, GNonadjacent+ProcessSuffix,
		// Session order makes it imply read atomic and causal (lattice.go).
		FracturedRead, CausalityViolation),
	Backend: BackendSAT,
	Online:  true,
}
