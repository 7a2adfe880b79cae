package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/streamcheck/streamcheck/verdict"
)

// ErrClosed is returned by Enqueue after Close.
var ErrClosed = errors.New("alerts: dispatcher closed")

// DispatcherOptions configure a Dispatcher. Zero values take the defaults
// in brackets.
type DispatcherOptions struct {
	// Sinks receive every alert; names must be unique and non-empty.
	Sinks []Sink
	// Outbox keeps undelivered alerts [NewMemOutbox()].
	Outbox Outbox
	// Metrics receive the delivery metrics [NewMetrics(nil): unexported].
	Metrics *Metrics
	// Logger receives delivery failures [discard].
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait before a retry [200ms, 1m]:
	// the n-th retry waits a random time in [b/2, b) with
	// b = min(MaxBackoff, MinBackoff * 2^n).
	MinBackoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one Deliver call [15s].
	AttemptTimeout time.Duration
	// QueueLimit bounds each remote sink's in-memory queue [10000]; an
	// alert that finds the queue full stays in the outbox and is delivered
	// after the next restart (counted in
	// streamcheck_sink_queue_overflow_total). A Local sink's queue is not
	// bounded: it holds what the sink has not written yet.
	QueueLimit int
	// Now is the clock for latencies [time.Now].
	Now func() time.Time
	_   struct{}
}

