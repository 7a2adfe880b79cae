// Package dbworkload runs small workloads against a real PostgreSQL or
// MariaDB through database/sql (pgx/v5/stdlib as "pgx",
// go-sql-driver/mysql as "mysql") and records every transaction with
// package record. Its histories are oracles whose verdict is known from
// the database's documented guarantee (README.md "Testing against real
// parts"): PostgreSQL and MariaDB at SERIALIZABLE must pass serializable
// (and, being single-node, strict-serializable with a small skew);
// PostgreSQL at READ COMMITTED and MariaDB at REPEATABLE READ (with
// innodb_snapshot_isolation off) lose updates under a client-side
// read-then-write counter, which the counter's arithmetic proves without
// the checker. The acceptance tests are in incremental/realdb_test.go.
//
// # Workloads
//
//   - Register: kv(k INT PRIMARY KEY, v INT), rows initially absent;
//     Clients concurrent clients run read-modify-write, blind-write,
//     read-only and mixed transactions of up to MaxOps operations over
//     Keys keys; every written value is unique in the run.
//   - Counter: one row inserted by a recorded setup transaction; clients
//     SELECT v, compute v+1, UPDATE ... SET v = <number>; a recorded final
//     read gives the final value.
//   - LostUpdate: one deterministic interleaving of two increments (both
//     read, then A writes and commits, then B writes and commits), ordered
//     with channels, on an absent or a recorded seeded row.
//
// # Invariants
//
//	W1 Each client has its own connection (sql.Conn) and its own session;
//	   a session's transactions run one after another, so its start order
//	   is its session order (record R3).
//	W2 Every transaction is recorded, whatever its end: committed after
//	   COMMIT succeeded, aborted after a failed statement (rolled back,
//	   COMMIT never sent) or a COMMIT the driver's classifier proves failed,
//	   unknown otherwise (record R4). Nothing is retried in place: a retry
//	   is a new transaction.
//	W3 An operation is recorded only after the database answered it; a
//	   write only when its statement succeeded (an UPDATE also only when it
//	   matched the row), so a recorded history never holds a write the
//	   database did not accept inside the transaction.
//	W4 The isolation level is requested per transaction through
//	   sql.TxOptions (pgx: BEGIN ISOLATION LEVEL ...; mysql: SET
//	   TRANSACTION ISOLATION LEVEL ... then START TRANSACTION).
//	W5 Each workload creates its own tables, named "<prefix>_<workload>"
//	   with a random prefix unless one is given, and drops them when it
//	   returns, also when its context is cancelled.
//
// # Cost
//
// One round trip per micro-operation plus BEGIN and COMMIT. Measured on
// the shared two-core development machine (2026-11-22, load around 13):
// the register workload's 300 transactions (six clients, SERIALIZABLE,
// PostgreSQL 15) take 0.5 to 1.5 s, a 60-increment counter about 0.3 s.
package dbworkload
