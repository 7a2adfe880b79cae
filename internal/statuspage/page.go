package statuspage

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/internal/report"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"duration": func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"rate":     func(r float64) string { return fmt.Sprintf("%.1f", r) },
	"time":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
}).ParseFS(templateFS, "templates/*.html"))

// pageData is what the templates read; every user string in it is plain
// text that html/template escapes, except SVG (report.SVG escapes its own
// text, G2 in internal/report) and Chart (numbers only).
type pageData struct {
	Title     string
	Now       time.Time
	Refresh   int
	HasStatus bool
	Status    Status
	Uptime    time.Duration
	Ready     bool
	NotReady  string
	Lags      []lagView
	Rates     []rateView
	Chart     template.HTML
	Anomalies []anomalyView
	Single    bool
}

type lagView struct {
	Name   string
	Lag    time.Duration
	Behind bool
}

type rateView struct {
	Window string
	Rate   float64
	Known  bool
}

type anomalyView struct {
	ID, Summary, Link, JSONLink string
	Type, Class                 string
	Level, Promised             string
	NeedsRealtime, Updated      bool
	Received                    time.Time
	Core                        string
	SVG                         template.HTML
	Explanation                 []string
	Txns                        []report.Txn
}

func (s *Server) statusPage(w http.ResponseWriter, _ *http.Request) {
	d := s.common()
	d.Title = "streamcheck"
	s.mu.Lock()
	recents := make([]recent, 0, len(s.alerts))
	for i := len(s.alerts) - 1; i >= 0; i-- {
		recents = append(recents, s.alerts[i])
	}
	s.mu.Unlock()
	for _, r := range recents {
		d.Anomalies = append(d.Anomalies, view(r))
	}
	s.render(w, "status.html", d)
}

func (s *Server) anomalyPage(w http.ResponseWriter, r *http.Request) {
	x, ok := s.find(r.PathValue("id"))
	if !ok {
		text(w, http.StatusNotFound, fmt.Sprintf("no recent anomaly with id %q (the page keeps the last %d)", r.PathValue("id"), s.opts.MaxAlerts))
		return
	}
	d := s.common()
	d.Title = "streamcheck: " + alerts.Summary(x.alert)
	d.Refresh = 0
	d.Single = true
	d.Anomalies = []anomalyView{view(x)}
	s.render(w, "anomaly.html", d)
}

func (s *Server) render(w http.ResponseWriter, name string, d pageData) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, d); err != nil {
		s.log.Error("status page: render", "page", name, "err", err)
		text(w, http.StatusInternalServerError, "render "+name+": "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// common fills what every page shows: the checker's numbers and readiness.
func (s *Server) common() pageData {
	now := s.opts.Now()
	d := pageData{Now: now, Ready: true}
	if s.opts.Refresh > 0 {
		d.Refresh = max(1, int(s.opts.Refresh/time.Second))
	}
	if s.opts.Ready != nil {
		if err := s.opts.Ready(); err != nil {
			d.Ready, d.NotReady = false, err.Error()
		}
	}
	if s.opts.Source == nil {
		return d
	}
	st := s.opts.Source.Status()
	d.HasStatus, d.Status = true, st
	if !st.Started.IsZero() {
		d.Uptime = now.Sub(st.Started).Round(time.Second)
	}
	for _, p := range st.Partitions {
		d.Lags = append(d.Lags, lagView{Name: p.Name, Lag: p.Lag, Behind: st.Lateness > 0 && p.Lag > st.Lateness})
	}
	s.mu.Lock()
	samples := append([]sample(nil), s.samples...)
	s.mu.Unlock()
	// The current total counts as the newest sample, so that the rates
	// are up to date between two ticks of Run.
	samples = append(samples, sample{at: now, txns: st.TxnsChecked})
	for _, w := range []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute} {
		r, ok := rateOver(samples, w)
		d.Rates = append(d.Rates, rateView{Window: w.String(), Rate: r, Known: ok})
	}
	d.Chart = chart(samples, s.opts.History)
	return d
}

// rateOver is the mean rate over the last w, from the newest sample back
// to the newest sample at least w older (or the oldest one there is).
func rateOver(samples []sample, w time.Duration) (float64, bool) {
	if len(samples) < 2 {
		return 0, false
	}
	last := samples[len(samples)-1]
	first := samples[0]
	for i := len(samples) - 2; i >= 0; i-- {
		first = samples[i]
		if last.at.Sub(first.at) >= w {
			break
		}
	}
	dt := last.at.Sub(first.at).Seconds()
	if dt <= 0 || last.txns < first.txns {
		return 0, false
	}
	return float64(last.txns-first.txns) / dt, true
}

// chart draws the throughput between consecutive samples as bars on a
// fixed time axis of length history ending now: inline SVG, numbers only.
func chart(samples []sample, history time.Duration) template.HTML {
	const w, h, pad = 600.0, 120.0, 30.0
	if len(samples) < 2 {
		return ""
	}
	end := samples[len(samples)-1].at
	type bar struct{ x0, x1, r float64 }
	var bars []bar
	peak := 0.0
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		dt := b.at.Sub(a.at).Seconds()
		if dt <= 0 || b.txns < a.txns {
			continue
		}
		r := float64(b.txns-a.txns) / dt
		x := func(t time.Time) float64 {
			f := 1 - end.Sub(t).Seconds()/history.Seconds()
			return pad + math.Max(0, f)*(w-2*pad)
		}
		bars = append(bars, bar{x(a.at), x(b.at), r})
		peak = math.Max(peak, r)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="throughput" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="transactions checked per second over the last %s" font-family="sans-serif" font-size="11">`,
		w, h, w, h, history)
	fmt.Fprintf(&sb, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>`, pad, h-pad/2, w-pad, h-pad/2)
	for _, b := range bars {
		bh := 0.0
		if peak > 0 {
			bh = b.r / peak * (h - 2*pad)
		}
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#4a7ab5"><title>%.1f txn/s</title></rect>`,
			b.x0, h-pad/2-bh, math.Max(b.x1-b.x0-1, 1), bh, b.r)
	}
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f">peak %.1f txn/s</text>`, pad, pad/2+4, peak)
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f">-%s</text>`, pad, h-2, history)
	fmt.Fprintf(&sb, `<text x="%.0f" y="%.0f" text-anchor="end">now</text>`, w-pad, h-2)
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}

func view(r recent) anomalyView {
	a := r.alert
	return anomalyView{
		ID:            a.ID,
		Summary:       alerts.Summary(a),
		Link:          alerts.AnomalyPath(a.ID),
		JSONLink:      "/api" + alerts.AnomalyPath(a.ID),
		Type:          a.Type,
		Class:         a.Class,
		Level:         a.Level,
		Promised:      a.PromisedLevel,
		NeedsRealtime: a.NeedsRealtime,
		Updated:       a.Updated,
		Received:      r.received,
		Core:          strings.Join(a.Core, ", "),
		// report.SVG escapes every user string (G2), so the drawing is
		// safe to inline as it is.
		SVG:         template.HTML(report.SVG(a.Anomaly)),
		Explanation: a.Explanation,
		Txns:        a.Txns,
	}
}
