package alerts

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are every metric of the checker (issue #8), in one place so that
// names, units and labels stay consistent and deploy/prometheus/rules.yml
// can rely on them. The run loop sets the checking metrics through the
// exported collectors; the dispatcher sets the delivery ones itself.
//
// Names follow Prometheus conventions: the streamcheck_ prefix, counters
// end in _total, durations are in seconds and sizes in bytes. Label
// values are bounded: reasons, anomaly types and sink names come from
// fixed lists or the configuration, partitions from the input.
type Metrics struct {
	// Ingest. Consumed counts events read from the source, Decoded those
	// that parsed into a transaction, Rejected the rest plus decoded
	// events set aside (late, duplicate, no timestamps, ...), by reason.
	EventsConsumed prometheus.Counter
	EventsDecoded  prometheus.Counter
	EventsRejected *prometheus.CounterVec // reason
	// TxnsChecked counts transactions released into the checker.
	TxnsChecked prometheus.Counter

	// The window: transactions held (open plus pinned), pinned (closed but
	// kept because a neighbour is not settled), evicted so far.
	WindowTxns prometheus.Gauge
	PinnedTxns prometheus.Gauge
	// GhostTxns counts the evicted writers kept as possible live
	// versions of their keys: they leave the window but stay in the
	// reduced instance, so a stream whose instance grows shows it here
	// and not in WindowTxns.
	GhostTxns   prometheus.Gauge
	EvictedTxns prometheus.Counter
	// PinnedByReason splits PinnedTxns by the eviction rule that kept
	// each (online.PinReason), as of the engine's last evicting step.
	PinnedByReason *prometheus.GaugeVec // reason
	// Constraints (unknown orders and read-from choices) created and
	// resolved by pruning before search.
	ConstraintsCreated prometheus.Counter
	ConstraintsPruned  prometheus.Counter

	// The solver, per call (ObserveSolve).
	SolverCalls     prometheus.Counter
	SolverConflicts prometheus.Counter
	SolverDuration  prometheus.Histogram

	// WatermarkLag is, per input partition, how far the partition's
	// watermark is behind the wall clock. AllowedLateness is the configured
	// lateness, exported so that a rule can compare the two.
	WatermarkLag    *prometheus.GaugeVec // partition
	AllowedLateness prometheus.Gauge

	// Checkpoints: how long one took, and the size of the last one.
	CheckpointDuration prometheus.Histogram
	CheckpointSize     prometheus.Gauge
	// StateBytes is the state directory's size on disk (the body file by
	// its blocks: retention punches holes in it). BodiesPastRetention
	// counts the evicted bodies retention deleted.
	StateBytes          prometheus.Gauge
	BodiesPastRetention prometheus.Gauge

	// Anomalies counts alerts raised by anomaly type (updates of an alert
	// count once, under the first alert). Inexact is 1 while the checker
	// runs in inexact mode (a budget ran out: verdicts may be missing).
	Anomalies *prometheus.CounterVec // type
	Inexact   prometheus.Gauge

	// Delivery, set by the Dispatcher. AlertLatency runs from the moment
	// the watermark passed the core's last transaction (the time given to
	// Enqueue) to the sink's acknowledgement.
	AlertsEnqueued     prometheus.Counter
	AlertsDelivered    *prometheus.CounterVec // sink
	SinkErrors         *prometheus.CounterVec // sink
	SinkQueue          *prometheus.GaugeVec   // sink
	SinkLastSuccess    *prometheus.GaugeVec   // sink
	AlertLatency       *prometheus.HistogramVec
	OutboxErrors       prometheus.Counter
	QueueOverflowTotal *prometheus.CounterVec // sink
}

// Rejection reasons of EventsRejected, so that dashboards and rules can
// name them. The run loop may add others from the same fixed vocabulary of
// ingest's dead-letter reasons.
const (
	ReasonDecode       = "decode"
	ReasonLate         = "late"
	ReasonDuplicate    = "duplicate"
	ReasonNoTimestamps = "no_timestamps"
	ReasonInvalid      = "invalid"
)

// NewMetrics creates the metrics and registers them on reg. A nil reg
// leaves them unregistered (they still count, nobody sees them), so that a
// component under test never touches a global registry.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "streamcheck"
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: name, Help: help})
	}
	m := &Metrics{
		EventsConsumed: counter("events_consumed_total", "Events read from the input."),
		EventsDecoded:  counter("events_decoded_total", "Events decoded into a transaction."),
		EventsRejected: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_rejected_total",
			Help: "Events set aside as dead letters, by reason."}, []string{"reason"}),
		TxnsChecked: counter("transactions_checked_total", "Transactions released into the checker."),

		WindowTxns:  gauge("window_transactions", "Transactions held in the window."),
		PinnedTxns:  gauge("pinned_transactions", "Time-closed transactions kept in the window because a neighbour is not settled."),
		GhostTxns:   gauge("ghost_transactions", "Evicted writers kept in the reduced instance as possible live versions of their keys."),
		EvictedTxns: counter("evicted_transactions_total", "Transactions evicted from the window."),
		PinnedByReason: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "pinned_transactions_by_reason",
			Help: "Pinned transactions by the eviction rule that kept each, at the engine's last evicting step."}, []string{"reason"}),

		ConstraintsCreated: counter("constraints_created_total", "Constraints (unknown orders, read-from choices) created."),
		ConstraintsPruned:  counter("constraints_pruned_total", "Constraints resolved by pruning before search."),

		SolverCalls:     counter("solver_calls_total", "Calls of the SAT solver."),
		SolverConflicts: counter("solver_conflicts_total", "Conflicts met by the SAT solver."),
		SolverDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "solver_duration_seconds",
			Help:    "Time of one solver call.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),

		WatermarkLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "watermark_lag_seconds",
			Help: "How far a partition's watermark is behind the wall clock."}, []string{"partition"}),
		AllowedLateness: gauge("allowed_lateness_seconds", "The configured allowed lateness of events."),

		CheckpointDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "checkpoint_duration_seconds",
			Help:    "Time to write one checkpoint.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}),
		CheckpointSize:      gauge("checkpoint_size_bytes", "Size of the last checkpoint."),
		StateBytes:          gauge("state_directory_bytes", "Size on disk of the state directory (Pebble and the body file) after the last checkpoint."),
		BodiesPastRetention: gauge("bodies_past_retention", "Evicted transaction bodies deleted by the retention bound."),

		Anomalies: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "anomalies_total",
			Help: "Isolation anomalies alerted, by type."}, []string{"type"}),
		Inexact: gauge("inexact_mode", "1 while checking is inexact (a budget ran out), else 0."),

		AlertsEnqueued: counter("alerts_enqueued_total", "Alerts handed to the dispatcher."),
		AlertsDelivered: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "alerts_delivered_total",
			Help: "Alerts a sink accepted, by sink."}, []string{"sink"}),
		SinkErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "sink_delivery_errors_total",
			Help: "Failed delivery attempts, by sink."}, []string{"sink"}),
		SinkQueue: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "sink_queue_alerts",
			Help: "Alerts waiting for delivery, by sink."}, []string{"sink"}),
		SinkLastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "sink_last_success_timestamp_seconds",
			Help: "Unix time of the last delivery a sink accepted."}, []string{"sink"}),
		AlertLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "alert_latency_seconds",
			Help:    "From the watermark passing an anomaly's last core transaction to the sink's acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"sink"}),
		OutboxErrors: counter("outbox_errors_total", "Failed writes to the alert outbox."),
		QueueOverflowTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "sink_queue_overflow_total",
			Help: "Alerts left in the outbox (delivered after a restart) because a sink's queue was full."}, []string{"sink"}),
	}
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.EventsConsumed, m.EventsDecoded, m.EventsRejected, m.TxnsChecked,
		m.WindowTxns, m.PinnedTxns, m.GhostTxns, m.EvictedTxns, m.PinnedByReason,
		m.ConstraintsCreated, m.ConstraintsPruned,
		m.SolverCalls, m.SolverConflicts, m.SolverDuration,
		m.WatermarkLag, m.AllowedLateness,
		m.CheckpointDuration, m.CheckpointSize, m.StateBytes, m.BodiesPastRetention,
		m.Anomalies, m.Inexact,
		m.AlertsEnqueued, m.AlertsDelivered, m.SinkErrors, m.SinkQueue, m.SinkLastSuccess,
		m.AlertLatency, m.OutboxErrors, m.QueueOverflowTotal,
	}
}

