package runcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/report"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/sionline"
	"github.com/streamcheck/streamcheck/state"
	"github.com/streamcheck/streamcheck/weakonline"
	"github.com/streamcheck/streamcheck/window"
)

// loopState is what the loop saves in every checkpoint (D2): the
// driver's state between ticks (driver.State, D1; embedded so that the
// JSON is the loop snapshot's of before the driver, and old checkpoints
// restore) and the loop's own position and counters.
type loopState struct {
	*driver.State
	// Line is the number of lines a file source has read.
	Line     int
	Counters counters
}

// counters are the loop's totals; with the window's and the engine's they
// make the checkpointed totals.
type counters struct {
	Messages    uint64 // read and counted (skipped ones excluded)
	Undecodable uint64
	Invalid     uint64
	Oversized   uint64
	Alerts      uint64 // alert lines handed to the sink
	Lost        uint64 // offsets retention deleted before they were read
}

type runner struct {
	// gc paces the collector while the stamps vouch (stamps.go).
	gc    stampsGC
	cfg   *runConfig
	stdin io.Reader
	// txns, when set (MainTxns), stands for stdin: decoded transactions.
	txns   <-chan history.Txn
	stdout io.Writer
	stderr io.Writer

	src   source
	store *state.Store
	// drv steps the engine in event time; win and engine are its window
	// and engine, read here for snapshots, statistics and alert bodies
	// (every event and every step goes through drv).
	drv *driver.Driver
	win *window.Window

	latency latencyStats
	engine  runEngine
	parts   int
	kafka   *ingest.KafkaConfig
	ends    []int64 // stop-at-end targets

	st   loopState
	next []int64 // next offset per partition (the checkpoint's offsets)

	al      *alerting
	emitted map[string]bool

	dead *deadLetters

	sinceCkpt int
	lastCkpt  time.Time
	ckpts     int
	ckptTime  time.Duration // last checkpoint's duration (snapshots and write)
	ckptBytes int           // last checkpoint's snapshot bytes
	// ckptLoop is what checkpoints cost the loop in all: the snapshots,
	// and waiting for a write still in flight.
	ckptLoop time.Duration
	// ckptWrite is the time of the writes, in the background, in all.
	ckptWrite time.Duration
	// saving is the checkpoint write in flight (nil: none).
	saving chan savedCheckpoint
	// dropReleased: the engine was restored from bodies stored in Pebble
	// (an earlier format); the next checkpoint deletes them, the engine
	// keeping every body in the state directory's body file since.
	dropReleased bool
	// bodyBytes is the body file's size at the last checkpoint.
	bodyBytes int64
	// savedIDs is the window's ID mark the state directory covers (the
	// window's IDs are stored apart, each once, like the bodies).
	savedIDs int
	skipped  uint64
	started  time.Time
	// lastInput is when the source last delivered a message (idle_release).
	lastInput time.Time
	// steps counts the driver's steps (Ready), so that the loop reads the
	// clock again only after a step.
	steps      int
	lastStatus time.Time
	// lastStatusIn, lastStatusChecked: accepted and checked transactions
	// at the last status line, for its rates.
	lastStatusIn      uint64
	lastStatusChecked int
	closers           []func() error

	// readErr is why the input broke off, if it did (an input error).
	readErr error

	idle       []bool  // partitions logged idle
	logStart   []int64 // Kafka log start offsets, for gap (cached)
	logStartAt time.Time
}

func newRunner(cfg *runConfig, stdin io.Reader, stdout, stderr io.Writer) (*runner, error) {
	r := &runner{cfg: cfg, stdin: stdin, stdout: stdout, stderr: stderr, emitted: map[string]bool{}}
	r.dead = &deadLetters{}
	if cfg.DeadLetter.File != "" {
		f, err := os.OpenFile(cfg.DeadLetter.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			r.close()
			return nil, err
		}
		r.closers = append(r.closers, f.Close)
		r.dead.file, r.dead.w = f, bufio.NewWriter(f)
	}
	return r, nil
}

func (r *runner) close() error {
	var errs []error
	if r.src != nil {
		errs = append(errs, r.src.close())
	}
	if r.al != nil {
		// Before the store: the dispatcher acknowledges into its outbox.
		errs = append(errs, r.al.close())
		r.al = nil
	}
	if r.dead != nil {
		errs = append(errs, r.dead.flush(context.Background()))
		if r.dead.kafka != nil {
			errs = append(errs, r.dead.kafka.Close())
		}
	}
	if r.store != nil {
		// A write in flight finishes before the store closes (its error,
		// if the run did not see it, is the run's).
		errs = append(errs, r.waitSave())
		errs = append(errs, r.store.Close())
	}
	if r.kafka != nil {
		r.kafka.Close()
	}
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	r.src, r.store, r.closers = nil, nil, nil
	return errors.Join(errs...)
}

func (r *runner) kafkaConfig() (*ingest.KafkaConfig, error) {
	k := &r.cfg.Kafka
	c := &ingest.KafkaConfig{
		Brokers: k.Brokers, Topic: k.Topic, ClientID: k.ClientID,
		MinBytes: int(k.MinFetchBytes), MaxBytes: int(k.MaxFetchBytes), MaxWait: time.Duration(k.MaxWait),
		MaxEventBytes: int(k.MaxEventBytes),
		BackoffMin:    time.Duration(k.RetryBackoffMin), BackoffMax: time.Duration(k.RetryBackoffMax),
		Logger: r.cfg.log,
	}
	if k.TLS.Enabled {
		t, err := ingest.KafkaTLS(k.TLS.CAFile, k.TLS.CertFile, k.TLS.KeyFile, k.TLS.ServerName, k.TLS.InsecureSkipVerify)
		if err != nil {
			return nil, err
		}
		c.TLS = t
	}
	pw, err := k.SASL.PasswordValue()
	if err != nil {
		return nil, err
	}
	if c.SASL, err = ingest.KafkaSASL(k.SASL.Mechanism, k.SASL.Username, pw); err != nil {
		return nil, err
	}
	return c, nil
}

// retry calls f until it succeeds or ctx ends, with backoff, logging each
// failure: a broker that is down at start is waited for, not fatal.
func (r *runner) retry(ctx context.Context, what string, f func() error) error {
	backoff := time.Duration(r.cfg.Kafka.RetryBackoffMin)
	for {
		err := f()
		if err == nil {
			return nil
		}
		r.cfg.log.Warn("kafka unreachable, retrying", "what", what, "backoff", backoff, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (gave up: %v)", what, err, ctx.Err())
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Duration(r.cfg.Kafka.RetryBackoffMax))
	}
}

func (r *runner) sourceName() string {
	switch r.cfg.Source {
	case "kafka":
		return "kafka:" + r.cfg.Kafka.Topic
	case "-":
		return "-"
	}
	abs, err := filepath.Abs(r.cfg.Source)
	if err != nil {
		abs = r.cfg.Source
	}
	return "file:" + abs
}

