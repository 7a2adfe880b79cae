// Package oracle is the brute-force reference that streamcheck's checkers
// are tested against. It is written from the specification alone
// (docs/SEMANTICS.md §1-§4, docs/SEMANTICS.md §0) and shares no code with
// incremental/: a bug there cannot hide behind the same bug here.
//
// # Model
//
// A history is valid under a level iff, for some subset of the unknown
// transactions taken as committed (write-free unknown ones are dropped),
// some serial order of the committed and taken transactions that respects
// the level's order constraints, replayed from the initial state with own
// writes visible inside a transaction, reproduces every read value of
// every transaction in the order (docs/SEMANTICS.md §4). Aborted transactions,
// and unknown ones not taken, are not in the order and their reads are not
// checked.
//
//   - Order constraints: session order for strong-session-serializable and
//     strict-serializable; widened real time (history.Options.Precedes, with
//     an unknown transaction's end at +∞ unless Options.InDoubt >= 0) for
//     strict-serializable only (docs/SEMANTICS.md §1). Session order is the order
//     of start timestamps within a session, input order where some
//     transaction of the session has none and on ties.
//   - Initial state: absent (registers) and the empty list, or under
//     history.InitialUnknown one unknown value per key (absent included) or
//     an unknown initial list, fixed by the first read that sees it and the
//     same for every later one.
//   - A register read of Null on a key nobody wrote reads the initial state;
//     a Null scalar read of a list key reads the empty list; lists compare as
//     whole sequences. Duplicate values need no writer choice: replay only
//     compares values.
//
// The snapshot-isolation family (si.go) replaces the serial order by a
// sequence of begin and commit events: each transaction's reads are
// replayed at its begin on the versions committed before it, its writes
// enter at its commit, no two writers of a key overlap, and the level's
// orders put C_i before B_j (session order; real time under strong SI)
// or before C_j (real time under GSI). Its witness is that sequence
// ("begin ID", "commit ID"), checked by ReplayWitness on its own terms.
//
// The projection H|C (docs/SEMANTICS.md §3) keeps the transactions of C, with
// their writes, and a read r of T in C iff every possible writer of r's
// value is in C, or it has none (a garbage read), or r follows T's own write
// of the key (register reads only; a list read after its own append
// still shows elements appended by others). Possible writers are all transactions of the whole history,
// whatever their status, with a write of that key and value at any
// position, minus those the level places after T (real time under
// strict-serializable, later in T's session under levels with session
// order); the initial state is always present. A list read's possible
// writers are the possible appenders of its elements.
//
// # API
//
// Check and ReplayWitness decide and certify; Project, CheckCore, Cores
// and ShrinkCore implement §3; Classify and TrivialAnomaly report how hard
// a history is; RandomTiny generates tiny histories from simulated
// executions (strict serializable, or with stale and fractured reads),
// then mutates them. Nothing here does IO or keeps global state; a
// *rand.Rand (math/rand/v2) is passed in.
//
// # Invariants
//
//	O1 Check(h) is valid iff some order and subset as above replays h; its
//	   witness passes ReplayWitness (tested against plain enumeration of
//	   every subset and permutation through ReplayWitness).
//	O2 ReplayWitness shares only the order rule (mustPrecede) and the input
//	   check with Check; its replay is written separately.
//	O3 Weaker levels, a larger Δ and a longer in-doubt horizon never turn
//	   valid into invalid.
//	O4 The projection is sound: H|C invalid implies H invalid; and monotone:
//	   H|C invalid implies H|C' invalid for C ⊆ C'. So shrinking by deletion
//	   (ShrinkCore) reaches a subset-minimal core in one pass.
//	O5 RandomTiny's histories pass history.Validate and, at
//	   DefaultTinyConfig, are at least 30% valid and 30% invalid needing
//	   search at every level and Δ (docs/SEMANTICS.md §4).
//
// # Complexity
//
// Check enumerates 2^u subsets of the u writing unknown transactions and,
// per subset, orders of at most MaxTxns transactions by depth-first search
// that replays as it places each transaction and backtracks at the first
// read it cannot reproduce. Failed (placed set, state) pairs are memoized,
// which bounds a subset's search by 2^n placed sets times the distinct
// states reached. Tiny histories (2..6 transactions) take tens of
// microseconds. CheckCore runs |C|+1 checks; Cores runs 2^|h| checks.
//
// # References
//
// docs/SEMANTICS.md §1 (levels and time, history I), §2 (unknown outcomes,
// history H), §3 (cores and the projection, history J), §4 (the oracle and
// the generator's mix); Adya's thesis for G1a/G1b; Elle for the anomaly
// names and the +∞ end of unknown transactions.
package oracle
