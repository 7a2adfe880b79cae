// Package outboxtest is the conformance suite of alerts.Outbox: every
// implementation (alerts.MemOutbox, the Pebble store in state/) runs Run
// in its own tests, so that the dispatcher's guarantees (A2 in alerts'
// doc.go: nothing is lost, redelivery after a restart, oldest first) hold
// whichever outbox it is given.
package outboxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/verdict"
)

// Store opens an empty outbox for one subtest. Reopen, when not nil,
// simulates a restart: it closes the outbox and opens it again over the
// same storage (for a durable store), or returns nil for an outbox that
// does not survive restarts, whose durability cases are then skipped.
type Store func(t *testing.T) (o alerts.Outbox, reopen func() alerts.Outbox)

// Run checks the Outbox contract on fresh outboxes from open.
func Run(t *testing.T, open Store) {
	t.Run("Empty", func(t *testing.T) {
		o, _ := open(t)
		if p := pending(t, o); len(p) != 0 {
			t.Fatalf("a new outbox has %d pending entries", len(p))
		}
	})
	t.Run("OldestFirst", func(t *testing.T) {
		// Ids sort the other way round from insertion, so a store that
		// lists by key fails.
		o, _ := open(t)
		var want []string
		for i := 0; i < 50; i++ {
			id := fmt.Sprintf("id-%03d", 99-i)
			want = append(want, id)
			put(t, o, id, []byte("p"+id), []string{"s"})
		}
		if got := ids(pending(t, o)); !slices.Equal(got, want) {
			t.Fatalf("pending order %v, want insertion order %v", got, want)
		}
	})
	t.Run("DonePerSink", func(t *testing.T) {
		o, _ := open(t)
		put(t, o, "a", []byte("A"), []string{"s1", "s2"})
		put(t, o, "b", []byte("B"), []string{"s1"})
		done(t, o, "a", "s1")
		done(t, o, "b", "s1")
		p := pending(t, o)
		if len(p) != 1 || p[0].ID != "a" || string(p[0].Payload) != "A" || !slices.Equal(p[0].Sinks, []string{"s2"}) {
			t.Fatalf("pending %+v, want only a owed to s2", p)
		}
		done(t, o, "a", "s2")
		if p := pending(t, o); len(p) != 0 {
			t.Fatalf("entry kept after every sink was done: %+v", p)
		}
	})
	t.Run("DoneIdempotent", func(t *testing.T) {
		o, _ := open(t)
		put(t, o, "a", []byte("A"), []string{"s1", "s2"})
		done(t, o, "a", "s1")
		done(t, o, "a", "s1")
		done(t, o, "a", "nobody")
		done(t, o, "unknown", "s1")
		if p := pending(t, o); len(p) != 1 || !slices.Equal(p[0].Sinks, []string{"s2"}) {
			t.Fatalf("pending %+v, want a owed to s2", p)
		}
	})
	t.Run("PutReplaces", func(t *testing.T) {
		// The dispatcher puts a delivery key again only when it must be
		// delivered again: the new payload and sinks win.
		o, _ := open(t)
		put(t, o, "a", []byte("old"), []string{"s1"})
		done(t, o, "a", "s1")
		put(t, o, "b", []byte("B"), []string{"s1"})
		put(t, o, "b", []byte("new"), []string{"s1", "s2"})
		p := pending(t, o)
		if len(p) != 1 || string(p[0].Payload) != "new" || len(p[0].Sinks) != 2 {
			t.Fatalf("pending %+v, want b with the new payload for s1 and s2", p)
		}
	})
	t.Run("PayloadCopied", func(t *testing.T) {
		o, _ := open(t)
		b := []byte("payload")
		put(t, o, "a", b, []string{"s"})
		b[0] = 'X'
		if p := pending(t, o); string(p[0].Payload) != "payload" {
			t.Fatalf("Put kept the caller's slice: %q", p[0].Payload)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		o, _ := open(t)
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					id := fmt.Sprintf("g%d-%02d", g, i)
					if err := o.Put(id, []byte(id), []string{"s1", "s2"}); err != nil {
						t.Error(err)
						return
					}
					if err := o.Done(id, "s1"); err != nil {
						t.Error(err)
					}
					if i%2 == 0 {
						if err := o.Done(id, "s2"); err != nil {
							t.Error(err)
						}
					}
				}
			}()
		}
		wg.Wait()
		p := pending(t, o)
		if len(p) != 4*12 {
			t.Fatalf("%d pending, want 48", len(p))
		}
		for _, e := range p {
			if string(e.Payload) != e.ID || !slices.Equal(e.Sinks, []string{"s2"}) {
				t.Fatalf("entry %+v", e)
			}
		}
	})
	t.Run("SurvivesRestart", func(t *testing.T) {
		o, reopen := open(t)
		if reopen == nil {
			t.Skip("this outbox does not survive restarts")
		}
		put(t, o, "z", []byte("Z"), []string{"s1", "s2"})
		put(t, o, "a", []byte("A"), []string{"s1"})
		put(t, o, "gone", []byte("G"), []string{"s1"})
		done(t, o, "z", "s1")
		done(t, o, "gone", "s1")
		before := pending(t, o)
		o = reopen()
		if after := pending(t, o); !reflect.DeepEqual(before, after) {
			t.Fatalf("pending before the restart %+v, after %+v", before, after)
		}
	})
	t.Run("DispatcherRedelivers", func(t *testing.T) {
		// Through the real dispatcher: a sink down during the first run,
		// up after the restart, gets the alert once; the outbox ends empty.
		o, reopen := open(t)
		down := &recorder{name: "am", fail: true}
		d, err := alerts.NewDispatcher(alerts.DispatcherOptions{Sinks: []alerts.Sink{down}, Outbox: o,
			MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		a := verdict.Alert{ID: "x1", Level: "strict-serializable", Anomaly: verdict.Anomaly{Type: "lost-update", Core: []string{"A", "B"}}}
		if err := d.Enqueue(a, time.Time{}); err != nil {
			t.Fatal(err)
		}
		for down.attempts() < 2 {
			time.Sleep(time.Millisecond)
		}
		d.Close()
		if reopen != nil {
			o = reopen()
		}
		up := &recorder{name: "am"}
		d2, err := alerts.NewDispatcher(alerts.DispatcherOptions{Sinks: []alerts.Sink{up}, Outbox: o})
		if err != nil {
			t.Fatal(err)
		}
		if err := d2.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer d2.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := d2.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if got := up.delivered(); len(got) != 1 || !reflect.DeepEqual(got[0], a) {
			t.Fatalf("after the restart the sink got %+v, want the alert once", got)
		}
		if p := pending(t, o); len(p) != 0 {
			t.Fatalf("outbox not empty after delivery: %+v", p)
		}
	})
}

// recorder is a sink that fails while fail is set and records the rest.
type recorder struct {
	name string
	fail bool
	mu   sync.Mutex
	n    int
	got  []verdict.Alert
}

func (r *recorder) Name() string { return r.name }

func (r *recorder) Deliver(_ context.Context, a verdict.Alert) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	if r.fail {
		return fmt.Errorf("%s is down", r.name)
	}
	// Keep a deep copy, as a remote peer would.
	b, _ := json.Marshal(a)
	var c verdict.Alert
	_ = json.Unmarshal(b, &c)
	r.got = append(r.got, c)
	return nil
}

func (r *recorder) attempts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func (r *recorder) delivered() []verdict.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func put(t *testing.T, o alerts.Outbox, id string, payload []byte, sinks []string) {
	t.Helper()
	if err := o.Put(id, payload, sinks); err != nil {
		t.Fatalf("Put(%q): %v", id, err)
	}
}

func done(t *testing.T, o alerts.Outbox, id, sink string) {
	t.Helper()
	if err := o.Done(id, sink); err != nil {
		t.Fatalf("Done(%q, %q): %v", id, sink, err)
	}
}

func pending(t *testing.T, o alerts.Outbox) []alerts.OutboxEntry {
	t.Helper()
	p, err := o.Pending()
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	return p
}

func ids(p []alerts.OutboxEntry) []string {
	out := make([]string, len(p))
	for i, e := range p {
		out[i] = e.ID
	}
	return out
}
