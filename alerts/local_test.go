package alerts

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/streamcheck/streamcheck/internal/report"
)

// gateSink is a Local sink that writes only once its gate is open (a
// loaded machine that has not scheduled the writer yet), or fails every
// write while broken is set.
type gateSink struct {
	gate   chan struct{}
	broken bool
	mu     sync.Mutex
	got    []string
}

func (g *gateSink) Name() string { return "local" }
func (g *gateSink) Local() bool  { return true }
func (g *gateSink) Deliver(ctx context.Context, a report.Alert) error {
	if g.broken {
		return errors.New("write: broken pipe")
	}
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	g.got = append(g.got, a.ID)
	g.mu.Unlock()
	return nil
}

func (g *gateSink) n() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.got)
}

// TestLocalSinkKeepsEveryAlert: a Local sink's queue has no limit, and
// FlushLocal returns only once it has written everything, however long
// that takes; Flush's bounded wait would have given up (the loss issue 28's
// sweep saw on a loaded box: alerts raised by the engine, never on stdout).
func TestLocalSinkKeepsEveryAlert(t *testing.T) {
	checkNoLeak(t)
	m := NewMetrics(nil)
	g := &gateSink{gate: make(chan struct{})}
	d, _ := NewDispatcher(DispatcherOptions{Sinks: []Sink{g}, Outbox: NewMemOutbox(), Metrics: m, QueueLimit: 2})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := lostUpdateAlert(t, "")
	const n = 20
	for i := range n {
		a.ID = "l" + string(rune('a'+i))
		if err := d.Enqueue(a, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(m.QueueOverflowTotal.WithLabelValues("local")); got != 0 {
		t.Errorf("a local sink's queue overflowed %v times", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if err := d.Flush(ctx); err == nil {
		t.Fatal("Flush returned with the gate shut")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(g.gate)
	}()
	d.FlushLocal()
	if got := g.n(); got != n {
		t.Errorf("FlushLocal returned with %d of %d alerts written", got, n)
	}
}

// TestFlushLocalGivesUpOnAFailingSink: a local sink whose writes fail
// (a closed pipe) does not hold FlushLocal; its retries are Flush's,
// bounded.
func TestFlushLocalGivesUpOnAFailingSink(t *testing.T) {
	checkNoLeak(t)
	g := &gateSink{gate: make(chan struct{}), broken: true}
	d, _ := NewDispatcher(DispatcherOptions{Sinks: []Sink{g}, Outbox: NewMemOutbox(), MinBackoff: time.Hour, MaxBackoff: time.Hour})
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a := lostUpdateAlert(t, "")
	a.ID = "broken"
	if err := d.Enqueue(a, time.Time{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		d.FlushLocal()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("FlushLocal waits for a sink whose every write fails")
	}
}
