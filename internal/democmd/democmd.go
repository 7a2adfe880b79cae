package democmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/internal/runcmd"
)

// Exit codes, as run's: 1 is an alert that no injection explains.
const (
	ExitOK      = cliutil.ExitOK
	ExitAnomaly = 1
	ExitError   = cliutil.ExitError
)

// Fixed parameters of the simulated store and its checker.
const (
	Topic       = "txns"
	Sessions    = 8
	Concurrency = 4.0
	Keys        = 1000
	Skew        = time.Millisecond
	// Tick is run's step period in event time: 1 s, as the canary's, since
	// every step re-checks the released history (see Cost in doc.go).
	Tick    = time.Second
	InDoubt = time.Second
	// DrainWait is how long the checker may read on after the store
	// stopped: two of run's Kafka fetch waits (500 ms) and a tick.
	DrainWait = 2*500*time.Millisecond + Tick
	// MaxDrain bounds the wait for a checker that fell behind to alert
	// the injections it has not reached yet.
	MaxDrain = 30 * time.Second
	// maxRate keeps the mean transaction duration above a few µs, where
	// gen's model and the wall-clock pacing still mean something.
	maxRate = 100000
)

type config struct {
	duration     time.Duration
	rate         float64
	anomalyEvery time.Duration
	partitions   int
	http         string
	record       string
	status       time.Duration
	seed         uint64
	evict        bool
	// level is run's --level (the promise); the store is strict
	// serializable but for its injected lost updates, which every online
	// level forbids.
	level string
	// brokerOnly, when set, is the loopback address on which the demo
	// serves only its broker (serveBroker).
	brokerOnly string
}

// Main runs the command; ctx cancellation (SIGINT) stops the store, after
// which the checker drains and the summary prints.
func Main(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	return cliutil.Main(ctx, "streamcheck demo", args, stdout, stderr, parse, run)
}

func parse(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	fs.DurationVar(&cfg.duration, "duration", 0, "stop after this long (0: run until interrupted)")
	fs.Float64Var(&cfg.rate, "rate", 50, "transactions per second the simulated store runs")
	fs.DurationVar(&cfg.anomalyEvery, "anomaly-every", 3*time.Second, "mean time between injected lost updates (0: none, a clean store)")
	fs.IntVar(&cfg.partitions, "partitions", 3, "partitions of the demo topic")
	fs.StringVar(&cfg.http, "http", "", "serve the status page on this address, e.g. 127.0.0.1:9479 (default: none)")
	fs.StringVar(&cfg.record, "record", "", "also write every produced event to this file (native JSON Lines, for streamcheck check)")
	fs.DurationVar(&cfg.status, "status", 10*time.Second, "status line interval on stderr (0: off)")
	fs.Uint64Var(&cfg.seed, "seed", 0, "seed of the simulated store (0: random)")
	fs.BoolVar(&cfg.evict, "evict", true, "the checker evicts time-closed, settled transactions, as run does by default; false re-checks the whole released history at every tick, which falls behind at high rates (run --evict=false)")
	fs.StringVar(&cfg.level, "level", incremental.OnlineLevel.String(), "level the checker is given: "+strings.Join(history.OnlineLevelNames(), ", ")+" (see run)")
	fs.StringVar(&cfg.brokerOnly, "broker-only", "", "serve only the in-process Kafka-protocol broker on this loopback `ADDR` (e.g. 127.0.0.1:9092; port 0 picks one), creating topics on first use, until interrupted or --duration: produce into it with kcat -P and check with run --source kafka")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `usage: streamcheck demo [--duration D] [--rate N] [--http ADDR] [flags]

Run the whole online checker with nothing installed: a simulated store
that loses an update now and then, an in-process Kafka-protocol broker,
and streamcheck run reading it. One alert per line on stdout (run's JSON),
a readable line per alert and a summary on stderr. Exit 0: every alert is
an injected anomaly; 1: an alert nothing injected explains; 2: usage or
setup error.

With --broker-only ADDR the demo serves only its broker, to try run's
Kafka source on your own events (topics are created on first use, with
--partitions partitions, default 1 in this mode):

  streamcheck demo --broker-only 127.0.0.1:9092 &
  streamcheck gen --txns 2000 --inject lost-update | kcat -P -b 127.0.0.1:9092 -t txns
  streamcheck run --source kafka --brokers 127.0.0.1:9092 --topic txns --initial-state empty --lateness 10ms --tick 10ms

(gen's histories are dense in event time, hence the small tick; run alerts
an anomaly once the watermark passes it, so the stream's last events wait
for more.)

flags:`)
		fs.PrintDefaults()
	}
	if err := cliutil.ParseFlagsOnly(fs, args); err != nil {
		return nil, err
	}
	if cfg.brokerOnly != "" {
		if err := brokerOnlyFlags(fs, cfg); err != nil {
			return nil, err
		}
	}
	if lv, err := history.ParseLevel(cfg.level); err != nil || !lv.Def().Online {
		return nil, fmt.Errorf("--level %q: want one of %s", cfg.level, strings.Join(history.OnlineLevelNames(), ", "))
	}
	if cfg.duration < 0 {
		return nil, fmt.Errorf("--duration %s: negative", cfg.duration)
	}
	if !(cfg.rate > 0 && cfg.rate <= maxRate) {
		return nil, fmt.Errorf("--rate %g: want a rate in (0, %d] transactions per second", cfg.rate, maxRate)
	}
	if cfg.anomalyEvery < 0 {
		return nil, fmt.Errorf("--anomaly-every %s: negative", cfg.anomalyEvery)
	}
	if cfg.partitions < 1 || cfg.partitions > 64 {
		return nil, fmt.Errorf("--partitions %d: want 1 to 64", cfg.partitions)
	}
	if cfg.status < 0 {
		return nil, fmt.Errorf("--status %s: negative", cfg.status)
	}
	if cfg.seed == 0 {
		cfg.seed = rand.Uint64()
	}
	return cfg, nil
}

