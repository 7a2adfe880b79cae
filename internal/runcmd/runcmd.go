// Package runcmd is `streamcheck run`: it reads a stream of native events
// (stdin, a growing file, or every partition of a Kafka topic; in process,
// MainTxns takes decoded transactions in place of stdin), feeds them
// through the start-time window (window/) into the online engine
// (online.Online), hands each alert to alerts.Dispatcher (JSON lines
// on stdout or a file, Alertmanager, webhooks, Kafka, the status page),
// and, with a state directory, checkpoints everything to Pebble (state/)
// so that a restart, also after kill -9, continues exactly where the last
// checkpoint stood. It owns the loop and its IO; the window and the engine
// stay pure. It also owns the run's observation side (alerting.go): one
// prometheus.Registry per run with alerts.Metrics, updated by the loop,
// and the internal/statuspage server on http.addr, fed by the runner's
// Status snapshot.
//
// Determinism (the replay contract): the engine's inputs and steps are a
// function of the events, never of arrival timing, fetch sizes or
// restarts.
//
//	D1 The engine steps only when the watermark W crosses a tick, a
//	   multiple of --tick in event time. At tick t (t <= W) it is given
//	   exactly the released transactions with start < t, the closings with
//	   effEnd+2Δ < t and the dead-lettered writers whose partition
//	   watermark at arrival was < t, each in a fixed order; then it steps.
//	   Every such set is final once W >= t: later transactions start at or
//	   after W, later closings need a larger W, and a partition's watermark
//	   only grows. So steps, alerts and alert ids are the same for every
//	   interleaving of partitions and every batching of messages.
//	D2 A checkpoint holds the window, the engine and what the loop holds
//	   between ticks, with the offsets they cover, in one synced batch; a
//	   restart restores all of it and reads on from those offsets, so it
//	   continues as if it had not stopped. An interrupt checkpoints without
//	   stepping (a step off the tick schedule would change the engine),
//	   at the next step boundary: the ticks the watermark crossed but not
//	   yet stepped stay in the loop's state, and the restart steps them.
//	D3 Alerts go through the outbox (the state store, else memory): the
//	   dispatcher records an alert (synced) before any sink sees it and
//	   acknowledges it per sink after, so a crash either re-sends it at
//	   restart (same id) or finds it delivered; replayed steps skip ids
//	   already recorded. Delivery runs on the dispatcher's goroutines,
//	   each sink with its own retry: the loop never waits for a sink. At
//	   the end of a run it waits at most flushTimeout for them.
//
// Exit status at the end of the input (stdin, or Kafka with stop-at-end)
// is check's rule on the same bytes, one function for both
// (cliutil.Outcome.ExitCode; runner.outcome says which counter is what):
//
//	E1 2 when any event is one check rejects (undecodable, invalid, a
//	   duplicate id, no timestamps, a key used as a list and as a
//	   register, the input broken off) or no transaction was checked;
//	   such events are set aside and everything else is still checked and
//	   alerted on first.
//	E2 else 1 when an alert fired; else 3 when the check was partial for
//	   a reason of the stream's own (late or oversized events, offsets
//	   lost, the pinned cap, bodies past retention); else 0.
//	E3 A dead-letter reason run does not list as an input error counts as
//	   partial, never as valid.
//
// What stays interleaving-dependent, by nature: which copy of an id sent
// to two partitions counts (the other is a duplicate), events of a
// partition that went idle (idle_timeout) and came back, and, for stdin
// or a followed file, events that arrive after it was quiet for
// idle_release (wall clock) and start before the watermark it moved to
// (dead-lettered as late; releaseIdle). Without such events the steps
// are the same as without the pause.
package runcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/config"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/sionline"
	"github.com/streamcheck/streamcheck/stamponline"
	"github.com/streamcheck/streamcheck/state"
	"github.com/streamcheck/streamcheck/weakonline"
)

// Exit codes, as check's (E1-E3).
const (
	ExitOK      = cliutil.ExitOK
	ExitAnomaly = cliutil.ExitAnomaly
	ExitError   = cliutil.ExitError
	// ExitUnknown: at end of input without an alert or an input error,
	// but part of the stream was not checked (late or oversized events,
	// lost offsets, the pinned cap), so an anomaly through it may be
	// missed (check's exit status for a spent budget).
	ExitUnknown = cliutil.ExitUnknown
)

