package history

// ReadCommitted is Adya's PL-2 over committed transactions: what a
// database's READ COMMITTED promises and what Elle checks as
// read-committed. No session order, no real time.
const ReadCommitted Level = 7

// readCommitted follows Adya's definition, not Biswas & Enea's (AWDIT's
// and Plume's "read committed", which adds session order and forbids
// non-monotonic reads within a transaction): the two families differ, and
// a database's READ COMMITTED promises Adya's. AWDIT's variant is not
// offered; it would get a name of its own.
//
// Back end: the polynomial checker (package saturation). PL-2 forbids
// only cycles of ww and wr edges. On registers the version order is free
// (no read shows it), so a history with a determined read-from (unique
// values, known outcomes) is PL-2 iff its wr graph is acyclic: a
// topological order of wr, taken as every key's version order, adds ww
// edges along that order only (docs/SEMANTICS.md §1 "The weaker levels").
// Where read-from is not determined (repeated values, unknown outcomes,
// unknown initial state) the same check runs for every choice, bounded,
// and the verdict is unknown beyond the bound, never a guess.
//
// Online (run, canary): package weakonline, the same back end on the
// alert instance, with one real-time rule added so that a read closes:
// a transaction that began after the reader ended is not a possible
// source (docs/SEMANTICS.md §5 "The window at the weak levels"); an alert
// that needs the rule says needs_realtime.
var readCommitted = LevelInfo{
	Level:   ReadCommitted,
	Name:    "read-committed",
	Meaning: "Adya's read committed: no read of an aborted or intermediate write, no cycle of write and read dependencies",
	Definition: "for some version order of each key consistent with the reads, the direct " +
		"serialization graph of the committed transactions restricted to ww and wr edges has no " +
		"cycle (G0, G1c); no aborted or intermediate read (G1a, G1b); no session order",
	Reference: "Adya, Weak Consistency, MIT PhD thesis 1999, §3.2.2 and §4.2.2 (PL-2); Elle's read-committed",
	Orders:    0,
	Forbids:   []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder, G0, G1c},
	Backend:   BackendPolynomial,
	Online:    true,
}