// storeConfig is the generator's configuration for rate transactions per
// second starting now. By gen's overlap model (G4) the overlap is
// c = 2(S-1)L/cycle and the sessions start S/cycle transactions per unit
// of time; so cycle = S/rate and L = c*S/(2(S-1)*rate).
func storeConfig(cfg *config, start time.Time) gen.Config {
	g, _ := gen.Preset("mixed")
	g.Txns = math.MaxInt
	g.Sessions, g.Concurrency, g.Keys = Sessions, Concurrency, Keys
	g.Latency = int64(Concurrency * Sessions / (2 * (Sessions - 1) * cfg.rate) * 1e9)
	g.StartTime = start.UnixNano()
	g.Seed = cfg.seed
	if cfg.anomalyEvery > 0 {
		g.Inject = []string{history.LostUpdate}
		g.InjectRate = min(1, 1/(cfg.rate*cfg.anomalyEvery.Seconds()))
	}
	return g
}

// Lateness covers the longest transaction (D1): gen's durations are a
// quarter of the mean plus an exponential tail, so 25 means is beyond any
// run of this demo; and never below a second, for the producer's batches.
// Rounded up to 100 ms, for people reading it.
func Lateness(meanDur int64) time.Duration {
	d := 25 * time.Duration(meanDur)
	return max(time.Second, (d + 99*time.Millisecond).Truncate(100*time.Millisecond))
}

// Tail is how long the store runs on after a stop: the watermark (latest
// start minus the lateness) must pass the last injected transaction's
// end by 2Δ, and then the next tick; a transaction's start lags the wall
// clock by at most its duration, which the lateness bounds again.
func Tail(lateness time.Duration) time.Duration {
	return 2*lateness + 2*Skew + 2*Tick
}

