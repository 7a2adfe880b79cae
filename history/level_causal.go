package history

// Causal is Cerone et al.'s causal consistency (transactional causal
// consistency), in Biswas & Enea's axiomatic form: what AWDIT and Plume
// check as causal. Elle calls it causal-cerone (the lattice's Elle alias;
// --level takes only the registry's names).
const Causal Level = 11

// CausalityViolation names a causal violation: a transaction reads x from
// t2 although another writer of x is in its causal past and follows
// nothing that puts it before t2.
const CausalityViolation = "causality-violation"

// causal: Biswas & Enea's axiom. Some total commit order co contains
// session order and read-from, and whenever t3 reads x from t2 and
// t1 ≠ t2 writes x with t1 (so∪wr)+-> t3, t1 is before t2 in co.
//
// Back end: the polynomial checker (package saturation, AWDIT's causal
// algorithm with vector clocks over the sessions: Møldrup & Pavlogiannis,
// PLDI 2025, §5). Per read and per session only the session's last writer
// of the key in the reader's causal past needs an edge: the session's
// earlier writers precede it in session order. Where read-from is not
// determined, the check runs for every choice, bounded (unknown beyond).
//
// Online (run, canary): package weakonline, the same back end on the
// alert instance, with one real-time rule added so that a read closes:
// a transaction that began after the reader ended is not a possible
// source (docs/SEMANTICS.md §5 "The window at the weak levels"); an alert
// that needs the rule says needs_realtime.
var causal = LevelInfo{
	Level:   Causal,
	Name:    "causal",
	Meaning: "read atomic, and every transaction sees all that its causal past (session order and reads, transitively) saw",
	Definition: "some total commit order contains session order and read-from, and when t3 reads " +
		"x from t2 and another writer t1 of x precedes t3 by the transitive closure of session " +
		"order and read-from, t1 commits before t2",
	Reference: "Cerone, Bernardi & Gotsman, CONCUR 2015, §3 (CC: RA plus transitive visibility); " +
		"Biswas & Enea, OOPSLA 2019, §2.2 (Causal axiom)",
	Orders:  OrderSession,
	Forbids: []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder, G0, G1c, G1c + ProcessSuffix, FracturedRead, CausalityViolation},
	Backend: BackendPolynomial,
	Online:  true,
}
