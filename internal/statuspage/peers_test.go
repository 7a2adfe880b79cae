package statuspage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/alerts/alertstest"
)

// checkerMetrics is a registry with every checker metric set, as a run
// would leave it.
func checkerMetrics() (*prometheus.Registry, *alerts.Metrics) {
	reg := prometheus.NewPedanticRegistry()
	m := alerts.NewMetrics(reg)
	m.EventsConsumed.Add(1300)
	m.EventsDecoded.Add(1290)
	m.Reject(alerts.ReasonDecode)
	m.Reject(alerts.ReasonLate)
	m.TxnsChecked.Add(1234)
	m.WindowTxns.Set(57)
	m.PinnedTxns.Set(3)
	m.EvictedTxns.Add(1100)
	m.ConstraintsCreated.Add(90)
	m.ConstraintsPruned.Add(80)
	m.ObserveSolve(2*time.Millisecond, 12)
	m.SetWatermarkLag("0", 1500*time.Millisecond)
	m.SetWatermarkLag("1", 2*time.Second)
	m.AllowedLateness.Set(30)
	m.ObserveCheckpoint(5*time.Millisecond, 1<<20, 64<<20)
	m.Anomaly("lost-update")
	m.SetInexact(false)
	m.AlertsEnqueued.Inc()
	m.AlertsDelivered.WithLabelValues("alertmanager").Inc()
	m.SinkErrors.WithLabelValues("alertmanager").Add(2)
	m.SinkQueue.WithLabelValues("alertmanager").Set(0)
	m.SinkLastSuccess.WithLabelValues("alertmanager").Set(float64(time.Now().Unix()))
	m.AlertLatency.WithLabelValues("alertmanager").Observe(0.4)
	m.QueueOverflowTotal.WithLabelValues("alertmanager")
	return reg, m
}

// TestPromtoolCheckMetrics scrapes /metrics over HTTP and runs promtool's
// linter on it: no complaint about names, units, types or help.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := alertstest.NeedBinary(t, "promtool", "prometheus")
	reg, _ := checkerMetrics()
	srv := httptest.NewServer(New(Options{Gatherer: reg}))
	defer srv.Close()
	code, body, _ := get(t, srv.URL+"/metrics")
	if code != 200 || !strings.Contains(body, "streamcheck_alert_latency_seconds_bucket") {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestPrometheusScrapes runs a real Prometheus that scrapes the server on
// loopback and asks it, in PromQL, for the transactions checked.
func TestPrometheusScrapes(t *testing.T) {
	reg, m := checkerMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := New(Options{Gatherer: reg})
	addrCh := make(chan string, 1)
	served := make(chan error, 1)
	go func() { served <- s.ListenAndServe(ctx, "127.0.0.1:0", addrCh) }()
	target := <-addrCh

	prom := alertstest.StartPrometheus(t, []string{target}, "../../deploy/prometheus/rules.yml")
	waitFor := func(q string, want float64) {
		t.Helper()
		prom.WaitFor(t, q, want, 30*time.Second)
	}
	waitFor(`streamcheck_transactions_checked_total{job="streamcheck"}`, 1234)
	// The next scrape sees a change: Prometheus reads the live registry.
	m.TxnsChecked.Add(766)
	waitFor(`streamcheck_transactions_checked_total`, 2000)
	waitFor(`max(streamcheck_watermark_lag_seconds) > bool on() streamcheck_allowed_lateness_seconds`, 0)
	waitFor(`streamcheck_sink_delivery_errors_total{sink="alertmanager"}`, 2)
	// The checker's rules load and evaluate against the real series
	// without error (whether they fire is rules_test.yml's business).
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, bad := ruleHealth(t, prom.URL)
		if n == 6 && bad == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rules: %d healthy of 6; %s", n, bad)
		}
		time.Sleep(200 * time.Millisecond)
	}

	cancel()
	if err := <-served; err != nil {
		t.Error(err)
	}
}

