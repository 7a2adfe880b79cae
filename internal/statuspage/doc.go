// Package statuspage owns the checker's one HTTP server: Prometheus
// metrics (/metrics, from an injected Gatherer), liveness (/healthz),
// readiness (/readyz: caught up within the lateness, as the run loop's
// Ready func says), the recent alerts as JSON (/api/anomalies) and, for
// people, a status page (/) and one page per anomaly (/anomalies/{id},
// where Alertmanager's generatorURL points).
//
// # Model
//
// The run loop implements StatusSource (one Status snapshot per call) and
// hands alerts to the Server, either by adding it to the alert dispatcher
// (it is an alerts.Sink named "statuspage") or by calling Add. The server
// keeps the last MaxAlerts alerts and a ring of TxnsChecked samples for
// the throughput chart; it holds no other state.
//
// # Invariants
//
//	S1 The pages work without JavaScript and load nothing from elsewhere:
//	   styles, the throughput chart and every anomaly's cycle (report.SVG)
//	   are inline.
//	S2 Every user string (ids, keys, values, explanations) reaches the page
//	   escaped: html/template for text, report.SVG's own escaping (its G2)
//	   for the drawings.
//	S3 The server listens on loopback (DefaultAddr) unless configured
//	   otherwise: the pages show transaction contents.
//	S4 Go's profiles (/debug/pprof/) are served only with Options.Pprof:
//	   a profile or trace request costs the checker CPU for as long as
//	   the caller asks, so reaching the port must not be enough.
//
// # Concurrency
//
// All handlers, Add, Deliver and Sample are safe for concurrent use;
// StatusSource.Status must be too.
package statuspage
