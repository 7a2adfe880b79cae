// Package driver steps the online engine in event time: the deterministic
// tick protocol of `streamcheck run`, as a state machine that does no IO.
//
// It is shaped like etcd raft's RawNode (rawnode.go): the caller feeds it
// inputs (Accept for a decoded transaction with its partition and offset,
// SetAside for what was recovered of a dead-lettered event, RaiseIdle when
// its own clock says a quiet source should be released, EndInput at the
// end of the input), then drains it (HasReady, Ready: one engine step and
// its alerts each), and persists State with the window's and the engine's
// snapshots when it wants a checkpoint. The caller owns the sources, the
// sinks, the clock, the metrics and the disk; the driver owns the window
// (window.Window), the engine (an Engine: online.Online, or
// weakonline.Engine at the weak levels) and the state between ticks. It starts no goroutine, reads no clock, and imports neither os,
// net nor syscall (forbidden_imports_test.go in the repository root holds
// the line).
//
// # Invariants
//
// D1, the step schedule. The engine steps only when the watermark W
// crosses a tick, a multiple of Config.Tick in event time. At tick t <= W
// it is given, in this order, and then steps once:
//
//  1. the unchecked writers (dead-lettered events that write) whose key is
//     below t, the key being the partition's greatest accepted start minus
//     the lateness when the event arrived, in (key, partition, offset)
//     order;
//  2. the transactions the window released with start < t, in release
//     (start) order;
//  3. the closings with effEnd+2Δ < t, in closing order.
//
// Each set is final once W >= t: every later transaction starts at or
// after W (the window's invariant), so none joins set 2; a later closing
// has effEnd+Δ >= W-Δ, so none joins set 3; a partition's greatest start
// only grows, so a later dead letter's key is at least what the partition
// had reached, and a partition that held W at or above t had a greatest
// start of at least t+lateness: none joins set 1. Hence the engine's
// calls, and so the alert ids, do not depend on how the partitions
// interleave, on fetch sizes, on when the caller calls Ready, or on
// restarts.
//
// D2, what a checkpoint holds. State (the released transactions, closings
// and unchecked writers not yet given, each partition's greatest accepted
// start, the last tick stepped, the key kinds), the window's snapshot and
// the engine's, all taken between two Readys, with the source offsets
// that cover exactly the events accepted or set aside so far. A driver
// rebuilt by New from the three continues at the same ticks with the same
// sets (D1), so a restart gives the alerts an uninterrupted run gives. A
// checkpoint is never taken in the middle of a step: Ready runs one step
// whole, whatever its context says.
//
// D3, determinism. Given the same Config and the same sequence of calls
// per partition (in any interleaving of the partitions, for the events
// the window accepts), the driver makes the same engine calls. Wall time
// enters only through the caller's decision to call RaiseIdle.
//
// D4, the end of input. EndInput raises W to +∞ but the drain steps only
// the ticks up to EndTick, the tick above the greatest start accepted:
// the ticks RaiseIdle would step, so a run that idled and then ended
// steps as one that ended at once. Every transaction is released by then
// (its start is below EndTick), and what is left are closings: committed
// transactions' a little later, an unknown outcome's up to its in-doubt
// horizon later. Final gives them all, closes every transaction and
// steps once (docs/SEMANTICS.md §5 "The end of input in one step"). No
// arrival can come between those ticks, so stepping each of them only
// re-judged the window once per tick of the horizon (600 steps for a one
// minute horizon at 100 ms), a cost that followed the stream's unknowns;
// one step judges the instance the last of them would have judged. The
// first verdict is check's either way (online.Online O3); EndTick is in
// State, so a checkpoint taken during the drain restores the schedule.
//
// D5, catch-up between ticks. An engine may have work of its own (a
// Catcher: run --stamps' engine after a fallback, replaying its call log
// into the black-box engine a bounded part at a time). HasReady is then
// true and a Ready with no tick due does one part (Catch) and makes no
// engine call of the schedule, so D1 to D3 hold: the calls the engine
// gets, and its alerts, are the same whatever the number of parts; only
// the step at which an alert is raised moves. An interrupt stops between
// parts, and the checkpoint holds how far the catch-up went. Final and
// Flush run the catch-up to its end: after them nothing would resume it.
//
// # Complexity
//
// Accept is the window's Add plus O(log n) for a set-aside writer's
// insertion among the n queued (and O(n) to shift them); HasReady is O(1);
// Ready is linear in what it hands over, plus the engine's step.
package driver