// Main runs the command; ctx cancellation (SIGINT/SIGTERM) finishes the
// message in hand, checkpoints (with a state directory), commits offsets
// and returns.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(ctx, args, stdin, nil, stdout, stderr)
}

// MainTxns is Main with --source - reading decoded transactions from txns
// instead of native JSON lines from stdin: the nth is line n of "-", and
// closing txns ends the input. It is the in-process way in (canary): the
// events reach the driver without a JSON encode and decode, and flags,
// sinks, status lines, summary and exit status are Main's.
func MainTxns(ctx context.Context, args []string, txns <-chan history.Txn, stdout, stderr io.Writer) int {
	return mainWith(ctx, args, nil, txns, stdout, stderr)
}

func mainWith(ctx context.Context, args []string, stdin io.Reader, txns <-chan history.Txn, stdout, stderr io.Writer) int {
	// SIGTERM (a deploy, systemd, Kubernetes) stops the run like SIGINT:
	// checkpoint, commit, exit 0. The caller may handle only SIGINT.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	// cliutil.Main locks stderr: the log (also written from Kafka's
	// goroutines) and the status and summary lines share it.
	return cliutil.Main(ctx, "streamcheck run", args, stdout, stderr, parse,
		func(ctx context.Context, cfg *runConfig, stdout, stderr io.Writer) (int, error) {
			if txns != nil && cfg.Source != "-" {
				return ExitError, fmt.Errorf("source %q: decoded transactions are read as source -", cfg.Source)
			}
			if cfg.cpuProfile != "" {
				f, err := os.Create(cfg.cpuProfile)
				if err != nil {
					return ExitError, fmt.Errorf("--cpuprofile: %w", err)
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					f.Close()
					return ExitError, fmt.Errorf("--cpuprofile: %w", err)
				}
				defer func() {
					pprof.StopCPUProfile()
					f.Close()
				}()
			}
			mem := &memLimit{limit: int64(cfg.MemoryLimit)}
			defer mem.start(memLimitFromEnv())()
			r, err := newRunner(cfg, stdin, stdout, stderr)
			if err != nil {
				return ExitError, err
			}
			r.txns = txns
			code, err := r.run(ctx)
			if cerr := r.close(); err == nil {
				err = cerr
			}
			if err != nil {
				err = corruptError(cfg, err)
			}
			return code, err
		})
}

// corruptError gives damage found in the state directory (a Pebble table
// or the body file failing its checksum) one clear message: what is
// damaged, and how to recover. Nothing read from damaged bytes was used:
// the run stops rather than check, or alert, on them.
func corruptError(cfg *runConfig, err error) error {
	if !errors.Is(err, state.ErrCorrupt) && !errors.Is(err, online.ErrCorrupt) {
		return err
	}
	if cfg.State.Dir == "" {
		// No state directory: the damage is in the temporary spill file.
		return fmt.Errorf("%w (the disk returned other bytes than were written; nothing was checked on them: run again)", err)
	}
	from := "the file from its first line"
	if cfg.Source == "kafka" {
		from = "the topic from --start (earliest: its first offset still kept)"
	}
	return fmt.Errorf("state directory corrupt: %w\nto recover: move %s aside (it is kept for inspection) and run again with an empty state directory; the check starts over, reading %s, and alerts already sent may be sent again",
		err, cfg.State.Dir, from)
}

// flagDef maps one flag onto the configuration; flags are applied over the
// file (or the defaults) in command-line order.
type flagDef struct {
	name, usage string
	set         func(c *config.Config, v string) error
	isBool      bool
}

func durFlag(dst func(c *config.Config) *config.Duration) func(*config.Config, string) error {
	return func(c *config.Config, v string) error {
		d, err := config.ParseDuration(v)
		if err != nil {
			return err
		}
		*dst(c) = d
		return nil
	}
}

func sizeFlag(dst func(c *config.Config) *config.Size) func(*config.Config, string) error {
	return func(c *config.Config, v string) error {
		z, err := config.ParseSize(v)
		if err != nil {
			return err
		}
		*dst(c) = z
		return nil
	}
}

func strFlag(dst func(c *config.Config) *string) func(*config.Config, string) error {
	return func(c *config.Config, v string) error { *dst(c) = v; return nil }
}

