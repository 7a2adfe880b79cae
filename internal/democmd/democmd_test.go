package democmd

// Acceptance 4 of issue #9: the demo runs for a bounded time, alerts, the
// offline checker confirms every alert's core on the recorded history, and
// the status page answers while it runs.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

// The options the demo gives run; the offline check uses the same.
var demoOpts = history.Options{Level: history.StrictSerializable, Skew: int64(Skew), InDoubt: int64(InDoubt), InitialState: history.InitialEmpty}

func check(t *testing.T, h *history.History) incremental.Verdict {
	t.Helper()
	res, err := incremental.Check(context.Background(), h, demoOpts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Verdict
}

// freeAddr returns a loopback address nothing listens on (for a moment).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// pageProbe polls the status page while the demo runs: whether / and
// /healthz answered 200, and the most alerts /api/anomalies listed.
type pageProbe struct {
	mu              sync.Mutex
	root, health    bool
	rootBody        string
	maxListed       int
	lastErr         error
	done, completed chan struct{}
}

func probe(addr string) *pageProbe {
	p := &pageProbe{done: make(chan struct{}), completed: make(chan struct{})}
	c := &http.Client{Timeout: time.Second}
	get := func(path string) (int, []byte, error) {
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	go func() {
		defer close(p.completed)
		for {
			select {
			case <-p.done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			code, body, err := get("/")
			p.mu.Lock()
			if err != nil {
				p.lastErr = err
			} else if code == http.StatusOK {
				p.root, p.rootBody = true, string(body)
			}
			p.mu.Unlock()
			if code, _, err := get("/healthz"); err == nil && code == http.StatusOK {
				p.mu.Lock()
				p.health = true
				p.mu.Unlock()
			}
			if code, body, err := get("/api/anomalies"); err == nil && code == http.StatusOK {
				var list []json.RawMessage
				if json.Unmarshal(body, &list) == nil {
					p.mu.Lock()
					p.maxListed = max(p.maxListed, len(list))
					p.mu.Unlock()
				}
			}
		}
	}()
	return p
}

func (p *pageProbe) stop() { close(p.done); <-p.completed }

func TestDemoAlertsAndCoresConfirmed(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "events.jsonl")
	addr := freeAddr(t)
	pp := probe(addr)
	var stdout, stderr bytes.Buffer
	// A lost update every 400 ms on average over 5 s: an alert comes about
	// 1.2 s after its injection, so a run without one is a failure, not
	// bad luck (P(no injection in the first 3 s) = e^-7.5).
	args := []string{"--duration", "5s", "--rate", "150", "--anomaly-every", "400ms", "--seed", "7",
		"--status", "0", "--record", rec, "--http", addr}
	code := Main(context.Background(), args, nil, &stdout, &stderr)
	pp.stop()
	t.Logf("demo %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	if code != ExitOK {
		t.Fatalf("exit %d, want %d", code, ExitOK)
	}

	h, _, err := ingest.ReadFile(rec)
	if err != nil {
		t.Fatalf("recorded history: %v", err)
	}
	if len(h.Txns) < 600 {
		t.Fatalf("%d transactions recorded in 5 s at 150/s", len(h.Txns))
	}
	byID := map[string]history.Txn{}
	injected := map[string][]string{} // injection -> its transactions
	base := &history.History{}
	for _, tx := range h.Txns {
		byID[tx.ID] = tx
		if k := injection(tx.Session); k != "" {
			injected[k] = append(injected[k], tx.ID)
		} else {
			base.Txns = append(base.Txns, tx)
		}
	}
	// The store without its injections is strict serializable (gen G1,
	// G5): the oracle that every alert has to come from an injection.
	if v := check(t, base); v != incremental.Valid {
		t.Fatalf("the recorded history without injections is %v", v)
	}

	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 1<<24)
	alerted := map[string]bool{}
	for sc.Scan() {
		var a report.Alert
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("stdout line is not an alert: %v: %s", err, sc.Text())
		}
		if a.Updated {
			continue
		}
		if a.Type != history.LostUpdate {
			t.Errorf("alert %s is a %s, only lost updates were injected", a.ID, a.Type)
		}
		core := &history.History{}
		for _, id := range a.Core {
			tx, ok := byID[id]
			if !ok {
				t.Fatalf("alert %s names %s, which was never produced", a.ID, id)
			}
			core.Txns = append(core.Txns, tx)
		}
		if v := check(t, core); v != incremental.Invalid {
			t.Errorf("alert %s: its core %v on its own is %v", a.ID, a.Core, v)
		}
		if k := injection(byID[a.Core[0]].Session); k == "" || strings.Join(injected[k], ",") != strings.Join(sortedCopy(a.Core), ",") {
			t.Errorf("alert %s: core %v is not one injection's transactions", a.ID, a.Core)
		} else {
			alerted[k] = true
		}
	}
	if len(alerted) == 0 {
		t.Fatalf("no alert in 5 s with %d lost updates injected", len(injected))
	}
	// D4: the tail lets the checker close every injection, and the
	// online check misses none (docs/SEMANTICS.md §5).
	for k, ids := range injected {
		if !alerted[k] {
			t.Errorf("injection %s (%v) was never alerted", k, ids)
		}
	}
	if v := check(t, h); v != incremental.Invalid {
		t.Fatalf("the recorded history is %v", v)
	}
	if !strings.Contains(stderr.String(), "injected anomaly") {
		t.Errorf("stderr has no readable alert line")
	}

	pp.mu.Lock()
	defer pp.mu.Unlock()
	if !pp.root || !pp.health {
		t.Fatalf("status page on %s: / answered %v, /healthz %v (last error %v)", addr, pp.root, pp.health, pp.lastErr)
	}
	if pp.maxListed == 0 {
		t.Errorf("/api/anomalies never listed an alert")
	}
}