func run(ctx context.Context, cfg *config, stdout, stderr io.Writer) (int, error) {
	if cfg.brokerOnly != "" {
		return serveBroker(ctx, cfg, stderr)
	}
	broker, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(cfg.partitions), Topic))
	if err != nil {
		return ExitError, fmt.Errorf("start the in-process broker: %w", err)
	}
	defer broker.Close()
	addr := broker.ListenAddrs()[0]

	var record *os.File
	if cfg.record != "" {
		// Truncated: a second demo reuses key names, so one file holding
		// both would not be one history.
		if record, err = os.Create(cfg.record); err != nil {
			return ExitError, err
		}
		defer record.Close()
	}

	started := time.Now()
	gcfg := storeConfig(cfg, started)
	if err := gcfg.Validate(); err != nil {
		return ExitError, err
	}
	lateness := Lateness(gcfg.Latency)

	tap := &alertTap{w: stdout, log: stderr, injectedAt: map[string]time.Time{}}
	// run serves the status page itself (--http, empty = off: its default
	// address would collide with a real run on the same machine).
	runArgs := []string{"--source", "kafka", "--brokers", addr, "--topic", Topic,
		"--initial-state", "empty", "--level", cfg.level,
		"--skew", Skew.String(), "--lateness", lateness.String(), "--indoubt", InDoubt.String(),
		"--tick", Tick.String(), "--status", cfg.status.String(), "--http", cfg.http}
	runArgs = append(runArgs, "--evict="+strconv.FormatBool(cfg.evict))

	// The checker is stopped by the demo, after the drain, not by the
	// interrupt: it should read what the store produced before it.
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRun()
	runDone := make(chan int, 1)
	go func() { runDone <- runcmd.Main(runCtx, runArgs, nil, tap, stderr) }()

	anomalies := "no injected anomalies"
	if cfg.anomalyEvery > 0 {
		anomalies = "a lost update injected every " + cfg.anomalyEvery.String() + " on average"
	}
	until := "until interrupted"
	if cfg.duration > 0 {
		until = "for " + cfg.duration.String()
	}
	fmt.Fprintf(stderr, "streamcheck demo: simulated store, %d sessions, %g txn/s, %s, seed %d; broker %s, topic %s (%d partitions); checking %s (skew %s, lateness %s) %s\n",
		Sessions, cfg.rate, anomalies, cfg.seed, addr, Topic, cfg.partitions, cfg.level, Skew, lateness, until)

	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, Topic)
	storeCtx, stopStore := context.WithCancel(ctx)
	defer stopStore()
	if cfg.duration > 0 {
		var cancel context.CancelFunc
		storeCtx, cancel = context.WithTimeout(storeCtx, cfg.duration)
		defer cancel()
	}
	p := &pacer{partitions: cfg.partitions, write: w.WritePartitioned, tap: tap}
	if cfg.anomalyEvery > 0 {
		p.tail = Tail(lateness)
	}
	if record != nil {
		p.record = bufio.NewWriter(record)
	}

	stopStatus := cliutil.StatusLines(stderr, "streamcheck demo", cfg.status, func() string {
		return tap.line(time.Since(started))
	})

	var checkerGone bool
	storeErr := p.run(storeCtx, gcfg, runDone)
	if errors.Is(storeErr, errCheckerStopped) {
		checkerGone, storeErr = true, nil
	}
	if err := w.Close(); err != nil && storeErr == nil {
		storeErr = fmt.Errorf("close the producer: %w", err)
	}
	if p.record != nil {
		if err := p.record.Flush(); err != nil && storeErr == nil {
			storeErr = fmt.Errorf("--record: %w", err)
		}
	}
	stopStatus()

	checkCode := p.checkerCode
	if !checkerGone {
		// At least DrainWait, for the checker to read the last events;
		// longer while an injection is still unalerted (a checker that
		// fell behind), up to MaxDrain. A second interrupt kills the
		// process (main restores the default handling after the first).
		drainStart := time.Now()
		poll := time.NewTicker(50 * time.Millisecond)
	drain:
		for {
			select {
			case checkCode = <-runDone:
				checkerGone = true
				break drain
			case <-poll.C:
				waited := time.Since(drainStart)
				if waited >= MaxDrain || waited >= DrainWait && tap.allAlerted() {
					break drain
				}
			}
		}
		poll.Stop()
		if !checkerGone {
			stopRun()
			checkCode = <-runDone
		}
	}
	fmt.Fprintln(stderr, "streamcheck demo:", tap.summary(time.Since(started), lateness))
	if storeErr != nil {
		return ExitError, storeErr
	}
	switch {
	case checkCode == runcmd.ExitError:
		return ExitError, errors.New("the in-process checker failed (see above)")
	case checkerGone:
		return ExitError, errors.New("the in-process checker stopped before the store (see above)")
	case tap.unexplained() > 0:
		return ExitAnomaly, nil
	}
	return ExitOK, nil
}

