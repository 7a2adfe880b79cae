package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/internal/report"
)

// fakeSource is a run loop's snapshot under the test's control.
type fakeSource struct {
	mu sync.Mutex
	st Status
}

func (f *fakeSource) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st
}

func (f *fakeSource) set(fn func(*Status)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.st)
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// var _ alerts.Sink: the server can be one of the dispatcher's sinks.
var _ alerts.Sink = (*Server)(nil)

// TestEndpoints exercises every route over HTTP: health, readiness both
// ways, the alert list and one alert as JSON (round trip), the anomaly
// page for an id that needs escaping, 404s, and /metrics from the injected
// registry only.
func TestEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := alerts.NewMetrics(reg)
	m.TxnsChecked.Add(42)
	var notReady error = errors.New("partition 0 lags 2m0s, above the lateness 30s")
	var mu sync.Mutex
	s := New(Options{Gatherer: reg, Ready: func() error { mu.Lock(); defer mu.Unlock(); return notReady }})
	srv := httptest.NewServer(s)
	defer srv.Close()

	if code, body, _ := get(t, srv.URL+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, _, _ := get(t, srv.URL+"/debug/pprof/goroutine?debug=1"); code != 404 {
		t.Errorf("/debug/pprof/goroutine without Options.Pprof: %d, want 404", code)
	}
	if code, _, _ := get(t, srv.URL+"/debug/pprof/profile?seconds=1"); code != 404 {
		t.Errorf("/debug/pprof/profile without Options.Pprof: %d, want 404", code)
	}
	{
		ps := httptest.NewServer(New(Options{Gatherer: reg, Pprof: true}))
		if code, body, _ := get(t, ps.URL+"/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "goroutine profile") {
			t.Errorf("/debug/pprof/goroutine with Options.Pprof: %d %.80q", code, body)
		}
		ps.Close()
	}
	if code, body, _ := get(t, srv.URL+"/readyz"); code != 503 || !strings.Contains(body, "lags 2m0s") {
		t.Errorf("/readyz while behind: %d %q", code, body)
	}
	mu.Lock()
	notReady = nil
	mu.Unlock()
	if code, _, _ := get(t, srv.URL+"/readyz"); code != 200 {
		t.Errorf("/readyz caught up: %d", code)
	}

	a1, a2 := lostUpdateAlert(t, "a/1 x"), lostUpdateAlert(t, `b"<2>`)
	if err := s.Deliver(context.Background(), a1); err != nil {
		t.Fatal(err)
	}
	s.Add(a2)
	upd := a1
	upd.Updated = true
	s.Add(upd) // same id: replaces a1, still two alerts
	code, body, hdr := get(t, srv.URL+"/api/anomalies")
	var list []report.Alert
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != 200 || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("/api/anomalies: %d %v %q", code, err, body)
	}
	if len(list) != 2 || !reflect.DeepEqual(list[0], a2) || !reflect.DeepEqual(list[1], upd) {
		t.Errorf("/api/anomalies: %d alerts, want a2 then the updated a1", len(list))
	}
	if _, body, _ := get(t, srv.URL+"/api/anomalies?limit=1"); strings.Count(body, `"watermark"`) != 1 {
		t.Errorf("limit=1 gave %s", body)
	}
	if code, _, _ := get(t, srv.URL+"/api/anomalies?limit=x"); code != 400 {
		t.Errorf("limit=x: %d", code)
	}
	code, body, _ = get(t, srv.URL+"/api"+alerts.AnomalyPath("a/1 x"))
	var one report.Alert
	if err := json.Unmarshal([]byte(body), &one); err != nil || code != 200 || !reflect.DeepEqual(one, upd) {
		t.Errorf("/api/anomalies/{id}: %d %v %+v", code, err, one)
	}
	code, body, hdr = get(t, srv.URL+alerts.AnomalyPath(`b"<2>`))
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("anomaly page: %d %s", code, hdr.Get("Content-Type"))
	}
	if strings.Contains(body, `b"<2>`) || !strings.Contains(body, `b&#34;&lt;2&gt;`) {
		t.Errorf("anomaly page does not escape the id")
	}
	if !strings.Contains(body, `<svg xmlns="http://www.w3.org/2000/svg" class="anomaly-graph"`) {
		t.Errorf("anomaly page has no drawing")
	}
	if code, _, _ := get(t, srv.URL+"/anomalies/nope"); code != 404 {
		t.Errorf("unknown anomaly: %d", code)
	}
	if code, _, _ := get(t, srv.URL+"/nope"); code != 404 {
		t.Errorf("unknown path: %d", code)
	}
	_, body, _ = get(t, srv.URL+"/metrics")
	if !strings.Contains(body, "\nstreamcheck_transactions_checked_total 42\n") {
		t.Errorf("/metrics lacks the counter:\n%s", body)
	}
	if strings.Contains(body, "go_goroutines") {
		t.Error("/metrics serves the global registry's collectors")
	}
}

