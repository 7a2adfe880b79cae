// Package sionline is the online engine of the snapshot-isolation family
// (snapshot-isolation, strong-session-snapshot-isolation,
// generalized-snapshot-isolation, strong-snapshot-isolation): what
// `streamcheck run --level ...`, the canary and the demo at those levels
// step through driver.Engine, on the same window and tick protocol as the
// serializable engine (package online) and the weak levels' (weakonline).
//
// # What it checks
//
// The level of the family that orders by real time and implies the
// promise (Checked): generalized and strong SI themselves; strong SI for
// Adya SI and strong session SI, which order nothing by real time
// (docs/SEMANTICS.md §5 "The window at the snapshot levels"). Real time
// is what closes a read: under GSI a writer w that began after a reader r
// ended commits after r (C_r -> C_w), under strong SI after r's snapshot
// too (C_r -> B_w), and r's snapshot B_r precedes C_r, so w cannot be what
// r saw. Without real time (Adya SI) a transaction that begins tomorrow
// may be the source of a read made today, no read is ever final, and a
// read no released writer explains is no proof. The encoding, the search,
// the core shrink and the explanations are incremental's (encode_si.go,
// explain_si.go: Viper's begin and commit nodes), exactly what `check`
// runs at the checked level.
//
// # Invariants
//
//	S1 The checked level is Checked(promised), fixed for the life of a
//	   state directory (a snapshot records the promise), printed at start
//	   and carried by every alert (online.Alert's Level and Promised).
//	S2 A read of a transaction that is not yet time-closed never supports
//	   an alert: the instance checked at a step (A_t) holds the released
//	   transactions with the external reads of the open ones dropped. A
//	   closed reader's possible writers at the checked level are all
//	   released (a later transaction starts at or after the watermark, so
//	   after the reader ended; S1's real time then rules it out as a
//	   source), so its reads are kept or dropped by the projection exactly
//	   as on the whole stream.
//	S3 No alert is retracted: a later instance has every constraint of an
//	   earlier one (new transactions add begin and commit nodes, real-time
//	   and session edges to later nodes, writer pairs, and sources only to
//	   reads that were open), and unsatisfiability of a BC-polygraph is
//	   monotone in its constraints. So A_t violating implies the whole
//	   stream violates, and the first verdict equals check's at the checked
//	   level: at end of input every transaction is closed and A_t is the
//	   stream minus the quarantined cores.
//	S4 An alert is raised only when every member of its core is closed;
//	   then the core's projection on the released transactions is its
//	   projection on the whole stream (S2), so the core re-checks on its
//	   own and is subset-minimal there, as incremental's shrink left it. A
//	   core with an open member is raised later, when it has closed (at end
//	   of input at the latest): never lost, never shown half-proven.
//	S5 After an alert its core is quarantined (§5 "Quarantine"): its
//	   members leave the instance, their writes stay known, so a read they
//	   could explain is dropped, never called an anomaly. Dead-lettered
//	   writers (AddUnchecked) are held the same way from the start, a
//	   wildcard write dropping every read of its key (or of every key).
//	   A screen leaves out an unchecked writer that shares no key with
//	   its members and the ghost's companions (screenOut, §5 "An
//	   unchecked writer no member can meet leaves the screen"); A_t
//	   holds them all.
//	S6 When the checked level is stronger than the promise, an alert
//	   whose core does not violate the promise on the stream released when
//	   it fired (the core projected there at the promise, every read no
//	   other member can have written dropped) says NeedsRealtime: it
//	   proves a real-time violation, not a broken promise. One without it
//	   violates the promise on that prefix; a transaction still to come
//	   that writes a value a member read could, the promise having no
//	   real time, be that read's source (docs/SEMANTICS.md §5 "The window
//	   at the snapshot levels", S6): the same caveat as a serializable
//	   alert without needs_realtime.
//	S7 Alert ids are incremental.AlertID of the core's content, class and
//	   stream (§8); no IO, no clock, no goroutine; Snapshot/Restore
//	   round-trip everything that decides a later step.
//
// # The window (evict.go)
//
// At strong SI (checked for Adya SI and strong session SI too) a step
// first checks the screen: the held members, one ghost transaction that
// holds what evicted ones left (each key's last version, under an unknown
// initial state the initial values their reads fixed), and the reads of
// in-doubt members whose client interval has closed. The screen is never
// weaker than A_t, so a valid screen proves the step valid, and the step
// evicts the longest sealed prefix X (its reads in the screen, ended
// before every member whose reads are not, and first in a completion of
// the screen: the witness, reordered, every prefix judged at once by
// sealedPrefixes) into the archive, in chunks, each with the ghost the
// witness replayed over it gives (docs/SEMANTICS.md §5 "One witness,
// several evictions"). A screen that is not valid brings back the
// newest archive segments, then the whole archive (reset: the screen
// on every body, then the full A_t, decides as S1-S7 say): alerts
// never come from the ghost.
//
//	W1 the screen with any future satisfiable implies A_t with it
//	   satisfiable (docs/SEMANTICS.md §5 "Eviction at strong snapshot
//	   isolation");
//	W2 the archive holds every evicted body with its name, flags and
//	   release number, and the closings that came after; a reset
//	   restores e.txs exactly (release order), and re-admitting
//	   segments j.. restores them with segment j's ghost;
//	W3 the ghost precedes every member in real time.
//
// An in-doubt member that the witness left uncommitted, and that could
// equally have committed at some point of the witness, leaves as a
// companion of the ghost (companion.go, docs/SEMANTICS.md §5 "An
// in-doubt writer leaves undecided: the ghost's companions"): an
// unknown-outcome transaction of later screens, after the ghost and
// before every member, that writes its versions; a later read of them
// commits it instead of failing the screen. A later member's blind
// overwrite of one of its register versions (no member of the chunk
// reading the key before it) leaves it with its other versions (§5 "A
// companion outlives the overwrites of its versions"). Under an
// unknown initial state a candidate's reads of initial values read the
// ghost's pins or fix ones that join them (§5 "Companions under an
// unknown initial state").
//
// The screen's verdict comes first from a serial order that a greedy
// sweep over client time builds, each read checked as it goes
// (serial.go, docs/SEMANTICS.md §5 "A serial witness for the screen"): a
// witness by construction, with the ghost's versions looked up in the
// ghost; where no serial step fits, a transaction may begin at an
// earlier commit and commit now (§5 "Begin and commit apart: a begin in
// the past"); only a screen it cannot order goes to incremental's
// search. Before an eviction, two appenders of a list that the witness
// runs against their values, and that no read of the screen ordered,
// are swapped when the result is still a completion
// (si28e_listorder.go, §5 "Two appenders no read has ordered").
//
// # Complexity and what is left
//
// A step costs the screen (the window and the ghost's entries on the
// window's keys) when it passes; when it does not, the newest archive
// segments come back one at a time (archive.go, docs/SEMANTICS.md §5
// "Re-admitting a suffix of the archive": the screen with segment j's
// ghost and segments j.. is one the eviction argument covers), up to
// half the archive, and then the whole released stream (anomalies,
// deferred cores, a contradicted witness choice older than half the
// archive). A read of the screen whose value only an archived writer
// wrote (a contradicted choice) names that writer's segment, which
// comes back before the search, asked only when the serial sweep cannot
// order the screen (diagnose.go, §5 "Re-admitting the segment a read
// names", "A read names its segment after the sweep"; an index of the
// newest archived writers' versions, bounded, not in snapshots:
// precision only). A valid screen after a
// reset evicts at once in chunks, so the archive never comes back as one
// segment. A segment's ghost is not written whole: while the segment is
// the last one a journal keeps each changed key's entry from before it,
// written as an undo record when the next one opens, and a re-admission
// undoes from the ghost in memory (undo.go, docs/SEMANTICS.md §5 "The
// ghost costs what changes, not the stream"), so neither costs the
// ghost's size. The archive is in the body file (on disk in `run`; Punch frees
// what a reset left dead in a durable one); memory holds the window, the
// ghost (each written key's last version: it grows with the keys) and
// O(log n) segments. GSI keeps everything (E3); MemoryNote says so at
// start.
package sionline