// brokerOnlyFlags checks the flags of --broker-only mode: the address
// must be on loopback (the broker has no authentication, and anyone who
// reaches it can read and write every topic), and the flags of the store
// and the checker, which this mode does not run, are refused rather than
// ignored. Topics get one partition unless --partitions says otherwise:
// kcat spreads unkeyed messages over the partitions at random, and one
// partition keeps a file's events in its order.
func brokerOnlyFlags(fs *flag.FlagSet, cfg *config) error {
	host, _, err := net.SplitHostPort(cfg.brokerOnly)
	if err != nil {
		return fmt.Errorf("--broker-only %q: %w", cfg.brokerOnly, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--broker-only %q: not a loopback address (the demo broker has no authentication)", cfg.brokerOnly)
	}
	var bad []string
	partitionsSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "broker-only", "duration", "status":
		case "partitions":
			partitionsSet = true
		default:
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return fmt.Errorf("--broker-only serves only the broker: %s not used (only --duration and --partitions are)", strings.Join(bad, ", "))
	}
	if !partitionsSet {
		cfg.partitions = 1
	}
	return nil
}

// serveBroker is --broker-only: the in-process broker alone, with topic
// auto-creation (kfake creates a topic when a metadata request asks for
// it, as kcat's producer does), and Topic created up front so that run
// may start before anything is produced. It serves until ctx ends or
// --duration passes; what was produced lives in memory only.
func serveBroker(ctx context.Context, cfg *config, stderr io.Writer) (int, error) {
	ln, err := net.Listen("tcp", cfg.brokerOnly)
	if err != nil {
		return ExitError, fmt.Errorf("--broker-only: %w", err)
	}
	// kfake listens on 127.0.0.1 at a port of its choosing; handing it the
	// listener already bound serves the address asked for, port 0 too.
	broker, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(cfg.partitions), kfake.SeedTopics(int32(cfg.partitions), Topic),
		kfake.ListenFn(func(string, string) (net.Listener, error) { return ln, nil }))
	if err != nil {
		ln.Close()
		return ExitError, fmt.Errorf("start the in-process broker: %w", err)
	}
	defer broker.Close()
	addr := broker.ListenAddrs()[0]
	until := "until interrupted"
	if cfg.duration > 0 {
		until = "for " + cfg.duration.String()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.duration)
		defer cancel()
	}
	fmt.Fprintf(stderr, "streamcheck demo: serving a Kafka-protocol broker on %s %s (in memory; topic %s exists, others are created on first use, %d partition(s) each). Try:\n"+
		"  streamcheck gen --txns 2000 --inject lost-update | kcat -P -b %s -t %s\n"+
		"  streamcheck run --source kafka --brokers %s --topic %s --initial-state empty --lateness 10ms --tick 10ms\n",
		addr, until, Topic, cfg.partitions, addr, Topic, addr, Topic)
	<-ctx.Done()
	fmt.Fprintln(stderr, "streamcheck demo: broker stopped")
	return ExitOK, nil
}

// errCheckerStopped: the checker returned while the store was running.
var errCheckerStopped = errors.New("the checker stopped")

// pacer plays the generated history in wall-clock time (D1, D2).
type pacer struct {
	partitions int
	write      func(ctx context.Context, partitions []int, values [][]byte) error
	record     *bufio.Writer
	tap        *alertTap
	// tail is how long the store runs on, without new injections, once
	// asked to stop.
	tail time.Duration

	parts []int
	vals  [][]byte
	// checkerCode is run's exit code if it returned while the store ran.
	checkerCode int
}

