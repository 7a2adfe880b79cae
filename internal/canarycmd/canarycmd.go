// Package canarycmd is `streamcheck canary`: it drives the canary
// workloads (package canary) against a real PostgreSQL or MySQL/MariaDB,
// records every transaction (package record) and checks the stream in
// process with `streamcheck run` (internal/runcmd.MainTxns, handed the
// recorder's transactions as they are: no JSON between the recorder and
// the driver), or writes it to a file for a separate run or check.
//
// Data flow (in-process checking, the default):
//
//	canary clients ─▶ record.Recorder ─▶ queue (checkerFeed) ─▶ runcmd.MainTxns (--source -) ─▶ driver
//	                                  └▶ --record FILE (JSON Lines)            │ alerts
//	                                                               alertWatch ─▶ stdout or --alerts
//
// The queue keeps emission order and decouples the clients from a checker
// step in progress, so a slow step delays alerts but never makes an event
// late in the window: each event's start is at most TxnTimeout before its
// emission, and the default lateness covers that.
//
// Interrupting (SIGINT) stops the clients between transactions; the
// checker then reads to the end of the stream, every transaction closes,
// and its last verdict is the one `check` gives on the recorded history.
package canarycmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/segmentio/kafka-go"

	"github.com/streamcheck/streamcheck/canary"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/internal/runcmd"
	"github.com/streamcheck/streamcheck/record"
)

// Exit codes, as check's and run's.
const (
	ExitOK      = cliutil.ExitOK
	ExitAnomaly = 1
	ExitError   = cliutil.ExitError
)

type config struct {
	canary       canary.Config
	workloads    string
	level        string
	skew         string
	lateness     string
	indoubt      string
	tick         string
	status       time.Duration
	alerts       string
	deadLetter   string
	httpAddr     string
	out          string
	kafkaBrokers string
	kafkaTopic   string
	recordFile   string
	stopOnAlert  bool
	verbose      bool
}

// errCheckerStopped is what writing to the checker returns once it has
// returned.
var errCheckerStopped = errors.New("the checker stopped")

// Main runs the command; ctx cancellation (SIGINT) stops the workload,
// after which the checker finishes the stream it has.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// runcmd.Main stops on SIGTERM by itself; the workload must stop too,
	// or it would go on feeding a checker that has gone.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	return cliutil.Main(ctx, "streamcheck canary", args, stdout, stderr, parse, run)
}

