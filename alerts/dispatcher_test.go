package alerts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamcheck/streamcheck/internal/report"
)

// hangSink never answers: every Deliver waits for its context.
type hangSink struct{ calls chan string }

func (h *hangSink) Name() string { return "hang" }
func (h *hangSink) Deliver(ctx context.Context, a report.Alert) error {
	select {
	case h.calls <- a.ID:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

// memSink records what it accepted; it fails while down is set.
type memSink struct {
	name string
	mu   sync.Mutex
	down bool
	got  []report.Alert
}

func (m *memSink) Name() string { return m.name }
func (m *memSink) Deliver(ctx context.Context, a report.Alert) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("down")
	}
	m.got = append(m.got, a)
	return nil
}
func (m *memSink) ids() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, a := range m.got {
		out = append(out, DeliveryKey(a))
	}
	return out
}

// checkNoLeak fails the test if goroutines started after it are still
// running when the test ends: Close must stop every sink goroutine.
func checkNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
	})
}

func flush(t *testing.T, d *Dispatcher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestEnqueueNeverBlocks: one sink hangs forever, another is a JSON lines
// writer. Enqueue stays fast, the healthy sink gets every alert in order,
// and Close returns although the hung attempt never finishes by itself.
func TestEnqueueNeverBlocks(t *testing.T) {
	checkNoLeak(t)
	var out bytes.Buffer
	hang := &hangSink{calls: make(chan string, 1)}
	ob := NewMemOutbox()
	d, err := NewDispatcher(DispatcherOptions{Sinks: []Sink{hang, NewJSONLines("", &out)}, Outbox: ob, AttemptTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := lostUpdateAlert(t, "")
	const n = 300
	t0 := time.Now()
	for i := 0; i < n; i++ {
		a.ID = fmt.Sprintf("n%03d", i)
		if err := d.Enqueue(a, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("%d Enqueues took %v with a hung sink", n, el)
	}
	<-hang.calls // the hung sink is inside Deliver
	deadline := time.Now().Add(10 * time.Second)
	for d.Pending("stdout") > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := d.Pending("hang"); got != n {
		t.Errorf("hung sink has %d pending, want %d", got, n)
	}
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a hung sink")
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	i := 0
	for sc.Scan() {
		var got report.Alert
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if want := fmt.Sprintf("n%03d", i); got.ID != want {
			t.Fatalf("line %d: id %s, want %s", i+1, got.ID, want)
		}
		i++
	}
	if i != n {
		t.Errorf("stdout sink wrote %d lines, want %d", i, n)
	}
	// Everything still owed to the hung sink, and only to it, waits in
	// the outbox for the next start.
	p, _ := ob.Pending()
	if len(p) != n || p[0].ID != "n000" || strings.Join(p[0].Sinks, ",") != "hang" {
		t.Errorf("outbox after close: %d entries, first %+v", len(p), p[0])
	}
	if err := d.Enqueue(a, time.Time{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Enqueue after Close: %v", err)
	}
}

// TestRestartDeliversPending: the first dispatcher's sink is down, so the
// alert stays in the outbox; a new dispatcher over the same outbox (the
// restart) delivers it once, and the outbox ends empty. An alert enqueued
// before Start is not delivered twice.
func TestRestartDeliversPending(t *testing.T) {
	checkNoLeak(t)
	ob := NewMemOutbox()
	s1 := &memSink{name: "am", down: true}
	d1, err := NewDispatcher(DispatcherOptions{Sinks: []Sink{s1}, Outbox: ob, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := d1.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := lostUpdateAlert(t, "r1")
	if err := d1.Enqueue(a, time.Time{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	d1.Close()
	if p, _ := ob.Pending(); len(p) != 1 || p[0].ID != "r1" {
		t.Fatalf("outbox after the first run: %+v", p)
	}

	s2 := &memSink{name: "am"}
	var logs bytes.Buffer
	d2, err := NewDispatcher(DispatcherOptions{Sinks: []Sink{s2}, Outbox: ob, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	b := lostUpdateAlert(t, "r2")
	if err := d2.Enqueue(b, time.Time{}); err != nil { // before Start
		t.Fatal(err)
	}
	if err := d2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	flush(t, d2)
	if got := strings.Join(s2.ids(), ","); got != "r2,r1" && got != "r1,r2" {
		t.Errorf("delivered after restart: %s, want r1 and r2 once each", got)
	}
	if p, _ := ob.Pending(); len(p) != 0 {
		t.Errorf("outbox not empty after delivery: %+v", p)
	}
	if !strings.Contains(logs.String(), "redelivering") {
		t.Errorf("the redelivery is not logged: %s", logs.String())
	}
	if len(s2.got) == 2 && s2.got[0].Explanation == nil {
		t.Error("redelivered alert lost its explanation")
	}
}

// TestUpdateIsDeliveredToo: an alert and its update share the id but not
// the delivery key, so a sink gets both.
func TestUpdateIsDeliveredToo(t *testing.T) {
	checkNoLeak(t)
	s := &memSink{name: "m"}
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	d, _ := NewDispatcher(DispatcherOptions{Sinks: []Sink{s}, Metrics: m})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := lostUpdateAlert(t, "u1")
	d.Enqueue(a, time.Now().Add(-time.Second))
	a.Updated = true
	d.Enqueue(a, time.Now())
	flush(t, d)
	if got := strings.Join(s.ids(), ","); got != "u1,u1/updated" {
		t.Errorf("delivered %s", got)
	}
	if got := testutil.ToFloat64(m.Anomalies.WithLabelValues("lost-update")); got != 1 {
		t.Errorf("anomalies_total{type=lost-update} = %v, want 1 (the update is the same anomaly)", got)
	}
	if n := testutil.CollectAndCount(m.AlertLatency, "streamcheck_alert_latency_seconds"); n != 1 {
		t.Errorf("latency series = %d", n)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "streamcheck_alert_latency_seconds" {
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 2 || h.GetSampleSum() < 1 {
				t.Errorf("latency: %d samples summing to %vs, want 2 and >= 1s", h.GetSampleCount(), h.GetSampleSum())
			}
		}
	}
}

// TestUnknownSinkKept: an entry owed to a sink this run does not have
// stays in the outbox for a later run that has it; the known sink gets it.
func TestUnknownSinkKept(t *testing.T) {
	checkNoLeak(t)
	ob := NewMemOutbox()
	b, _ := MarshalAlert(lostUpdateAlert(t, "k1"))
	ob.Put("k1", b, []string{"m", "removed"})
	s := &memSink{name: "m"}
	d, _ := NewDispatcher(DispatcherOptions{Sinks: []Sink{s}, Outbox: ob})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	flush(t, d)
	d.Close()
	if got := strings.Join(s.ids(), ","); got != "k1" {
		t.Errorf("known sink got %q", got)
	}
	if p, _ := ob.Pending(); len(p) != 1 || strings.Join(p[0].Sinks, ",") != "removed" {
		t.Errorf("outbox %+v, want k1 still owed to removed", p)
	}
}

// TestUndecodableOutboxEntry: an entry that is not an alert cannot be
// delivered by retrying; it is logged whole and dropped.
func TestUndecodableOutboxEntry(t *testing.T) {
	ob := NewMemOutbox()
	ob.Put("bad", []byte("{not json"), []string{"m", "gone"})
	var logs bytes.Buffer
	s := &memSink{name: "m"}
	d, _ := NewDispatcher(DispatcherOptions{Sinks: []Sink{s}, Outbox: ob, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if p, _ := ob.Pending(); len(p) != 0 {
		t.Errorf("bad entry kept: %+v", p)
	}
	if !strings.Contains(logs.String(), "{not json") {
		t.Errorf("bad entry not logged: %s", logs.String())
	}
}

// TestBackoff: every wait lies in [b/2, b) for b = min(max, min*2^n), and
// the waits are jittered.
func TestBackoff(t *testing.T) {
	lo, hi := 100*time.Millisecond, 3*time.Second
	for n := 0; n < 70; n++ {
		b := hi
		if n < 5 {
			b = lo << n
		}
		seen := map[time.Duration]bool{}
		for i := 0; i < 50; i++ {
			w := backoff(lo, hi, n)
			if w < b/2 || w >= b {
				t.Fatalf("retry %d waits %v, want in [%v, %v)", n, w, b/2, b)
			}
			seen[w] = true
		}
		if len(seen) < 10 {
			t.Errorf("retry %d: only %d distinct waits in 50", n, len(seen))
		}
	}
}

// TestQueueOverflowStaysInOutbox: past QueueLimit an alert is not queued
// but stays in the outbox, and the overflow is counted.
func TestQueueOverflowStaysInOutbox(t *testing.T) {
	checkNoLeak(t)
	ob := NewMemOutbox()
	m := NewMetrics(nil)
	hang := &hangSink{calls: make(chan string, 1)}
	d, _ := NewDispatcher(DispatcherOptions{Sinks: []Sink{hang}, Outbox: ob, Metrics: m, QueueLimit: 2})
	a := lostUpdateAlert(t, "")
	for _, id := range []string{"o1", "o2", "o3"} {
		a.ID = id
		if err := d.Enqueue(a, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(m.QueueOverflowTotal.WithLabelValues("hang")); got != 1 {
		t.Errorf("overflow = %v, want 1", got)
	}
	if p, _ := ob.Pending(); len(p) != 3 {
		t.Errorf("outbox holds %d, want 3", len(p))
	}
	d.Close()
}