func sortedCopy(ids []string) []string {
	c := append([]string(nil), ids...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

// An interrupt (ctx) without --duration stops the demo the same way: the
// tail closes every injection, and the exit is 0. The checker evicts
// here, which must not change what it alerts.
func TestDemoInterrupted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"--anomaly-every", "300ms", "--seed", "11", "--status", "0", "--evict"}, nil, &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if stdout.Len() == 0 {
		t.Fatalf("no alert")
	}
	if strings.Contains(stderr.String(), "NOT") {
		t.Fatalf("an injection went unalerted or an alert unexplained")
	}
}

// A clean store (no injection) raises no alert: exit 0 and empty stdout.
func TestDemoCleanStoreNoAlert(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"--duration", "2s", "--rate", "300", "--anomaly-every", "0", "--status", "0"}, nil, &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	if code != ExitOK || stdout.Len() != 0 {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
	if !strings.Contains(stderr.String(), "0 alerts") {
		t.Errorf("summary does not say 0 alerts")
	}
}

// storeConfig's timing model: the generated store starts --rate
// transactions per second (within 10%), and the lateness covers every
// transaction's duration (D1).
func TestStoreConfigRate(t *testing.T) {
	for _, rate := range []float64{20, 100, 1000} {
		cfg := &config{rate: rate, seed: 3}
		g := storeConfig(cfg, time.Unix(1_800_000_000, 0))
		g.Txns = 20000
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		first, last := h.Txns[0].Start, h.Txns[0].Start
		var longest int64
		for _, tx := range h.Txns {
			first, last = min(first, tx.Start), max(last, tx.Start)
			longest = max(longest, tx.End-tx.Start)
		}
		got := float64(len(h.Txns)) / (float64(last-first) / 1e9)
		if got < 0.9*rate || got > 1.1*rate {
			t.Errorf("rate %g: the store starts %.1f txn/s", rate, got)
		}
		if l := Lateness(g.Latency); time.Duration(longest) >= l {
			t.Errorf("rate %g: a transaction lasts %s, lateness %s", rate, time.Duration(longest), l)
		}
	}
}

