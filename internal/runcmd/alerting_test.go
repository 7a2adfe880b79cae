package runcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