// TestThroughput: rates follow from samples of TxnsChecked, and the page
// shows them with a bar chart.
func TestThroughput(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	src := &fakeSource{st: Status{Stream: "orders", Lateness: 30 * time.Second, Started: now,
		Partitions: []Partition{{Name: "0", Lag: 2 * time.Second}, {Name: "1", Lag: time.Minute}}}}
	s := New(Options{Source: src, Now: clock, History: 5 * time.Minute})
	for i := 0; i <= 60; i++ { // 10 minutes of 100 txn/s, one sample per 10 s
		src.set(func(st *Status) { st.TxnsChecked = uint64(i * 1000) })
		s.Sample()
		mu.Lock()
		now = now.Add(10 * time.Second)
		mu.Unlock()
	}
	mu.Lock()
	now = now.Add(-10 * time.Second) // the last sample is "now"
	mu.Unlock()
	s.mu.Lock()
	kept := len(s.samples)
	s.mu.Unlock()
	if kept != 32 { // 5 minutes of samples (31) plus one older
		t.Errorf("kept %d samples, want 32", kept)
	}
	d := s.common()
	for _, r := range d.Rates {
		if !r.Known || r.Rate < 99.9 || r.Rate > 100.1 {
			t.Errorf("rate over %s = %v (known %v), want 100", r.Window, r.Rate, r.Known)
		}
	}
	if !strings.Contains(string(d.Chart), "peak 100.0 txn/s") || strings.Count(string(d.Chart), "<rect") < 29 {
		t.Errorf("chart: %s", d.Chart)
	}
	if len(d.Lags) != 2 || d.Lags[0].Behind || !d.Lags[1].Behind {
		t.Errorf("lags: %+v", d.Lags)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	body := rec.Body.String()
	for _, want := range []string{`http-equiv="refresh" content="30"`, "last 1m0s: 100.0 txn/s", "(above the lateness)", `id="no-anomalies"`, `class="throughput"`, "<code>orders</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
}

// TestListenAndServe: the server binds, answers, and stops with its
// context.
func TestListenAndServe(t *testing.T) {
	s := New(Options{SampleEvery: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	addrCh := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(ctx, "127.0.0.1:0", addrCh) }()
	addr := <-addrCh
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Errorf("bound %s", addr)
	}
	if code, _, _ := get(t, "http://"+addr+"/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not stop")
	}
}

// TestGeneratorURLOpensAnomaly: the generatorURL the Alertmanager sink
// sends (Alertmanager passes it through unchanged, see the alerts tests
// against a real one) opens this server's page of that anomaly, for ids
// that need escaping too.
func TestGeneratorURLOpensAnomaly(t *testing.T) {
	s := New(Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	am, err := alerts.NewAlertmanager(alerts.AlertmanagerOptions{URL: "http://127.0.0.1:9093", StatusURL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"plain", "a/b c", "é?#%&x=1"} {
		a := lostUpdateAlert(t, id)
		s.Add(a)
		link := am.Postable(a, time.Now()).GeneratorURL
		code, body, _ := get(t, link)
		if code != 200 || !strings.Contains(body, `data-id="`+template.HTMLEscapeString(id)+`"`) {
			t.Errorf("%s: %d, page of another anomaly or none", link, code)
		}
	}
}

// TestLagReady: ready exactly when every partition is within the
// lateness, and the page says why not, and shows inexact mode.
func TestLagReady(t *testing.T) {
	src := &fakeSource{st: Status{Lateness: 10 * time.Second}}
	s := New(Options{Source: src, Ready: LagReady(src)})
	srv := httptest.NewServer(s)
	defer srv.Close()
	if code, body, _ := get(t, srv.URL+"/readyz"); code != 503 || !strings.Contains(body, "no input partition") {
		t.Errorf("no partitions: %d %q", code, body)
	}
	src.set(func(st *Status) { st.Partitions = []Partition{{"0", time.Second}, {"1", 10 * time.Second}} })
	if code, _, _ := get(t, srv.URL+"/readyz"); code != 200 {
		t.Errorf("lag at the lateness: %d", code)
	}
	src.set(func(st *Status) {
		st.Partitions[1].Lag = 11 * time.Second
		st.Inexact, st.InexactReason = true, "solver budget exhausted"
	})
	if code, body, _ := get(t, srv.URL+"/readyz"); code != 503 || !strings.Contains(body, "partition 1 lags 11s") {
		t.Errorf("lag above the lateness: %d %q", code, body)
	}
	_, page, _ := get(t, srv.URL+"/")
	for _, want := range []string{"not ready: partition 1 lags 11s", `<span class="bad" id="inexact">on</span>: solver budget exhausted`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