// ObserveSolve records one solver call.
func (m *Metrics) ObserveSolve(d time.Duration, conflicts int64) {
	m.SolverCalls.Inc()
	m.SolverConflicts.Add(float64(conflicts))
	m.SolverDuration.Observe(d.Seconds())
}

// ObserveCheckpoint records one checkpoint of size bytes, after which
// the state directory holds dir bytes.
func (m *Metrics) ObserveCheckpoint(d time.Duration, bytes, dir int64) {
	m.CheckpointDuration.Observe(d.Seconds())
	m.CheckpointSize.Set(float64(bytes))
	m.StateBytes.Set(float64(dir))
}

// SetWatermarkLag sets a partition's lag; a negative lag (a client clock
// ahead of ours) is shown as 0.
func (m *Metrics) SetWatermarkLag(partition string, lag time.Duration) {
	m.WatermarkLag.WithLabelValues(partition).Set(max(lag, 0).Seconds())
}

// SetInexact sets the inexact-mode gauge.
func (m *Metrics) SetInexact(on bool) {
	v := 0.0
	if on {
		v = 1
	}
	m.Inexact.Set(v)
}

// Reject counts one event set aside for reason.
func (m *Metrics) Reject(reason string) { m.EventsRejected.WithLabelValues(reason).Inc() }

// Anomaly counts one new alert of the anomaly type typ.
func (m *Metrics) Anomaly(typ string) { m.Anomalies.WithLabelValues(typ).Inc() }

// initSink makes a sink's series exist at zero before its first event, so
// that rate() and the rules see the sink from the start.
func (m *Metrics) initSink(name string) {
	m.AlertsDelivered.WithLabelValues(name)
	m.SinkErrors.WithLabelValues(name)
	m.SinkQueue.WithLabelValues(name)
	m.QueueOverflowTotal.WithLabelValues(name)
}
