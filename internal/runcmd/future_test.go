package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

// alertCores runs run on in and returns its alerts' cores.
func alertCores(t *testing.T, in []byte, args ...string) ([][]string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	Main(context.Background(), append([]string{"--http=", "--lateness", "5ms", "--indoubt", "1ms", "--initial-state", "empty", "--tick", "10ms"}, args...),
		bytes.NewReader(in), &out, &errb)
	var cores [][]string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var a report.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("alert line %q: %v", l, err)
		}
		cores = append(cores, a.Core)
	}
	return cores, errb.String()
}

// TestFutureClockDoesNotBlind: one event stamped a day ahead, in the
// middle of a 10K stream with 25 injected anomalies, used to move the
// watermark a day on, so that every later event was late and the
// anomalies after it went unalerted (issue 20 item 4). It is now set
// aside as future, and every injected anomaly is alerted: some alert's
// core holds one of its transactions (cores are not unique, so the
// manifest's own core need not be the one found). The event writes a key
// of its own, so that as an unchecked writer it cannot hide an anomaly.
func TestFutureClockDoesNotBlind(t *testing.T) {
	cfg, _ := gen.Preset("blindw-rw") // the cheapest workload to run: the test is about the window
	cfg.Txns, cfg.Seed = 10000, 20
	types := []string{"G0", "G1a", "G1b", "garbage-read", "internal", "G1c", "G-single", "read-skew", "lost-update", "write-skew", "G2-item", "G-single-realtime"}
	for i := range 25 {
		cfg.Inject = append(cfg.Inject, types[i%len(types)])
	}
	h, inj, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(inj) != 25 {
		t.Fatalf("%d anomalies injected", len(inj))
	}
	var in []byte
	mid := len(h.Txns) / 2
	for i := range h.Txns {
		if i == mid {
			f := history.Txn{ID: "clock-a-day-ahead", Start: h.Txns[i].Start + int64(24*time.Hour), HasTime: true, Status: history.Committed,
				Ops: []history.Op{{Kind: history.Write, Key: history.StringValue("skewed-client-key"), Value: "1"}}}
			f.End = f.Start + 1000
			in = append(ingest.AppendNative(in, &f), '\n')
		}
		in = append(ingest.AppendNative(in, &h.Txns[i]), '\n')
	}
	cores, stderr := alertCores(t, in)
	missed := 0
	for _, a := range inj {
		found := slices.ContainsFunc(cores, func(c []string) bool {
			return slices.ContainsFunc(c, func(id string) bool { return slices.Contains(a.Txns, id) })
		})
		if !found {
			missed++
			t.Errorf("injected %s %v: no alert", a.Type, a.Txns)
		}
	}
	if missed > 0 {
		t.Fatalf("%d of %d injected anomalies missed with one event a day ahead (%d alerts)\n%s", missed, len(inj), len(cores), stderr)
	}
	if !strings.Contains(stderr, "PARTIAL") {
		t.Errorf("the future event is not reported as set aside: %s", stderr)
	}
}

// TestFutureWallClock: the stream's first event has no reference in event
// time; when it is a day ahead of the wall clock (its timestamps look like
// wall-clock nanoseconds), run sets it aside as future, says so with the
// clock's reading, and the events after it are checked, not late.
func TestFutureWallClock(t *testing.T) {
	now := time.Now().UnixNano()
	ev := func(id string, start int64, op string) string {
		return fmt.Sprintf(`{"id":%q,"start":%d,"end":%d,"status":"committed","ops":[%s]}`, id, start, start+1000, op)
	}
	in := strings.Join([]string{
		ev("ahead", now+int64(24*time.Hour), `["w","y",1]`),
		ev("w1", now, `["w","x",1]`),
		ev("w2", now+10_000, `["w","x",2]`),
		ev("r", now+20_000, `["r","x",1]`),
	}, "\n") + "\n"
	dl := filepath.Join(t.TempDir(), "dead.jsonl")
	var out, errb bytes.Buffer
	Main(context.Background(), []string{"--http=", "--lateness", "1us", "--tick", "1us", "--initial-state", "empty", "--dead-letter", dl}, strings.NewReader(in), &out, &errb)
	b, _ := os.ReadFile(dl)
	if !strings.Contains(string(b), `"reason":"future"`) || !strings.Contains(string(b), "ahead of the wall clock") || strings.Count(string(b), "\n") != 1 {
		t.Errorf("dead letters:\n%s", b)
	}
	if !strings.Contains(out.String(), `"G-single-realtime"`) {
		t.Errorf("the stale read after the event ahead is not alerted:\n%s\n%s", out.String(), errb.String())
	}
}
