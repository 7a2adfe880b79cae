// Package weakonline is the online engine of the weak levels
// (read-committed, read-atomic, causal): what `streamcheck run --level
// read-committed|read-atomic|causal` and the canary at those levels step
// through driver.Engine, on the same window and tick protocol as the
// serializable engine (package online).
//
// # What it checks
//
// The promised level with one real-time rule added, the rule that lets a
// window close a read (docs/SEMANTICS.md §5 "The window at the weak
// levels"): a transaction that began after a reader ended (client
// intervals widened by Δ, history.Options.Precedes) is never a possible
// source of its reads. None of the three levels orders transactions by
// real time, so without the rule a read no released writer explains could
// be explained by one that starts tomorrow, and no read would ever be
// final. Every other fact is the level's own (incremental.CheckWeakOnline,
// the offline back end with that rule). An alert whose core does not
// violate the promised level without the rule says NeedsRealtime: it
// proves a read from a transaction that had not begun, not a violation of
// the promise on its own.
//
// # Invariants
//
//	W1 A read of a transaction that is not yet time-closed never supports
//	   an alert: the instance checked at a step (the alert instance A_t)
//	   holds the released transactions with the external reads of the open
//	   ones dropped. A closed reader's possible writers are all released
//	   (a later transaction starts at or after the watermark, so after the
//	   reader ended: window invariant), so its reads are kept or dropped by
//	   the projection exactly as on the whole stream.
//	W2 No alert is retracted: a later instance has every constraint of an
//	   earlier one (new transactions add session, read-from and forced
//	   edges and candidates only to reads that were open), and each of the
//	   three levels is monotone in its constraints. So A_t violating
//	   implies the whole stream violates.
//	W3 The first verdict equals offline: at end of input every transaction
//	   is closed and the instance is the stream (minus quarantined cores),
//	   checked by the offline back end under the same rule.
//	W4 An alert is raised only when every member of its core is closed;
//	   then the core's projection on the released transactions is its
//	   projection on the whole stream (W1), so the core re-checks on its
//	   own and is subset-minimal there, as incremental's shrink left it. A
//	   core with an open member is raised later, when it has closed (at end
//	   of input at the latest): never lost, never shown half-proven.
//	W5 After an alert its core is quarantined (§5 "Quarantine"): its
//	   members leave the instance, their writes stay known, so a read they
//	   could explain is dropped, never called an anomaly. Dead-lettered
//	   writers (AddUnchecked) are held the same way from the start.
//	W6 Alert ids are incremental.AlertID of the core's content, class and
//	   stream: a replay, a restart from a snapshot, or another source with
//	   the same events gives the same ids (§8).
//	W7 No IO, no clock, no goroutine: the engine is a pure state machine,
//	   and Snapshot/Restore round-trip everything that decides a later
//	   step.
//
//	R1 Retirement (retire.go) runs at read committed only (under an
//	   unknown initial state as R7 says), after a step that found the
//	   instance satisfiable with no core waiting, when the transactions
//	   held have doubled since the last pass.
//	R2 A settled transaction (closed, committed or aborted, internally
//	   consistent, every candidate of its reads settled: the greatest
//	   such set) stays settled, and no edge of any later instance enters
//	   it from an unsettled one; its reads leave the instance and the
//	   fast path, constraining nothing more.
//	R3 A settled committed transaction with no intermediate write is
//	   retired: its (key, value) pairs enter the summary, and a later
//	   read of one leaves the instance (a source nothing rules out). A
//	   retired transaction is in no minimal core, so alerts and their
//	   ids are the keeping engine's (Config.NoRetire, which the tests
//	   compare with).
//	R4 A writer waits while an unsettled reader of one of its values
//	   ended 2Δ before it began (the summary keeps no times); readers
//	   released later begin after it.
//	R5 Snapshot/Restore round-trip the summary and the settled flags.
//	R6 A settled aborted transaction, or committed one with an
//	   intermediate write, retires with its body encoded in the summary
//	   and its aborted or intermediate values marked dirty; a kept read
//	   of a dirty value brings the body into the instance (settled), and
//	   a core naming it back into the engine, so a late G1a or G1b has the
//	   keeping engine's core and id. Its name stays taken.
//	R7 Under an unknown initial state a pass runs only with the fast
//	   path on and untroubled, its graph the witness the pass reads the
//	   initial state's uses from (fast.initReads). A member with a read
//	   taken from the initial state that another transaction wrote the
//	   value of is unsettled; one whose such reads nothing else wrote
//	   (forced: every later witness takes them from the initial state)
//	   counts as settled for its readers but stays held, its reads in
//	   the instance, a pin of its keys' initial values
//	   (docs/SEMANTICS.md §5 "Retirement under an unknown initial
//	   state").
//	R8 A member with a list op (an append or a list read; fList, set
//	   when it is added) is held, aborted ones too, and counts as a
//	   seed of unsettledness like an open one: what it wrote, its
//	   register writes included, unsettles every reader of it. The
//	   members without one retire as R1-R7 say, before and after the
//	   first list op; with a body file the held list members' ops go
//	   to it once closed (B1) and come back whole (Engine.txn) for a
//	   pass that must parse them (docs/SEMANTICS.md §5 "Retirement
//	   beside list keys").
//	R9 A pass drops the retired nodes from the fast path in place
//	   (compact.go) at read committed when the graph is untroubled and
//	   holds no list op: the held nodes, their edges between them and
//	   their order stay; a read whose source retired is out of the
//	   instance (R3) and loses its edge. Otherwise the pass rebuilds
//	   (docs/SEMANTICS.md §5 "The fast path compacted in place at a
//	   pass").
//
//	R10 At causal a pass (weak29_causal.go) retires from the fast
//	   path's graph the nodes committed, closed, settled, released and
//	   overwritten at least a margin ago, whose in-neighbours are
//	   retired and closed readers settled: their edges, reads, sources
//	   and unread clocks leave the heap, their content and write
//	   entries stay. No edge enters the retired set (an edge into it,
//	   or a read choosing it, is trouble, F2), so the graph without it
//	   has the whole graph's cycles (docs/SEMANTICS.md §5 "The causal
//	   graph lets its settled past go").
//
//	F1 The fast path (fast.go) keeps the graph of the alert instance under
//	   one choice of sources, with at least every constraint of the
//	   instance (session, read-from, forced; causal pasts exact for the
//	   instance as ancestors close), acyclic by a dynamic topological
//	   order. While it is acyclic and untroubled a step runs no check.
//	   At a reader's close a read of a repeated value whose pick would
//	   close a cycle takes another possible writer if one closes none
//	   (docs/SEMANTICS.md §5 "Repeated values: the next writer at a
//	   close"): a choice, never a constraint less.
//	F2 Whatever it cannot vouch for is trouble, and the step runs the
//	   exact check (incremental.CheckWeakOnline on the instance), which
//	   alone raises alerts: the fast path changes which steps check, never
//	   the alerts.
//	F3 When the exact check finds a troubled instance valid, the choice
//	   was wrong: the fast path is rebuilt with its choices guided by the
//	   check's witness, and given up (every step checks) only if that one
//	   is in trouble too.
//	F4 After an alert the fast path is rebuilt without the core; a
//	   restored engine rebuilds it from its transactions.
//	F5 A list read takes one parse (each run of elements all of one
//	   candidate appender's appends to the key; under an unknown
//	   initial state after an initial list, one per key), and per list
//	   key the longest version shown so far orders its appenders, its
//	   last before every other appender of the key, so a topological
//	   order is a version order every read shows a prefix of
//	   (docs/SEMANTICS.md §5 "Lists in the fast path"). A read with no
//	   such parse, or whose version neither extends nor is a prefix of
//	   the longest, is trouble (F2).
//
// # Complexity
//
// The fast path costs, per transaction, its reads and writes (each op's
// key hashed once, when it is parsed, to a number (keys.go); the maps
// after that are keyed by two integers, and a key's integer values find
// their writer in a slice, fast.dense), an edge insertion each (Pearce-Kelly: the affected region of
// the order), and at causal O(k) per read for k sessions that wrote its
// key (none for a read whose source's past was found to hold every
// writer of the key, while the key has no later write: docs/SEMANTICS.md
// §5 "A read whose source's past holds every writer of its key"), plus
// the clock updates when an ancestor closes. A step it cannot
// vouch for costs the offline weak check on the whole instance (O(n^1.5)
// at read atomic, O(n·k) at causal, linear at read committed).
//
// Memory (under an unknown initial state too, R7, with the pins held
// besides): at read committed a retirement pass costs the transactions
// held (hash maps of their reads and writes) and runs when they have
// doubled, so O(1) per transaction amortized; what stays is the open and
// unsettled transactions, the settled ones waiting under R4, and the
// summary: one entry per key and per run of consecutive integer values
// (plus one per other value), and the encoded bodies of retired aborted
// and intermediate writers (growing with their number only); and every
// member with a list op and the readers of its register writes (R8: the
// graph of each, its body in the body file where there is one). At read
// atomic and causal every released transaction is kept, with its node,
// its edges and at causal its clock of one int32 per session
// (docs/SEMANTICS.md §5 "Retirement at read atomic and causal": a read
// arbitrarily late can make any committed writer a member of every core
// of a violation, so its content must stay somewhere; §5 "Retirement
// under the real-time read rule": the rule run adds does not change
// that). With Config.Bodies a closed member's ops go to that body file
// (bodies.go, B1 below), so what grows on the heap is the graph, not the
// bodies.
//
//	B1 At read atomic and causal (nothing retires there), and at read
//	   committed for a member with a list op (held, R8), with the fast
//	   path on, a closed member's ops leave the heap for Config.Bodies
//	   once the fast path has parsed them; every reader of ops (the
//	   instance, an alert, a rebuild, a snapshot) reads them back
//	   whole (Engine.txn), so no alert, core or id changes. A failed
//	   write loses nothing and stops the spilling (SpillError).
package weakonline
