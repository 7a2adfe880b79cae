package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
)

// TestStdoutGetsEveryAlert: stdout is a local sink, so the end of a run
// waits for it as long as it writes, whatever flushTimeout says
// (alerts.Dispatcher.FlushLocal). A stream whose many anomalies are all
// proven in the last step (the lateness spans the stream, so nothing is
// stepped before the end of input) is run with a flush bound of a
// nanosecond, the bound a loaded machine effectively imposed when issue
// 28's sweep saw an alert raised and never written: every alert the
// engine raised is on stdout.
func TestStdoutGetsEveryAlert(t *testing.T) {
	defer func(d time.Duration) { flushTimeout = d }(flushTimeout)
	flushTimeout = time.Nanosecond
	h, _, err := gen.Generate(gen.Config{Txns: 400, Seed: 5, InjectRate: 0.1, UnknownRatio: 0})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--http=", "--lateness", "1h", "--initial-state", "empty", "--status", "0"},
		strings.NewReader(native(t, h)), &out, &errb)
	if code != ExitAnomaly {
		t.Fatalf("exit %d\nstderr: %s", code, errb.String())
	}
	m := regexp.MustCompile(`end of input after .*?, (\d+) alerts?, `).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no end-of-input summary:\n%s", errb.String())
	}
	raised, _ := strconv.Atoi(m[1])
	ids := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a report.Alert
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("alert line %q: %v", l, err)
		}
		ids[a.ID] = true
	}
	if raised < 10 || len(ids) != raised {
		t.Fatalf("the engine raised %d alerts, %d distinct ids reached stdout\nstderr: %s", raised, len(ids), errb.String())
	}
}
