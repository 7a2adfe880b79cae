// Package canary runs a small, continuous workload built to expose
// isolation anomalies against a real PostgreSQL (pgx) or MySQL/MariaDB
// (go-sql-driver/mysql) and records every transaction with package
// record, for the online checker (README.md, who uses it:
// continuous canary monitoring; project issue #9). `streamcheck canary`
// (internal/canarycmd) wires it to the checker; this package owns the
// database side: schema, workloads, connections, outcomes, arithmetic.
//
// # Workloads
//
// Each transaction draws one workload uniformly from Config.Workloads and
// its rows from a Zipf distribution over Config.Keys rows (row 0 hottest),
// so a few hot rows see most of the contention; between its reads and its
// writes a transaction pauses up to 2*Config.Think, so that concurrent
// ones read the same versions often enough to show what the isolation
// allows. History keys are
// "<table>:<row>" ("reg:3"), so the workloads never share a key.
//
//   - registers (table reg, rows start absent): read-modify-write, blind
//     writes, read-only (one statement per row: read skew at read
//     committed) and reads-then-write. A quarter of the writes pick a
//     value from {1, 2, 3}: duplicate values, so a read cannot always name
//     its writer (the checker's exactly-one choice, VeriStrong §3); the
//     others are unique in the run.
//   - lists (table list, comma-separated TEXT, rows start absent = empty):
//     appends of unique elements and reads of whole lists; every 500
//     transactions the rows move on to fresh keys, so reads stay short.
//   - counters (table ctr, seeded 0): SELECT v, then UPDATE SET v = <v+1
//     computed by the client> (never v = v+1, which the server would
//     serialize): a lost update writes the same value twice.
//   - transfers (table acct, seeded 100 each): move 1..5 between two
//     accounts with client-computed balances; one in ten audits every
//     balance in one statement (one snapshot even at read committed).
//   - write-skew (table ws, rows in pairs 2p, 2p+1, seeded): read both rows
//     of a pair, overwrite one; two concurrent ones that write different
//     rows are the cycle snapshot isolation allows.
//
// Which anomalies each isolation should show, and therefore what a
// positive control expects: PostgreSQL READ COMMITTED and MariaDB
// REPEATABLE READ with innodb_snapshot_isolation=OFF lose updates
// (counters, transfers, registers) and show read skew; PostgreSQL
// REPEATABLE READ (snapshot isolation) refuses lost updates but commits
// write skew; SERIALIZABLE on either must show nothing.
//
// # Arithmetic
//
// Two invariants are checked without the checker, as independent proof
// (Report.Arithmetic): an audit's total must be Keys*100 (a transfer keeps
// it whether it commits or not, so unknown outcomes cannot break it); a
// counter's final value, read once the clients stop, must lie between its
// committed increments and those plus its unknown ones.
//
// # Invariants
//
//	C1 One client is one session with its own connection; its
//	   transactions run one after another, so start order is session
//	   order (record R3). A replaced connection keeps the session.
//	C2 Every transaction is recorded once, whatever its end (record R4):
//	   committed after COMMIT succeeded; aborted after a failed statement
//	   (rolled back; COMMIT never sent) or a COMMIT the driver's
//	   classifier proves refused; unknown otherwise. Nothing is retried in
//	   place: a retry is a new transaction.
//	C3 An operation is recorded only after the database answered it, a
//	   write only when its statement succeeded (an UPDATE only when it
//	   matched its row).
//	C4 Written register values other than the {1,2,3} duplicates, list
//	   elements and write-skew values are unique in the run (one atomic
//	   counter), so most reads name their writer.
//	C5 The tables are created fresh (named "<prefix>_<table>", in
//	   Config.Schema if given, created if missing) and every seeded row is
//	   written by one recorded setup transaction, so the history is
//	   checked with initial state empty; they are dropped at the end, also
//	   after an interrupt, and a schema the canary created is dropped too.
//	C6 Database errors never stop the run. Serialization failures,
//	   deadlocks and lock timeouts are refusals (counted, not logged);
//	   after any other error or an unknown outcome the connection is
//	   probed and, if dead, replaced with exponential backoff (50 ms
//	   doubling to 5 s, jittered). A database that cannot be reached is
//	   reported once when it goes and once when it is back. Only a sink
//	   that fails stops the run: a history with holes raises false alarms.
//	C7 Every transaction, COMMIT included, is bounded by Config.TxnTimeout
//	   (the context given to database/sql and the driver; lock waits by
//	   half of it on the server). Stopping the run does not cut
//	   transactions short: each finishes or times out first, so an
//	   interrupt adds no unknown outcome. Since events are emitted when a
//	   transaction ends, a checker's allowed lateness of TxnTimeout plus a
//	   margin never sees a canary event late.
//
// # Clock skew
//
// Timestamps come from one process's clock (record R3: the wall clock at
// start advanced by the monotonic clock), and the database's own interval
// lies inside each [start, end], so real-time order is exact with Δ = 0.
// `streamcheck canary` still defaults to Δ = 1 ms: it costs only stale
// reads closer than 2 ms, and keeps the check sound when files of several
// canaries (several clocks) are merged.
//
// # Cost
//
// One round trip per statement plus BEGIN and COMMIT; a transaction is
// two to four statements. Rate paces transaction starts over all
// clients (default 200/s in `streamcheck canary`): unpaced, eight
// clients against PostgreSQL or MariaDB on the shared development
// machine drive 300 to 1000 transactions per second depending on the
// workload, which
// the in-process checker must keep up with (BENCHMARKS.md has both).
package canary
