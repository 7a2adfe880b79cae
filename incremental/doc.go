// Package incremental owns the encoding of a history as a satisfiability
// problem and the search for anomalies and their minimal cores: the
// dependency graph (known edges and constraints), pruning, the encodings
// per isolation level, and core extraction. The offline checker (Check)
// builds one instance per history; the online engine (package online)
// builds one per step from its window's reduced instance, through the
// exported wrappers of export.go and export_access.go (the prepared
// history, the encoder and its literals, the core finder), which leave
// the offline files' own names as they are.
//
// # Model
//
// Every committed or unknown transaction is a node of the solver's
// acyclicity theory. A history satisfies a serializable level iff some
// choice of the unknowns makes the graph of chosen edges acyclic:
//
//   - rf(r, w): read r reads from writer w (one of the writers of its value;
//     the initial version counts as a writer). Exactly one per read
//     (VeriStrong §3, hyper-polygraphs: duplicates make WR unknown).
//   - x(a, b): a precedes b in version order on every key both write. One
//     variable per pair of writers (an edge set, Vbox §3.5): under
//     serializability every key's version order follows the serial order,
//     so one variable covers all shared keys.
//   - c(t): unknown transaction t committed (docs/SEMANTICS.md §2).
//   - init(k, v): under --initial-state unknown, the initial value of k.
//
// Edges and their conditions:
//
//	wr  w -> t             if rf(r, w)
//	ww  a -> b             if x(a, b)    (b -> a if not)
//	rw  t -> b             if rf(r, a) and x(a, b)   (conditions imply edge,
//	                                                   never only the converse)
//	rw  t -> b             if rf(r, init_k), for every writer b of k
//	so  session chain      t -> Q_i -> ... -> Q_j-1 -> u
//	rt  time-point chain   t -> E(e_t+Δ) -> ... -> S(s_u-Δ) -> u
//
// Session and real-time order are drawn through chains of auxiliary point
// nodes, which gives exactly the O(n^2) order relation with O(n) edges and
// keeps it exact when transactions are removed from a projection (a removed
// transaction's own edges vanish; the chain stays).
//
// # The snapshot-isolation family
//
// The levels of the family (history.Level.BeginCommit) are encoded as
// Viper's BC-polygraphs on the same solver (encode_si.go): every
// transaction is a begin node B_t and a commit node C_t; wr edges enter
// the reader's begin (C_w -> B_r), rw edges leave it (B_r -> C_b), and
// the one order variable per pair of writers draws C_a -> B_b (first
// committer wins). Session order and real time are chains as above, into
// begin nodes (strong session SI, strong SI) or commit nodes (GSI's real
// time). A witness is a schedule of "begin ID" and "commit ID" events.
// Cores are found and shrunk by the same code; explain_si.go says their
// cycles in words of snapshots and commits; check_si.go tells a
// serializable verdict which of its anomalies snapshot isolation allows.
//
// # Invariants
//
//	I1 Every edge leaving transaction t is conditioned on act(t), "t is in
//	   the instance and committed". Edges into t need no condition: when
//	   act(t) is false, t has no outgoing edge, so it lies on no cycle.
//	I2 A read's exactly-one constraint is conditioned on g(r): its reader is
//	   active and every possible writer of its value (docs/SEMANTICS.md §3,
//	   aborted and intermediate writers included) is selected. This makes
//	   the guarded encoding (one selector per transaction) mirror the
//	   projection rule exactly, so failed assumptions name a set whose
//	   projection violates the level.
//	I3 Candidates that follow the reader in real time or session order are
//	   not candidates (they are not possible writers either, §3).
//
// # Pruning
//
// The plain encoding leaves out what the level's own order already
// settles: edges between transactions ordered by real time or session (the
// chains imply them), read sources that a committed write overwrote between
// the writer and the reader in real time, list splits that contradict real
// time, and order variables of unknown writers whose place a forced read
// fixes (perf_prune.go). Each removes only choices that close a cycle of
// edges present in every model, so verdicts do not change
// (TestPruneAgreesWithUnpruned). Without real time, V1 decides the pairs
// of writers that edges present in every model already order, on
// closure.Static to a fixpoint (vbox_prune.go; on begin and commit nodes
// at snapshot-isolation and strong session SI, vbox_si.go). The guarded
// encoding never prunes: with a
// transaction deselected, the edges through it are gone (I1), so it draws
// every rw edge explicitly.
//
// # Cores
//
// The fast path encodes with constants for selectors. On a violation the
// history is encoded again with one selector per transaction, assumed true;
// the failed assumptions are a violating set C0 (I2). C0 is shrunk by
// deletion, re-checking the projection H|C each time; the projection is
// monotone, so one pass gives a subset-minimal core. Deletion tries the
// members latest first in an order defined by their content (start, end,
// ID, session, body; contentCompare), never by their position in the
// history being checked, so the same violating set shrinks to the same
// core wherever it is found (alertid.go A3).
//
// # Alert ids
//
// An online alert's id names the anomaly: a hash of its members' bodies,
// its class and the stream's name (alertid.go, A1-A3), so that distinct
// anomalies never share an id (transaction ids repeat: a client counter
// that restarts) and the same anomaly keeps its id across replays,
// restarts, rewind points and the AM1 update.
package incremental
