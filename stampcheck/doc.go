// Package stampcheck checks a history with the database's own facts
// (docs/SEMANTICS.md §10): commit and snapshot stamps (commit_ts,
// start_ts: CockroachDB, TiDB, YugabyteDB) and PostgreSQL's transaction
// ids with the snapshot each transaction saw. Where the facts decide
// everything, checking is a replay in near-linear time instead of a
// search; where they leave something open, the black-box checker
// (incremental.Check) decides, with the facts added as constraints.
//
// # Model
//
// The facts are claims. A history is **valid with its facts** at a level
// when some completion of the level (docs/SEMANTICS.md §0) also keeps
// them: at the serializable levels the serial order puts a before b
// whenever commit_ts(a) < commit_ts(b) (equal stamps leave the pair
// unordered); at the snapshot levels each transaction reads the state of
// the transactions whose commit_ts is below its start_ts, own writes on
// top, and writers of one key never overlap (first committer wins);
// PostgreSQL's facts fix which version each read sees (the latest, in the
// version order the snapshots show, of the committed writers its snapshot
// sees), at every level. The verdict on the level itself never changes:
// it is the black-box verdict. The facts only add a second report class,
// "stamps inconsistent with reads", for a history that is valid at the
// level but not with its facts.
//
// # Invariants
//
//	S1 A Valid verdict from the facts carries a witness order that the
//	   tests replay (oracle.ReplayWitness): the fast path never says valid
//	   on its own word.
//	S2 The fast path never reports: when its witness fails, the black-box
//	   checker decides the level, so an isolation anomaly is exactly what
//	   incremental.Check finds, core and class included.
//	S3 An inconsistency set C is subset-minimal under the projection of
//	   docs/SEMANTICS.md §3 with the facts of C kept: H|C is not valid with
//	   its facts, and dropping any one member makes it so. It is reported
//	   only when the history is valid at the level.
//	S4 No IO (internal/lint TestForbiddenImports).
//
// # Complexity
//
// With commit stamps on every committed transaction: O(n log n + ops) for
// the serializable levels (sort by commit_ts, replay, one pass each for
// session order and widened real time) and for the snapshot levels (sort
// by commit_ts and by start_ts, then one pass over begins and commits,
// stream.go). Keys are numbered once per operation (keys.go: an
// open-addressing table on the interned key's pointer); every later pass
// indexes per-key arrays, with no map in a hot loop. The per-key chains
// (writers in commit order) are built only when that pass fails, to name
// the failure. At 1M generated transactions the check phase takes about
// 0.6 CPU-s (serializable) and 1.0 (snapshot isolation; BENCHMARKS.md,
// "stamps2"). PostgreSQL's facts give no order to sort by: per key the
// writers are ordered by comparing snapshots pairwise, O(w²) per key of w
// writers, each read scans its key's writers, and the begins and commits
// are then ordered topologically (pgEvents). The fallbacks cost what
// incremental.Check costs.
package stampcheck