// run generates until ctx ends (the store's stop), flushing the events
// due before each wait, then runs the tail: Tail more of the store with
// no new injection, so that the checker's watermark passes every injected
// anomaly and closes it (D4). checkerDone ends it early if the checker
// quits.
func (p *pacer) run(ctx context.Context, cfg gen.Config, checkerDone <-chan int) error {
	timer := time.NewTimer(0)
	<-timer.C
	errStop := errors.New("stop")
	stopping := ctx.Done()
	var tailEnd int64 // wall-clock ns; 0 until the store is asked to stop
	begun := map[string]bool{}
	startTail := func() {
		stopping = nil
		tailEnd = time.Now().Add(p.tail).UnixNano()
		if p.tap.log != nil && p.tail > 0 {
			fmt.Fprintf(p.tap.log, "streamcheck demo: stopping: the store runs %s more without new anomalies, so that the checker closes every one injected\n", p.tail)
		}
	}
	_, err := gen.GenerateStream(cfg, func(t history.Txn) error {
		if wait := time.Until(time.Unix(0, t.End)); wait > 0 {
			if err := p.flush(); err != nil {
				return err
			}
			timer.Reset(wait)
		wait:
			for {
				select {
				case <-stopping:
					startTail()
				case p.checkerCode = <-checkerDone:
					timer.Stop()
					return errCheckerStopped
				case <-timer.C:
					break wait
				}
			}
		}
		if tailEnd == 0 && ctx.Err() != nil {
			startTail()
		}
		if tailEnd != 0 && t.End > tailEnd {
			return errStop
		}
		if k := injection(t.Session); k != "" {
			if tailEnd != 0 && !begun[k] {
				// Dropped whole: without its transactions the history
				// is the store's own (gen G5).
				return nil
			}
			begun[k] = true
		}
		v := ingest.AppendNative(nil, &t)
		p.parts = append(p.parts, partitionOf(t.Session, p.partitions))
		p.vals = append(p.vals, v)
		if p.record != nil {
			p.record.Write(v)
			if err := p.record.WriteByte('\n'); err != nil {
				return fmt.Errorf("--record: %w", err)
			}
		}
		p.tap.produced(&t)
		return nil
	})
	if err == errStop {
		err = nil
	}
	if ferr := p.flush(); err == nil {
		err = ferr
	}
	return err
}

func (p *pacer) flush() error {
	if len(p.vals) == 0 {
		return nil
	}
	// Bounded so that a broker that stopped answering cannot hang the
	// demo; kfake in process answers in microseconds.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := p.write(ctx, p.parts, p.vals)
	p.parts, p.vals = p.parts[:0], p.vals[:0]
	if err != nil {
		return fmt.Errorf("produce to the demo broker: %w", err)
	}
	return nil
}

// partitionOf spreads the base sessions c<i> round robin, so that every
// partition is busy and none holds the watermark back, and hashes the
// rest (injected sessions).
func partitionOf(session string, partitions int) int {
	if n, err := strconv.Atoi(strings.TrimPrefix(session, "c")); err == nil && strings.HasPrefix(session, "c") && n >= 0 {
		return n % partitions
	}
	h := fnv.New32a()
	h.Write([]byte(session))
	return int(h.Sum32() % uint32(partitions))
}

// injection returns k for a transaction of gen's injected session
// inj<k>.<j> (D3), else "".
func injection(session string) string {
	rest, ok := strings.CutPrefix(session, "inj")
	if !ok {
		return ""
	}
	k, _, ok := strings.Cut(rest, ".")
	if !ok {
		return ""
	}
	return k
}

