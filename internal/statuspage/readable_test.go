package statuspage

import (
	"context"
	"html"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/report"
)

// The anomaly page shows client times as people read them: RFC 3339 for
// wall-clock nanoseconds and durations for spans ("Δ=1ms"), in the core
// table, the drawing and the explanation; no 19-digit number.
func TestAnomalyPageTimesReadable(t *testing.T) {
	h, err := history.ParseCompact(`
W[1700000000012317265,1700000000013317265] w x 1 (session c1)
R[1700000000113317265,1700000000114317265] r x null (session c2)
`)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrictSerializable, Skew: 1_000_000, InDoubt: history.NoInDoubt}
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil || len(res.Anomalies) != 1 {
		t.Fatalf("check: %v, %d anomalies", err, len(res.Anomalies))
	}
	r := report.New(res, h)
	a := report.Alert{ID: "sc-stale", Level: r.Level, PromisedLevel: r.Level, SkewNS: r.SkewNS,
		InitialState: r.InitialState, Watermark: 1700000000200000000, Anomaly: r.Anomalies[0]}
	s := New(Options{})
	s.Add(a)
	srv := httptest.NewServer(s)
	defer srv.Close()
	for _, path := range []string{"/", alerts.AnomalyPath(a.ID)} {
		_, body, _ := get(t, srv.URL+path)
		body = html.UnescapeString(body) // html/template writes + as &#43;
		for _, want := range []string{"W[2023-11-14T22:13:20.012317265Z, +1ms] w x 1", "Δ=1ms, slack 98ms", "[2023-11-14T22:13:20.113317265Z, +1ms]"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", path, want)
			}
		}
		if m := regexp.MustCompile(`[0-9]{13,}`).FindString(body); m != "" {
			t.Errorf("%s shows %s", path, m)
		}
	}
}