// The pacer sends no event before its end (D1), in end order per
// partition, and a session always to the same partition (D2).
func TestPacer(t *testing.T) {
	type sent struct {
		at   time.Time
		part int
		tx   history.Txn
	}
	var out []sent
	var dec ingest.NativeDecoder
	p := &pacer{partitions: 3, tap: &alertTap{injectedAt: map[string]time.Time{}},
		write: func(_ context.Context, parts []int, vals [][]byte) error {
			now := time.Now()
			for i, v := range vals {
				tx, err := dec.Decode(v, history.Pos{Source: "test", Line: len(out) + 1})
				if err != nil {
					return err
				}
				out = append(out, sent{now, parts[i], tx})
			}
			return nil
		}}
	cfg := &config{rate: 400, anomalyEvery: 50 * time.Millisecond, seed: 5}
	p.tail = 300 * time.Millisecond
	stop := time.Now().Add(700 * time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), stop)
	defer cancel()
	if err := p.run(ctx, storeConfig(cfg, time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	if len(out) < 300 {
		t.Fatalf("%d events in 1 s at 400/s", len(out))
	}
	// D4: the tail ran, no injection began in it, and none was cut short.
	perInj := map[string]int{}
	for _, s := range out {
		if k := injection(s.tx.Session); k != "" {
			if perInj[k] == 0 && s.tx.Start >= stop.UnixNano() {
				t.Errorf("injection %s begins after the stop", k)
			}
			perInj[k]++
		}
	}
	for k, n := range perInj {
		if n != 2 {
			t.Errorf("injection %s has %d of its 2 transactions", k, n)
		}
	}
	if last := out[len(out)-1].tx.End; last < stop.Add(200*time.Millisecond).UnixNano() {
		t.Errorf("the store stopped %s after the stop, want the 300ms tail", time.Duration(last-stop.UnixNano()))
	}
	partOf := map[string]int{}
	lastEnd := make([]int64, 3)
	inj := 0
	for _, s := range out {
		if s.at.UnixNano() < s.tx.End {
			t.Fatalf("%s sent %s before its end", s.tx.ID, time.Unix(0, s.tx.End).Sub(s.at))
		}
		if q, ok := partOf[s.tx.Session]; ok && q != s.part {
			t.Fatalf("session %s on partitions %d and %d", s.tx.Session, q, s.part)
		}
		partOf[s.tx.Session] = s.part
		if s.tx.End < lastEnd[s.part] {
			t.Fatalf("%s out of end order in partition %d", s.tx.ID, s.part)
		}
		lastEnd[s.part] = s.tx.End
		if injection(s.tx.Session) != "" {
			inj++
		}
	}
	for q := 0; q < 3; q++ {
		if lastEnd[q] == 0 {
			t.Errorf("partition %d got no event", q)
		}
	}
	if inj == 0 {
		t.Errorf("no injected transaction in 700 ms at one per 100 ms")
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "0"}, "--rate 0"},
		{[]string{"--rate", "-5"}, "--rate -5"},
		{[]string{"--duration", "-1s"}, "--duration -1s: negative"},
		{[]string{"--anomaly-every", "-1s"}, "--anomaly-every -1s: negative"},
		{[]string{"--partitions", "0"}, "--partitions 0"},
		{[]string{"--duration", "soon"}, `invalid value "soon" for flag -duration`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		if code := Main(context.Background(), tc.args, nil, &stdout, &stderr); code != ExitError {
			t.Errorf("%v: exit %d, want %d", tc.args, code, ExitError)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
}

func TestPartitionOfAndInjection(t *testing.T) {
	for i := 0; i < 8; i++ {
		if got := partitionOf("c"+string(rune('0'+i)), 3); got != i%3 {
			t.Errorf("c%d -> %d", i, got)
		}
	}
	if a, b := partitionOf("inj4.1", 3), partitionOf("inj4.1", 3); a != b || a < 0 || a > 2 {
		t.Errorf("inj4.1 -> %d, %d", a, b)
	}
	for s, want := range map[string]string{"inj12.0": "12", "inj3.1": "3", "c1": "", "inj": "", "injx": ""} {
		if got := injection(s); got != want {
			t.Errorf("injection(%q) = %q, want %q", s, got, want)
		}
	}
}

// A status page address already taken stops the demo with exit 2 and
// run's message naming the option, instead of a demo without its page.
func TestDemoHTTPAddressTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"--duration", "30s", "--status", "0", "--http", l.Addr().String()}, nil, &stdout, &stderr)
	}()
	select {
	case code := <-done:
		if code != ExitError {
			t.Errorf("exit %d, want %d", code, ExitError)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the demo ran on without its status page")
	}
	for _, want := range []string{"http.addr", "the in-process checker"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
