package history

// ReadAtomic is Cerone et al.'s read atomic (atomic visibility), in Biswas
// & Enea's axiomatic form: what AWDIT and Plume check as read atomic. It
// includes session order.
const ReadAtomic Level = 10

// FracturedRead names a read-atomic violation: a transaction sees a
// writer (directly, through a read or its session) and yet reads a key
// that writer wrote from a version the writer's write does not follow in
// any commit order.
const FracturedRead = "fractured-read"

// readAtomic: Biswas & Enea's axiom. Some total commit order co contains
// session order and read-from, and whenever t3 reads x from t2 and
// t1 ≠ t2 writes x with t1 so∪wr-> t3, t1 is before t2 in co.
//
// Back end: the polynomial checker (package saturation, AWDIT's
// saturation: Møldrup & Pavlogiannis, PLDI 2025, §4). With read-from
// determined, the axiom's premise is fixed, so the history is read atomic
// iff so ∪ wr plus the co edges it forces is acyclic. Where read-from is
// not determined, the check runs for every choice, bounded (unknown beyond).
//
// Online (run, canary): package weakonline, the same back end on the
// alert instance, with one real-time rule added so that a read closes:
// a transaction that began after the reader ended is not a possible
// source (docs/SEMANTICS.md §5 "The window at the weak levels"); an alert
// that needs the rule says needs_realtime.
var readAtomic = LevelInfo{
	Level:   ReadAtomic,
	Name:    "read-atomic",
	Meaning: "every transaction sees all or none of each transaction it sees (no fractured read); session order kept",
	Definition: "some total commit order contains session order and read-from, and when t3 reads " +
		"x from t2 and another writer t1 of x precedes t3 by session order or read-from, " +
		"t1 commits before t2",
	Reference: "Cerone, Bernardi & Gotsman, A Framework for Transactional Consistency Models with Atomic " +
		"Visibility, CONCUR 2015, §3 (RA); Biswas & Enea, On the Complexity of Checking Transactional " +
		"Consistency, OOPSLA 2019, §2.2 (Read Atomic axiom)",
	Orders:  OrderSession,
	Forbids: []string{G1a, G1b, Internal, GarbageRead, DuplicateElements, IncompatibleOrder, G0, G1c, G1c + ProcessSuffix, FracturedRead},
	Backend: BackendPolynomial,
	Online:  true,
}
