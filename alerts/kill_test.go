package alerts_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/state"
)

// stateOutbox adapts state.Store (the Pebble outbox) to alerts.Outbox:
// Put and Done are the store's, Pending converts its entry type.
type stateOutbox struct{ *state.Store }

func (s stateOutbox) Pending() ([]alerts.OutboxEntry, error) {
	p, err := s.Store.Pending()
	out := make([]alerts.OutboxEntry, len(p))
	for i, e := range p {
		out[i] = alerts.OutboxEntry{ID: e.ID, Payload: e.Payload, Sinks: e.Sinks}
	}
	return out, err
}

var _ alerts.Outbox = stateOutbox{}

const killChildEnv = "STREAMCHECK_ALERTS_KILL_CHILD"

// TestKillDashNineRestartDelivers is issue #8's crash case at the library
// level: a child process (this test binary) opens the Pebble store,
// enqueues an alert whose webhook answers 503, says so, and is killed
// with SIGKILL while the alert waits in the outbox. The restart (a new
// dispatcher over the reopened store) delivers it, signed, and the outbox
// ends empty.
func TestKillDashNineRestartDelivers(t *testing.T) {
	if os.Getenv(killChildEnv) != "" {
		killChild()
		return
	}
	var mu sync.Mutex
	var bodies [][]byte
	var sigs []string
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	dir := t.TempDir()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDashNineRestartDelivers$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir, "STREAMCHECK_ALERTS_KILL_URL="+down.URL)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "enqueued ") {
				ready <- strings.TrimPrefix(sc.Text(), "enqueued ")
			}
		}
		close(ready)
	}()
	var id string
	select {
	case id = <-ready:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child never enqueued")
	}
	if id == "" {
		t.Fatal("child exited before enqueueing")
	}
	time.Sleep(200 * time.Millisecond) // let it fail a few deliveries
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		sigs = append(sigs, r.Header.Get(alerts.SignatureHeader))
		mu.Unlock()
	}))
	defer up.Close()
	st, err := state.Open(dir, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ob := stateOutbox{st}
	if p, err := ob.Pending(); err != nil || len(p) != 1 || p[0].ID != id {
		t.Fatalf("outbox after kill -9: %+v %v", p, err)
	}
	wh, err := alerts.NewWebhook(alerts.WebhookOptions{URL: up.URL, Secret: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	d, err := alerts.NewDispatcher(alerts.DispatcherOptions{Sinks: []alerts.Sink{wh}, Outbox: ob})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d deliveries after the restart, want 1", len(bodies))
	}
	var a report.Alert
	if err := json.Unmarshal(bodies[0], &a); err != nil || a.ID != id || a.Type != "lost-update" {
		t.Errorf("delivered %s (%v)", bodies[0], err)
	}
	if !alerts.VerifySignature([]byte("k"), bodies[0], sigs[0]) {
		t.Errorf("bad signature %q", sigs[0])
	}
	if p, _ := ob.Pending(); len(p) != 0 {
		t.Errorf("outbox not empty after delivery: %+v", p)
	}
}

// killChild is the process that dies: it enqueues one alert for a sink
// that is down and waits to be killed.
func killChild() {
	st, err := state.Open(os.Getenv(killChildEnv), state.Options{})
	if err != nil {
		panic(err)
	}
	wh, err := alerts.NewWebhook(alerts.WebhookOptions{URL: os.Getenv("STREAMCHECK_ALERTS_KILL_URL"), Secret: []byte("k")})
	if err != nil {
		panic(err)
	}
	d, err := alerts.NewDispatcher(alerts.DispatcherOptions{Sinks: []alerts.Sink{wh}, Outbox: stateOutbox{st},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	if err := d.Start(context.Background()); err != nil {
		panic(err)
	}
	a := report.Alert{ID: "killed-1", Level: "strict-serializable", PromisedLevel: "serializable",
		Anomaly: report.Anomaly{Type: "lost-update", Class: "G2-item", Core: []string{"W", "A", "B"},
			Explanation: []string{"That closes the cycle A -rw-> B -rw-> A."}}}
	if err := d.Enqueue(a, time.Time{}); err != nil {
		panic(err)
	}
	os.Stdout.WriteString("enqueued " + a.ID + "\n")
	time.Sleep(time.Hour) // until SIGKILL
}