// ruleHealth counts the rules Prometheus evaluated with health "ok" and
// describes the first that is not.
func ruleHealth(t *testing.T, promURL string) (ok int, bad string) {
	t.Helper()
	resp, err := http.Get(promURL + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				}
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			if rule.Health == "ok" {
				ok++
			} else if bad == "" {
				bad = fmt.Sprintf("%s: health %q %s", rule.Name, rule.Health, rule.LastError)
			}
		}
	}
	return ok, bad
}

// TestChromiumRendersStatusPage loads the status page with one anomaly in
// headless Chromium: the DOM Chromium built holds the anomaly with its
// drawn cycle (an inline SVG with one box per core transaction and the
// cycle's edges) and its explanation, and a screenshot of the page is a
// PNG of the window's size with the red of rw edges in it.
func TestChromiumRendersStatusPage(t *testing.T) {
	alertstest.NeedBinary(t, "chromium", "chromium")
	reg, _ := checkerMetrics()
	src := &fakeSource{st: Status{Stream: "orders", Level: "serializable", Started: time.Now().Add(-time.Hour),
		Lateness: 30 * time.Second, Partitions: []Partition{{Name: "0", Lag: 2 * time.Second}},
		EventsConsumed: 1300, TxnsChecked: 1234, Window: 57, Pinned: 3}}
	s := New(Options{Gatherer: reg, Source: src, Refresh: -1})
	a := lostUpdateAlert(t, "lu-1")
	s.Add(a)
	srv := httptest.NewServer(s)
	defer srv.Close()

	dir := t.TempDir()
	chromium := func(args ...string) []byte { t.Helper(); return alertstest.Chromium(t, args...) }
	dom := string(chromium("--dump-dom", srv.URL+"/"))
	if strings.Contains(dom, `http-equiv="refresh"`) {
		t.Error("page refreshes although Refresh < 0")
	}
	for _, want := range []string{
		`data-id="lu-1"`,
		`<svg xmlns="http://www.w3.org/2000/svg" class="anomaly-graph"`,
		alerts.Summary(a),
		"That closes the cycle A -rw-&gt; B -rw-&gt; A.",
		`<td id="txns">1234</td>`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %q", want)
		}
	}
	// One box per core transaction, one edge group per step and forced
	// order, in the drawing Chromium parsed.
	svgStart := strings.Index(dom, `class="anomaly-graph"`)
	svgEnd := strings.Index(dom[max(svgStart, 0):], "</svg>")
	if svgStart < 0 || svgEnd < 0 {
		t.Fatal("no drawing in the DOM")
	}
	drawing := dom[svgStart : svgStart+svgEnd]
	for _, id := range a.Core {
		if !strings.Contains(drawing, `<g class="node" data-id="`+id+`">`) {
			t.Errorf("drawing has no box for %s", id)
		}
	}
	if got, want := strings.Count(drawing, `<g class="edge"`), len(a.Cycle)+len(a.Forced); got != want {
		t.Errorf("drawing has %d edges, want %d", got, want)
	}

	shot := filepath.Join(dir, "status.png")
	chromium("--screenshot="+shot, "--window-size=1200,1600", "--hide-scrollbars", srv.URL+"/")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1600 {
		t.Errorf("screenshot is %v, want 1200x1600", b)
	}
	if n := countReddish(img); n < 20 {
		t.Errorf("screenshot has %d red pixels; the rw edges are not drawn", n)
	}
	if keep := os.Getenv("STREAMCHECK_KEEP_SCREENSHOT"); keep != "" {
		b, _ := os.ReadFile(shot)
		os.WriteFile(keep, b, 0o644)
	}
}

// countReddish counts pixels near the rw edges' colour (#cd0000).
func countReddish(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 150 && g>>8 < 80 && bl>>8 < 80 {
				n++
			}
		}
	}
	return n
}
