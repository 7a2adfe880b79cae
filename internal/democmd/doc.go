// Package democmd is `streamcheck demo`: the whole online product with
// nothing installed. A simulated store (internal/gen's generator, paced in
// wall-clock time) loses an update now and then; its transactions go as
// native events through an in-process Kafka-protocol broker (kfake) into
// `streamcheck run` (internal/runcmd, --source kafka) in the same
// process; alerts print to the terminal, and with --http run's status
// page serves on loopback.
//
// Data flow:
//
//	gen.GenerateStream ─▶ pacer ─▶ kafka-go writer ─▶ kfake (127.0.0.1, topic "txns", P partitions)
//	 (timestamps from now,  │                                    │
//	  each event sent at    └▶ --record FILE                     ▼
//	  its end)                          runcmd.Main --source kafka ... ─▶ status page (--http)
//	                                             │ alert JSON lines
//	                                             ▼
//	                        alertTap ─▶ stdout (JSON), one readable line per alert on stderr
//
// # Invariants
//
//	D1 Every event is sent once the wall clock has passed its end, as a
//	   client would log it; events leave in end order, so a partition's
//	   starts are late by at most the longest transaction, which the
//	   lateness given to run covers (Lateness).
//	D2 A session's events go to one partition (base session c<i> to i mod
//	   P, every partition busy; injected sessions by hash), in order, so
//	   session order holds within the partition.
//	D3 Injected anomalies are gen's lost updates on fresh keys and
//	   sessions named inj<k>.<j> (gen invariants G5, G6): an alert whose
//	   core is not exactly one injection's transactions is a false alarm,
//	   and the demo exits 1 on it.
//	D4 After a stop the store runs Tail more without starting a new
//	   injection (those it would start are dropped whole, which leaves the
//	   store's own history, gen G5), so the watermark passes every injected
//	   anomaly and the checker alerts each one before it is stopped.
//
// # Timing
//
// The store runs Sessions clients with Concurrency overlapping
// transactions on average; gen's overlap model (its G4) gives the mean
// transaction duration for the requested --rate, so that the sessions
// together start --rate transactions per second. An injected lost update
// is alerted once its transactions are time-closed: about the lateness
// plus one tick after it ended (2 s at the defaults).
//
// # Cost
//
// The checker evicts time-closed, settled transactions, as run does by
// default (--evict=false hands run the engine that re-checks the released
// history at each tick, whose cost grows with the run: with run's default
// tick (100 ms) it fell behind 50 txn/s within a minute on a shared 2-core
// machine). Tick = 1 s, the canary's, and the default --rate 50 keep an
// alert about 2 s after its injection.
//
// Stopping (--duration, or an interrupt) runs the tail (D4), stops the
// store, gives the checker DrainWait to read what was produced (up to
// MaxDrain while an injection is still unalerted), then stops it
// (runcmd's interrupt path): the store's last transactions never close,
// but none of them is part of an injection. The summary counts
// injections, alerts and the mean time from one to the other.
//
// # Broker only
//
// --broker-only ADDR runs none of the above: it serves the in-process
// broker alone on a loopback address (it has no authentication), with
// topic auto-creation, until interrupted, so that a user can produce
// their own events with kcat -P and try run --source kafka against it.
// Topics get one partition unless --partitions is given: kcat spreads
// unkeyed messages over partitions at random.
package democmd
