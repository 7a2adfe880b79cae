package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/verdict"
)

// AlertmanagerOptions configure an Alertmanager sink.
type AlertmanagerOptions struct {
	// URL is Alertmanager's base URL ("http://127.0.0.1:9093"); the sink
	// posts to URL + "/api/v2/alerts".
	URL string
	// Stream names the checked stream (a topic, a file) in the "stream"
	// label, so that alerts of two checkers stay apart.
	Stream string
	// Hold is how long Alertmanager keeps the alert firing: endsAt =
	// startsAt + Hold. An isolation anomaly never resolves by itself, but
	// it is not repeated either, so the hold is how long on-call sees it
	// (default 24h).
	Hold time.Duration
	// StatusURL is the status page's external base URL
	// ("http://checker:9479"); generatorURL is StatusURL + AnomalyPath(id).
	// Empty: no generatorURL.
	StatusURL string
	// Client defaults to a client with a 10 s timeout.
	Client *http.Client
	// Now defaults to time.Now. startsAt is when the dispatcher was given
	// the alert (ProvenAt), the same on every retry, else Now() at
	// delivery.
	Now func() time.Time
	// Name defaults to "alertmanager".
	Name string
	_    struct{}
}

// Alertmanager pushes alerts the way Prometheus does: POST /api/v2/alerts
// with a JSON list of postable alerts. Labels: alertname
// ("IsolationAnomaly"), anomaly (the anomaly's type), level (the level the
// core violates), stream and id; the id keeps two anomalies of the same type
// apart, since Alertmanager merges alerts with equal labels, and makes a
// repeated delivery of the same alert merge with the first.
type Alertmanager struct {
	opts     AlertmanagerOptions
	endpoint string
}

// AlertName is the alertname label of every isolation anomaly.
const AlertName = "IsolationAnomaly"

// NewAlertmanager checks the options and returns the sink.
func NewAlertmanager(opts AlertmanagerOptions) (*Alertmanager, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("alerts: alertmanager url %q: want http(s)://host:port", opts.URL)
	}
	if opts.Hold == 0 {
		opts.Hold = 24 * time.Hour
	}
	if opts.Hold < 0 {
		return nil, fmt.Errorf("alerts: alertmanager hold %v: must be positive", opts.Hold)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Name == "" {
		opts.Name = "alertmanager"
	}
	return &Alertmanager{opts: opts, endpoint: strings.TrimRight(opts.URL, "/") + "/api/v2/alerts"}, nil
}

// Name implements Sink.
func (s *Alertmanager) Name() string { return s.opts.Name }

// PostableAlert is one element of Alertmanager's POST /api/v2/alerts body
// (its OpenAPI schema "postableAlert").
type PostableAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// Postable renders a as Alertmanager receives it, starting at start.
func (s *Alertmanager) Postable(a verdict.Alert, start time.Time) PostableAlert {
	p := PostableAlert{
		Labels: map[string]string{
			"alertname": AlertName,
			"anomaly":   a.Type,
			"level":     a.Level,
			"id":        a.ID,
		},
		Annotations: map[string]string{
			"summary":        Summary(a),
			"description":    strings.Join(a.Explanation, "\n"),
			"core":           strings.Join(a.Core, ", "),
			"class":          a.Class,
			"promised_level": a.PromisedLevel,
			"needs_realtime": strconv.FormatBool(a.NeedsRealtime),
		},
		StartsAt: start.UTC(),
		EndsAt:   start.Add(s.opts.Hold).UTC(),
	}
	// An empty label is an absent one to Alertmanager; leave it out
	// rather than send a label that does not show.
	if s.opts.Stream != "" {
		p.Labels["stream"] = s.opts.Stream
	}
	if s.opts.StatusURL != "" {
		p.GeneratorURL = strings.TrimRight(s.opts.StatusURL, "/") + AnomalyPath(a.ID)
	}
	return p
}

// Deliver implements Sink.
func (s *Alertmanager) Deliver(ctx context.Context, a verdict.Alert) error {
	start, ok := ProvenAt(ctx)
	if !ok {
		start = s.opts.Now()
	}
	body, err := json.Marshal([]PostableAlert{s.Postable(a, start)})
	if err != nil {
		return fmt.Errorf("alerts: alertmanager: encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("alerts: alertmanager: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(s.opts.Client, req, "alertmanager")
}

// Summary is the one-line title of an alert, as Alertmanager's summary
// annotation and the status page show it.
func Summary(a verdict.Alert) string {
	name := a.Type
	if a.Class != "" && a.Class != a.Type {
		name += " (" + a.Class + ")"
	}
	s := fmt.Sprintf("%s among %s under %s", name, strings.Join(a.Core, ", "), a.Level)
	if a.NeedsRealtime {
		s += " (real-time order only: a stale read)"
	}
	return s
}

// AnomalyPath is the status page's path of the alert id, which
// Alertmanager's generatorURL points at.
func AnomalyPath(id string) string { return "/anomalies/" + url.PathEscape(id) }

// do sends req and turns anything but a 2xx answer into an error that
// quotes the start of the body, so that the log says why a peer refused.
func do(c *http.Client, req *http.Request, what string) error {
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("alerts: %s: %w", what, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("alerts: %s: %s: %s", what, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
