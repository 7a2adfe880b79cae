package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/alerts/alertstest"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/report"
)

func httpGet(t *testing.T, url string) (int, string) {
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
	return resp.StatusCode, string(b)
}

// TestAlertmanagerAndPrometheusEndToEnd is issue #8's acceptance 1: a run
// over a generated stream with one injected lost update, with a real
// Alertmanager as a sink and a real Prometheus scraping the run's
// /metrics. The oracles are the generator (which core it injected, how
// many transactions there are) and the servers' own APIs, not our code.
func TestAlertmanagerAndPrometheusEndToEnd(t *testing.T) {
	am := alertstest.StartAlertmanager(t)
	httpAddr := fmt.Sprintf("127.0.0.1:%d", alertstest.FreePort(t))
	prom := alertstest.StartPrometheus(t, []string{httpAddr})
	promtool := alertstest.NeedBinary(t, "promtool", "prometheus")

	s := makeStream(t, 8, 300, 1, "lost-update")
	if len(s.inj) != 1 {
		t.Fatalf("generator injected %d anomalies, want 1", len(s.inj))
	}
	// A followed file keeps the run (and its HTTP server) alive after the
	// stream is read, like a daemon. The last event lies far beyond the
	// others, so the watermark passes every real transaction and the
	// lost update is proven without the end of input.
	var buf []byte
	var maxEnd int64
	for i := range s.merged {
		buf = ingest.AppendNative(buf, &s.merged[i])
		buf = append(buf, '\n')
		maxEnd = max(maxEnd, s.merged[i].End)
	}
	far := maxEnd + 100*s.lateness
	buf = fmt.Appendf(buf, `{"id":"zz-marker","start":%d,"end":%d,"status":"committed","ops":[]}`+"\n", far, far+1)
	src := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(src, buf, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, s.args("--source", src, "--poll", "10ms", "--http", httpAddr, "--alertmanager", am.URL), nil, &out, &errb)
	}()
	stopped := false
	stop := func() int {
		t.Helper()
		if stopped {
			return -1
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(30 * time.Second):
			t.Fatalf("run did not stop after cancel; stderr:\n%s", errb.String())
			return -1
		}
	}
	defer stop()

	// Alertmanager lists the alert, with the injected core.
	var got []alertstest.Alert
	deadline := time.Now().Add(60 * time.Second)
	for len(got) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no alert in Alertmanager after 60s; stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(100 * time.Millisecond)
		got = am.Alerts(t)
	}
	if !strings.Contains(errb.String(), "http://"+httpAddr) {
		t.Errorf("stderr does not name the bound address %s:\n%s", httpAddr, errb.String())
	}
	abs, _ := filepath.Abs(src)
	wantCore := slices.Sorted(slices.Values(s.inj[0].Txns))
	if len(got) != 1 {
		t.Fatalf("Alertmanager holds %d alerts, want 1: %+v", len(got), got)
	}
	g := got[0]
	core := strings.Split(g.Annotations["core"], ", ")
	slices.Sort(core)
	if !slices.Equal(core, wantCore) {
		t.Errorf("core annotation %q, injected core %v", g.Annotations["core"], wantCore)
	}
	for k, want := range map[string]string{"alertname": alerts.AlertName, "anomaly": "lost-update",
		"level": "strict-serializable", "stream": "file:" + abs} {
		if g.Labels[k] != want {
			t.Errorf("label %s = %q, want %q (labels %v)", k, g.Labels[k], want, g.Labels)
		}
	}
	if g.Labels["id"] == "" || g.GeneratorURL != "http://"+httpAddr+alerts.AnomalyPath(g.Labels["id"]) {
		t.Errorf("id label %q, generatorURL %q", g.Labels["id"], g.GeneratorURL)
	}

	// Prometheus, scraping the run, counts every transaction of the
	// stream as checked (the far marker is not released: nothing passes
	// it).
	prom.WaitFor(t, `streamcheck_transactions_checked_total{job="streamcheck"}`, float64(len(s.merged)), 60*time.Second)
	if v, ok := prom.Query(`sum(streamcheck_anomalies_total{job="streamcheck",type="lost-update"})`); !ok || v != 1 {
		t.Errorf("anomalies_total{type=lost-update} = %v (answered %v), want 1", v, ok)
	}
	if v, ok := prom.Query(`streamcheck_alerts_delivered_total{job="streamcheck",sink="alertmanager"}`); !ok || v != 1 {
		t.Errorf("alerts_delivered_total{sink=alertmanager} = %v (answered %v), want 1", v, ok)
	}

	if v, ok := prom.Query(`streamcheck_alert_latency_seconds_count{job="streamcheck",sink="alertmanager"}`); !ok || v != 1 {
		t.Errorf("alert_latency_seconds_count{sink=alertmanager} = %v (answered %v), want 1", v, ok)
	}

	// The scrape is well-formed by Prometheus' own linter.
	code, metrics := httpGet(t, "http://"+httpAddr+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(metrics)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, b)
	}

	// The page's API lists the same alert; /readyz says not ready, since
	// the generated event times lie in 1970, far beyond the lateness.
	if code, body := httpGet(t, "http://"+httpAddr+"/api/anomalies"); code != http.StatusOK || !strings.Contains(body, g.Labels["id"]) {
		t.Errorf("/api/anomalies: %d %s", code, body)
	}
	if code, body := httpGet(t, "http://"+httpAddr+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "lateness") {
		t.Errorf("/readyz: %d %s", code, body)
	}
	// The status page shows the run's own status (the runner is its
	// source) and the anomaly.
	if code, body := httpGet(t, "http://"+httpAddr+"/"); code != http.StatusOK || !strings.Contains(body, "file:"+abs) || !strings.Contains(body, g.Labels["id"]) {
		t.Errorf("status page: %d, stream %q or alert %q missing:\n%s", code, "file:"+abs, g.Labels["id"], body)
	}
	if code, _ := httpGet(t, "http://"+httpAddr+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz: %d", code)
	}

	if code := stop(); code != ExitAnomaly {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitAnomaly, errb.String())
	}
	// stdout keeps its JSON lines: the same alert, once.
	ids, _ := alertIDs(t, out.String())
	if len(ids) != 1 || ids[0] != g.Labels["id"] {
		t.Errorf("stdout alert ids %v, Alertmanager's %q", ids, g.Labels["id"])
	}
	var a report.Alert
	if err := json.Unmarshal([]byte(strings.SplitN(out.String(), "\n", 2)[0]), &a); err != nil || a.Type != g.Labels["anomaly"] {
		t.Errorf("stdout alert %+v (%v), Alertmanager's anomaly %q", a, err, g.Labels["anomaly"])
	}
	// The server is gone with the run.
	if _, err := http.Get("http://" + httpAddr + "/healthz"); err == nil {
		t.Error("HTTP server still answers after the run returned")
	}
}

