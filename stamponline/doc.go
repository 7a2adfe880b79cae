// Package stamponline is the online engine for streams that carry the
// database's own commit and snapshot stamps (commit_ts, start_ts;
// docs/SEMANTICS.md §10 "Online with facts"): what `streamcheck run
// --stamps` steps through driver.Engine at the serializable levels and
// the snapshot-isolation family. It owns the stamps' fast path, the call
// log, the hand-over to the level's black-box engine (package online or
// sionline) and the "stamps inconsistent with reads" alert.
//
// # Model
//
// With every committed transaction stamped, the stamps give one witness
// (stampcheck's): at the serializable levels the committed transactions
// in commit_ts order, at the snapshot levels begins at start_ts and
// commits at commit_ts. Online that witness is replayed item by item in
// stamp order once no transaction still to come can sort before the item,
// with per key only its latest committed state: no search, no window of
// bodies. While the replay holds, the stream is valid at the checked
// level and consistent with its facts, and nothing is alerted. The first
// time it does not hold (a read the witness does not give, an order of
// the level the stamps invert, a committed transaction without stamps, a
// dead-lettered writer other than a late one with stamps), the stream is handed to the level's black-box
// engine with every call the driver has made, and from then on that
// engine decides, exactly as it would have without stamps.
//
// # Invariants
//
//	F1 The frontier. After the driver's closings of a tick, F is the
//	   greatest commit_ts of a time-closed committed transaction. A
//	   closed transaction ended (widened by Δ twice) before the tick,
//	   and every transaction given later starts at or after it (driver
//	   D1), so it precedes each of them in real time, which the checked
//	   levels (strict serializability; strong SI) order: if the stamps'
//	   witness holds on the whole stream, every later transaction has
//	   commit_ts >= F (start_ts > F at the snapshot levels), and on a tie
//	   it sorts after every released one (a larger start). So every item
//	   with stamp <= F is final in the witness and is replayed; the rest
//	   wait. At the end of the input everything is replayed.
//	F2 A later transaction whose stamp lies below F (at or below it for
//	   start_ts), or that the stamps put before an earlier member of its
//	   session, breaks the witness on the whole stream: it ends the fast
//	   path at its release, never reorders what was replayed.
//	F3 The replay is sound, not complete: each check it makes is one the
//	   stamps' witness must pass (read values, own writes, first
//	   committer wins, widened real time against the latest start placed,
//	   session order), some stricter than the level (a session whose
//	   members start at one instant, the zero-length corner of real time);
//	   a stricter check only costs a fallback.
//	F4 A late writer (a committed transaction the window set aside as
//	   late, whose stamps were decoded with it) is placed in the replay
//	   when the driver gives it as an unchecked writer, under F2's
//	   frontier check, and among the kept members of its session by its
//	   start; it is never closed, so it never moves the frontier. While
//	   the replay holds, its order is a completion in which each late
//	   writer committed with its own content, so the black-box engine,
//	   which alerts only what holds whatever a dead letter contained,
//	   alerts nothing (docs/SEMANTICS.md §10 "Late writers in the witness
//	   online").
//	E3 The fallback is the black-box engine given the same calls: the
//	   call log (an online.BodyFile, on disk in `run`) holds every
//	   Release, Close, CloseAll, AddUnchecked and Step in order, and is
//	   replayed into a new engine, stepped where the driver stepped. Its
//	   alerts are those it raises on the stream without stamps, so the
//	   isolation verdict online is the black-box one, as in check.
//	E4 "Stamps inconsistent with reads" is decided at the first step
//	   after the end of the input, when the stream fell back, the
//	   black-box engine raised no alert and could decide (the history is
//	   valid at the level: the only case in which check reports the
//	   class), and nothing was dead-lettered: stampcheck on the history the
//	   log holds, its set (subset-minimal, stampcheck S3) in one alert of
//	   type and class Inconsistent. Never an isolation alert.
//	E5 No IO, no clock, no goroutine (the log is the caller's file).
//	E6 The fallback's replay goes in parts (Pending, Catch; driver D5):
//	   each driver step gives the black-box engine at most
//	   Config.CatchSteps of the logged steps, with the calls between
//	   them, and the calls the driver makes meanwhile are only logged.
//	   The black-box engine thus gets exactly E3's calls in E3's order,
//	   so its alerts are E3's; only when they are raised differs. A
//	   step is bounded by CatchSteps of its steps, not by the stream so
//	   far, so an interrupt (SIGTERM) waits for that much. Catch stops
//	   only after a step or at the log's end, so the engine is between
//	   two steps at every checkpoint (C1 keeps its offset in the log).
//	C1 A checkpoint (SnapshotDurable, Restore; snapshot.go) holds
//	   everything the engine keeps between ticks but the call log,
//	   whose length it records: the log is synced before the snapshot
//	   is stored and cut back to that length on restore, so a restart
//	   gives the engine exactly the calls an uninterrupted run gives it
//	   from there (docs/SEMANTICS.md §10 "A checkpoint of the stamps'
//	   engine"). Once the stream fell back, the black-box engine's own
//	   snapshot is inside, with how far it has caught up (E6).
//
// # Complexity
//
// While the stamps vouch: per transaction O(ops) map lookups and one
// heap push and pop per item (O(log w), w the transactions released and
// not yet replayed), plus one log record (online.AppendBodyKeyed's
// encoding: each op's key a number, looked up once, at the release, and
// kept for the replay) written in 64 KiB blocks. Memory: the released transactions above the
// frontier, one state per key (its latest value, or a list key's list),
// per session up to 2*keepMembers committed members (F4), and the facts
// of late writers until the driver gives them. After a fallback: the black-box engine's.
//
// # What is left
//
// A fallback is for the rest of the stream: transactions without stamps
// do not fall back "for what they leave open" only. Generalized SI falls
// back from the start (it orders commits only, so no frontier holds for
// begins). PostgreSQL's xid and snapshot are not used online. The
// inconsistency class waits for the end of the input. A checkpoint stores
// the whole per-key state each time (its size grows with the keys, and
// with a list key's committed appends).
package stamponline
