package history

// RepeatableRead is Adya's PL-2.99 over committed transactions: what a
// database's REPEATABLE READ promises in the textbook sense (Berenson et
// al. 1995) and what Elle checks as repeatable-read. No session order, no
// real time.
const RepeatableRead Level = 8

// repeatableRead follows Adya's definition: PL-2 (no G0, G1a, G1b, G1c)
// and no G2-item, a cycle of the direct serialization graph with an
// anti-dependency on an item. What separates it from PL-3 (serializable)
// is G2 over predicates: a cycle whose anti-dependency is a predicate
// read overwritten (a phantom) is allowed at PL-2.99 and forbidden at
// PL-3.
//
// On the histories streamcheck reads (key-value registers and lists, no
// predicate reads, no range scans) every anti-dependency is an item
// anti-dependency, so G2 and G2-item coincide and a history is
// repeatable-read iff it is serializable. The level still has its own
// name because it is what a database promises and a user asks for:
// verdicts and alerts name the promise (`repeatable-read: G2-item`), and
// once a format carries predicate reads (Boomslang's range scans, §8.1 of
// its paper checks RR and SER apart on them) the two levels part, on a
// back end that draws predicate anti-dependencies for serializable and not
// for repeatable-read. It is also not the REPEATABLE READ of MySQL and
// MariaDB (snapshot reads plus locking reads of the newest version, lost
// updates with innodb_snapshot_isolation off): docs/LEVELS.md says which
// level those recordings pass.
//
// Back end: the SAT engine with serializable's encoding (one node per
// transaction, no session or time order): deciding it on registers with
// an unknown version order is NP-complete like serializability
// (Papadimitriou 1979), and the encoding with every rw edge in the
// acyclicity theory is exactly "no cycle of ww, wr and item rw edges".
// Anomalies are named as serializable's are (G2-item, G-single, ...).
var repeatableRead = LevelInfo{
	Level:   RepeatableRead,
	Name:    "repeatable-read",
	Aliases: []string{"PL-2.99"},
	Meaning: "Adya's repeatable read: read committed and no cycle through an item anti-dependency (phantoms allowed; equal to serializable without predicate reads)",
	Definition: "for some version order of each key consistent with the reads, the direct " +
		"serialization graph of the committed transactions with ww, wr and item rw edges has no " +
		"cycle (G0, G1c, G2-item); no aborted or intermediate read (G1a, G1b); no session order",
	Reference: "Adya, Weak Consistency, MIT PhD thesis 1999, §4.2 (PL-2.99); Berenson et al., " +
		"A Critique of ANSI SQL Isolation Levels, SIGMOD 1995; Boomslang (2026) §8.1",
	Orders: 0,
	Forbids: []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder,
		G0, G1c, GSingle, GNonadjacent, G2Item},
	Backend: BackendSAT,
	Online:  false,
}