// levelHelp says what each group of levels run accepts is checked as
// (the run's start line says it for the level given), so the help never
// claims one checked level for all of them.
func levelHelp() string {
	var weak, si, ser []string
	for _, name := range history.OnlineLevelNames() {
		lv, _ := history.ParseLevel(name)
		switch {
		case weakonline.Levels(lv):
			weak = append(weak, name)
		case sionline.Levels(lv):
			if sionline.Checked(lv) != lv {
				si = append(si, name)
			}
		case lv != incremental.OnlineLevel:
			ser = append(ser, name)
		}
	}
	return fmt.Sprintf("itself with real-time reads (%s), %s (%s), %s (%s), itself otherwise",
		strings.Join(weak, ", "), history.StrongSnapshotIsolation, strings.Join(si, ", "), incremental.OnlineLevel, strings.Join(ser, ", "))
}

func flagDefs() []flagDef {
	d := config.Default()
	return []flagDef{
		{"source", fmt.Sprintf("kafka, a file to follow (like tail -f), or - for stdin (default %q)", d.Source), strFlag(func(c *config.Config) *string { return &c.Source }), false},
		{"level", fmt.Sprintf("isolation level the database promises: %s; checked as %s (default %s)", strings.Join(history.OnlineLevelNames(), ", "), levelHelp(), d.Check.Level), strFlag(func(c *config.Config) *string { return &c.Check.Level }), false},
		{"skew", "clock-skew bound Δ (duration or integer ns; default 0)", durFlag(func(c *config.Config) *config.Duration { return &c.Check.Skew }), false},
		{"lateness", fmt.Sprintf("allowed lateness: longest transaction + producer delay + 2Δ (default %s)", d.Check.Lateness), durFlag(func(c *config.Config) *config.Duration { return &c.Check.Lateness }), false},
		{"indoubt", fmt.Sprintf("in-doubt horizon for unknown outcomes; none = +∞, which pins the window (default %s)", d.Check.InDoubt), durFlag(func(c *config.Config) *config.Duration { return &c.Check.InDoubt }), false},
		{"initial-state", fmt.Sprintf("initial state of keys: unknown (a live database) or empty (default %s)", d.Check.InitialState), strFlag(func(c *config.Config) *string { return &c.Check.InitialState }), false},
		{"idle-timeout", fmt.Sprintf("event time a partition may stay silent before it stops holding the watermark back; 0 = off (default %s)", d.Check.IdleTimeout), durFlag(func(c *config.Config) *config.Duration { return &c.Check.IdleTimeout }), false},
		{"idle-release", fmt.Sprintf("wall-clock quiet of stdin or a followed file after which its last transactions are checked (the watermark passes the last start; a later event starting before it is dead-lettered as late); keep it above the lateness; 0 = off (default %s)", d.Check.IdleRelease), durFlag(func(c *config.Config) *config.Duration { return &c.Check.IdleRelease }), false},
		{"max-ahead", fmt.Sprintf("dead-letter as future an event whose start lies this far beyond its partition's latest start, or beyond the wall clock for wall-clock timestamps; 0 = off (default %s)", d.Check.MaxAhead), durFlag(func(c *config.Config) *config.Duration { return &c.Check.MaxAhead }), false},
		{"tick", fmt.Sprintf("the engine steps each time the watermark crosses a multiple of this, in event time (default %s)", d.Check.Tick), durFlag(func(c *config.Config) *config.Duration { return &c.Check.Tick }), false},
		{"evict", "evict time-closed, settled transactions (docs/SEMANTICS.md §5); false re-checks the whole released history at every step (default true)", func(c *config.Config, v string) error {
			b, err := strconv.ParseBool(v)
			c.Check.Evict = b
			return err
		}, true},
		{"closure", "with --evict: answer the engine's order questions with the compact transitive closure before any solver probe; false probes every one, with the same verdicts (docs/SEMANTICS.md §5 \"The closure switch\"; default true)", func(c *config.Config, v string) error {
			b, err := strconv.ParseBool(v)
			c.Check.Closure = b
			return err
		}, true},
		{"max-pinned", "with --evict: set aside (unchecked, and say so) the oldest pinned transactions beyond this many; 0 = no cap (default 0)", func(c *config.Config, v string) error {
			n, err := strconv.Atoi(v)
			if err == nil && n < 0 {
				err = fmt.Errorf("must be 0 or more")
			}
			c.Check.MaxPinned = n
			return err
		}, false},
		{"stamps", "use the events' commit_ts and start_ts (the database's own order) at the levels they determine (the serializability and snapshot isolation families): their witness replayed as events arrive, the black-box engine from the first event it does not cover (docs/SEMANTICS.md §10 \"Online with facts\"; from stdin, files and Kafka messages in the native format; default false)", func(c *config.Config, v string) error {
			b, err := strconv.ParseBool(v)
			c.Check.Stamps = b
			return err
		}, true},
		{"alerts", "write alert lines to this file (default stdout)", strFlag(func(c *config.Config) *string { return &c.Alerts.File }), false},
		{"stream", "name of the stream in every alert id; empty = ids name anomalies by content alone, the same from a file, stdin or Kafka (default empty)", strFlag(func(c *config.Config) *string { return &c.Alerts.Stream }), false},
		{"alertmanager", "also push alerts to this Alertmanager (http://host:9093)", strFlag(func(c *config.Config) *string { return &c.Alerts.Alertmanager.URL }), false},
		{"webhook", "also post alerts to this URL (repeatable)", func(c *config.Config, v string) error {
			c.Alerts.Webhooks = append(c.Alerts.Webhooks, config.Webhook{URL: v})
			return nil
		}, false},
		{"http", fmt.Sprintf("serve /metrics, /healthz, /readyz, /api/anomalies and the status page here; empty = off (default %s)", d.HTTP.Addr), strFlag(func(c *config.Config) *string { return &c.HTTP.Addr }), false},
		{"pprof", "also serve Go's profiles under /debug/pprof/ on --http (off by default: a profile runs as long as the caller asks)", func(c *config.Config, v string) error {
			b, err := strconv.ParseBool(v)
			c.HTTP.Pprof = b
			return err
		}, true},
		{"dead-letter", "write dead letters to this file, one JSON line each", strFlag(func(c *config.Config) *string { return &c.DeadLetter.File }), false},
		{"dead-letter-topic", "also produce dead letters to this Kafka topic", strFlag(func(c *config.Config) *string { return &c.DeadLetter.Topic }), false},
		{"status", fmt.Sprintf("status line interval on stderr; 0 = off (default %s)", d.Status.Interval), durFlag(func(c *config.Config) *config.Duration { return &c.Status.Interval }), false},
		{"poll", fmt.Sprintf("how often a followed file is polled at its end (default %s)", d.Status.Poll), durFlag(func(c *config.Config) *config.Duration { return &c.Status.Poll }), false},
		{"brokers", fmt.Sprintf("Kafka brokers, comma-separated (default %s)", strings.Join(d.Kafka.Brokers, ",")), func(c *config.Config, v string) error {
			c.Kafka.Brokers = strings.Split(v, ",")
			return nil
		}, false},
		{"topic", "Kafka topic (every partition is read)", strFlag(func(c *config.Config) *string { return &c.Kafka.Topic }), false},
		{"group", fmt.Sprintf("Kafka consumer group offsets are committed to after each checkpoint (default %s)", d.Kafka.Group), strFlag(func(c *config.Config) *string { return &c.Kafka.Group }), false},
		{"start", fmt.Sprintf("where a fresh state directory starts reading: earliest or latest (default %s)", d.Kafka.Start), strFlag(func(c *config.Config) *string { return &c.Kafka.Start }), false},
		{"fetch-min-bytes", fmt.Sprintf("Kafka fetch minimum (default %d)", d.Kafka.MinFetchBytes), sizeFlag(func(c *config.Config) *config.Size { return &c.Kafka.MinFetchBytes }), false},
		{"fetch-max-bytes", fmt.Sprintf("Kafka fetch maximum (default %d)", d.Kafka.MaxFetchBytes), sizeFlag(func(c *config.Config) *config.Size { return &c.Kafka.MaxFetchBytes }), false},
		{"max-event-bytes", fmt.Sprintf("larger events (Kafka messages, lines of stdin or a file) are dead-lettered as oversized, read in bounded memory (default %d)", d.Kafka.MaxEventBytes), sizeFlag(func(c *config.Config) *config.Size { return &c.Kafka.MaxEventBytes }), false},
		{"stop-at-end", "exit once every partition is read to the end it had at start", func(c *config.Config, v string) error {
			b, err := strconv.ParseBool(v)
			c.Kafka.StopAtEnd = b
			return err
		}, true},
		{"state-dir", "Pebble state directory for checkpoints (default none)", strFlag(func(c *config.Config) *string { return &c.State.Dir }), false},
		{"retention-max-age", fmt.Sprintf("event time after which evicted bodies may be deleted; 0 = no bound (default %s)", d.State.Retention.MaxAge), durFlag(func(c *config.Config) *config.Duration { return &c.State.Retention.MaxAge }), false},
		{"retention-max-bytes", fmt.Sprintf("bytes of evicted bodies kept, from the oldest on; 0 = no bound (default %d)", d.State.Retention.MaxBytes), sizeFlag(func(c *config.Config) *config.Size { return &c.State.Retention.MaxBytes }), false},
		{"checkpoint-every", fmt.Sprintf("checkpoint after this many messages; 0 = off (default %d)", d.State.CheckpointEvery), func(c *config.Config, v string) error {
			n, err := strconv.Atoi(v)
			c.State.CheckpointEvery = n
			return err
		}, false},
		{"memory-limit", fmt.Sprintf("Go's soft memory limit for the run (raised to 1.5x the live heap when that is more); 0 = none; GOMEMLIMIT in the environment wins (default %dMiB)", d.MemoryLimit>>20), sizeFlag(func(c *config.Config) *config.Size { return &c.MemoryLimit }), false},
		{"checkpoint-interval", fmt.Sprintf("checkpoint at least this often; 0 = off (default %s)", d.State.CheckpointInterval), durFlag(func(c *config.Config) *config.Duration { return &c.State.CheckpointInterval }), false},
	}
}

