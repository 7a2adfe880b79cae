// Package record lets an application record its own transactions as
// streamcheck native events (ingest.AppendNative), so that `streamcheck
// check` (offline) or `streamcheck run` (tailing a file or a Kafka topic)
// can prove whether the database kept its promised isolation level
// (README.md, who uses it: tailing production client logs; project
// issue #9).
//
// # Model
//
// A Recorder hands out transactions (Begin) and emits each finished one,
// exactly once, to a Sink: SliceSink and ChanSink keep history.Txn values
// in process, JSONLinesSink writes a native JSON Lines file, KeyedSink
// sends native events keyed by session to a message bus (a kafka-go
// writer is a three-line adapter, see KeyedSink). A transaction is a
// history.Txn (docs/SEMANTICS.md §0): session, client start and end
// in wall-clock nanoseconds, status, and micro-operations r, w, append in
// program order.
//
// The application calls Begin before it sends the transaction's first
// statement, records each operation once the database has answered it,
// and ends the transaction after the database's answer to COMMIT (or the
// lack of one) is known:
//
//	rt := rec.Begin("billing-7f3a-worker-2") // before BEGIN is sent
//	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable})
//	if err != nil {
//		rt.Abort() // nothing was committed
//		return err
//	}
//	var v sql.NullInt64
//	err = tx.QueryRowContext(ctx, "SELECT v FROM kv WHERE k = $1", 1).Scan(&v)
//	if err != nil && !errors.Is(err, sql.ErrNoRows) {
//		tx.Rollback()
//		rt.Abort() // COMMIT is never sent: the server rolls back
//		return err
//	}
//	rt.Read(1, v) // an invalid NullInt64 (no row) records absent
//	if _, err := tx.ExecContext(ctx, "UPDATE kv SET v = $1 WHERE k = $2", v.Int64+1, 1); err != nil {
//		tx.Rollback()
//		rt.Abort()
//		return err
//	}
//	rt.Write(1, v.Int64+1)
//	err = tx.Commit()
//	rt.Finish(record.PgxOutcome(err)) // committed, aborted or unknown
//
// # Invariants
//
//	R1 Every Begin yields at most one event: the first end method (Commit,
//	   Abort, Unknown, Finish) emits it, later ones return ErrDone. A
//	   transaction never ended is never emitted, so end every path.
//	R2 Ids are "<session>-<n>", n counting the recorder's transactions of
//	   that session from 1; unique in a history as long as session names
//	   are (put the host and process in them).
//	R3 Start is read in Begin, before the first statement is sent; end in
//	   the end method, after the answer arrived. The database's own
//	   interval therefore lies inside [start, end], which is what real-time
//	   order (docs/SEMANTICS.md §1) needs. The default clock is the wall clock
//	   read once at New and advanced by Go's monotonic clock, so a clock
//	   step never reorders one process's timestamps: a session's start
//	   order is its real order (session order), and end >= start always.
//	   Across processes the skew bound Δ given to the checker must cover
//	   the wall clocks' difference plus the monotonic drift since New.
//	R4 No outcome is guessed. Commit only after the database confirmed the
//	   COMMIT; Abort only when it certainly did not commit (it refused, the
//	   application rolled back, or COMMIT was never sent); Unknown
//	   otherwise. PgxOutcome and MySQLOutcome classify COMMIT's error by
//	   these rules and say Unknown whenever in doubt: an unknown outcome is
//	   checked exactly (docs/SEMANTICS.md §2), a wrong guess raises false alarms
//	   or hides anomalies.
//	R5 Operations are kept in call order, which must be the order the
//	   statements ran in: a read after the transaction's own write must
//	   show that write (the checker reports "internal" otherwise).
//	R6 Keys and values become history canonical text (Value): int64 10 is
//	   "10", the string "10" is `"10"`; they are distinct values.
//
// Misuse that would silently corrupt the history (an unsupported key or
// value type, nil written, an operation after the end, an empty session)
// panics.
//
// # Concurrency
//
// Recorder and Tx are safe for concurrent use. Sinks are called from the
// goroutine that ends a transaction, concurrently, and must be safe for
// concurrent use (all sinks here are). A slow sink slows the application:
// nothing is dropped, because a history with holes raises false alarms
// (garbage reads).
//
// # Complexity
//
// Begin takes the recorder's lock for one map update; an operation is an
// append under the transaction's lock; an end method copies the
// transaction header and calls the sink, whose cost (one native encoding,
// about a microsecond for a few operations, and one Write) dominates.
//
// # Limits
//
// Events are emitted at the end of each transaction, so a consumer sees
// them in end order, not start order: `streamcheck run` must allow a
// lateness of at least the longest transaction (docs/SEMANTICS.md §5). A
// process that crashes mid-transaction emits nothing for it; if that
// transaction's COMMIT had been sent, its writes may be visible with no
// writer in the history. Record to a durable sink before sending COMMIT if
// that matters; this first version does not.
package record