// alertTap sits on run's alert output: it forwards every line, prints a
// readable one per alert, matches alerts with the injections (D3) and
// feeds the status page.
type alertTap struct {
	w, log io.Writer

	mu         sync.Mutex
	buf        []byte
	events     uint64
	injectedAt map[string]time.Time // injection -> when its last transaction was produced
	injTxns    map[string][]string
	alerted    map[string]bool // injections alerted
	alerts     int
	unexpl     int
	firstAfter []time.Duration // produced -> alert, per alerted injection
}

func (a *alertTap) produced(t *history.Txn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events++
	if k := injection(t.Session); k != "" {
		a.injectedAt[k] = time.Now()
		if a.injTxns == nil {
			a.injTxns = map[string][]string{}
		}
		a.injTxns[k] = append(a.injTxns[k], t.ID)
	}
}

func (a *alertTap) Write(p []byte) (int, error) {
	a.mu.Lock()
	a.buf = append(a.buf, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(a.buf, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, bytes.Clone(a.buf[:i]))
		a.buf = a.buf[i+1:]
	}
	a.mu.Unlock()
	n, err := a.w.Write(p)
	for _, l := range lines {
		var al report.Alert
		if json.Unmarshal(l, &al) != nil {
			continue // not an alert: forwarded as is
		}
		fmt.Fprintln(a.log, "streamcheck demo:", a.note(&al))
	}
	return n, err
}

// note matches an alert with an injection and describes it.
func (a *alertTap) note(al *report.Alert) string {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	what := al.Type
	if al.Class != "" && al.Class != al.Type {
		what += " (" + al.Class + ")"
	}
	verb := "ALERT"
	if al.Updated {
		verb = "alert updated"
	} else {
		a.alerts++
	}
	k := ""
	for i, id := range al.Core {
		ki := ""
		for kk, ids := range a.injTxns {
			for _, x := range ids {
				if x == id {
					ki = kk
				}
			}
		}
		if ki == "" || (i > 0 && ki != k) {
			k = ""
			break
		}
		k = ki
	}
	if k != "" && len(al.Core) != len(a.injTxns[k]) {
		k = ""
	}
	core := strings.Join(al.Core, ", ")
	if k == "" {
		if !al.Updated {
			a.unexpl++
		}
		return fmt.Sprintf("%s %s: %s in %s: NOT an injected anomaly", verb, al.ID, what, core)
	}
	if !al.Updated && !a.alerted[k] {
		if a.alerted == nil {
			a.alerted = map[string]bool{}
		}
		a.alerted[k] = true
		a.firstAfter = append(a.firstAfter, now.Sub(a.injectedAt[k]))
	}
	return fmt.Sprintf("%s %s: %s in %s: injected anomaly %s, alerted %s after it was produced",
		verb, al.ID, what, core, k, now.Sub(a.injectedAt[k]).Round(time.Millisecond))
}

// allAlerted says every injection produced so far has been alerted.
func (a *alertTap) allAlerted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.alerted) == len(a.injTxns)
}

func (a *alertTap) unexplained() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.unexpl
}

func (a *alertTap) line(elapsed time.Duration) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return fmt.Sprintf("%s: %s produced (%.0f/s), %s injected, %s",
		elapsed.Round(time.Millisecond), report.Plural(int(a.events), "transaction"),
		float64(a.events)/max(elapsed.Seconds(), 1e-9), report.Plural(len(a.injTxns), "lost update"),
		report.Plural(a.alerts, "alert"))
}

func (a *alertTap) summary(elapsed time.Duration, lateness time.Duration) string {
	s := "done, " + a.line(elapsed)
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.injTxns) - len(a.alerted); n > 0 {
		s += fmt.Sprintf("; %d injected NOT alerted (the checker fell more than %s behind?)", n, lateness)
	}
	if len(a.firstAfter) > 0 {
		var sum time.Duration
		for _, d := range a.firstAfter {
			sum += d
		}
		s += fmt.Sprintf("; mean time from injection to alert %s", (sum / time.Duration(len(a.firstAfter))).Round(time.Millisecond))
	}
	if a.unexpl > 0 {
		s += fmt.Sprintf("; %s NOT explained by an injection", report.Plural(a.unexpl, "alert"))
	}
	return s
}
