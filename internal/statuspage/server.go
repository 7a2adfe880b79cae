package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamcheck/streamcheck/internal/report"
)

// DefaultAddr is where the server listens unless configured otherwise:
// loopback only, since the page shows transaction contents.
const DefaultAddr = "127.0.0.1:9479"

// Status is one snapshot of the checker, as the run loop sees it. The
// server copies nothing out of it after the call returns, so the run loop
// may build it fresh each time.
type Status struct {
	// Stream names what is checked (topic, file); Level the promised level.
	Stream string
	Level  string
	// Started is when the run began.
	Started time.Time
	// Lateness is the configured allowed lateness: lag beyond it means the
	// checker is behind.
	Lateness time.Duration
	// Partitions lists each input partition's watermark lag.
	Partitions []Partition
	// EventsConsumed and TxnsChecked are running totals; the page derives
	// throughput from samples of TxnsChecked.
	EventsConsumed uint64
	TxnsChecked    uint64
	// Window and Pinned are the window's current sizes.
	Window, Pinned int
	// Inexact is true while verdicts may be missing (a budget ran out);
	// InexactReason says which.
	Inexact       bool
	InexactReason string
}

// Partition is one input partition's progress.
type Partition struct {
	Name string
	// Lag is how far the partition's watermark is behind the wall clock.
	Lag time.Duration
}

// StatusSource is what the run loop implements for the page. Status must
// be safe to call from the server's goroutines and cheap (the page calls
// it per request and the sampler every SampleEvery).
type StatusSource interface {
	Status() Status
}

// Options configure a Server; zero values take the defaults in brackets.
type Options struct {
	// Gatherer is served on /metrics [an empty registry]. Pass the
	// registry the checker's alerts.Metrics were registered on.
	Gatherer prometheus.Gatherer
	// Source supplies the page's numbers [none: the page shows anomalies
	// only].
	Source StatusSource
	// Ready returns nil once the checker has caught up within the
	// lateness, else why not; /readyz answers 200 or 503 with the reason
	// [always ready].
	Ready func() error
	// Logger receives HTTP serving errors [discard].
	Logger *slog.Logger
	// MaxAlerts is how many recent alerts the page and /api/anomalies keep
	// [100].
	MaxAlerts int
	// SampleEvery and History set the throughput chart: one sample of
	// TxnsChecked per SampleEvery, kept for History [10s, 15m].
	SampleEvery, History time.Duration
	// Refresh is the status page's meta refresh period, negative for none
	// [30s].
	Refresh time.Duration
	// Now is the clock [time.Now].
	Now func() time.Time
	// Pprof serves Go's profiles under /debug/pprof/ [off]. Off by
	// default: anyone who reaches the port could start a CPU profile or
	// an execution trace of any length, which costs the checker CPU.
	Pprof bool
	_     struct{}
}

// Server is the checker's one HTTP server: /metrics, /healthz, /readyz,
// /api/anomalies, /api/anomalies/{id}, the status page at / and one page
// per anomaly at /anomalies/{id} (alerts.AnomalyPath, Alertmanager's
// generatorURL), and, with Options.Pprof, Go's profiles under /debug/pprof/. It also keeps the recent alerts: it is an alerts.Sink
// named "statuspage" (add it to the dispatcher), or the run loop calls Add.
type Server struct {
	opts Options
	mux  *http.ServeMux
	log  *slog.Logger

	mu      sync.Mutex
	alerts  []recent // oldest first
	samples []sample // oldest first
}

type recent struct {
	alert    report.Alert
	received time.Time
}

type sample struct {
	at   time.Time
	txns uint64
}

