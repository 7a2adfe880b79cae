// Package gen generates synthetic transaction histories for tests and
// benchmarks: realistic ones that are strict serializable by construction,
// and the same with injected anomalies whose minimal cores are known.
//
// # Model
//
// A simulated store and S client sessions. Each session runs transactions
// back to back: a think time (uniform, mean chosen for the requested
// concurrency), then a transaction with client interval [start, end]
// (duration: a floor plus an exponential tail, mean Config.Latency) and a
// commit point drawn strictly inside (start, end). The store executes each
// transaction atomically at its commit point, in commit-point order (a heap
// of sessions keyed by their next commit point), so reads return the state
// at that instant plus the transaction's own earlier writes. Aborted
// transactions, and unknown ones that lost their coin flip, run but leave
// no effects. Keys are slots: registers named "x<i>" and append-only lists
// named "l<i>" (then "l<i>.<gen>" once a list holds MaxListLen elements and
// its slot moves on to a fresh key, which keeps list reads short).
// Register values are per-key counters (1, 2, ...) unless a write picks a
// duplicate of an earlier value of the key; list elements are per-slot
// counters and never repeat.
//
// Transactions are emitted in end-time order, the order in which clients
// would log them: a transaction is released once the next commit point to
// execute is at or past its end, since every later transaction ends after
// its own commit point.
//
// Workloads: Mixed (each logical operation a read with ReadRatio, else a
// write or append; a register write is preceded by a read of its key
// unless blind) and BlindW, the papers' benchmark of read-only and
// write-only transactions with blind writes (Vbox §4.2: BlindW-RH 80%
// reads, BlindW-WR, BlindW-WH 20% reads; Viper §7: V-BlindW's BlindW-RW,
// eight operations per transaction). Preset names them with 32 sessions,
// 8 operations and 5K keys.
//
// # Injected anomalies
//
// Each injection adds two to four transactions on fresh keys
// ("inj<k>.x", ...) in fresh sessions ("inj<k>.<j>"), all overlapping each
// other in time (the stale read excepted, whose reader starts StaleGap
// after its writer ended). The shapes (Inject names, docs/SEMANTICS.md notation,
// all committed unless marked):
//
//	G0                 T1 append x1, y1 · T2 append x2, y2 · R r x[1 2], r y[2 1]
//	G1a                A w x1 (aborted) · R r x1
//	G1b                W w x1, w x2 · R r x1
//	garbage-read       R r x404
//	internal           T w x1, r x null
//	G1c                T1 w x1, r y1 · T2 w y1, r x1
//	G-single/read-skew W0 w x1, w y1 · W w x2, w y2 · R r x1, r y2
//	lost-update        T1 r x null, w x1 · T2 r x null, w x2
//	write-skew         T1 r x null, r y null, w x1 · T2 r x null, r y null, w y1
//	G2-item            T1 r x null, w y1 · T2 r y null, w z1 · T3 r z null, w x1
//	G-single-realtime  W[a,b] w x1 · R[b+gap, ...] r x null   (stale read)
//	duplicate-elements A append x1 · R r x[1 1]
//	incompatible-order A append x1 · B append x2 · R r x[1 2] · S r x[2 1]
//
// # Shapes valid at a level (Config.ValidAt)
//
// With ValidAt set to a checked level below the strongest, the generator
// adds, one per 1000 base transactions (at least one), a shape that the
// level allows and every stronger checked level forbids (validat.go's
// allowedShapes, one entry per level): a stale read within one session
// (SessionStaleRead, G-single-process) for serializable, a stale read
// across sessions (StaleRead) for strong-session-serializable. They are
// built like injections (fresh keys and sessions, G5 and G6 hold) and
// listed in the manifest with their ValidAt level; the base is unchanged.
//
// # Invariants
//
//	G1 Every base transaction's commit point c satisfies start < c < end,
//	   and commit points are executed in non-decreasing order; so if a
//	   finishes before b starts (or precedes it in its session) a executes
//	   first, and execution order is a serial order that extends real time
//	   and session order: the base history is strict serializable (also
//	   under every skew bound Δ >= 0).
//	G2 Every read returns the store's state at its commit point plus its
//	   own earlier writes; the tests replay the execution order to check it.
//	G3 A transaction's writes reach the store only if it commits (or is
//	   unknown and won its coin flip), all at once at its commit point.
//	G4 The mean overlap is (S-1)*2*E[d]/(E[d]+E[think]) for stationary
//	   sessions (first starts staggered over one cycle); Config.Concurrency
//	   is solved for E[think].
//	G5 Injections draw on their own random stream and their own keys and
//	   sessions: removing their transactions gives back, byte for byte, the
//	   history generated without them.
//	G6 An injection's keys are touched by no other transaction, and its
//	   transactions are mutually concurrent unless the anomaly needs real
//	   time. Since base and injected transactions share no keys, only
//	   real-time and session edges join them, and a cycle through base
//	   transactions can be short-cut by a real-time edge between injected
//	   ones (interval orders are transitive, and base edges follow commit
//	   order); so each injection's listed transactions are a minimal core
//	   (docs/SEMANTICS.md §3) and no core needs a base transaction.
//
// # Complexity
//
// O(log S + ops) time per transaction; memory O(Keys + S + list contents)
// whatever the number of transactions, so GenerateStream produces 10M
// transactions with constant memory. About 1-2 µs per 8-operation
// transaction on one core.
package gen
