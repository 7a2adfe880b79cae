package history

// StrongSnapshotIsolation is SI in which a transaction's snapshot holds
// every transaction that finished before it began: C_i before B_j when i
// ended before j began in real time, and when i precedes j in a session
// (session order needs no widening; strong SI includes it as strict
// serializability does, so that it implies strong-session SI).
const StrongSnapshotIsolation Level = 6

// Online (run, canary): package sionline checks the level itself: its
// real time closes reads (docs/SEMANTICS.md §5 "The window at the
// snapshot levels").
var strongSnapshotIsolation = LevelInfo{
	Level:   StrongSnapshotIsolation,
	Name:    "strong-snapshot-isolation",
	Meaning: "strong-session-snapshot-isolation, and each snapshot includes every transaction that ended before it began (client clocks widened by --skew)",
	Definition: "snapshot-isolation with C_i before B_j whenever end_i+Δ <= start_j-Δ " +
		"(Options.Precedes) or i precedes j in session order",
	Reference: "Daudjee & Salem 2006 (strong SI); Viper §2.2 and §5; docs/SEMANTICS.md §1 for Δ",
	Orders:    OrderBeginCommit | OrderSession | OrderRealTime | OrderSnapshotRealTime,
	Forbids: append(append([]string(nil), strongSessionSnapshotIsolation.Forbids...),
		G0+RealtimeSuffix, G1c+RealtimeSuffix, GSingle+RealtimeSuffix, GNonadjacent+RealtimeSuffix),
	Backend: BackendSAT,
	Online:  true,
}