// runConfig is the parsed configuration with the values run needs in
// their working types.
type runConfig struct {
	*config.Config
	opts history.Options
	log  *slog.Logger
	// cpuProfile names the file --cpuprofile writes; empty = none.
	cpuProfile string
}

func parse(args []string, stderr io.Writer) (*runConfig, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var file string
	fs.StringVar(&file, "config", "", "YAML configuration file (config.example.yaml documents every option); flags override it")
	// A profile of a whole run, as check's --cpuprofile: --pprof serves
	// one over HTTP for a live daemon, but a run to the end of a file is
	// over before a caller could ask for it.
	var cpuProfile string
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof); for a live daemon use --pprof")
	type setting struct {
		def *flagDef
		v   string
	}
	var sets []setting
	defs := flagDefs()
	for i := range defs {
		d := &defs[i]
		f := func(v string) error { sets = append(sets, setting{d, v}); return nil }
		if d.isBool {
			fs.BoolFunc(d.name, d.usage, f)
		} else {
			fs.Func(d.name, d.usage, f)
		}
	}
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: streamcheck run [--config FILE] [flags]\n\nCheck a stream of native JSON events online (stdin, a followed file, or a Kafka topic);\none alert per line on stdout (and to the sinks configured); metrics and a status page on --http.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (use --source)", fs.Arg(0))
	}
	cfg := config.Default()
	if file != "" {
		var err error
		if cfg, err = config.Load(file); err != nil {
			return nil, err
		}
	}
	for _, s := range sets {
		if err := s.def.set(cfg, s.v); err != nil {
			return nil, fmt.Errorf("--%s: %w", s.def.name, err)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rc := &runConfig{Config: cfg, opts: history.DefaultOptions(), cpuProfile: cpuProfile}
	var err error
	if rc.opts.Level, err = history.ParseLevel(cfg.Check.Level); err != nil {
		return nil, fmt.Errorf("check.level: %w", err)
	}
	if !rc.opts.Level.Def().Online {
		return nil, fmt.Errorf("check.level: %s is checked offline only (streamcheck check); run checks %s", rc.opts.Level, strings.Join(history.OnlineLevelNames(), ", "))
	}
	rc.opts.Skew = int64(cfg.Check.Skew)
	rc.opts.InDoubt = int64(cfg.Check.InDoubt)
	if rc.opts.InDoubt < 0 {
		rc.opts.InDoubt = history.NoInDoubt
	}
	if rc.opts.InitialState, err = history.ParseInitialState(cfg.Check.InitialState); err != nil {
		return nil, fmt.Errorf("check.initial_state: %w", err)
	}
	if cfg.Check.Stamps && !stamponline.Levels(rc.opts.Level) {
		return nil, fmt.Errorf("check.stamps: the stamps are used online at the levels they determine (the serializability and snapshot isolation families), not at %s", rc.opts.Level)
	}
	if cfg.State.Dir != "" && cfg.Source == "-" {
		return nil, errors.New("state.dir: stdin cannot be resumed (use a file or kafka source)")
	}
	rc.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return rc, nil
}
