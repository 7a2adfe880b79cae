package runcmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kafkago "github.com/segmentio/kafka-go"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/internal/statuspage"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/state"
	"github.com/streamcheck/streamcheck/window"
)

// flushTimeout bounds how long the end of a run waits for remote sinks
// to take the alerts still queued; what is left waits in the outbox
// (durable with a state directory) so that a sink that is down cannot
// hold the exit. Local sinks (stdout, alert files) are waited for as long
// as they write (alerts.Dispatcher.FlushLocal).
var flushTimeout = 10 * time.Second

// alerting is the run's delivery and observation side: the metrics
// registry, the dispatcher with its sinks, and the HTTP server. The loop
// only enqueues and sets metrics, so checking never waits for a sink.
type alerting struct {
	reg     *prometheus.Registry
	m       *alerts.Metrics
	disp    *alerts.Dispatcher
	page    *statuspage.Server
	closers []func() error

	cancel context.CancelFunc
	wg     sync.WaitGroup
	addr   string // bound HTTP address, empty when off

	// Last engine totals seen, so counters get deltas.
	released, evicted, checks      int
	conflicts, constraints, pruned int64

	// wm is the watermark's history, (W, wall time) with W increasing,
	// for the alert latency (provenAt); bounded by maxWM.
	wm []wmSample

	mu     sync.Mutex
	status statuspage.Status
}

type wmSample struct {
	w  int64
	at time.Time
}

// maxWM bounds the watermark history: an alert whose core ended before
// the oldest sample kept is timed from that sample (its latency is then
// understated, never invented).
const maxWM = 1 << 13

// noteWatermark records when W reached w.
func (a *alerting) noteWatermark(w int64, now time.Time) {
	if n := len(a.wm); n > 0 && w <= a.wm[n-1].w {
		return
	}
	if len(a.wm) >= maxWM {
		a.wm = append(a.wm[:0], a.wm[maxWM/2:]...)
	}
	a.wm = append(a.wm, wmSample{w, now})
}

// provenAt is when the watermark first passed end, the core's last
// transaction's end: where the alert latency starts. Before any record
// (a restart) it is now.
func (a *alerting) provenAt(end int64, now time.Time) time.Time {
	i := sort.Search(len(a.wm), func(i int) bool { return a.wm[i].w > end })
	if i == len(a.wm) {
		return now
	}
	return a.wm[i].at
}

// stateOutbox adapts the Pebble outbox to alerts.Outbox; only Pending's
// entry type differs.
type stateOutbox struct{ s *state.Store }

func (o stateOutbox) Put(id string, payload []byte, sinks []string) error {
	return o.s.Put(id, payload, sinks)
}
func (o stateOutbox) Done(id, sink string) error { return o.s.Done(id, sink) }
func (o stateOutbox) Pending() ([]alerts.OutboxEntry, error) {
	es, err := o.s.Pending()
	if err != nil {
		return nil, err
	}
	out := make([]alerts.OutboxEntry, len(es))
	for i, e := range es {
		out[i] = alerts.OutboxEntry(e)
	}
	return out, nil
}

