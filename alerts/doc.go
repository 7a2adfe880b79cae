// Package alerts owns everything between a proven anomaly and the people
// who must hear of it, and the checker's own observability: the sinks
// (JSON lines, Alertmanager, a signed webhook, Kafka), the Dispatcher that
// delivers to all of them with retries and a durable Outbox, and the
// Prometheus Metrics of the whole checker.
//
// # Model
//
// The payload is verdict.Alert, the anomaly schema of `check --format json`
// plus the alert's id, level and timing; MarshalAlert is its one JSON
// encoding, sent by every sink and kept in the outbox. The run loop calls
// Dispatcher.Enqueue(alert, proven) for each alert and sets the checking
// metrics; everything else happens here.
//
// # Invariants
//
//	A1 Enqueue never waits for a sink: each sink has its own queue and
//	   goroutine; the only synchronous work is the outbox Put.
//	A2 An alert is in the outbox before any sink sees it, and leaves it only
//	   once every sink it was meant for has accepted it (Done per sink).
//	   Start re-delivers what is left, so a crash loses no alert.
//	A3 Delivery is at least once per sink, in Enqueue order per sink; no
//	   sink deduplicates: the alert id (a label in Alertmanager, the key in
//	   Kafka, IDHeader on a webhook) is what lets a destination merge
//	   repeats.
//	A4 Retries back off exponentially from MinBackoff to MaxBackoff with
//	   jitter and stop as soon as the dispatcher's context is done; every
//	   failed attempt counts in streamcheck_sink_delivery_errors_total and
//	   is logged on the injected logger.
//	A5 Metrics are registered only on the Registerer given to NewMetrics,
//	   never on the global registry.
//
// # Wiring
//
// The run loop creates one prometheus.Registry, NewMetrics(reg), the sinks
// its configuration names, and NewDispatcher over the state directory's
// outbox (MemOutbox without one); Start re-delivers what a previous run
// left, and each alert goes to Enqueue(alert, proven) with the wall-clock
// time the watermark passed the core's last transaction. Enqueue counts
// streamcheck_anomalies_total itself. The status page
// (internal/statuspage) serves reg on /metrics and is itself a Sink.
// Subpackages: outboxtest is the conformance suite every Outbox runs;
// alertstest starts the real peers (Alertmanager, Prometheus, Chromium)
// for tests.
//
// # Concurrency
//
// Enqueue, Flush and Pending are safe from any goroutine; a sink's Deliver
// runs on that sink's goroutine only. Close waits for the goroutines.
//
// # Complexity
//
// Enqueue is O(sinks) plus one outbox Put; memory is one queued alert per
// sink and undelivered alert, bounded by QueueLimit per remote sink (a
// Local sink, stdout or a file, holds what it has not written yet).
package alerts
