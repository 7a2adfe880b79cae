// Package alertstest starts the real peers of the alerting path for tests:
// Alertmanager and Prometheus from Debian's packages on loopback ports,
// with temporary storage, and headless Chromium. A test that needs one
// skips with a message when its binary is missing, except under CI=true,
// where .ci/run installs it and a missing binary fails the test.
//
// It imports nothing of streamcheck, so that any package's tests can use
// it (alerts' own included), and it leaves no process behind: every
// server stops in t.Cleanup.
package alertstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// NeedBinary returns the path of an external program, skipping the test
// when it is missing, except under CI=true.
func NeedBinary(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (Debian package %s) is required under CI=true", name, pkg)
		}
		t.Skipf("%s not installed (apt-get install --no-install-recommends %s)", name, pkg)
	}
	return p
}

// FreePort returns a loopback port nobody listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// WaitHTTP polls url until it answers 200 or the timeout passes.
func WaitHTTP(t testing.TB, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready after %v: %v", url, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// process is an external server whose output is kept for failure logs.
type process struct {
	name string
	bin  string
	args []string

	mu  sync.Mutex
	cmd *exec.Cmd
	out bytes.Buffer
}

type lockedWriter struct{ p *process }

func (w lockedWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	return w.p.out.Write(b)
}

func (p *process) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = lockedWriter{p}, lockedWriter{p}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	p.mu.Lock()
	p.cmd = cmd
	p.mu.Unlock()
}

func (p *process) stop() {
	p.mu.Lock()
	cmd := p.cmd
	p.cmd = nil
	p.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

func (p *process) cleanup(t testing.TB) {
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			p.mu.Lock()
			t.Logf("%s output:\n%s", p.name, p.out.String())
			p.mu.Unlock()
		}
	})
}

// Alertmanager is a real Alertmanager (Debian package
// prometheus-alertmanager) on a loopback port, gossip off, one receiver
// without integrations: tests read alerts back through its API.
type Alertmanager struct {
	// URL is the base URL, known before Start so that a test can deliver
	// to it while it is still down.
	URL string
	p   *process
}

// NewAlertmanager prepares an Alertmanager on a free port without
// starting it; it stops at the end of the test.
func NewAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	bin := NeedBinary(t, "prometheus-alertmanager", "prometheus-alertmanager")
	dir := t.TempDir()
	cfg := "route:\n  receiver: sink\nreceivers:\n  - name: sink\n"
	if err := os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	am := &Alertmanager{URL: fmt.Sprintf("http://127.0.0.1:%d", port), p: &process{name: "alertmanager", bin: bin, args: []string{
		"--config.file=" + filepath.Join(dir, "alertmanager.yml"),
		"--storage.path=" + filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--cluster.listen-address=",
		"--log.level=warn",
	}}}
	am.p.cleanup(t)
	return am
}

// StartAlertmanager is NewAlertmanager followed by Start.
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	am := NewAlertmanager(t)
	am.Start(t)
	return am
}

// Start runs Alertmanager and waits until it is ready.
func (am *Alertmanager) Start(t testing.TB) {
	t.Helper()
	am.p.start(t)
	WaitHTTP(t, am.URL+"/-/ready", 30*time.Second)
}

// Stop kills it (Start may follow again).
func (am *Alertmanager) Stop() { am.p.stop() }

// Alert is the part of Alertmanager's GET /api/v2/alerts answer (its
// "gettableAlert") that tests read.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Status       struct {
		State string `json:"state"`
	} `json:"status"`
}

// Alerts lists the alerts Alertmanager holds.
func (am *Alertmanager) Alerts(t testing.TB) []Alert {
	t.Helper()
	resp, err := http.Get(am.URL + "/api/v2/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v2/alerts: %s", resp.Status)
	}
	var out []Alert
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Prometheus is a real Prometheus server (Debian package prometheus)
// scraping the given targets every second.
type Prometheus struct {
	URL string
	p   *process
}

// StartPrometheus runs Prometheus with job "streamcheck" scraping targets
// (host:port) every second, and rule files if any (absolute paths or
// relative to the test's directory), and waits until it is ready.
func StartPrometheus(t testing.TB, targets []string, ruleFiles ...string) *Prometheus {
	t.Helper()
	bin := NeedBinary(t, "prometheus", "prometheus")
	dir := t.TempDir()
	var rules []string
	for _, r := range ruleFiles {
		abs, err := filepath.Abs(r)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, strconv.Quote(abs))
	}
	var quoted []string
	for _, tg := range targets {
		quoted = append(quoted, strconv.Quote(tg))
	}
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%s]\nscrape_configs:\n  - job_name: streamcheck\n    static_configs:\n      - targets: [%s]\n",
		join(rules), join(quoted))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	p := &Prometheus{URL: fmt.Sprintf("http://127.0.0.1:%d", port), p: &process{name: "prometheus", bin: bin, args: []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--log.level=warn",
	}}}
	p.p.cleanup(t)
	p.p.start(t)
	WaitHTTP(t, p.URL+"/-/ready", 60*time.Second)
	return p
}

func join(xs []string) string {
	var b bytes.Buffer
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// Query runs an instant PromQL query and returns its value when the
// answer is exactly one sample (false otherwise, for example before the
// first scrape).
func (p *Prometheus) Query(q string) (float64, bool) {
	resp, err := http.Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" || len(r.Data.Result) != 1 {
		return 0, false
	}
	v, err := strconv.ParseFloat(fmt.Sprint(r.Data.Result[0].Value[1]), 64)
	return v, err == nil
}

// WaitFor polls q until it equals want, failing the test after timeout.
func (p *Prometheus) WaitFor(t testing.TB, q string, want float64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last float64
	seen := false
	for time.Now().Before(deadline) {
		if v, ok := p.Query(q); ok {
			last, seen = v, true
			if v == want {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !seen {
		t.Fatalf("PromQL %s: no single sample after %v, want %v", q, timeout, want)
	}
	t.Fatalf("PromQL %s = %v after %v, want %v", q, last, timeout, want)
}

// Chromium runs headless Chromium with the flags a sandboxless, offline
// test machine needs and a profile under the test's temporary directory,
// then args (--dump-dom URL, --screenshot=FILE --window-size=W,H URL, ...),
// and returns its standard output.
func Chromium(t testing.TB, args ...string) []byte {
	t.Helper()
	bin := NeedBinary(t, "chromium", "chromium")
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(t.TempDir(), "profile")}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}