// New returns the server; nothing listens before ListenAndServe (or use
// it as an http.Handler).
func New(opts Options) *Server {
	if opts.Gatherer == nil {
		opts.Gatherer = prometheus.NewRegistry()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxAlerts <= 0 {
		opts.MaxAlerts = 100
	}
	if opts.SampleEvery <= 0 {
		opts.SampleEvery = 10 * time.Second
	}
	if opts.History <= 0 {
		opts.History = 15 * time.Minute
	}
	if opts.Refresh == 0 {
		opts.Refresh = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), log: opts.Logger}
	s.mux.Handle("GET /metrics", promhttp.HandlerFor(opts.Gatherer, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelError),
		// A metric that fails to collect should not hide all others.
		ErrorHandling: promhttp.ContinueOnError,
	}))
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok") })
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /api/anomalies", s.apiList)
	s.mux.HandleFunc("GET /api/anomalies/{id}", s.apiOne)
	s.mux.HandleFunc("GET /anomalies/{id}", s.anomalyPage)
	s.mux.HandleFunc("GET /{$}", s.statusPage)
	if opts.Pprof {
		// Profiles on the admin port, as Prometheus and etcd serve them:
		// a checker that falls behind production traffic is diagnosed
		// where it runs, with the stream that slows it. Only when asked
		// for (Options.Pprof).
		s.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		s.mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		s.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		s.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		s.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Name implements alerts.Sink.
func (s *Server) Name() string { return "statuspage" }

// Deliver implements alerts.Sink: Add, which cannot fail.
func (s *Server) Deliver(_ context.Context, a report.Alert) error {
	s.Add(a)
	return nil
}

// Add records an alert. An alert whose id is known replaces the earlier
// version in place (an update keeps the id), so each id shows once.
func (s *Server) Add(a report.Alert) {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.alerts {
		if s.alerts[i].alert.ID == a.ID {
			s.alerts[i].alert = a
			return
		}
	}
	s.alerts = append(s.alerts, recent{alert: a, received: now})
	if len(s.alerts) > s.opts.MaxAlerts {
		s.alerts = slices.Delete(s.alerts, 0, len(s.alerts)-s.opts.MaxAlerts)
	}
}

// Alerts returns the recent alerts, newest first.
func (s *Server) Alerts() []report.Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]report.Alert, 0, len(s.alerts))
	for i := len(s.alerts) - 1; i >= 0; i-- {
		out = append(out, s.alerts[i].alert)
	}
	return out
}

// Sample records the source's TxnsChecked now; Run calls it every
// SampleEvery. Exported so that a run loop without Run (or a test) can
// feed the chart itself.
func (s *Server) Sample() {
	if s.opts.Source == nil {
		return
	}
	st := s.opts.Source.Status()
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, sample{at: now, txns: st.TxnsChecked})
	// Keep one sample older than History, so that the oldest interval of
	// the chart still has a start.
	cut := 0
	for cut+1 < len(s.samples) && now.Sub(s.samples[cut+1].at) > s.opts.History {
		cut++
	}
	s.samples = slices.Delete(s.samples, 0, cut)
}

// Run samples throughput until ctx is done.
func (s *Server) Run(ctx context.Context) {
	s.Sample()
	t := time.NewTicker(s.opts.SampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sample()
		}
	}
}

// ListenAndServe serves on addr (DefaultAddr when empty) and samples
// throughput until ctx is done, then shuts down gracefully. ready, when
// not nil, receives the bound address once listening (useful with port 0).
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready chan<- string) error {
	if addr == "" {
		addr = DefaultAddr
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("statuspage: listen: %w", err)
	}
	if ready != nil {
		ready <- l.Addr().String()
	}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.Run(ctx) }()
	go func() {
		defer wg.Done()
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}()
	err = hs.Serve(l)
	cancel()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("statuspage: serve: %w", err)
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if s.opts.Ready != nil {
		if err := s.opts.Ready(); err != nil {
			text(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
	}
	text(w, http.StatusOK, "ready")
}

// apiList answers the recent alerts, newest first, as a JSON array of
// alerts in the `streamcheck run` schema; ?limit=N keeps the first N.
func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	list := s.Alerts()
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			text(w, http.StatusBadRequest, fmt.Sprintf("limit %q: want a count >= 0", l))
			return
		}
		list = list[:min(n, len(list))]
	}
	writeJSON(w, list)
}

func (s *Server) apiOne(w http.ResponseWriter, r *http.Request) {
	x, ok := s.find(r.PathValue("id"))
	if !ok {
		text(w, http.StatusNotFound, fmt.Sprintf("no recent anomaly with id %q", r.PathValue("id")))
		return
	}
	writeJSON(w, x.alert)
}

func (s *Server) find(id string) (recent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.alerts {
		if x.alert.ID == id {
			return x, true
		}
	}
	return recent{}, false
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		text(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

func text(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// LagReady is the readiness /readyz needs in the common case: ready once
// every input partition's watermark lag is within the lateness, the same
// test as deploy/prometheus/rules.yml's StreamcheckLagAboveLateness. Not
// ready before the first partition reports.
func LagReady(src StatusSource) func() error {
	return func() error {
		st := src.Status()
		if len(st.Partitions) == 0 {
			return errors.New("no input partition has reported yet")
		}
		for _, p := range st.Partitions {
			if p.Lag > st.Lateness {
				return fmt.Errorf("partition %s lags %v, above the allowed lateness %v", p.Name, p.Lag, st.Lateness)
			}
		}
		return nil
	}
}
