package history

// GeneralizedSnapshotIsolation is SI whose commit order follows real
// time: C_i before C_j when i ended before j began (client intervals
// widened by the skew). A snapshot may still be older than j's start.
const GeneralizedSnapshotIsolation Level = 4

// Online (run, canary): package sionline checks the level itself: its
// real time closes reads (docs/SEMANTICS.md §5 "The window at the
// snapshot levels").
var generalizedSnapshotIsolation = LevelInfo{
	Level:   GeneralizedSnapshotIsolation,
	Name:    "generalized-snapshot-isolation",
	Meaning: "snapshot-isolation, and a transaction that ended before another began (client clocks widened by --skew) commits first",
	Definition: "snapshot-isolation with C_i before C_j whenever end_i+Δ <= start_j-Δ " +
		"(Options.Precedes); overlapping client intervals order nothing",
	Reference: "Elnikety, Pedone & Zwaenepoel, Database Replication Using Generalized Snapshot " +
		"Isolation, SRDS 2005; Viper §2.2 and §5; docs/SEMANTICS.md §1 for Δ",
	Orders: OrderBeginCommit | OrderRealTime,
	Forbids: append(append([]string(nil), siForbids...),
		G0+RealtimeSuffix, G1c+RealtimeSuffix, GSingle+RealtimeSuffix, GNonadjacent+RealtimeSuffix),
	Backend: BackendSAT,
	Online:  true,
}
