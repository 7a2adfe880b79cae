package report

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// longNumber is a run of digits no person reads: a nanosecond timestamp
// or a duration in ns (13 digits is 1000 s in ns).
var longNumber = regexp.MustCompile(`[0-9]{13,}`)

// realtimeResult checks a stale read stamped with wall-clock nanoseconds,
// as clients log them, at Δ = 1ms.
func realtimeResult(t *testing.T) (*incremental.Result, *history.History) {
	t.Helper()
	h, err := history.ParseCompact(`
W[1700000000012317265,1700000000013317265] w x 1 (session c1)
R[1700000000113317265,1700000000114317265] r x null (session c2)
`)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrictSerializable, Skew: 1_000_000, InDoubt: history.NoInDoubt}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return res, h
}

// Text, DOT and SVG show wall-clock times in RFC 3339 and spans as
// durations ("Δ=1ms", "slack 98ms", "+1ms"), never 19-digit nanoseconds;
// JSON keeps the numbers (R1). Golden files hold the layout.
func TestWallClockTimesReadable(t *testing.T) {
	res, h := realtimeResult(t)
	r := New(res, h)
	if len(r.Anomalies) != 1 {
		t.Fatalf("%d anomalies", len(r.Anomalies))
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "realtime.golden.txt", txt.Bytes())
	golden(t, "realtime.golden.dot", DOT(r.Anomalies[0]))
	for _, want := range []string{"2023-11-14T22:13:20.013317265Z+Δ", "Δ=1ms", "slack 98ms", "[2023-11-14T22:13:20.012317265Z, +1ms]"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	var j bytes.Buffer
	if err := WriteJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"start": 1700000000012317265`) || !strings.Contains(j.String(), `"compact": "W[1700000000012317265,1700000000013317265] w x 1 (session c1)"`) {
		t.Errorf("JSON must keep the numbers:\n%s", j.String())
	}
}

// Over every injected anomaly type of a generated history with wall-clock
// timestamps: no output meant for people holds a long number.
func TestNoNanosecondsForPeople(t *testing.T) {
	cfg, _ := gen.Preset("mixed")
	cfg.Txns, cfg.Seed, cfg.Inject = 400, 5, gen.InjectTypes()
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrictSerializable, Skew: 1_000_000, InDoubt: history.NoInDoubt}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 100})
	if err != nil {
		t.Fatal(err)
	}
	r := New(res, h)
	if len(r.Anomalies) < len(cfg.Inject)-1 { // the stale read needs Δ below its gap
		t.Fatalf("%d anomalies for %d injections", len(r.Anomalies), len(cfg.Inject))
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, r, TextOptions{}); err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{"text": txt.String()}
	for _, a := range r.Anomalies {
		outputs["DOT "+a.Type] += string(DOT(a))
		outputs["SVG "+a.Type] += string(SVG(a))
		for _, tx := range a.Txns {
			outputs["Readable "+a.Type] += tx.Readable() + "\n"
		}
	}
	for what, out := range outputs {
		if m := longNumber.FindString(out); m != "" {
			t.Errorf("%s holds %s:\n%s", what, m, out)
		}
	}
}