// Dispatcher delivers each alert to every sink, each sink with its own
// queue, goroutine and retries, so that a sink that is down delays nobody
// but itself. Enqueue never waits for a sink: checking must never stall.
//
// Delivery is at least once per sink. An alert is Put into the outbox
// before any delivery attempt and marked Done per sink after that sink
// accepted it; Start re-delivers whatever the outbox still holds, so an
// alert proven before a crash reaches every sink after the restart. A sink
// may see an alert twice (a crash between its acceptance and Done, or an
// acknowledgement lost in the network); the alert id is what lets the
// destination merge the two.
//
// Per sink, alerts are delivered in Enqueue order: a failing alert is
// retried before the next one is tried, because the next one would fail
// for the same reason and the order is what a person reads.
type Dispatcher struct {
	opts   DispatcherOptions
	log    *slog.Logger
	m      *Metrics
	queues []*queue

	mu      sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type queue struct {
	sink  Sink
	local bool          // the sink is Local
	wake  chan struct{} // capacity 1: "the queue changed"

	mu      sync.Mutex
	items   []item // items[0] is being delivered
	failing bool   // the last attempt failed
}

type item struct {
	key    string // outbox id
	alert  verdict.Alert
	proven time.Time // zero: unknown (redelivered after a restart)
}

// NewDispatcher checks the options; nothing starts before Start.
func NewDispatcher(opts DispatcherOptions) (*Dispatcher, error) {
	if opts.Outbox == nil {
		opts.Outbox = NewMemOutbox()
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 200 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = time.Minute
	}
	if opts.MaxBackoff < opts.MinBackoff {
		return nil, fmt.Errorf("alerts: max backoff %v below min backoff %v", opts.MaxBackoff, opts.MinBackoff)
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = 15 * time.Second
	}
	if opts.QueueLimit <= 0 {
		opts.QueueLimit = 10000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	d := &Dispatcher{opts: opts, log: opts.Logger, m: opts.Metrics}
	seen := map[string]bool{}
	for i, s := range opts.Sinks {
		if s == nil {
			return nil, fmt.Errorf("alerts: sink %d: nil", i)
		}
		name := s.Name()
		if name == "" || seen[name] {
			return nil, fmt.Errorf("alerts: sink %d: name %q empty or used twice", i, name)
		}
		seen[name] = true
		d.m.initSink(name)
		l, ok := s.(Local)
		d.queues = append(d.queues, &queue{sink: s, local: ok && l.Local(), wake: make(chan struct{}, 1)})
	}
	return d, nil
}

// DeliveryKey is the outbox id of an alert: its id, and a distinct key for
// the update of an alert (same id, shrunk core), which must be delivered
// even when the first version already was. The run loop keys its record of
// emitted alerts (state.Store.AlertEmitted) the same way.
func DeliveryKey(a verdict.Alert) string {
	if a.Updated {
		return a.ID + "/updated"
	}
	return a.ID
}

// Start re-delivers the outbox's pending entries and starts one goroutine
// per sink; they stop when ctx is done or Close is called.
func (d *Dispatcher) Start(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if d.started {
		return errors.New("alerts: dispatcher started twice")
	}
	pending, err := d.opts.Outbox.Pending()
	if err != nil {
		d.m.OutboxErrors.Inc()
		return fmt.Errorf("alerts: read outbox: %w", err)
	}
	byName := map[string]*queue{}
	for _, q := range d.queues {
		byName[q.sink.Name()] = q
	}
	for _, e := range pending {
		var a verdict.Alert
		if err := json.Unmarshal(e.Payload, &a); err != nil {
			// Retrying cannot repair it; keeping it would block nothing
			// but would be re-read at every start. Log it whole.
			d.m.OutboxErrors.Inc()
			d.log.Error("alert outbox: undecodable entry dropped", "key", e.ID, "err", err, "payload", string(e.Payload))
			for _, s := range e.Sinks {
				d.done(e.ID, s)
			}
			continue
		}
		for _, s := range e.Sinks {
			q := byName[s]
			if q == nil {
				// Kept, not dropped: the sink may come back with the
				// next configuration, and an alert is never lost by
				// an edit.
				d.log.Warn("alert outbox: alert owed to a sink this run does not have; kept", "key", e.ID, "sink", s)
				continue
			}
			q.push(item{key: e.ID, alert: a}, d.opts.QueueLimit, true)
			d.m.SinkQueue.WithLabelValues(s).Set(float64(q.len()))
		}
		d.log.Info("alert outbox: redelivering", "key", e.ID, "sinks", e.Sinks)
	}
	ctx, d.cancel = context.WithCancel(ctx)
	d.started = true
	for _, q := range d.queues {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.run(ctx, q)
		}()
	}
	return nil
}

// Enqueue hands an alert to every sink and returns at once. proven is the
// wall-clock time the watermark passed the core's last transaction (zero:
// now); AlertLatency is measured from it. New alerts (not updates) count in
// streamcheck_anomalies_total by type.
//
// The error is ErrClosed, or a failure to write the outbox: the alert is
// still delivered by this process, but would not survive a crash.
func (d *Dispatcher) Enqueue(a verdict.Alert, proven time.Time) error {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if proven.IsZero() {
		proven = d.opts.Now()
	}
	d.m.AlertsEnqueued.Inc()
	if !a.Updated {
		d.m.Anomaly(a.Type)
	}
	key := DeliveryKey(a)
	var errs []error
	payload, err := MarshalAlert(a)
	if err == nil {
		names := make([]string, len(d.queues))
		for i, q := range d.queues {
			names[i] = q.sink.Name()
		}
		err = d.opts.Outbox.Put(key, payload, names)
	}
	if err != nil {
		d.m.OutboxErrors.Inc()
		d.log.Error("alert outbox: put failed; the alert will not survive a crash", "id", a.ID, "err", err)
		errs = append(errs, fmt.Errorf("alerts: outbox put %q: %w", key, err))
	}
	for _, q := range d.queues {
		name := q.sink.Name()
		if !q.push(item{key: key, alert: a, proven: proven}, d.opts.QueueLimit, false) {
			d.m.QueueOverflowTotal.WithLabelValues(name).Inc()
			d.log.Warn("alert queue full; the alert waits in the outbox for the next start", "sink", name, "id", a.ID, "limit", d.opts.QueueLimit)
			continue
		}
		d.m.SinkQueue.WithLabelValues(name).Set(float64(q.len()))
	}
	return errors.Join(errs...)
}

// Flush waits until every queue is empty (every alert delivered or left
// over by overflow) or ctx is done.
func (d *Dispatcher) Flush(ctx context.Context) error {
	return d.wait(ctx, func(q *queue) bool { return len(q.items) > 0 })
}

// FlushLocal waits until every Local sink has written what is queued for
// it, or its last attempt failed (a write error: Flush's bound then
// covers its retries). It has no wall-clock bound: a local write is held
// up only by this machine, and without a state directory what is left at
// exit is lost.
func (d *Dispatcher) FlushLocal() {
	d.wait(context.Background(), func(q *queue) bool { return q.local && len(q.items) > 0 && !q.failing })
}

// wait polls the queues until none is busy (busy runs under the queue's
// lock) or ctx is done.
func (d *Dispatcher) wait(ctx context.Context, busy func(q *queue) bool) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		waiting := false
		for _, q := range d.queues {
			q.mu.Lock()
			waiting = waiting || busy(q)
			q.mu.Unlock()
		}
		if !waiting {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("alerts: flush: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Close stops the sink goroutines (an attempt in flight is cancelled) and
// waits for them. Undelivered alerts stay in the outbox.
func (d *Dispatcher) Close() error {
	d.mu.Lock()
	d.closed = true
	cancel := d.cancel
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	d.wg.Wait()
	return nil
}

// Pending returns the number of alerts waiting for the named sink.
func (d *Dispatcher) Pending(sink string) int {
	for _, q := range d.queues {
		if q.sink.Name() == sink {
			return q.len()
		}
	}
	return 0
}

// run is a sink's goroutine: deliver the head of the queue until it
// succeeds, then pop it.
func (d *Dispatcher) run(ctx context.Context, q *queue) {
	name := q.sink.Name()
	for {
		it, ok := q.head()
		if !ok {
			select {
			case <-ctx.Done():
				return
			case <-q.wake:
				continue
			}
		}
		for attempt := 0; ; attempt++ {
			actx, cancel := context.WithTimeout(ctx, d.opts.AttemptTimeout)
			if !it.proven.IsZero() {
				actx = context.WithValue(actx, provenKey{}, it.proven)
			}
			err := q.sink.Deliver(actx, it.alert)
			cancel()
			q.mu.Lock()
			q.failing = err != nil
			q.mu.Unlock()
			if err == nil {
				if attempt > 0 {
					d.log.Info("alert delivered after retries", "sink", name, "id", it.alert.ID, "attempts", attempt+1)
				}
				break
			}
			if ctx.Err() != nil {
				return // stopping: the outbox keeps it
			}
			wait := backoff(d.opts.MinBackoff, d.opts.MaxBackoff, attempt)
			d.m.SinkErrors.WithLabelValues(name).Inc()
			d.log.Warn("alert delivery failed", "sink", name, "id", it.alert.ID, "attempt", attempt+1, "retry_in", wait, "err", err)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		now := d.opts.Now()
		d.m.AlertsDelivered.WithLabelValues(name).Inc()
		d.m.SinkLastSuccess.WithLabelValues(name).Set(float64(now.UnixNano()) / 1e9)
		if !it.proven.IsZero() {
			d.m.AlertLatency.WithLabelValues(name).Observe(max(now.Sub(it.proven), 0).Seconds())
		}
		d.done(it.key, name)
		q.pop()
		d.m.SinkQueue.WithLabelValues(name).Set(float64(q.len()))
	}
}

type provenKey struct{}

// ProvenAt returns the time given to Enqueue for the alert being
// delivered under ctx, so that a sink can date the alert by its proof
// rather than by the attempt (the same on every retry). It is absent for
// alerts redelivered from the outbox after a restart.
func ProvenAt(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(provenKey{}).(time.Time)
	return t, ok
}

func (d *Dispatcher) done(key, sink string) {
	if err := d.opts.Outbox.Done(key, sink); err != nil {
		d.m.OutboxErrors.Inc()
		d.log.Error("alert outbox: done failed; the alert may be delivered again after a restart", "key", key, "sink", sink, "err", err)
	}
}

// backoff is the wait before retry n (0-based): exponential from min,
// capped at max, with "equal jitter" (a random half on top of a fixed
// half), so that sinks failing together do not retry in lockstep while a
// retry still never comes much sooner than planned.
func backoff(lo, hi time.Duration, n int) time.Duration {
	b := lo
	for i := 0; i < n && b < hi; i++ {
		b *= 2
	}
	b = clamp(b, lo, hi)
	half := b / 2
	return half + rand.N(b-half)
}

func clamp(b, lo, hi time.Duration) time.Duration {
	if b < lo {
		return lo
	}
	if b > hi {
		return hi
	}
	return b
}

// push appends it unless the queue is full; restored entries (from the
// outbox at start) skip keys already queued, which Enqueue before Start
// may have put there.
func (q *queue) push(it item, limit int, restored bool) bool {
	q.mu.Lock()
	if restored {
		for _, x := range q.items {
			if x.key == it.key {
				q.mu.Unlock()
				return true
			}
		}
	}
	if len(q.items) >= limit && !q.local {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, it)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

func (q *queue) head() (item, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return item{}, false
	}
	return q.items[0], true
}

func (q *queue) pop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items[0] = item{}
	q.items = q.items[1:]
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}