// startAlerting builds the sinks from the configuration, starts the
// dispatcher (which first re-sends what the outbox still owes) and the
// HTTP server. It runs after start, so the state store is open.
func (r *runner) startAlerting(ctx context.Context) error {
	a := &alerting{reg: prometheus.NewRegistry()}
	r.al = a
	a.m = alerts.NewMetrics(a.reg)
	a.m.AllowedLateness.Set(time.Duration(r.cfg.Check.Lateness).Seconds())
	// Checking is exact today: no budget can run out.
	a.m.SetInexact(false)
	es := r.engine.Stats()
	a.released, a.evicted, a.checks = es.Released, es.Evicted, es.Checks
	// The server and the dispatcher outlive an interrupt of ctx: the end
	// of the run still flushes alerts and answers scrapes until close.
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a.cancel = cancel
	cfg := &r.cfg.Alerts

	var sinks []alerts.Sink
	switch {
	case cfg.File != "" && cfg.File != "-":
		f, err := alerts.OpenJSONLinesFile(cfg.File)
		if err != nil {
			return err
		}
		a.closers = append(a.closers, f.Close)
		sinks = append(sinks, f)
	case cfg.Stdout || cfg.File == "-":
		sinks = append(sinks, alerts.NewJSONLines("stdout", r.stdout))
	}
	a.page = statuspage.New(statuspage.Options{
		Gatherer: a.reg, Source: r, Logger: r.cfg.log,
		Ready: statuspage.LagReady(r), Pprof: r.cfg.HTTP.Pprof,
	})
	// The page is a sink too, so that it lists every alert of the run.
	sinks = append(sinks, a.page)
	if addr := r.cfg.HTTP.Addr; addr != "" {
		bound, err := a.listen(bg, addr)
		if err != nil {
			return fmt.Errorf("http.addr: %w", err)
		}
		a.addr = bound
		fmt.Fprintf(r.stderr, "streamcheck run: serving /metrics, /healthz, /readyz, /api/anomalies and the status page on http://%s\n", bound)
	}
	if am := cfg.Alertmanager; am.URL != "" {
		status := am.StatusURL
		if status == "" && a.addr != "" {
			status = "http://" + a.addr
		}
		s, err := alerts.NewAlertmanager(alerts.AlertmanagerOptions{URL: am.URL, Stream: r.sourceName(),
			Hold: time.Duration(am.Hold), StatusURL: status})
		if err != nil {
			return fmt.Errorf("alerts.alertmanager: %w", err)
		}
		sinks = append(sinks, s)
	}
	for i, w := range cfg.Webhooks {
		o := alerts.WebhookOptions{URL: w.URL, Header: http.Header{}}
		if len(cfg.Webhooks) > 1 {
			o.Name = "webhook:" + w.URL
		}
		if w.SecretEnv != "" {
			v, ok := os.LookupEnv(w.SecretEnv)
			if !ok {
				return fmt.Errorf("alerts.webhooks[%d].secret_env: %s is not set", i, w.SecretEnv)
			}
			o.Secret = []byte(v)
		}
		for k, v := range w.Headers {
			o.Header.Set(k, v)
		}
		s, err := alerts.NewWebhook(o)
		if err != nil {
			return fmt.Errorf("alerts.webhooks[%d]: %w", i, err)
		}
		sinks = append(sinks, s)
	}
	if k := cfg.Kafka; k.Topic != "" {
		brokers := k.Brokers
		if len(brokers) == 0 {
			brokers = r.cfg.Kafka.Brokers
		}
		o := alerts.KafkaOptions{Brokers: brokers, Topic: k.Topic}
		if len(k.Brokers) == 0 && r.kafka != nil && (r.kafka.TLS != nil || r.kafka.SASL != nil) {
			// The source's brokers: its TLS and SASL too.
			o.Transport = &kafkago.Transport{TLS: r.kafka.TLS, SASL: r.kafka.SASL}
		}
		s, err := alerts.NewKafka(o)
		if err != nil {
			return fmt.Errorf("alerts.kafka: %w", err)
		}
		a.closers = append(a.closers, s.Close)
		sinks = append(sinks, s)
	}
	if len(sinks) == 1 {
		r.cfg.log.Warn("alerts go nowhere outside this process: alerts.stdout is off and no file, alertmanager, webhook or kafka sink is set")
	}
	var outbox alerts.Outbox = alerts.NewMemOutbox()
	if r.store != nil {
		outbox = stateOutbox{r.store}
	}
	d, err := alerts.NewDispatcher(alerts.DispatcherOptions{Sinks: sinks, Outbox: outbox, Metrics: a.m, Logger: r.cfg.log,
		MinBackoff: time.Duration(cfg.BackoffMin), MaxBackoff: time.Duration(cfg.BackoffMax)})
	if err != nil {
		return err
	}
	if err := d.Start(bg); err != nil {
		return err
	}
	a.disp = d
	r.observe()
	return nil
}

