// Package online is the online engine: it checks a stream of
// transactions that the window (window/) releases in start order, and
// raises an alert the moment an anomaly is proven (docs/SEMANTICS.md §5).
// It owns the window's reduced instance (evictState), the eviction rules,
// the alert steps, rewind points, retention and the engine's snapshot.
// The encoding and search it judges each step with are package
// incremental's (incremental.Prepare, NewEncoder, Describe, the core
// finder), shared with the offline checker; the event-time stepping that
// decides when to call Step is driver/'s, the one way in for run, canary
// and demo. The package does no IO (internal/lint TestForbiddenImports):
// the body file that holds evicted bodies is state/'s, behind the Bodies
// interface the engine receives.
//
// # Invariants
//
// O1-O5 (online.go, Online) are what the engine keeps of the offline
// checker: strict serializability with session order, no alert on a read
// of an open transaction, first verdict equal to check, quarantine by the
// projection rule, alerts re-shrunk once their members close.
//
// # Eviction rules, one function each (evict_rules.go)
//
// A step judges the reduced instance R_t (build, evict.go): window
// members, ghosts, kept orders, commit decisions and fixed initial
// values. evict then lets a member leave only when every rule holds:
//
//   - R1 (r1Candidates) it is time-closed and no pending alert's core
//     holds it. Argument: a transaction that is not time-closed may still
//     gain a writer for one of its reads (a late overlapping writer), so
//     nothing about it is final.
//   - R3 (r3Neighbours) every neighbour is time-closed: every transaction
//     with an edge to or from it, and every open one sharing a key that
//     does not follow it by session or real time. Argument: an open
//     neighbour's dropped reads are constraints to come; a transaction
//     that follows by the level's order can only see the live version,
//     which stays.
//   - R4 (r4Earlier, r4LiveVersion) per key, writers leave in version
//     order: it follows the key's live version and every other member
//     writer is decided against it (after it, or before it: an earlier
//     writer that stays is overtaken, keeping its body), and the reads of
//     the version it overwrites are decided. Argument: the live version
//     is all a future read can see, so one writer per key (the ghost)
//     stands for all evicted ones; an overtaken writer is still in the
//     instance ("Overtaking" in docs/SEMANTICS.md §5). R4 and the list
//     rule read a key's writers through writersLeft (r4_writers.go),
//     which drops, once, the writers every scan skips for the rest of
//     the step; R5 finds the unknowns before a removal by index
//     (burst_unknowns.go). Both yield what the scans acted on.
//   - R2 (r2Decided) every constraint that mentions it is decided in the
//     relaxed instance: an edge literal, read choice, writer pair or
//     commit guard fixed at level 0 or by a backbone probe. Argument: the
//     instance drops the reads of open transactions, so it has every
//     completion of window + future among its own (a future writer only
//     adds a source to an open read); what holds in all of them holds in
//     the whole history and its future.
//   - R5 (r5Remove) reachability among the rest is kept: an order
//     p -> t -> s becomes a kept edge p -> s (real-time pairs excepted,
//     being orders of the level already). Nothing passes through a
//     transaction that does not commit (incremental I1).
//   - G1-G5 (evict_guarded.go): an unknown whose commit nothing will
//     decide pins nothing for good. Its read with one candidate holds
//     exactly when it commits, and is replaced as a decided one; the
//     orders kept out of it are edges on its commit (incremental
//     keptGuard); an edge on its commit alone counts as decided for R2
//     and R5 keeps orders through it; an overtaken one not ordered with
//     the live version leaves that version a stale ghost; and an
//     undecided read of the initial version leaves it a candidate, the
//     first ghost after it keeping its key (docs/SEMANTICS.md §5 "Reads
//     guarded by their reader's commit").
//
// Then t becomes the live version of the keys it wrote last
// (becomeGhost) or leaves entirely; under an unknown initial state its
// reads of the initial version fix the key's initial value (fixInitial).
// keepFacts keeps every order and commit decision fixed among the
// remaining members: facts outlive the transactions they came from
// (recomputing them from a smaller window misses anomalies, M1 and M2 of
// docs/SEMANTICS.md §5).
//
// List keys (evict_list.go, L1-L3): a time-closed appender's appends fold
// into the key's committed prefix once their order against the prefix and
// every other appender is decided and every read of the key is decided;
// one transaction (the holder: a member, or a ghost once it leaves)
// appends the whole prefix in the instance. Argument: every later read
// follows the folded appenders in real time and must show the prefix, in
// order, first (docs/SEMANTICS.md §5 "Lists: the committed prefix as a
// ghost"). Under an unknown initial state the same holds with the initial
// list I before the prefix; a read that leaves keeps the I it names as a
// fact, which the initial node reads (evict_list_init.go, IL1-IL3).
//
// The irrelevance rule (fixIrrelevant, evict.go) fixes writer orders and
// read sources (the initial version against a first writer, duplicate
// values) that no completion needs,
// by an exchange argument written at the function and in §5 "Pinning and
// the irrelevance rule". The cap (capPinned, --max-pinned) sets the
// oldest pinned transactions aside like a quarantined core, and says the
// check is inexact.
//
// build finds the ghosts of R_t from the window's side (ghost_index.go,
// GX1-GX3): an index from key to the ghosts holding it (several under
// R4's overtaking), the ghosts by start for keptCover's ranges, and the
// window list apart from the ghosts; a step costs the window, not the
// keys ever written. The index is derived from GhostKeys, kept at each
// change of it, and held to a rebuild after every step under
// SetSelfCheck (docs/SEMANTICS.md §5 "Build by touched keys"). It then
// leaves out the ghosts that only precede the instance (evict_bypass.go,
// B1-B4: no op reads their keys, their writers and session predecessors
// ordered by real time), whose absence changes no completion (§5 "Ghosts
// that only precede"), and hands the last step's encoder to the new one,
// which takes over its arrays and its solver's (§5 "A step's arrays
// recycled").
//
// "Is this order decided" (prober.forced) asks the step's compact closure
// (closure/, evict_closure.go) before it spends a solver probe; the
// closure is built from the step's instance at its first question, so a
// step that asks none pays nothing for it (§5 "The closure built at a
// step's first question").
//
// # Alert steps (online.go)
//
// A violation of R_t is only a trigger. Step confirms it on the released
// bodies (localAlertHistory, whose possible writers come from the write
// index in the body file, writeidx.go W1-W3; then every body:
// alertHistory), finds every
// core of the step on one guarded encoding and shrinks each on its failed
// set (batchCores, alert_batch.go), names each (alertID: its members'
// content, class and stream; incremental alertid.go A1-A3), quarantines
// them (quarantine) and either leaves the instance in place, healed by
// the skipped replay if a later violation is not confirmed
// (alert_inplace.go), or rebuilds it from a rewind point (replay,
// rewind.go). An alert raised with an open
// member is shrunk again once all its members close (reshrink, O5). A
// wrong kept fact can so cost a missed anomaly, never a false alarm; a
// disagreement between R_t and the bodies is counted and heals by
// rebuilding.
//
// # Memory per transaction that left the window
//
// A body that left the instance is in the body file; the log drops a
// chunk once it is all spilled or sparse (txnlog.go), the engine keeps
// the pending and the newest alerts (alert_kept.go), and the taint index
// holds the newest quarantined writers only, taking the others back from
// the write index when the bodies disagree with the instance
// (storm_taint.go); docs/SEMANTICS.md §5 "Sparse log chunks", "The
// alerts an engine keeps", "The taint index as a cache".
//
// # Concurrency
//
// An Online is used by one goroutine at a time (the driver's caller).
package online
