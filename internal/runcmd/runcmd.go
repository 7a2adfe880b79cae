// Package runcmd is `streamcheck run`: it tails a stream of native events
// (a growing file, or stdin), feeds them through the start-time window
// (window/) into the online engine (incremental.Online), and writes one
// JSON line per alert. It owns the loop and its IO; the window and the
// engine stay pure.
//
// Determinism: the engine steps after every `--step` released
// transactions and at end of input, so the alerts depend on the events and
// their order, not on how the input arrived in reads.
package runcmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/window"
)

// Exit codes, as check's.
const (
	ExitOK      = 0
	ExitAnomaly = 1
	ExitError   = 2
)

type config struct {
	source, alerts, deadLetter string
	opts                       history.Options
	lateness                   int64
	step                       int
	status                     time.Duration
	follow                     bool
	poll                       time.Duration
}

// Main runs the command; ctx cancellation (SIGINT/SIGTERM) finishes the
// batch in hand, flushes alerts and returns.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintln(stderr, "streamcheck run:", err)
		return ExitError
	}
	r := &runner{cfg: cfg, stderr: stderr}
	in, closeIn, err := r.open(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "streamcheck run:", err)
		return ExitError
	}
	defer closeIn()
	alertsOut, closeAlerts, err := openOut(cfg.alerts, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "streamcheck run:", err)
		return ExitError
	}
	defer closeAlerts()
	r.alerts = alertsOut
	if cfg.deadLetter != "" {
		dl, closeDL, err := openOut(cfg.deadLetter, nil)
		if err != nil {
			fmt.Fprintln(stderr, "streamcheck run:", err)
			return ExitError
		}
		defer closeDL()
		r.dead = dl
	}
	if err := r.run(ctx, in); err != nil {
		fmt.Fprintln(stderr, "streamcheck run:", err)
		return ExitError
	}
	if r.engine.Stats().Alerts > 0 {
		return ExitAnomaly
	}
	return ExitOK
}

func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{opts: history.DefaultOptions()}
	level := fs.String("level", "strict-serializable", "isolation level the database promises (checked as strict-serializable)")
	skew := fs.String("skew", "0", "clock-skew bound Δ (duration or integer ns)")
	lateness := fs.String("lateness", "10s", "allowed lateness: longest transaction + producer delay + 2Δ")
	indoubt := fs.String("indoubt", "1m", "in-doubt horizon for unknown outcomes (none = +∞, which pins the window)")
	initial := fs.String("initial-state", "unknown", "initial state of keys: unknown (a live database) or empty")
	fs.StringVar(&cfg.source, "source", "-", "a file to follow (like tail -f), or - for stdin (ends at end of input)")
	fs.StringVar(&cfg.alerts, "alerts", "", "write alert lines here (default stdout)")
	fs.StringVar(&cfg.deadLetter, "dead-letter", "", "write dead-lettered events here, one JSON line each")
	fs.IntVar(&cfg.step, "step", 256, "check after this many released transactions")
	fs.DurationVar(&cfg.status, "status", 10*time.Second, "status line interval on stderr (0: off)")
	fs.DurationVar(&cfg.poll, "poll", 200*time.Millisecond, "how often a followed file is polled at its end")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: streamcheck run [flags]\n\nCheck a stream of native JSON Lines events online; one alert per line on stdout.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (use --source)", fs.Arg(0))
	}
	var err error
	if cfg.opts.Level, err = history.ParseLevel(*level); err != nil {
		return nil, err
	}
	switch cfg.opts.Level {
	case history.Serializable, history.StrongSessionSerializable, history.StrictSerializable:
	default:
		return nil, fmt.Errorf("level %s is not supported online yet", cfg.opts.Level)
	}
	if cfg.opts.Skew, err = nanos(*skew); err != nil {
		return nil, fmt.Errorf("--skew: %w", err)
	}
	if cfg.lateness, err = nanos(*lateness); err != nil {
		return nil, fmt.Errorf("--lateness: %w", err)
	}
	switch *indoubt {
	case "none", "inf", "∞":
		cfg.opts.InDoubt = history.NoInDoubt
	default:
		if cfg.opts.InDoubt, err = nanos(*indoubt); err != nil {
			return nil, fmt.Errorf("--indoubt: %w", err)
		}
	}
	if cfg.opts.InitialState, err = history.ParseInitialState(*initial); err != nil {
		return nil, err
	}
	if cfg.step < 1 {
		return nil, errors.New("--step must be positive")
	}
	cfg.follow = cfg.source != "-"
	return cfg, nil
}

