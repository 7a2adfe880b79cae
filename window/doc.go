// Package window is the front of the online check (`streamcheck run`): it
// takes finished transactions arriving out of order from P input
// partitions, holds them behind a start-time watermark, releases them to
// the checker in start order, tells when a released transaction becomes
// time-closed, and sets aside (dead-letters) what it cannot place. It is a
// deterministic state machine fed events, like etcd raft's RawNode: no IO,
// no goroutines, no clock; a Window is not safe for concurrent use. The
// rules are docs/SEMANTICS.md §5 ("Watermark on start time", R1, "Dead
// letters") and §2 (effective ends of unknown transactions).
//
// # Model
//
// An event is a history.Txn with client start and end times, delivered by
// partition p (a file or stdin is one partition, each Kafka partition one).
// Events are emitted at commit, so they arrive roughly in end order, not
// start order. Each partition promises that after delivering a transaction
// that starts at s it delivers none that starts before s-L (Config.Lateness).
//
//   - W_p = maxStart_p - L is partition p's watermark, -∞ until p delivers
//     its first accepted transaction.
//   - W = max(W_prev, min over partitions that are not idle of W_p) is the
//     global watermark: every transaction accepted from now on starts at
//     or after W. With every partition idle it is max(W_prev, maxStart-L),
//     maxStart the greatest start accepted anywhere. Close makes it +∞.
//   - A partition is idle while it is marked (MarkIdle, until its next
//     accepted transaction) or while IdleTimeout > 0 and its latest sign of
//     life, max(maxStart_p, firstStart), lies more than IdleTimeout behind
//     maxStart (firstStart: the stream's first accepted start). Idleness is
//     measured in event time, so a replay decides it the same way; a
//     partition that never delivers anything is measured from the start of
//     the stream.
//   - A transaction is released once start < W, in release order (start,
//     end, ID). It is time-closed once effEnd+Δ < W-Δ, effEnd being
//     history.Options.EffectiveEnd (end; for an unknown outcome end+D, or
//     +∞ without a horizon): every transaction still to come starts at or
//     after W, so it follows T in real time (history.Options.Precedes).
//     At Close everything closes, +∞ included.
//
// Dead letters, checked in this order (the first that applies wins):
// MissingTime, EndBeforeStart, Future (Config.MaxAhead: start beyond the
// partition's greatest accepted start plus MaxAhead, or before the
// partition's first, the greatest accepted start of any partition; the
// ReanchorAfter-th such event of a partition in a row is let through, its
// clock having jumped), Late (after Close, or start < W_p: the
// partition's own promise broken), DuplicateID (an event with the same ID
// and a start within the lateness of this one passed the checks before
// it, and its start is still >= W-L), Late (start < W). SetAside counts a
// dead letter decided outside (run's wall-clock bound, Future). A dead
// letter never changes a watermark and is never released; its Txn carries
// its writes, which the engine keeps as unchecked writers (the verdict is
// then partial), with its times for Late and DuplicateID and without them
// for the others (TimeTrusted; docs/SEMANTICS.md §5 "Dead letters").
//
// Why Future: one event stamped a day ahead would raise W_p by a day, and
// every later event of the partition would be late. Measuring against the
// partition's own accepted starts, in event time, keeps W6; the one
// decision with no reference, the stream's first event, is run's to bound
// by the wall clock.
//
// Why Late includes start < W_p even where W has not passed the start yet:
// W is a minimum over partitions, so whether W has passed such a start
// depends on how far the other partitions happen to be read. Refusing every
// transaction that breaks its partition's promise makes the outcome a
// function of the per-partition sequences (W6). It costs nothing on a
// stream that keeps the lateness it was configured with.
//
// # Invariants
//
//   - W1 W never decreases. A partition coming back from idleness cannot
//     lower it: its transactions below W are late.
//   - W2 Every accepted transaction had start >= W and (if its partition
//     had delivered before) start >= W_p when it arrived.
//   - W3 Release returns exactly the buffered transactions with start < W,
//     in release order. Concatenated over all calls, releases are in
//     release order: everything released starts below W, everything
//     accepted later at or above it (W1, W2).
//   - W4 PopClosed returns released transactions with effEnd+2Δ < W in
//     closing order (effEnd, then release order), and nothing while
//     Release has something to return. Concatenated over all calls,
//     closings are in closing order (a transaction accepted later has
//     effEnd >= start >= W, above every closed one), and each closing
//     follows its transaction's release. Release sequence numbers
//     (Closing.Seq) count from 0 in release order.
//   - W5 Two events with one ID whose starts lie within the lateness of
//     each other are accepted at most once; the ID set remembers an ID
//     while its start is >= W-L (idset.go), so a repeat that is not late
//     is always caught, and a repeat that is late is dead-lettered as
//     late or duplicate. IDs reused further apart are new transactions.
//   - W6 Determinism: with IdleTimeout 0, no MarkIdle and IDs that repeat
//     only within a partition, the dead letters (details included), the
//     concatenated releases
//     and the concatenated closings depend only on the per-partition
//     sequences, not on how they interleave nor on when Release and
//     PopClosed are called. (Then no partition's transaction is ever below
//     W without being below W_p, since W <= W_p at all times.) Idleness
//     depends, by its nature, on how far the other partitions are; which
//     copy of an ID repeated across partitions is kept depends on arrival.
//     Releases stay in order (W3, W4) in every case.
//   - W7 After Close, Release returns every buffered transaction and then
//     PopClosed closes every released one; Stats().Buffered and Open are 0.
//
// # Choosing the parameters
//
// Lateness must cover the longest transaction plus the producer's delay
// (commit to arrival, including batching, retries and partition skew)
// plus 2Δ: a transaction that started at s arrives by s + its length +
// delay, and by then the same partition may have delivered starts up to
// that instant on another client's clock, up to 2Δ ahead. A transaction
// longer than that is dead-lettered (docs/SEMANTICS.md §5). Skew Δ and InDoubt D
// must be the values the checker uses (history.Options), since they decide
// time-closing; run should use a finite D (docs/SEMANTICS.md §5: an unknown
// transaction with e=+∞ never closes and pins its neighbours). IdleTimeout
// trades waiting against dead letters: a partition idle for longer than it
// that comes back with transactions below W loses them as late.
//
// # Complexity
//
// B is the number of buffered transactions, O the number released and not
// yet closed, P the number of partitions.
//
//   - Add: O(log B) for the release heap, O(1) expected for the ID set
//     (amortized over its rebuilds), O(log P) for the tournament tree of
//     partition watermarks, plus O(log P) per partition that turns idle.
//     The first accepted transaction costs O(P) once (every partition's
//     idle clock starts then). A cached minimum with a rescan when its
//     holder moves would not do: with partitions delivering in turn, the
//     next to deliver is the one furthest behind, the holder, every time.
//   - Release: O(log B + log O) per transaction returned.
//   - PopClosed: O(log O) per closing returned, O(1) when none.
//   - MarkIdle: O(log P). TimeClosed, Watermark, NextClosing: O(1).
//     Stats: O(P).
//
// Measured (BenchmarkSteady, Add+Release+PopClosed per transaction with 32
// partitions and about 1,000 buffered, on a shared 2-core VM under load),
// when the ID set remembered every ID (1-3 million of them): 620-780 ns of
// CPU per transaction, about 400 ns of it the ID set (one cache and TLB
// miss per insert into a table of tens of MB); without the duplicate check
// 290-300 ns. The set now holds only the IDs within the lateness of W, a
// table that stays in cache.
//
// # Memory
//
// Buffered transactions (whole bodies, B of them, plus 40 bytes each in
// the release heap), the closing heap (48 bytes per open transaction:
// effEnd, start, end, the ID's header and the release number), the
// partition table and tree (O(P)), and the ID set: 8-byte slots at a load
// of at most 3/4 plus the ID's bytes, its length and its start, for the
// IDs whose start is within the lateness of W (and those forgotten since
// the last rebuild, at most as many again). It holds no pointers (the GC
// does not scan it) and does not grow with the stream.
//
// # Use
//
// The engine's loop, per batch of decoded events:
//
//	for _, e := range batch {
//		if d := w.Add(e.Partition, e.Txn); d != nil {
//			record(d) // metrics, dead-letter sink, unchecked writes
//		}
//	}
//	released = w.Release(released[:0]) // to the checker, in this order
//	closed = w.PopClosed(closed[:0])    // R1 holds for these
//
// and at end of input Close, Release, PopClosed once more.
//
// # References
//
//   - docs/SEMANTICS.md §5 "Watermark on start time" (history G, whose test is
//     TestHistoryG and testdata/history_g), R1, "Dead letters", and the
//     end-of-input rule; §2 for effective ends.
//   - docs/SEMANTICS.md §5.
//   - A low watermark per input and their minimum, as in MillWheel
//     (Akidau et al., VLDB 2013), here over client start times, so that
//     "nothing earlier will arrive" speaks of the time real-time order
//     needs (docs/SEMANTICS.md §5).
package window