// listen binds addr now (a taken port is a start-up error, not a log line
// later) and serves until ctx ends.
func (a *alerting) listen(ctx context.Context, addr string) (string, error) {
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		errc <- a.page.ListenAndServe(ctx, addr, ready)
	}()
	select {
	case bound := <-ready:
		return bound, nil
	case err := <-errc:
		return "", err
	}
}

// flush waits for every sink to take what is queued: for stdout and
// alert files as long as they write (nothing remote can hold them up,
// and on a loaded machine a bound in wall time lost alerts that `run`
// had raised, issue 28), for remote sinks at most flushTimeout.
func (r *runner) flushAlerts() {
	if r.al == nil || r.al.disp == nil {
		return
	}
	r.al.disp.FlushLocal()
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := r.al.disp.Flush(ctx); err != nil {
		where := "they are lost with this process (no state directory)"
		if r.store != nil {
			where = "they wait in the state directory's outbox for the next run"
		}
		r.cfg.log.Warn("alerts not delivered at exit; "+where, "err", err)
	}
}

// close stops the dispatcher (queued alerts stay in the outbox) and the
// server; it runs before the store closes.
func (a *alerting) close() error {
	var errs []error
	if a.disp != nil {
		errs = append(errs, a.disp.Close())
	}
	if a.cancel != nil {
		a.cancel()
	}
	a.wg.Wait()
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	return errors.Join(errs...)
}

// rejectReason maps the loop's and the window's dead-letter reasons onto
// the metric's label values.
func rejectReason(r window.Reason) string {
	switch r {
	case window.Late:
		return alerts.ReasonLate
	case window.DuplicateID:
		return alerts.ReasonDuplicate
	case window.MissingTime:
		return alerts.ReasonNoTimestamps
	case window.Future:
		return "future"
	}
	return alerts.ReasonInvalid
}

// observe brings the gauges and engine-derived counters up to date and
// publishes the status snapshot the page reads from other goroutines.
// The loop calls it after steps and on its ticker: cheap enough there,
// too costly per message (the engine's Stats walks its window).
func (r *runner) observe() {
	a := r.al
	if a == nil {
		return
	}
	es := r.engine.Stats()
	if d := es.Released - a.released; d > 0 {
		a.m.TxnsChecked.Add(float64(d))
	}
	if d := es.Evicted - a.evicted; d > 0 {
		a.m.EvictedTxns.Add(float64(d))
	}
	a.released, a.evicted = es.Released, es.Evicted
	a.m.WindowTxns.Set(float64(es.Window))
	a.m.PinnedTxns.Set(float64(es.Pinned))
	a.m.GhostTxns.Set(float64(es.Ghosts))
	for _, why := range online.PinReasons() {
		a.m.PinnedByReason.WithLabelValues(why.String()).Set(float64(es.PinnedBy[why]))
	}
	a.m.SetInexact(es.Capped > 0 || es.SetAside > 0 || es.InexactRewinds > 0)
	a.m.BodiesPastRetention.Set(float64(es.PastRetention))
	now := time.Now()
	var parts []statuspage.Partition
	for p, ms := range r.st.PartMax {
		if ms == math.MinInt64 {
			continue // nothing accepted yet: no watermark to lag
		}
		lag := now.Sub(time.Unix(0, ms))
		a.m.SetWatermarkLag(strconv.Itoa(p), lag)
		parts = append(parts, statuspage.Partition{Name: strconv.Itoa(p), Lag: max(lag, 0)})
	}
	st := statuspage.Status{
		Stream: r.sourceName(), Level: r.cfg.opts.Level.String(), Started: r.started,
		Lateness: time.Duration(r.cfg.Check.Lateness), Partitions: parts,
		EventsConsumed: r.st.Counters.Messages, TxnsChecked: uint64(es.Released),
		Window: es.Window, Pinned: es.Pinned,
	}
	a.mu.Lock()
	a.status = st
	a.mu.Unlock()
}

// Status implements statuspage.StatusSource from the last snapshot
// observe published (the loop's own fields are not safe to read here).
func (r *runner) Status() statuspage.Status {
	a := r.al
	if a == nil {
		return statuspage.Status{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.status
	st.Partitions = append([]statuspage.Partition(nil), st.Partitions...)
	return st
}