// lostUpdateStdin is a tiny stream with one lost update (T1 and T2 both
// read x=0 and write it) and a last event that moves the watermark past
// them.
const lostUpdateStdin = `{"id":"T0","start":0,"end":1,"status":"committed","ops":[["w","x",0]]}
{"id":"T1","start":10,"end":20,"status":"committed","ops":[["r","x",0],["w","x",1]]}
{"id":"T2","start":11,"end":21,"status":"committed","ops":[["r","x",0],["w","x",2]]}
{"id":"T9","start":1000,"end":1001,"status":"committed","ops":[]}
`

// TestWebhookSigned: --webhook with a secret from the config's secret_env
// posts the same alert as the stdout line, signed, with the configured
// header; the receiver is a real HTTP server that verifies the signature.
func TestWebhookSigned(t *testing.T) {
	type got struct {
		body []byte
		sig  string
		hdr  string
	}
	ch := make(chan got, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{b, r.Header.Get(alerts.SignatureHeader), r.Header.Get("X-Team")}
	}))
	defer srv.Close()
	t.Setenv("STREAMCHECK_TEST_SECRET", "s3cret")
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("http:\n  addr: \"\"\nalerts:\n  webhooks:\n    - url: "+srv.URL+"\n      secret_env: STREAMCHECK_TEST_SECRET\n      headers: {X-Team: db}\n"), 0o644)
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--config", cfg, "--lateness", "5", "--initial-state", "empty", "--tick", "1", "--status", "0"},
		strings.NewReader(lostUpdateStdin), &out, &errb)
	if code != ExitAnomaly {
		t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
	}
	select {
	case g := <-ch:
		if !alerts.VerifySignature([]byte("s3cret"), g.body, g.sig) || g.hdr != "db" {
			t.Errorf("signature %q, X-Team %q", g.sig, g.hdr)
		}
		var a, b report.Alert
		if err := json.Unmarshal(g.body, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), &b); err != nil {
			t.Fatalf("stdout %q: %v", out.String(), err)
		}
		if a.ID != b.ID || a.Type != "lost-update" {
			t.Errorf("webhook alert %s %s, stdout %s %s", a.ID, a.Type, b.ID, b.Type)
		}
	default:
		t.Fatalf("webhook got nothing by the end of the run; stdout %s stderr %s", out.String(), errb.String())
	}
	if len(ch) != 0 {
		t.Errorf("%d more webhook deliveries of one alert", len(ch))
	}
}