func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("canary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	c := &cfg.canary
	isolation := fs.String("isolation", "serializable", "isolation level requested from the database: default (the server's), read-uncommitted, read-committed, repeatable-read, serializable")
	fs.StringVar(&c.DSN, "dsn", "", "database: postgres://user@host:5432/db?sslmode=disable or mysql://user@tcp(host:3306)/db (required)")
	fs.StringVar(&cfg.workloads, "workload", "mixed", "comma-separated workloads: registers, lists, counters, transfers, write-skew, or mixed (all)")
	fs.IntVar(&c.Clients, "clients", 8, "concurrent clients, each a session with its own connection")
	fs.Float64Var(&c.Rate, "rate", 200, "transactions started per second over all clients (0: as fast as the database answers)")
	fs.DurationVar(&c.Duration, "duration", 0, "stop after this long (0: run until interrupted)")
	fs.IntVar(&c.Keys, "keys", 16, "rows per workload: few rows, much contention")
	fs.Float64Var(&c.Zipf, "zipf", 1.1, "Zipf exponent of the hot keys (row 0 hottest; <= 1: uniform)")
	fs.DurationVar(&c.Think, "think", 2*time.Millisecond, "pause between a transaction's reads and writes, uniform up to twice this (widens the window for anomalies)")
	dup := fs.Float64("dup-values", 0.25, "fraction of register writes that repeat a value from {1, 2, 3}, so reads cannot always tell their writer (0: every write unique)")
	fs.DurationVar(&c.TxnTimeout, "txn-timeout", 2*time.Second, "bound on every transaction, COMMIT included")
	fs.StringVar(&c.Schema, "schema", "", "PostgreSQL schema or MySQL database for the canary's tables (created and dropped if missing; default: the DSN's)")
	fs.StringVar(&c.Prefix, "prefix", "", "table and session prefix (default canary_<random>)")
	fs.Uint64Var(&c.Seed, "seed", 0, "seed for the transactions drawn (0: random)")
	fs.BoolVar(&c.Facts, "facts", false, "PostgreSQL at REPEATABLE READ or SERIALIZABLE: record each transaction's xid and snapshot, the database's own facts (with --record or --out, for streamcheck check; docs/SEMANTICS.md §10)")
	snapshot := fs.String("innodb-snapshot-isolation", "", "MySQL/MariaDB: set innodb_snapshot_isolation ON or OFF in every session (default: the server's)")
	fs.StringVar(&cfg.level, "level", history.StrictSerializable.String(), "level checked: "+strings.Join(history.OnlineLevelNames(), ", ")+" (online, real time is always checked; see run)")
	fs.StringVar(&cfg.skew, "skew", "1ms", "clock-skew bound Δ given to the checker (one process, one clock: 1ms is a margin, see doc)")
	fs.StringVar(&cfg.lateness, "lateness", "", "allowed lateness of the checker's window (default: txn-timeout + 1s + 2Δ)")
	fs.StringVar(&cfg.indoubt, "indoubt", "1m", "in-doubt horizon for unknown outcomes (none: +∞)")
	fs.StringVar(&cfg.tick, "tick", "1s", "the checker steps each time the watermark crosses a multiple of this, in event time (see run)")
	fs.DurationVar(&cfg.status, "status", 10*time.Second, "status line interval on stderr (0: off)")
	fs.StringVar(&cfg.alerts, "alerts", "", "write alert lines here (default stdout)")
	fs.StringVar(&cfg.deadLetter, "dead-letter", "", "write events the checker set aside here")
	fs.StringVar(&cfg.httpAddr, "http", "", "serve the checker's metrics and status page on this address (default off, so that canaries on one machine do not compete for a port)")
	fs.StringVar(&cfg.out, "out", "", "write the events (native JSON Lines) to this file instead of checking in process")
	fs.StringVar(&cfg.kafkaBrokers, "kafka-brokers", "", "produce the events to Kafka instead of checking in process: comma-separated host:port list")
	fs.StringVar(&cfg.kafkaTopic, "kafka-topic", "", "the topic for --kafka-brokers (key = session, so a session's events stay in order)")
	fs.StringVar(&cfg.recordFile, "record", "", "also write every event to this file (for streamcheck check)")
	fs.BoolVar(&cfg.stopOnAlert, "stop-on-alert", false, "stop the workload after the first alert (the checker still finishes)")
	fs.BoolVar(&cfg.verbose, "v", false, "log reconnects and every class of error")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: streamcheck canary --dsn DSN [flags]

Run an anomaly-hunting workload against PostgreSQL or MySQL/MariaDB and
check its transactions online: one alert per line on stdout, a summary on
stderr. Exit 0: no anomaly; 1: an alert or an arithmetic violation; 2:
usage, setup or recording error.

flags:`)
		fs.PrintDefaults()
	}
	if err := cliutil.ParseFlagsOnly(fs, args); err != nil {
		return nil, err
	}
	if c.DSN == "" {
		return nil, errors.New("--dsn is required")
	}
	if _, _, err := canary.ParseDSN(c.DSN); err != nil {
		return nil, err
	}
	var err error
	switch {
	case *dup < 0 || *dup > 1:
		return nil, fmt.Errorf("--dup-values %g: want a fraction from 0 to 1", *dup)
	case *dup == 0:
		c.DupValues = -1 // none (the library's zero is its default)
	default:
		c.DupValues = *dup
	}
	if c.Isolation, err = canary.ParseIsolation(*isolation); err != nil {
		return nil, fmt.Errorf("--isolation: %w", err)
	}
	switch s := strings.ToUpper(*snapshot); s {
	case "", "ON", "OFF":
		c.SnapshotIsolation = s
	default:
		return nil, fmt.Errorf("--innodb-snapshot-isolation %q: want on or off", *snapshot)
	}
	if cfg.workloads != "mixed" && cfg.workloads != "" {
		for _, w := range strings.Split(cfg.workloads, ",") {
			c.Workloads = append(c.Workloads, strings.TrimSpace(w))
		}
	}
	// Parsed here too, so that a bad level is refused before the
	// workload touches the database.
	if lv, err := history.ParseLevel(cfg.level); err != nil {
		return nil, fmt.Errorf("--level: %w", err)
	} else if !lv.Def().Online {
		return nil, fmt.Errorf("--level: %s is checked offline only (record with --record and run streamcheck check); the canary checks %s", lv, strings.Join(history.OnlineLevelNames(), ", "))
	}
	skew, err := nanos(cfg.skew)
	if err != nil {
		return nil, fmt.Errorf("--skew: %w", err)
	}
	if cfg.lateness == "" {
		cfg.lateness = strconv.FormatInt(int64(c.TxnTimeout+time.Second)+2*skew, 10)
	} else if _, err := nanos(cfg.lateness); err != nil {
		return nil, fmt.Errorf("--lateness: %w", err)
	}
	if cfg.indoubt != "none" {
		if _, err := nanos(cfg.indoubt); err != nil {
			return nil, fmt.Errorf("--indoubt: %w", err)
		}
	}
	if d, err := nanos(cfg.tick); err != nil || d == 0 {
		return nil, fmt.Errorf("--tick %q: want a positive duration", cfg.tick)
	}
	if (cfg.kafkaBrokers == "") != (cfg.kafkaTopic == "") {
		return nil, errors.New("--kafka-brokers and --kafka-topic go together")
	}
	if cfg.out != "" && cfg.kafkaBrokers != "" {
		return nil, errors.New("--out and --kafka-brokers: choose one output for a separate run")
	}
	if cfg.separate() && (cfg.alerts != "" || cfg.deadLetter != "" || cfg.stopOnAlert) {
		return nil, errors.New("--out and --kafka-brokers write events for a separate run: --alerts, --dead-letter and --stop-on-alert need the in-process check")
	}
	return cfg, nil
}

// separate says the events go to a file or Kafka for a separate run,
// instead of the in-process check.
func (cfg *config) separate() bool { return cfg.out != "" || cfg.kafkaBrokers != "" }

func nanos(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", s)
	}
	return int64(d), nil
}

func run(ctx context.Context, cfg *config, stdout, stderr io.Writer) (int, error) {
	level := slog.LevelWarn
	if cfg.verbose {
		level = slog.LevelInfo
	}
	cfg.canary.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})).With("cmd", "canary")
	// go-sql-driver/mysql logs every broken connection on its own global
	// logger; the canary reports those itself (outages, -v for more).
	driverLog := cfg.canary.Logger.With("driver", "mysql")
	mysql.SetLogger(mysqlLogger(func(msg string) { driverLog.Info(msg) }))

	var sinks []record.Sink
	var closers []func() error
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for _, path := range []string{cfg.out, cfg.recordFile} {
		if path == "" {
			continue
		}
		// Truncated, not appended: two runs share key names, so one file
		// holding both would not be one history.
		f, err := os.Create(path)
		if err != nil {
			return ExitError, err
		}
		closers = append(closers, f.Close)
		sinks = append(sinks, record.NewJSONLines(f))
	}

	var (
		q       *checkerFeed
		watch   *alertWatch
		runDone chan int
		runArgs []string
	)
	if cfg.kafkaBrokers != "" {
		w := &kafka.Writer{
			Addr:  kafka.TCP(strings.Split(cfg.kafkaBrokers, ",")...),
			Topic: cfg.kafkaTopic,
			// Key = session: one session's events land in one partition,
			// in order (each client waits for its produce before its next
			// transaction), which is the order run's window needs.
			Balancer:     &kafka.Hash{},
			RequiredAcks: kafka.RequireAll,
			// Clients produce concurrently and each waits for its own
			// message: a short batch timeout batches them without making
			// every transaction wait the default second.
			BatchTimeout: 2 * time.Millisecond,
		}
		closers = append(closers, w.Close)
		sinks = append(sinks, record.KeyedSink(func(key, value []byte) error {
			return w.WriteMessages(context.Background(), kafka.Message{Key: key, Value: value})
		}))
	}
	wctx, stopWorkload := context.WithCancel(ctx)
	defer stopWorkload()
	if !cfg.separate() {
		alertsOut := stdout
		if cfg.alerts != "" && cfg.alerts != "-" {
			f, err := os.OpenFile(cfg.alerts, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return ExitError, err
			}
			closers = append(closers, f.Close)
			alertsOut = f
		}
		watch = &alertWatch{w: alertsOut, start: time.Now(), onFirst: func() {
			if cfg.stopOnAlert {
				stopWorkload()
			}
		}}
		q = newCheckerFeed(1 << 16)
		sinks = append(sinks, q)
		runArgs = []string{"--source", "-", "--initial-state", "empty",
			"--level", cfg.level, "--skew", cfg.skew, "--lateness", cfg.lateness, "--indoubt", cfg.indoubt,
			"--tick", cfg.tick, "--status", cfg.status.String(), "--http", cfg.httpAddr}
		if cfg.deadLetter != "" {
			runArgs = append(runArgs, "--dead-letter", cfg.deadLetter)
		}
	}
	rec := record.New(record.MultiSink(sinks...), record.Options{})

	// The database and the configuration first: an error there should not
	// start the checker, whose lines would bury it.
	c, err := canary.New(ctx, cfg.canary, rec)
	if err != nil {
		if q != nil {
			q.Close()
		}
		return ExitError, err
	}
	if q != nil {
		runDone = make(chan int, 1)
		go func() {
			// Not cancelled by an interrupt: the checker reads the stream
			// to its end, so every transaction closes and the verdict is
			// check's (a second interrupt kills the process).
			code := runcmd.MainTxns(context.WithoutCancel(ctx), runArgs, q.txns, watch, stderr)
			q.stop()
			stopWorkload()
			runDone <- code
		}()
	}
	fmt.Fprintf(stderr, "streamcheck canary: %s, isolation %s requested, workloads %s, %d clients, %s, prefix %s\n",
		c.Snapshot().Dialect, canary.IsolationName(cfg.canary.Isolation), cfg.workloads, cfg.canary.Clients, rateText(cfg.canary.Rate), c.Prefix())

	stopStatus := cliutil.StatusLines(stderr, "streamcheck canary", cfg.status, func() string {
		return statusLine(c.Snapshot(), watch)
	})
	rep, runErr := c.Run(wctx)
	stopStatus()
	stoppedEarly := false
	if errors.Is(runErr, errCheckerStopped) && ctx.Err() != nil {
		// SIGTERM reached the checker first; the workload stopped on it
		// too, and the event that found the checker gone is in --record.
		runErr, stoppedEarly = nil, true
	}

	checkCode := ExitOK
	if q != nil {
		if err := q.Close(); err != nil && runErr == nil {
			if errors.Is(err, errCheckerStopped) && ctx.Err() != nil {
				stoppedEarly = true
			} else {
				runErr = fmt.Errorf("feed the checker: %w", err)
			}
		}
		checkCode = <-runDone
	}
	for _, cl := range closers {
		if err := cl(); err != nil && runErr == nil {
			runErr = err
		}
	}
	closers = nil
	summary(stderr, rep, watch)
	if stoppedEarly {
		fmt.Fprintln(stderr, "streamcheck canary: the checker stopped on the signal before the end of the stream: its verdict covers what it read; --record has every event")
	}
	if runErr != nil {
		return ExitError, runErr
	}
	switch {
	case checkCode == runcmd.ExitError:
		return ExitError, errors.New("the in-process checker failed (see above)")
	case checkCode == runcmd.ExitAnomaly || len(rep.Arithmetic) > 0:
		return ExitAnomaly, nil
	}
	return ExitOK, nil
}

func rateText(r float64) string {
	if r == 0 {
		return "unpaced"
	}
	return fmt.Sprintf("%g txn/s", r)
}

func statusLine(r canary.Report, w *alertWatch) string {
	t := r.Total()
	s := fmt.Sprintf("%s: %s (%.0f/s): %d committed, %d aborted (%d refused), %d unknown; %s, %s",
		r.Elapsed.Round(time.Millisecond), report.Plural(t.Total(), "transaction"), float64(t.Total())/max(r.Elapsed.Seconds(), 1e-9),
		t.Committed, t.Aborted, t.Refused, t.Unknown, report.Plural(r.Reconnects, "reconnect"), report.Plural(r.Outages, "outage"))
	if w != nil {
		n, _, _ := w.stats()
		s += "; " + report.Plural(n, "alert")
	}
	if len(r.Arithmetic) > 0 {
		s += "; " + report.Plural(len(r.Arithmetic), "arithmetic violation")
	}
	return s
}

func summary(w io.Writer, r canary.Report, watch *alertWatch) {
	var b strings.Builder
	fmt.Fprintf(&b, "streamcheck canary: %s %s, %s\n", r.Dialect, r.Isolation, statusLine(r, watch))
	for _, wl := range r.Workloads {
		fmt.Fprintf(&b, "  %-10s %6d transactions (%.0f/s): %d committed, %d aborted (%d refused, %d errors), %d unknown\n",
			wl.Name, wl.Total(), float64(wl.Total())/max(r.Elapsed.Seconds(), 1e-9), wl.Committed, wl.Aborted, wl.Refused, wl.Errors, wl.Unknown)
	}
	if r.Outages > 0 {
		fmt.Fprintf(&b, "  database unreachable %s, %s in all\n", report.Plural(r.Outages, "time"), r.Downtime.Round(time.Millisecond))
	}
	for _, a := range r.Arithmetic {
		fmt.Fprintf(&b, "  arithmetic: %s\n", a)
	}
	if watch != nil {
		if n, after, latency := watch.stats(); n > 0 {
			fmt.Fprintf(&b, "  first alert %s after the start, %s after its last core transaction ended\n",
				after.Round(time.Millisecond), latency.Round(time.Millisecond))
		}
	}
	io.WriteString(w, b.String())
}

// mysqlLogger adapts a function to go-sql-driver/mysql's Logger.
type mysqlLogger func(string)

func (f mysqlLogger) Print(v ...any) { f(strings.TrimSpace(fmt.Sprint(v...))) }

// queue forwards values, in order, to deliver from its own goroutine: a
// producer blocks only while size values are queued. After deliver fails
// once, the rest is drained unsent and every put fails with its error.
type queue[T any] struct {
	ch      chan T
	done    chan struct{}
	deliver func(T) error
	end     func()

	// sending is held (shared) by put while it sends and (exclusive) by
	// Close while it closes ch, so no send meets a closed channel.
	sending sync.RWMutex
	closed  bool

	mu  sync.Mutex
	err error
}

func newQueue[T any](size int, deliver func(T) error, end func()) *queue[T] {
	q := &queue[T]{ch: make(chan T, size), done: make(chan struct{}), deliver: deliver, end: end}
	go q.loop()
	return q
}

func (q *queue[T]) loop() {
	defer close(q.done)
	for v := range q.ch {
		if q.failed() != nil {
			continue // drain, so that producers never block on a dead consumer
		}
		if err := q.deliver(v); err != nil {
			q.mu.Lock()
			q.err = err
			q.mu.Unlock()
		}
	}
	q.end()
}

func (q *queue[T]) failed() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}

// put queues v; it fails once delivery has failed or the queue is closed.
func (q *queue[T]) put(v T) error {
	if err := q.failed(); err != nil {
		return err
	}
	q.sending.RLock()
	defer q.sending.RUnlock()
	if q.closed {
		return io.ErrClosedPipe
	}
	q.ch <- v
	return nil
}

// Close delivers what is queued, calls end and returns the first delivery
// error.
func (q *queue[T]) Close() error {
	q.sending.Lock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
	q.sending.Unlock()
	<-q.done
	return q.failed()
}

// checkerFeed hands the recorder's transactions to the in-process
// checker (runcmd.MainTxns) as they are, in emission order. Once the
// checker has returned (stop), delivery fails with errCheckerStopped, as
// writing to its pipe did.
type checkerFeed struct {
	*queue[history.Txn]
	txns    chan history.Txn
	stopped chan struct{}
}

func newCheckerFeed(size int) *checkerFeed {
	f := &checkerFeed{txns: make(chan history.Txn), stopped: make(chan struct{})}
	f.queue = newQueue(size, func(t history.Txn) error {
		select {
		case f.txns <- t:
			return nil
		case <-f.stopped:
			return errCheckerStopped
		}
	}, func() { close(f.txns) })
	return f
}

// Emit queues t (record.Sink; a sink owns what it is given).
func (f *checkerFeed) Emit(t *history.Txn) error { return f.put(*t) }

// stop tells the feed that the checker has returned and reads no more.
func (f *checkerFeed) stop() { close(f.stopped) }

// alertWatch forwards the checker's alert lines and times the first one:
// from the canary's start, and from the end of its core's last
// transaction (the moment the anomaly was complete).
type alertWatch struct {
	w       io.Writer
	onFirst func()
	start   time.Time

	mu      sync.Mutex
	buf     []byte
	n       int
	after   time.Duration
	latency time.Duration
}

func (a *alertWatch) Write(p []byte) (int, error) {
	now := time.Now()
	a.mu.Lock()
	a.buf = append(a.buf, p...)
	first := false
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		line := a.buf[:i]
		a.buf = a.buf[i+1:]
		var al struct {
			Updated bool `json:"updated"`
			Txns    []struct {
				End *int64 `json:"end"`
			} `json:"txns"`
		}
		if json.Unmarshal(line, &al) != nil || al.Updated {
			continue
		}
		a.n++
		if a.n == 1 {
			first = true
			a.after = now.Sub(a.start)
			var last int64
			for _, t := range al.Txns {
				if t.End != nil && *t.End > last {
					last = *t.End
				}
			}
			if last > 0 {
				a.latency = time.Duration(now.UnixNano() - last)
			}
		}
	}
	a.mu.Unlock()
	n, err := a.w.Write(p)
	if first && a.onFirst != nil {
		a.onFirst()
	}
	return n, err
}

// stats returns the number of alerts (updates not counted), and for the
// first one its time since the canary started and since its core ended.
func (a *alertWatch) stats() (int, time.Duration, time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n, a.after, a.latency
}
