// Package saturation decides the weak isolation levels whose check is
// polynomial once every read's source is known: Adya's read committed
// (PL-2), and Cerone et al.'s read atomic and causal consistency in Biswas
// & Enea's axiomatic form. It implements AWDIT's saturation algorithms
// (Møldrup & Pavlogiannis, "AWDIT: An Optimal Weak Database Isolation
// Tester", PLDI 2025), read from the paper's description; no code is
// taken from AWDIT.
//
// # Model
//
// A History here is already resolved: N committed transactions, each with
// its session and position (session order), its external reads, each
// with the one transaction it read from (or Initial), and the keys it
// writes (its final writes). Choosing sources where values repeat, which
// unknown transactions committed and what the initial state held is the
// caller's (incremental/check_weak.go enumerates the choices, bounded).
//
//   - ReadCommitted (Adya PL-2): no cycle of wr edges. The version order of
//     a register is free, so a topological order of wr used as every key's
//     version order adds ww edges along that order only: wr acyclic is
//     exactly "some version order leaves ww ∪ wr acyclic" (G0, G1c).
//   - ReadAtomic: some total commit order co ⊇ so ∪ wr such that t3 reads x
//     from t2, t1 ≠ t2 writes x and t1 (so ∪ wr) t3 imply t1 co t2. The
//     premise is fixed by the history, so saturation adds each forced edge
//     t1 -> t2 and the level holds iff so ∪ wr ∪ forced is acyclic.
//   - Causal: the same with (so ∪ wr)+ in the premise. Vector clocks over
//     the sessions give each transaction's causal past as one prefix per
//     session; per read of x and per session only the session's last
//     writer of x in the reader's past needs an edge (the session's earlier
//     writers precede it in so ⊆ co).
//
// List keys (docs/SEMANTICS.md §1 "Lists at the weak levels") come with
// History.Orders: the version order each list read shows (its appenders
// in order, the last before every other appender of the key), edges of
// kind VO. They order writers: ReadCommitted decides wr ∪ VO, ReadAtomic
// and Causal so ∪ wr ∪ VO ∪ forced. They are never visibility: the
// premises (a reader's past) stay so and wr. An appender writes its list
// keys (Writes), so the axiom's forced edges reach appenders as they reach
// register writers.
//
// The initial state is a virtual transaction before all others: a forced
// edge into it (a reader saw the initial version of x although a writer of
// x is in its past) is a violation on its own.
//
// # Invariants
//
//	S1 Check reports a violation iff no total order satisfies the model's
//	   axiom (tested against internal/oracle, which enumerates orders and
//	   sources from the definition).
//	S2 A reported cycle is a cycle of the graph the model defines: every
//	   edge is an so, wr, VO or forced edge, and a forced edge names the reader
//	   and key that force it, and for Causal the reader's past reaches the
//	   writer (Path recovers the so/wr path).
//	S3 On valid, Order is a topological order of so ∪ wr ∪ forced: a commit
//	   order that satisfies the axiom.
//	S4 No IO; deterministic: the same History gives the same answer.
//
// # Complexity
//
// n transactions, m operations, k sessions. ReadCommitted O(n + m).
// ReadAtomic O(Σ over so/wr edges t1 -> t3 of min(|writes t1|, |reads t3|)
// · log m), AWDIT's O(n^{3/2}) bound for bounded transactions. Causal
// O(n·k) for the vector clocks (memory n·k entries of one, two or four
// bytes as the longest session needs: Check refuses more than
// MaxClockBytes; a source already in the reader's past is not joined)
// plus O(r·k_x·log n) for r reads of keys written by k_x sessions.
//
// Memory: the graph keeps every so, wr and forced edge (20 bytes each) in
// chunks of 64Ki edges that are never copied, plus 4 bytes an edge and 4
// a node for the adjacency; Causal adds its n·k clocks. At a million
// unique-value transactions read atomic forces about 5.6 million edges.
package saturation