func nanos(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
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

func openOut(path string, def io.Writer) (io.Writer, func(), error) {
	if path == "" || path == "-" {
		return def, func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

type runner struct {
	cfg    *config
	stderr io.Writer
	alerts io.Writer
	dead   io.Writer

	win    *window.Window
	engine *incremental.Online
	dec    ingest.NativeDecoder

	line           int
	sinceStep      int
	decodeErrors   int
	lastStatus     time.Time
	lastStatusSeen uint64
	started        time.Time
}

func (r *runner) open(stdin io.Reader) (io.Reader, func(), error) {
	if r.cfg.source == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(r.cfg.source)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func (r *runner) run(ctx context.Context, in io.Reader) error {
	var err error
	r.win, err = window.New(window.Config{Partitions: 1, Lateness: r.cfg.lateness, Skew: r.cfg.opts.Skew, InDoubt: r.cfg.opts.InDoubt})
	if err != nil {
		return err
	}
	r.engine = incremental.NewOnline(r.cfg.opts)
	if lv := r.cfg.opts.Level; lv != history.StrictSerializable {
		fmt.Fprintf(r.stderr, "streamcheck run: checking strict-serializable (the database promises %s; real time is assumed, Vbox Theorem 3.5): an alert with needs_realtime=true is a real-time violation, not a proven %s violation\n", lv, lv)
	}
	fmt.Fprintf(r.stderr, "streamcheck run: level strict-serializable, skew %s, lateness %s, in-doubt %s, initial state %s\n",
		report.Duration(r.cfg.opts.Skew), report.Duration(r.cfg.lateness), indoubtText(r.cfg.opts.InDoubt), r.cfg.opts.InitialState)
	r.started, r.lastStatus = time.Now(), time.Now()
	br := bufio.NewReaderSize(in, 1<<20)
	var pending []byte
	for {
		chunk, err := br.ReadSlice('\n')
		pending = append(pending, chunk...)
		switch {
		case err == nil:
			r.line++
			if err := r.event(ctx, pending); err != nil {
				return err
			}
			pending = pending[:0]
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if !r.cfg.follow {
				if len(strings.TrimSpace(string(pending))) > 0 {
					r.line++
					if err := r.event(ctx, pending); err != nil {
						return err
					}
				}
				return r.finish(ctx)
			}
			// Follow: a partial last line waits for its newline.
			select {
			case <-ctx.Done():
				return r.interrupted(ctx)
			case <-time.After(r.cfg.poll):
			}
			r.statusMaybe()
		default:
			return err
		}
		if ctx.Err() != nil {
			return r.interrupted(ctx)
		}
	}
}

func indoubtText(d int64) string {
	if d < 0 {
		return "∞"
	}
	return report.Duration(d)
}

// event decodes and offers one line; bad input is dead-lettered with its
// line and reason and never stops the run.
func (r *runner) event(ctx context.Context, line []byte) error {
	text := strings.TrimSpace(string(line))
	if text == "" {
		return nil
	}
	t, err := r.dec.Decode([]byte(text), history.Pos{Source: r.cfg.source, Line: r.line})
	if err != nil {
		r.decodeErrors++
		r.deadLetter("decode", err.Error(), text, nil)
		return nil
	}
	if dl := r.win.Add(0, t); dl != nil {
		r.deadLetter(dl.Reason.String(), dl.Detail, text, &dl.Txn)
		if dl.Txn.Writes() {
			r.engine.AddUnchecked(dl.Txn)
		}
		return nil
	}
	return r.advance(ctx, false)
}

func (r *runner) advance(ctx context.Context, final bool) error {
	rel := r.win.Release(nil)
	r.engine.Release(rel...)
	r.sinceStep += len(rel)
	for _, c := range r.win.PopClosed(nil) {
		r.engine.Close(c.ID)
	}
	if final || r.sinceStep >= r.cfg.step {
		r.sinceStep = 0
		alerts, err := r.engine.Step(ctx)
		for _, a := range alerts {
			r.writeAlert(a)
		}
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	r.statusMaybe()
	return nil
}

func (r *runner) finish(ctx context.Context) error {
	r.win.Close()
	if err := r.advance(ctx, false); err != nil {
		return err
	}
	r.engine.CloseAll()
	if err := r.advance(ctx, true); err != nil {
		return err
	}
	r.summary("end of input")
	return nil
}

// interrupted finishes the batch in hand and flushes the alerts it proves;
// nothing is closed early, so no alert can be premature.
func (r *runner) interrupted(ctx context.Context) error {
	if err := r.advance(context.WithoutCancel(ctx), true); err != nil {
		return err
	}
	r.summary("interrupted")
	return nil
}

func (r *runner) writeAlert(a *incremental.Alert) {
	byID := map[string]*history.Txn{}
	for _, id := range a.Core {
		if t := r.engine.Txn(id); t != nil {
			byID[id] = t
		}
	}
	b, err := json.Marshal(report.NewAlert(a, r.cfg.opts, byID))
	if err != nil {
		fmt.Fprintln(r.stderr, "streamcheck run: encode alert:", err)
		return
	}
	r.alerts.Write(append(b, '\n'))
}

type deadLetterLine struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	Source string `json:"source"`
	Line   int    `json:"line"`
	ID     string `json:"id,omitempty"`
	Event  string `json:"event"`
}

func (r *runner) deadLetter(reason, detail, text string, t *history.Txn) {
	if r.dead == nil {
		return
	}
	dl := deadLetterLine{Reason: reason, Detail: detail, Source: r.cfg.source, Line: r.line, Event: text}
	if t != nil {
		dl.ID = t.ID
	}
	b, _ := json.Marshal(dl)
	r.dead.Write(append(b, '\n'))
}

func (r *runner) statusMaybe() {
	if r.cfg.status <= 0 || time.Since(r.lastStatus) < r.cfg.status {
		return
	}
	ws := r.win.Stats()
	es := r.engine.Stats()
	rate := float64(ws.Accepted-r.lastStatusSeen) / time.Since(r.lastStatus).Seconds()
	r.lastStatus, r.lastStatusSeen = time.Now(), ws.Accepted
	fmt.Fprintf(r.stderr, "streamcheck run: window %d released, %d buffered, %d open; %.0f txn/s; watermark lag %s; %s; %s\n",
		es.Released, ws.Buffered, ws.Open, rate, report.Duration(ws.Lag), report.Plural(r.deadLetters(ws), "dead letter"), report.Plural(es.Alerts, "alert"))
}

func (r *runner) deadLetters(ws window.Stats) int {
	n := r.decodeErrors
	for _, c := range ws.DeadLetters {
		n += int(c)
	}
	return n
}

func (r *runner) summary(why string) {
	ws := r.win.Stats()
	es := r.engine.Stats()
	partial := ""
	if n := r.deadLetters(ws); n > 0 {
		partial = fmt.Sprintf("; PARTIAL: %d events dead-lettered, reads they could explain were not checked", n)
	}
	fmt.Fprintf(r.stderr, "streamcheck run: %s after %s: %s checked (strict-serializable, skew %s, in-doubt %s), %s, %s%s\n",
		why, time.Since(r.started).Round(time.Millisecond), report.Plural(es.Released, "transaction"), report.Duration(r.cfg.opts.Skew), indoubtText(r.cfg.opts.InDoubt), report.Plural(es.Alerts, "alert"), report.Plural(es.Checks, "check"), partial)
}