// TestDeadSinkDoesNotStall: with Alertmanager unreachable, checking goes
// on, stdout still gets the alert, and the exit waits at most
// flushTimeout for the dead sink, saying the alert was not delivered.
func TestDeadSinkDoesNotStall(t *testing.T) {
	old := flushTimeout
	flushTimeout = 500 * time.Millisecond
	defer func() { flushTimeout = old }()
	dead := fmt.Sprintf("http://127.0.0.1:%d", alertstest.FreePort(t))
	var out, errb bytes.Buffer
	t0 := time.Now()
	code := Main(context.Background(), []string{"--http=", "--alertmanager", dead, "--lateness", "5", "--initial-state", "empty", "--tick", "1", "--status", "0"},
		strings.NewReader(lostUpdateStdin), &out, &errb)
	if code != ExitAnomaly || !strings.Contains(out.String(), `"type":"lost-update"`) {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, out.String(), errb.String())
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("run took %v with a dead sink", d)
	}
	for _, want := range []string{"alert delivery failed", "alerts not delivered at exit"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// TestHTTPAddrTaken: a port in use is a start-up error naming the option.
func TestHTTPAddrTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--http", l.Addr().String()}, strings.NewReader(lostUpdateStdin), &out, &errb)
	if code != ExitError || !strings.Contains(errb.String(), "http.addr") {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
}

// TestProvenAt: the latency starts when the watermark first passed the
// core's last end, also after the history was halved.
func TestProvenAt(t *testing.T) {
	var a alerting
	t0 := time.Unix(1000, 0)
	for i := range maxWM + 10 {
		a.noteWatermark(int64(10*i), t0.Add(time.Duration(i)*time.Second))
		a.noteWatermark(int64(10*i), t0) // not an advance: ignored
	}
	now := t0.Add(time.Hour)
	for _, c := range []struct {
		end  int64
		want time.Time
	}{
		{10 * (maxWM - 1), t0.Add(maxWM * time.Second)}, // W passes end at the next sample
		{10*(maxWM-1) + 5, t0.Add(maxWM * time.Second)}, // between samples
		{0, a.wm[0].at},          // older than the history: its oldest sample
		{10 * (maxWM + 10), now}, // not passed yet: now
		{10*(maxWM+8) + 1, t0.Add(time.Duration(maxWM+9) * time.Second)}, // the newest sample
	} {
		if got := a.provenAt(c.end, now); !got.Equal(c.want) {
			t.Errorf("provenAt(%d) = %v, want %v", c.end, got, c.want)
		}
	}
	if len(a.wm) > maxWM {
		t.Errorf("history holds %d samples, bound %d", len(a.wm), maxWM)
	}
}

// TestOutboxRedeliversAfterRestart: with a state directory, an alert a
// webhook refused (500) until the run stopped waits in the Pebble outbox;
// the next run on that directory delivers it, once, and does not write
// the stdout line again (stdout had taken it).
func TestOutboxRedeliversAfterRestart(t *testing.T) {
	old := flushTimeout
	flushTimeout = 300 * time.Millisecond
	defer func() { flushTimeout = old }()
	var mu sync.Mutex
	up, refused, delivered := false, 0, []string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !up {
			refused++
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		delivered = append(delivered, r.Header.Get(alerts.IDHeader))
	}))
	defer srv.Close()
	dir := t.TempDir()
	src := filepath.Join(dir, "events.jsonl")
	os.WriteFile(src, []byte(lostUpdateStdin), 0o644)
	args := []string{"--http=", "--source", src, "--state-dir", filepath.Join(dir, "st"), "--webhook", srv.URL,
		"--lateness", "5", "--initial-state", "empty", "--tick", "1", "--poll", "10ms", "--status", "0"}
	run := func(until func(out string) bool) string {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var out, errb syncBuffer
		done := make(chan int, 1)
		go func() { done <- Main(ctx, args, nil, &out, &errb) }()
		deadline := time.Now().Add(20 * time.Second)
		for !until(out.String()) {
			if time.Now().After(deadline) {
				cancel()
				<-done
				t.Fatalf("condition not met; stdout %q stderr:\n%s", out.String(), errb.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if code := <-done; code == ExitError {
			t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
		}
		return out.String()
	}
	out1 := run(func(out string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(out, "lost-update") && refused > 0
	})
	ids, _ := alertIDs(t, out1)
	if len(ids) != 1 {
		t.Fatalf("first run's alerts: %v", ids)
	}
	mu.Lock()
	up = true
	mu.Unlock()
	out2 := run(func(string) bool {
		mu.Lock()
		defer mu.Unlock()
		return len(delivered) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(delivered) != 1 || delivered[0] != ids[0] {
		t.Errorf("webhook deliveries after the restart %v, want [%s]", delivered, ids[0])
	}
	if strings.TrimSpace(out2) != "" {
		t.Errorf("second run wrote the stdout line again: %q", out2)
	}
}