// start opens the state, restores the checkpoint if there is one, and
// starts the source from its offsets.
func (r *runner) start(ctx context.Context) error {
	r.parts = 1
	if r.cfg.Source == "kafka" {
		kc, err := r.kafkaConfig()
		if err != nil {
			return err
		}
		r.kafka = kc
		if err := r.retry(ctx, "partitions of "+kc.Topic, func() (err error) {
			r.parts, err = ingest.KafkaPartitions(ctx, kc)
			return err
		}); err != nil {
			return err
		}
		if t := r.cfg.DeadLetter.Topic; t != "" {
			r.dead.kafka = ingest.NewKafkaWriter(kc, t)
			r.dead.topic = t
		}
	}
	wcfg := window.Config{Partitions: r.parts, Lateness: int64(r.cfg.Check.Lateness), Skew: r.cfg.opts.Skew,
		InDoubt: r.cfg.opts.InDoubt, IdleTimeout: int64(r.cfg.Check.IdleTimeout), MaxAhead: int64(r.cfg.Check.MaxAhead)}
	var ckpt *state.Checkpoint
	if r.cfg.State.Dir != "" {
		var err error
		r.store, err = state.Open(r.cfg.State.Dir, state.Options{Logger: r.cfg.log, Source: r.sourceName(),
			Retention: state.Retention{MaxAge: int64(r.cfg.State.Retention.MaxAge), MaxBytes: int64(r.cfg.State.Retention.MaxBytes)}})
		if err != nil {
			return err
		}
		if ckpt, _, err = r.store.LoadHeader(); err != nil {
			return err
		}
		r.cfg.log.Info("state directory open (locked for this run)", "dir", r.cfg.State.Dir, "checkpoint", ckpt != nil)
		ids, err := r.store.AlertIDs()
		if err != nil {
			return err
		}
		for _, id := range ids {
			r.emitted[id] = true
		}
	}
	if ckpt != nil {
		if len(ckpt.Offsets) != r.parts {
			return fmt.Errorf("state %s: checkpoint %d covers %d partitions, the source has %d (a changed partition count needs a new state directory)",
				r.cfg.State.Dir, ckpt.Seq, len(ckpt.Offsets), r.parts)
		}
		var err error
		if r.win, err = window.RestoreApart(wcfg, ckpt.Window, ckpt.WindowIDs); err != nil {
			return fmt.Errorf("state %s: %w", r.cfg.State.Dir, err)
		}
		if len(ckpt.WindowIDs) > 0 {
			r.savedIDs = r.win.IDMark()
		} // else a snapshot that held its IDs: the next checkpoint stores them all apart

		// A checkpoint of this format reads only the bodies that were in
		// memory, from the body file; one of the earlier format hands its
		// bodies over from Pebble one at a time, the evicted ones going to
		// a new body file, so a restart holds what the run held.
		bodies := 0
		restore := func(snap []byte) (runEngine, error) {
			if weakonline.Levels(r.cfg.opts.Level) {
				we, err := weakonline.Restore(r.cfg.opts, weakonline.Config{Stream: r.cfg.Alerts.Stream, Bodies: state.NewFileBodies("")}, snap)
				return weakEngine{we}, err
			} else if sionline.Levels(r.cfg.opts.Level) {
				se, err := sionline.Restore(r.cfg.opts, sionline.Config{Stream: r.cfg.Alerts.Stream, Bodies: state.NewFileBodies(r.store.BodyFile())}, snap)
				return siEngine{se}, err
			}
			o, err := online.RestoreOnlineAt(r.cfg.opts, state.NewFileBodies(r.store.BodyFile()), snap, func(body func([]byte) error) error {
				return r.store.EachReleased(func(b []byte) error {
					bodies++
					return body(b)
				})
			})
			if err != nil {
				return nil, err
			}
			// The snapshot does not carry the closure switch.
			o.SetNoClosure(!r.cfg.Check.Closure)
			return o, nil
		}
		if r.cfg.Check.Stamps {
			r.engine, err = r.restoreStamps(ckpt.Engine, restore)
		} else {
			r.engine, err = restore(ckpt.Engine)
		}
		if err != nil {
			return fmt.Errorf("state %s: %w", r.cfg.State.Dir, err)
		}
		r.engine.SetRetention(r.retention())
		r.engine.SetStream(r.cfg.Alerts.Stream)
		r.dropReleased = bodies > 0
		r.bodyBytes = r.engine.BodyFileSize()
		if err := json.Unmarshal(ckpt.Runner, &r.st); err != nil {
			return fmt.Errorf("state %s: loop snapshot: %w", r.cfg.State.Dir, err)
		}
		r.next = ckpt.Offsets
		r.ckpts = int(ckpt.Seq)
		r.cfg.log.Info("resuming from checkpoint", "seq", ckpt.Seq, "offsets", fmt.Sprint(r.next), "messages", r.st.Counters.Messages)
	} else {
		var err error
		if r.win, err = window.New(wcfg); err != nil {
			return err
		}
		if r.engine, err = r.newEngine(); err != nil {
			return err
		}
		if r.cfg.Check.Stamps {
			if r.engine, err = r.stampsOver(r.engine); err != nil {
				return err
			}
		}
		st := driver.NewState(r.parts)
		r.st.State = &st
		r.next = make([]int64, r.parts)
		if r.kafka != nil {
			err := r.retry(ctx, "start offsets", func() (err error) {
				r.next, err = ingest.KafkaEndOffsets(ctx, r.kafka, r.parts, r.cfg.Kafka.Start == "latest")
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	r.drv = driver.New(driver.Config{Tick: int64(r.cfg.Check.Tick), Skew: r.cfg.opts.Skew, Lateness: int64(r.cfg.Check.Lateness),
		MaxAhead: int64(r.cfg.Check.MaxAhead)},
		r.win, r.engine, *r.st.State)
	r.st.State = r.drv.State()
	if r.kafka != nil && ckpt != nil {
		// A checker down for longer than the topic's retention resumes
		// below the log start; the reader would retry that offset for
		// ever. Start at the log start and say what was lost.
		var first []int64
		if err := r.retry(ctx, "log start offsets", func() (err error) {
			first, err = ingest.KafkaEndOffsets(ctx, r.kafka, r.parts, false)
			return err
		}); err != nil {
			return err
		}
		r.logStart, r.logStartAt = first, time.Now()
		for p := range r.next {
			if lost := first[p] - r.next[p]; lost > 0 {
				r.st.Counters.Lost += uint64(lost)
				r.cfg.log.Error("kafka: events lost to the topic's retention before they were read; the check is partial",
					"partition", p, "from", r.next[p], "to", first[p])
				r.next[p] = first[p]
			}
		}
	}
	switch r.cfg.Source {
	case "kafka":
		if r.cfg.Kafka.StopAtEnd {
			if err := r.retry(ctx, "end offsets", func() (err error) {
				r.ends, err = ingest.KafkaEndOffsets(ctx, r.kafka, r.parts, true)
				return err
			}); err != nil {
				return err
			}
		}
		r.src = newKafkaSource(ctx, *r.kafka, r.next)
	case "-":
		if r.txns != nil {
			r.src = newTxnSource(ctx, "-", r.txns)
			return nil
		}
		s, err := newLineSource(ctx, "-", r.stdin, false, 0, 0, 0, int(r.cfg.Kafka.MaxEventBytes))
		if err != nil {
			return err
		}
		r.src = s
	default:
		s, err := newLineSource(ctx, r.cfg.Source, nil, true, time.Duration(r.cfg.Status.Poll), r.next[0], r.st.Line, int(r.cfg.Kafka.MaxEventBytes))
		if err != nil {
			return err
		}
		r.src = s
	}
	return nil
}

// newEngine builds the level's engine for a run from the start.
func (r *runner) newEngine() (runEngine, error) {
	ecfg := online.OnlineConfig{Evict: r.cfg.Check.Evict, MaxPinned: r.cfg.Check.MaxPinned, Retention: r.retention(),
		Stream: r.cfg.Alerts.Stream, NoClosure: !r.cfg.Check.Closure}
	// Evicted bodies go to the state directory's body file, or
	// without one to an unlinked temporary file: on disk either way,
	// so that the engine's memory is the window, not the stream.
	ecfg.Bodies = state.NewFileBodies("")
	if r.store != nil {
		ecfg.Bodies = state.NewFileBodies(r.store.BodyFile())
	}
	if weakonline.Levels(r.cfg.opts.Level) {
		// Closed bodies at read atomic and causal go to an
		// unlinked temporary file (the engine's snapshot carries
		// them, so no checkpoint counts on the file).
		we, err := weakonline.New(r.cfg.opts, weakonline.Config{Stream: r.cfg.Alerts.Stream, Bodies: state.NewFileBodies("")})
		if err != nil {
			return nil, err
		}
		return weakEngine{we}, nil
	} else if sionline.Levels(r.cfg.opts.Level) {
		se, err := sionline.New(r.cfg.opts, sionline.Config{Stream: r.cfg.Alerts.Stream, Bodies: ecfg.Bodies})
		if err != nil {
			return nil, err
		}
		return siEngine{se}, nil
	}
	return online.NewOnlineConfig(r.cfg.opts, ecfg), nil
}

func (r *runner) run(ctx context.Context) (int, error) {
	defer r.gc.restore()
	r.started, r.lastStatus, r.lastCkpt, r.lastInput = time.Now(), time.Now(), time.Now(), time.Now()
	if lv := r.cfg.opts.Level; weakonline.Levels(lv) {
		fmt.Fprintf(r.stderr, "streamcheck run: checking %s (docs/SEMANTICS.md §5 \"The window at the weak levels\"): an alert with needs_realtime=true proves a read from a transaction that had not begun, not a proven %s violation\n", checkedAs(lv), lv)
		// Said at start, not buried in a doc: a user tailing a database for
		// weeks at these levels must know what the window keeps.
		fmt.Fprintf(r.stderr, "streamcheck run: %s\n", weakonline.MemoryNote(r.cfg.opts))
	} else if sionline.Levels(lv) {
		if sionline.Checked(lv) != lv {
			fmt.Fprintf(r.stderr, "streamcheck run: checking %s (docs/SEMANTICS.md §5 \"The window at the snapshot levels\"): an alert with needs_realtime=true is a real-time violation, not a proven %s violation\n", checkedAs(lv), lv)
		}
		fmt.Fprintf(r.stderr, "streamcheck run: %s\n", sionline.MemoryNote(lv))
	} else if !lv.RealTime() {
		fmt.Fprintf(r.stderr, "streamcheck run: checking %s (the database promises %s; real time is assumed, Vbox Theorem 3.5): an alert with needs_realtime=true is a real-time violation, not a proven %s violation\n", incremental.OnlineLevel, lv, lv)
	}
	fmt.Fprintf(r.stderr, "streamcheck run: level %s, skew %s, lateness %s, in-doubt %s, initial state %s, tick %s\n",
		checkedAs(r.cfg.opts.Level), report.Duration(r.cfg.opts.Skew), report.Duration(int64(r.cfg.Check.Lateness)), indoubtText(r.cfg.opts.InDoubt), r.cfg.opts.InitialState, report.Duration(int64(r.cfg.Check.Tick)))
	if err := r.start(ctx); err != nil {
		if ctx.Err() != nil {
			// Interrupted while connecting: nothing read, nothing to save.
			fmt.Fprintln(r.stderr, "streamcheck run: interrupted before the first message")
			return ExitOK, nil
		}
		return ExitError, err
	}
	if err := r.startAlerting(ctx); err != nil {
		return ExitError, err
	}
	// Ticks an interrupted run had not stepped yet (advance stops at a
	// step boundary) are stepped now rather than at the next message.
	if err := r.advance(ctx); err != nil {
		if errors.Is(err, errInterrupted) {
			return r.interrupted()
		}
		return ExitError, err
	}
	if r.caughtUp() {
		return r.finish(ctx)
	}
	period := time.Second
	for _, d := range []time.Duration{time.Duration(r.cfg.Status.Interval), time.Duration(r.cfg.State.CheckpointInterval)} {
		if d > 0 {
			period = min(period, d)
		}
	}
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	msgs := r.src.messages()
	for {
		select {
		case <-ctx.Done():
			return r.interrupted()
		case b, ok := <-msgs:
			if !ok {
				return r.interrupted()
			}
			// One reading of the clock per batch, and again after
			// whatever took time (a step, a checkpoint): each message
			// is handled at a reading taken after it arrived and at most
			// one message's decoding-free handling before its own
			// handling (the clock costs tens of ns a reading here, read
			// several times an event before).
			r.lastInput = time.Now()
			for i := range b.msgs {
				m := &b.msgs[i]
				if m.end {
					if m.err != nil {
						// The input broke off (a truncated gzip stream, a
						// read error): an input error, as for check, but
						// what was read is still checked and its alerts
						// delivered before exit 2.
						r.readErr = m.err
						if _, placed := errors.AsType[*history.Error](m.err); !placed {
							r.readErr = fmt.Errorf("%s: read after line %d: %w", r.cfg.Source, r.st.Line, m.err)
						}
						fmt.Fprintf(r.stderr, "streamcheck run: %v; checking what was read\n", r.readErr)
					}
					return r.finish(ctx)
				}
				steps := r.steps
				if err := r.handle(ctx, m, r.lastInput); err != nil {
					if errors.Is(err, errInterrupted) {
						return r.interrupted()
					}
					return ExitError, err
				}
				if r.store != nil && r.cfg.State.CheckpointEvery > 0 && r.sinceCkpt >= r.cfg.State.CheckpointEvery {
					if err := r.checkpoint(ctx); err != nil {
						return ExitError, err
					}
					steps = -1
				}
				if r.caughtUp() {
					return r.finish(ctx)
				}
				if steps != r.steps {
					// The time spent stepping and checkpointing is not
					// quiet input: the source may have delivered
					// meanwhile, unread. Counting it made a step longer
					// than idle_release raise the watermark and
					// dead-letter the events waiting behind it.
					r.lastInput = time.Now()
				}
			}
			// Handled whole: nothing of it is kept (handle copies what
			// the driver, the engine and the dead letters keep).
			r.src.recycle(b)
		case <-ticker.C:
			r.logIdle()
			if err := r.releaseIdle(ctx); err != nil {
				if errors.Is(err, errInterrupted) {
					return r.interrupted()
				}
				return ExitError, err
			}
			r.observe()
			if r.store != nil && r.cfg.State.CheckpointInterval > 0 && r.sinceCkpt > 0 &&
				time.Since(r.lastCkpt) >= time.Duration(r.cfg.State.CheckpointInterval) {
				if err := r.checkpoint(ctx); err != nil {
					return ExitError, err
				}
			}
			if r.store == nil {
				if err := r.dead.flush(ctx); err != nil {
					r.cfg.log.Warn("dead letters: flush failed", "err", err)
				}
			}
		}
		r.statusMaybe()
	}
}

// releaseIdle: when stdin or a followed file has been quiet for
// idle_release of wall-clock time, W moves to the tick above the greatest
// start accepted (window.RaiseTo), so that the last transactions are
// released and stepped instead of waiting, for as long as the file stays
// quiet, for events that would move W past them. It is the rule Kafka's
// idle partitions follow (the window stops waiting for a partition that
// says nothing), on the wall clock since a file has no other partition
// whose event time could tell: an event that arrives later and starts
// before the new W is dead-lettered as late, counted, and the verdict
// says partial; none is while the source keeps the lateness promise in
// wall-clock terms and idle_release is above the lateness. With no such
// late event the steps are those of a run that never paused (D1: the set
// at each tick is final once W passed it), so the alerts are the same.
func (r *runner) releaseIdle(ctx context.Context) error {
	d := time.Duration(r.cfg.Check.IdleRelease)
	if r.kafka != nil || d <= 0 || time.Since(r.lastInput) < d {
		return nil
	}
	t, raised := r.drv.RaiseIdle()
	if !raised {
		return nil // nothing accepted yet, the input ended, or released already
	}
	r.cfg.log.Info("input quiet: its last transactions are checked; a later event that starts before the watermark is dead-lettered as late",
		"quiet_for", time.Since(r.lastInput).Round(time.Millisecond), "idle_release", d, "watermark", t)
	return r.advance(ctx)
}

// logIdle says which partitions stopped (or resumed) holding the
// watermark back since the last look; the window counts the transitions.
func (r *runner) logIdle() {
	if r.idle == nil {
		r.idle = make([]bool, r.parts)
	}
	for p := range r.idle {
		if idle := r.win.Idle(p); idle != r.idle[p] {
			r.idle[p] = idle
			if idle {
				r.cfg.log.Info("partition idle: it no longer holds the watermark back; a later event in it beyond the lateness is dead-lettered",
					"partition", p, "idle_timeout", r.cfg.Check.IdleTimeout)
			} else {
				r.cfg.log.Info("partition active again", "partition", p)
			}
		}
	}
}

// caughtUp: stop-at-end and every partition read to its end.
func (r *runner) caughtUp() bool {
	if r.ends == nil {
		return false
	}
	for p, e := range r.ends {
		if r.next[p] < e {
			return false
		}
	}
	return true
}

// handle counts one message and feeds it to the window; bad input is
// dead-lettered with its position and reason and never stops the run.
//
// now is a reading of the wall clock taken after m arrived (the driver's
// max-ahead bound against the wall clock reads it).
func (r *runner) handle(ctx context.Context, m *message, now time.Time) error {
	if m.offset < r.next[m.part] {
		// Covered by the checkpoint already (a source that started
		// before it, or a duplicate delivery): skip, do not count.
		r.skipped++
		return nil
	}
	if m.line == 0 && m.offset > r.next[m.part] {
		r.gap(ctx, m.part, m.offset)
	}
	r.next[m.part] = m.next
	if m.line > 0 {
		r.st.Line = m.line
	}
	r.st.Counters.Messages++
	r.sinceCkpt++
	r.al.m.EventsConsumed.Inc()
	switch {
	case m.oversized:
		r.al.m.Reject("oversized")
		r.st.Counters.Oversized++
		size := int64(len(m.value))
		if m.size > 0 {
			size = m.size // a line source keeps only the line's start
		}
		r.deadLetter(m, "oversized", fmt.Sprintf("%d bytes > max_event_bytes %d", size, r.cfg.Kafka.MaxEventBytes), nil)
		r.addUnchecked(m, r.recover(m))
		return nil
	case m.err != nil:
		reason := "invalid"
		if !json.Valid(m.value) {
			reason = "undecodable"
			r.st.Counters.Undecodable++
			r.al.m.Reject(alerts.ReasonDecode)
		} else {
			r.st.Counters.Invalid++
			r.al.m.Reject(alerts.ReasonInvalid)
		}
		r.deadLetter(m, reason, m.err.Error(), nil)
		r.addUnchecked(m, r.recover(m))
		return nil
	}
	r.al.m.EventsDecoded.Inc()
	switch rej := r.drv.Accept(m.part, m.offset, m.txn, now.UnixNano()); {
	case rej == nil:
		if se, ok := r.engine.(stampEngine); ok {
			se.NoteFacts(&m.txn, m.facts)
		}
		return r.advanceAt(ctx, now)
	case rej.Clash != nil:
		r.st.Counters.Invalid++
		r.al.m.Reject(alerts.ReasonInvalid)
		r.deadLetter(m, "invalid", rej.Clash.Error(), &m.txn)
	default:
		// The driver queued its writes as an unchecked writer.
		dl := rej.Window
		if se, ok := r.engine.(stampEngine); ok && dl.Reason == window.Late {
			// A late event was decoded whole: its stamps can place it.
			se.NoteLate(&dl.Txn, m.facts)
		}
		r.al.m.Reject(rejectReason(dl.Reason))
		r.deadLetter(m, dl.Reason.String(), dl.Detail, &dl.Txn)
	}
	return nil
}

// maxUncheckedOps bounds the ops a dead letter keeps in the engine (an
// unchecked writer's body stays in memory for the rest of the run): beyond
// it, its keys stand for its writes, and beyond that many keys, any key.
const maxUncheckedOps = 1024

// recover reads a rejected message leniently (ingest.RecoverNative): the
// writes it can read stay exact, the ops it cannot become wildcard writes
// (online.WildWrite) on the smallest scope the text allows
// (docs/SEMANTICS.md §5 "Dead letters").
func (r *runner) recover(m *message) history.Txn {
	rec := ingest.RecoverNative(m.value, history.Pos{Source: r.cfg.Source, Line: m.line, Offset: m.offset})
	t, wild, all := rec.Txn, rec.Wild, rec.WildAll
	// Only writes matter to an unchecked writer.
	t.Ops = slices.DeleteFunc(t.Ops, func(op history.Op) bool { return op.Kind == history.Read })
	if len(t.Ops)+len(wild) > maxUncheckedOps {
		seen := map[history.Key]bool{}
		for _, k := range wild {
			seen[k] = true
		}
		for _, op := range t.Ops {
			if !seen[op.Key] {
				seen[op.Key] = true
				wild = append(wild, op.Key)
			}
		}
		t.Ops = nil
		if len(wild) > maxUncheckedOps {
			wild, all = nil, true
		}
	}
	for _, k := range wild {
		t.Ops = append(t.Ops, online.WildWrite(k))
	}
	if all {
		t.Ops = append(t.Ops, online.WildWrite(online.Wild))
	}
	return t
}

// addUnchecked queues what was recovered of a dead-lettered message
// for the engine as an unchecked writer (driver.SetAside, D1).
func (r *runner) addUnchecked(m *message, t history.Txn) {
	r.drv.SetAside(m.part, m.offset, &t)
}

// gap handles Kafka jumping from the next expected offset to a later one
// in partition p. Offsets of transaction markers and compacted records
// are skipped legitimately; only offsets below the partition's log start
// (retention deleted them before they were read) are lost events. The log
// start offsets are asked for at most every 10 s, so a transactional topic
// (a marker per producer transaction) does not cost an admin call per
// message.
func (r *runner) gap(ctx context.Context, p int, offset int64) {
	if r.kafka == nil {
		return
	}
	if r.logStart == nil || time.Since(r.logStartAt) > 10*time.Second {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		first, err := ingest.KafkaEndOffsets(cctx, r.kafka, r.parts, false)
		cancel()
		if err != nil {
			r.cfg.log.Warn("kafka: offsets skipped, and the log start could not be read to tell whether events were lost",
				"partition", p, "from", r.next[p], "to", offset, "err", err)
			return
		}
		r.logStart, r.logStartAt = first, time.Now()
	}
	if lost := min(offset, r.logStart[p]) - r.next[p]; lost > 0 {
		r.st.Counters.Lost += uint64(lost)
		r.cfg.log.Error("kafka: events lost to the topic's retention before they were read; the check is partial",
			"partition", p, "from", r.next[p], "to", r.next[p]+lost)
	}
}

// advance steps the engine, through the driver, at every tick the
// watermark has crossed (D1), handing each step's alerts to the sink.
func (r *runner) advance(ctx context.Context) error {
	return r.advanceAt(ctx, time.Now())
}

// advanceAt is advance with now a reading of the clock taken since the
// watermark last moved (the time the watermark is recorded at).
func (r *runner) advanceAt(ctx context.Context, now time.Time) error {
	if r.al != nil {
		r.al.noteWatermark(r.drv.Watermark(), now)
	}
	for r.drv.HasReady() {
		if ctx.Err() != nil {
			// An interrupt stops at this step boundary: one message can
			// let the watermark cross thousands of ticks (a backlog held
			// back by the lateness), and stepping them all first kept a
			// SIGTERM waiting for minutes. What is not stepped stays in
			// the driver's state, which the checkpoint keeps; a restart
			// steps it at the same ticks with the same sets (D1: each is
			// final once W passed its tick).
			return errInterrupted
		}
		t0 := time.Now()
		r.steps++
		rd, err := r.drv.Ready(ctx)
		if err := r.stepped(rd, t0, err); err != nil {
			return err
		}
	}
	return nil
}

// errInterrupted: advance stopped at a step boundary because ctx ended.
var errInterrupted = errors.New("run: interrupted")

// stepped records one step of the driver begun at t0: its solver
// figures go to the metrics and its alerts to the sink. err is the
// step's: the alerts it found are delivered first.
func (r *runner) stepped(rd driver.Ready, t0 time.Time, err error) error {
	r.retuneGC()
	if a := r.al; a != nil {
		// A step that ran checks counts them as solver calls; its time is
		// one observation (the engine does not time calls separately).
		if es := r.engine.Stats(); es.Checks > a.checks {
			a.m.SolverCalls.Add(float64(es.Checks - a.checks))
			a.m.SolverDuration.Observe(time.Since(t0).Seconds())
			a.m.SolverConflicts.Add(float64(es.Conflicts - a.conflicts))
			a.m.ConstraintsCreated.Add(float64(es.Constraints - a.constraints))
			a.m.ConstraintsPruned.Add(float64(es.Pruned - a.pruned))
			a.checks, a.conflicts, a.constraints, a.pruned = es.Checks, es.Conflicts, es.Constraints, es.Pruned
		}
	}
	for _, a := range rd.Alerts {
		if err := r.emit(a, t0); err != nil {
			return err
		}
	}
	if len(rd.Alerts) > 0 {
		r.observe()
	}
	if testAfterStep != nil {
		testAfterStep()
	}
	return err
}

// testAfterStep, when set (tests only), is called after every step: a
// test interrupts a run at a chosen step boundary with it.
var testAfterStep func()

// emit hands one alert to the dispatcher, which records it in the outbox
// (synced, with a state directory) before any sink sees it (D3) and
// delivers it without the loop waiting.
func (r *runner) emit(a *online.Alert, proven time.Time) error {
	id := a.ID
	if a.Updated {
		id += "/updated"
	}
	if r.emitted[id] {
		return nil // delivered before a crash; this is the replay
	}
	byID := map[string]*history.Txn{}
	for _, tid := range a.Core {
		if t := r.engine.AlertTxn(a, tid); t != nil {
			byID[tid] = t
		}
	}
	// The latency runs from the watermark passing the core's last
	// transaction, not from this step: ticks and pinning add to it.
	if len(byID) > 0 {
		last := int64(math.MinInt64)
		for _, t := range byID {
			last = max(last, t.End)
		}
		proven = r.al.provenAt(last, proven)
	}
	if err := r.al.disp.Enqueue(report.NewAlert(a, r.cfg.opts, byID), proven); err != nil && r.store != nil {
		// The state directory promises the alert survives a crash; a
		// store that cannot record it is a failed run, as a checkpoint
		// that cannot be saved is.
		return err
	}
	r.emitted[id] = true
	r.st.Counters.Alerts++
	if !a.Updated {
		r.latency.note(time.Since(proven))
	}
	return nil
}

// latencyStats summarizes alert latency for the final summary (the
// dispatcher's histogram has it per sink, to delivery).
type latencyStats struct {
	n        int
	sum, max time.Duration
	// samples keeps up to maxLatencySamples for the percentiles (the
	// first ones: a summary, not a monitor).
	samples []time.Duration
}

const maxLatencySamples = 1 << 20

func (l *latencyStats) note(d time.Duration) {
	l.n++
	l.sum += d
	l.max = max(l.max, d)
	if len(l.samples) < maxLatencySamples {
		l.samples = append(l.samples, d)
	}
}

// quantile is the q-quantile of the samples kept (nearest rank).
func (l *latencyStats) quantile(q float64) time.Duration {
	s := slices.Clone(l.samples)
	slices.Sort(s)
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func (l *latencyStats) String() string {
	if l.n == 0 {
		return ""
	}
	return fmt.Sprintf("; alert latency mean %s, p50 %s, p99 %s, max %s (from the watermark passing the core's last transaction)",
		(l.sum / time.Duration(l.n)).Round(time.Microsecond), l.quantile(0.5).Round(time.Microsecond), l.quantile(0.99).Round(time.Microsecond), l.max.Round(time.Microsecond))
}

// finish is end of input: every transaction closes, the last steps run,
// and the exit code is check's on the same history.
//
// With a state directory the checkpoint is taken first, with the window
// still open: a later run on the same directory (the topic grew) resumes
// from it as a live tail, and one that finds no new messages ends the
// same way again, its alerts already recorded as emitted.
func (r *runner) finish(ctx context.Context) (int, error) {
	if r.store != nil {
		if err := r.checkpoint(ctx); err != nil {
			return ExitError, err
		}
	}
	r.drv.EndInput()
	// The end of input steps to the end: its checkpoint is taken.
	if err := r.advance(context.WithoutCancel(ctx)); err != nil {
		return ExitError, err
	}
	t0 := time.Now()
	rd, err := r.drv.Final(ctx)
	if err := r.stepped(rd, t0, err); err != nil {
		return ExitError, err
	}
	if err := r.waitSave(); err != nil {
		return ExitError, err
	}
	r.observe()
	r.flushAlerts()
	r.summary(endOfInput)
	if se, ok := r.engine.(stampEngine); ok {
		n, why := se.FastPath()
		if why == "" {
			why = "never: the stamps' witness held to the end"
		}
		fmt.Fprintf(r.stderr, "streamcheck run: stamps: %d items replayed in stamp order; fell back to the black-box engine: %s\n", n, why)
	}
	return r.outcome().ExitCode(), nil
}

// endOfInput is the summary's reason at the end of the input, the one
// place run's exit status is check's (E1-E3).
const endOfInput = "end of input"

// outcome is where the run stands in the terms of the exit status rule it
// shares with check (cliutil.Outcome): at the end of standard input, run
// exits as check would on the same bytes with the same options. Events
// that check would reject (undecodable or invalid lines, a duplicate id, no
// timestamps under the real-time level run checks, a key used as a list
// and as a register) are input errors; events set aside for a reason of
// the stream's own (late, oversized, lost to retention, the pinned cap,
// bodies past retention) make the check partial. A window reason added
// later counts as partial until it is listed here: never as valid.
func (r *runner) outcome() cliutil.Outcome {
	es := r.engine.Stats()
	c := r.st.Counters
	o := cliutil.Outcome{
		InputErrors:  c.Undecodable + c.Invalid,
		Transactions: uint64(es.Released),
		Anomalies:    uint64(es.Alerts),
		Partial: c.Oversized > 0 || c.Lost > 0 ||
			es.Capped > 0 || es.SetAside > 0 || es.InexactRewinds > 0,
	}
	if r.readErr != nil {
		o.InputErrors++
	}
	if undecided(r.engine) {
		o.Partial = true
	}
	for reason, n := range r.win.Stats().DeadLetters {
		if n == 0 {
			continue
		}
		switch window.Reason(reason) {
		case window.DuplicateID, window.MissingTime, window.EndBeforeStart:
			o.InputErrors += n
		default:
			o.Partial = true
		}
	}
	return o
}

// interrupted: with a state directory, checkpoint without stepping (D2)
// and exit 0; without one, flush what the batch in hand proves.
func (r *runner) interrupted() (int, error) {
	ctx := context.Background()
	if r.store != nil {
		if err := r.checkpoint(ctx); err != nil {
			return ExitError, err
		}
		if err := r.waitSave(); err != nil {
			return ExitError, err
		}
		r.observe()
		r.flushAlerts()
		r.summary("interrupted")
		return ExitOK, nil
	}
	t0 := time.Now()
	rd, err := r.drv.Flush(ctx)
	if err := r.stepped(rd, t0, err); err != nil {
		return ExitError, err
	}
	r.observe()
	r.flushAlerts()
	r.summary("interrupted")
	if r.engine.Stats().Alerts > 0 {
		return ExitAnomaly, nil
	}
	return ExitOK, nil
}

// Totals are the checkpointed counters; a crash test holds them to an
// uninterrupted run.
func (r *runner) totals() map[string]uint64 {
	ws := r.win.Stats()
	es := r.engine.Stats()
	t := map[string]uint64{
		"messages":         r.st.Counters.Messages,
		"accepted":         ws.Accepted,
		"released":         ws.Released,
		"closed":           ws.Closed,
		"undecodable":      r.st.Counters.Undecodable,
		"invalid":          r.st.Counters.Invalid,
		"oversized":        r.st.Counters.Oversized,
		"alerts":           uint64(es.Alerts),
		"alert_lines":      r.st.Counters.Alerts,
		"steps":            uint64(es.Steps),
		"lost":             r.st.Counters.Lost,
		"idle_transitions": ws.IdleTransitions,
	}
	for i, n := range ws.DeadLetters {
		t[window.Reason(i).String()] = n
	}
	t["dead_letters"] = r.deadTotal()
	return t
}

func (r *runner) deadTotal() uint64 {
	n := r.st.Counters.Undecodable + r.st.Counters.Invalid + r.st.Counters.Oversized
	for _, c := range r.win.Stats().DeadLetters {
		n += c
	}
	return n
}

// checkpoint makes the dead letters durable, then takes the snapshots of
// the window, the engine and the loop with the offsets they cover, and
// hands them to a background write: one synced batch, then the offsets
// committed to the consumer group (D2). The write of checkpoint N
// overlaps the reading of the messages after it; checkpoint N+1 first
// waits for it (Saves do not overlap and each writes the bodies after
// the last), and so do the end of the run and close. A failed write
// fails the run at the next checkpoint or at the end, as it did when the
// loop waited for it.
//
// Why in the background: the synced commit is a disk flush the loop
// waited out at every checkpoint, while the snapshots, which must be
// taken on the loop (the engine and the window are not safe for
// concurrent use), are bytes the loop owns once taken.
func (r *runner) checkpoint(ctx context.Context) error {
	if err := r.waitSave(); err != nil {
		return err
	}
	t0 := time.Now()
	// The checkpoint must not cover a dead letter that is not durable:
	// a dead-letter topic that is down is waited for like the source.
	if err := r.retry(ctx, "dead letters", func() error { return r.dead.flush(ctx) }); err != nil {
		return err
	}
	// The bodies go to the engine's body file, not to Pebble: the
	// checkpoint records the file's length, and the write syncs the file
	// before the batch that counts on it.
	eng, syncBodies, err := r.engine.SnapshotDurable()
	if err != nil {
		return fmt.Errorf("engine snapshot: %w", err)
	}
	// Records this checkpoint no longer names (past retention, or copied
	// forward) are freed once it is durable.
	punch := r.engine.Punch()
	loop, err := json.Marshal(&r.st)
	if err != nil {
		return fmt.Errorf("loop snapshot: %w", err)
	}
	win, ids, idMark := r.win.SnapshotApart(r.savedIDs)
	// Copies of what the loop goes on changing: the offsets, and the IDs
	// (a view of the window's ID arena).
	c := &state.Checkpoint{Offsets: slices.Clone(r.next), Engine: eng, Window: win, Runner: loop, Counters: r.totals(),
		DropReleased: r.dropReleased, WindowIDs: bytes.Clone(ids)}
	r.dropReleased = false
	r.savedIDs = idMark
	r.ckpts++
	size := r.engine.BodyFileSize()
	r.ckptBytes = len(c.Engine) + len(c.Window) + len(c.Runner) + len(c.WindowIDs) + int(size-r.bodyBytes)
	r.bodyBytes = size
	r.sinceCkpt, r.lastCkpt = 0, time.Now()
	snapTime := time.Since(t0)
	r.ckptLoop += snapTime
	done := make(chan savedCheckpoint, 1)
	r.saving = done
	commitCtx := context.WithoutCancel(ctx)
	go func() {
		t1 := time.Now()
		err := syncBodies()
		if err != nil {
			err = fmt.Errorf("checkpoint: syncing the body file: %w", err)
		} else {
			err = r.store.Save(c, nil, nil)
		}
		if err == nil {
			if perr := punch(); perr != nil {
				r.cfg.log.Warn("retention: the body file keeps bytes it no longer needs", "err", perr)
			}
		}
		if err == nil && r.kafka != nil && r.cfg.Kafka.Group != "" {
			cctx, cancel := context.WithTimeout(commitCtx, 5*time.Second)
			cerr := ingest.CommitOffsets(cctx, r.kafka, r.cfg.Kafka.Group, c.Offsets)
			cancel()
			if cerr != nil {
				// The checkpoint is the offset of record; the group only
				// serves lag tools, so this is worth a warning, not a stop.
				r.cfg.log.Warn("kafka: offset commit failed (the checkpoint holds the offsets)", "err", cerr)
			}
		}
		write := time.Since(t1)
		var size int64
		if err == nil {
			size = r.store.Size()
		}
		done <- savedCheckpoint{err: err, took: snapTime + write, write: write, dirBytes: size}
	}()
	return nil
}

// savedCheckpoint is the outcome of a background checkpoint write.
type savedCheckpoint struct {
	err   error
	took  time.Duration // snapshots on the loop + the write
	write time.Duration
	// dirBytes is the state directory's size after it.
	dirBytes int64
}

// waitSave waits for the checkpoint write in flight, if any, and returns
// its error.
func (r *runner) waitSave() error {
	if r.saving == nil {
		return nil
	}
	t0 := time.Now()
	s := <-r.saving
	r.saving = nil
	r.ckptLoop += time.Since(t0)
	if s.err != nil {
		return s.err
	}
	r.ckptTime = s.took
	r.ckptWrite += s.write
	if r.al != nil {
		r.al.m.ObserveCheckpoint(r.ckptTime, int64(r.ckptBytes), s.dirBytes)
	}
	return nil
}

func indoubtText(d int64) string {
	if d < 0 {
		return "∞"
	}
	return report.Duration(d)
}

func (r *runner) statusMaybe() {
	if r.cfg.Status.Interval <= 0 || time.Since(r.lastStatus) < time.Duration(r.cfg.Status.Interval) {
		return
	}
	ws := r.win.Stats()
	es := r.engine.Stats()
	now := time.Now()
	secs := now.Sub(r.lastStatus).Seconds()
	// Transactions in (accepted by the window) and checked (given to the
	// engine) per second since the last line: a checker falling behind
	// shows the second below the first.
	inRate := float64(ws.Accepted-r.lastStatusIn) / secs
	checkedRate := float64(es.Released-r.lastStatusChecked) / secs
	r.lastStatus, r.lastStatusIn, r.lastStatusChecked = now, ws.Accepted, es.Released
	broker := ""
	if since, why := r.src.unreachable(); !since.IsZero() {
		broker = fmt.Sprintf("; BROKER UNREACHABLE for %s (%s), retrying", time.Since(since).Round(time.Second), why)
	}
	ck := r.latency.String()
	if err := r.engine.SpillError(); err != nil {
		ck += fmt.Sprintf("; evicted bodies stayed in memory: %v", err)
	}
	if r.store != nil {
		ck = fmt.Sprintf("; checkpoint %d (%s, %d bytes)", r.ckpts, r.ckptTime.Round(time.Microsecond), r.ckptBytes)
	}
	inexact := ""
	if es.Capped > 0 {
		inexact = fmt.Sprintf(", INEXACT: %d set aside by the pinned cap", es.Capped)
	}
	fmt.Fprintf(r.stderr, "streamcheck run: %d messages; window %d released, %d buffered, %d open, %d idle partitions; engine %d in the instance and %d ghosts, %d pinned%s, %d evicted%s; %.0f txn/s in, %.0f txn/s checked; lag %s; %s; %s%s%s\n",
		r.st.Counters.Messages, es.Released, ws.Buffered, ws.Open, ws.IdlePartitions, es.Window, es.Ghosts, es.Pinned, pinnedByText(es.PinnedBy), es.Evicted, inexact, inRate, checkedRate, r.lagText(now), report.Plural(int(r.deadTotal()), "dead letter"), report.Plural(es.Alerts, "alert"), ck, broker)
}

// lagText is the status line's one lag: the wall clock minus the newest
// accepted start of the partition furthest behind, the number the
// watermark-lag metric and /readyz use (observe). The line used to show
// the newest start minus the watermark, which is the lateness whenever
// events flow, and read "2.0 s" while the checker was 10 s behind.
func (r *runner) lagText(now time.Time) string {
	lag, any := time.Duration(math.MinInt64), false
	for _, ms := range r.st.PartMax {
		if ms == math.MinInt64 {
			continue // nothing accepted yet: no lag to measure
		}
		lag, any = max(lag, now.Sub(time.Unix(0, ms))), true
	}
	if !any {
		return "unknown (nothing accepted yet)"
	}
	return fmt.Sprintf("%.1f s behind the wall clock", max(lag, 0).Seconds())
}

func (r *runner) summary(why string) {
	es := r.engine.Stats()
	partial := ""
	if n := r.deadTotal(); n > 0 {
		partial = fmt.Sprintf("; PARTIAL: %d events dead-lettered, reads they could explain were not checked", n)
	}
	o := r.outcome()
	if o.InputErrors > 0 {
		partial += fmt.Sprintf("; INPUT ERROR: %s that check rejects", report.Plural(int(o.InputErrors), "event"))
	}
	if es.Released == 0 {
		partial += "; " + history.ErrNoTransactions.Error()
	}
	if n := r.st.Counters.Lost; n > 0 {
		partial += fmt.Sprintf("; PARTIAL: %d Kafka offsets lost to retention before they were read", n)
	}
	if n := es.Capped; n > 0 {
		partial += fmt.Sprintf("; INEXACT: %d pinned transactions set aside unchecked by --max-pinned %d", n, r.cfg.Check.MaxPinned)
	}
	if n := es.SetAside; n > 0 {
		partial += fmt.Sprintf("; INEXACT: %d transactions set aside unchecked: an anomaly among them needs bodies past retention to prove", n)
	}
	if n := es.InexactRewinds; n > 0 {
		partial += fmt.Sprintf("; INEXACT: %s whose core began before every rewind point retention kept", report.Plural(n, "alert"))
	}
	if n := es.PastRetention; n > 0 {
		partial += fmt.Sprintf("; %d evicted bodies past retention", n)
	}
	if undecided(r.engine) {
		partial += "; UNKNOWN: the last check could not decide (more read-from choices than it enumerates)"
	}
	ck := r.latency.String()
	if r.store != nil {
		ck += fmt.Sprintf("; checkpoint %d took %s, %d snapshot bytes, state directory %d bytes; checkpoints held the loop %s in all (their writes took %s beside it)",
			r.ckpts, r.ckptTime.Round(time.Microsecond), r.ckptBytes, r.store.Size(), r.ckptLoop.Round(time.Millisecond), r.ckptWrite.Round(time.Millisecond))
	}
	if why == endOfInput {
		// The exit status, by check's rule, and why (E1-E3).
		ck += fmt.Sprintf("; exit %d", o.ExitCode())
	}
	fmt.Fprintf(r.stderr, "streamcheck run: %s after %s: %s checked (%s, skew %s, in-doubt %s), %s, %s%s%s\n",
		why, time.Since(r.started).Round(time.Millisecond), report.Plural(es.Released, "transaction"), checkedAs(r.cfg.opts.Level), report.Duration(r.cfg.opts.Skew), indoubtText(r.cfg.opts.InDoubt), report.Plural(es.Alerts, "alert"), report.Plural(es.Checks, "check"), partial, ck)
}

// deadLetters writes dead letters to a file and/or a Kafka topic; flush
// makes them durable (before every checkpoint, so a checkpoint never
// covers a dead letter that was lost).
type deadLetters struct {
	file    *os.File
	w       *bufio.Writer
	kafka   *ingest.KafkaWriter
	topic   string
	keys    [][]byte
	pending [][]byte
}

type deadLetterLine struct {
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
	Source    string `json:"source,omitempty"`
	Line      int    `json:"line,omitempty"`
	Topic     string `json:"topic,omitempty"`
	Partition *int   `json:"partition,omitempty"`
	Offset    *int64 `json:"offset,omitempty"`
	ID        string `json:"id,omitempty"`
	// Event is the event's text. JSON can only carry UTF-8 text, so when
	// the bytes are not UTF-8 (or a cut split a character) Event holds
	// them with U+FFFD for each bad byte and EventBase64 holds the exact
	// bytes: a dead letter is always a byte-exact copy of what it set
	// aside (issue 20 item 5), in one or the other.
	Event       string `json:"event"`
	EventBase64 string `json:"event_base64,omitempty"`
	Truncated   bool   `json:"truncated,omitempty"`
}

// maxDeadEvent bounds the event text a dead letter carries (an oversized
// message would otherwise be copied whole).
const maxDeadEvent = 4096

func (r *runner) deadLetter(m *message, reason, detail string, t *history.Txn) {
	dl := deadLetterLine{Reason: reason, Detail: detail}
	ev := m.value
	if len(ev) == 0 && m.err == nil && !m.oversized {
		// Handed over decoded (MainTxns): its native text, written only
		// for the dead letter.
		ev = ingest.AppendNative(nil, &m.txn)
	}
	if len(ev) > maxDeadEvent {
		ev = ev[:maxDeadEvent]
		dl.Truncated = true
	}
	dl.Event = string(ev)
	if !utf8.Valid(ev) {
		dl.EventBase64 = base64.StdEncoding.EncodeToString(ev)
	}
	if m.size > int64(len(m.value)) {
		dl.Truncated = true // an oversized line: the source kept its start
	}
	if r.kafka != nil {
		p, off := m.part, m.offset
		dl.Topic, dl.Partition, dl.Offset = r.cfg.Kafka.Topic, &p, &off
	} else {
		dl.Source, dl.Line = r.cfg.Source, m.line
	}
	if t != nil {
		dl.ID = t.ID
	}
	b, _ := json.Marshal(dl)
	r.dead.add(fmt.Appendf(nil, "%s/%d", r.cfg.Kafka.Topic, m.part), b)
}

// add queues one dead letter; key (the source partition) keeps each
// partition's dead letters in one dead-letter partition, in order.
func (d *deadLetters) add(key, b []byte) {
	if d.w != nil {
		d.w.Write(b)
		d.w.WriteByte('\n')
	}
	if d.kafka != nil {
		d.keys = append(d.keys, key)
		d.pending = append(d.pending, b)
	}
}

func (d *deadLetters) flush(ctx context.Context) error {
	if d.w != nil {
		if err := d.w.Flush(); err != nil {
			return err
		}
		if err := d.file.Sync(); err != nil {
			return err
		}
	}
	if d.kafka != nil && len(d.pending) > 0 {
		if err := d.kafka.Write(ctx, d.keys, d.pending); err != nil {
			return fmt.Errorf("produce to %s: %w", d.topic, err)
		}
		d.keys, d.pending = nil, nil
	}
	return nil
}

// retention is the engine's bound on evicted bodies, from state.retention
// (event time is in nanoseconds, as the age).
func (r *runner) retention() online.Retention {
	return online.Retention{MaxAge: int64(r.cfg.State.Retention.MaxAge), MaxBytes: int64(r.cfg.State.Retention.MaxBytes)}
}

// pinnedByText is the status line's breakdown of the pinned members by
// the rule that kept each at the engine's last evicting step, largest
// first: " (r3-open-neighbour 120, r2-read-source 40)", or "" when none.
func pinnedByText(by online.PinnedBy) string {
	type n struct {
		why   online.PinReason
		count int
	}
	var ns []n
	for _, why := range online.PinReasons() {
		if by[why] > 0 {
			ns = append(ns, n{why, by[why]})
		}
	}
	if len(ns) == 0 {
		return ""
	}
	slices.SortStableFunc(ns, func(a, b n) int { return b.count - a.count })
	parts := make([]string, len(ns))
	for i, x := range ns {
		parts[i] = fmt.Sprintf("%s %d", x.why, x.count)
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
