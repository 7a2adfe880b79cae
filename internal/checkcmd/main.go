package checkcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/cliutil"
	"github.com/streamcheck/streamcheck/internal/report"
)

// Exit codes, by precedence: an error beats an anomaly beats unknown
// (cliutil.Outcome.ExitCode, the rule run shares).
const (
	ExitValid   = cliutil.ExitValid
	ExitAnomaly = cliutil.ExitAnomaly
	ExitError   = cliutil.ExitInput   // usage, input or output error; no transactions
	ExitUnknown = cliutil.ExitUnknown // the time budget ran out with no anomaly found
)

// ExamplePrefix marks a FILE argument naming a bundled history.
const ExamplePrefix = "example:"

// Main runs `streamcheck check`: args are the arguments after "check".
// examples holds the bundled histories, one file per example named
// NAME.EXT at its root (nil: none); FILE "example:NAME" reads one.
func Main(args []string, examples fs.FS, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainContext(context.Background(), args, examples, stdin, stdout, stderr)
}

// MainContext is Main under ctx: cancelling ctx (on SIGINT, say) stops the
// check like --timeout, and the report says unknown or lists the
// anomalies found so far.
func MainContext(ctx context.Context, args []string, examples fs.FS, stdin io.Reader, stdout, stderr io.Writer) int {
	return mainWith(ctx, incremental.Check, args, examples, stdin, stdout, stderr)
}

// checkFunc is incremental.Check's signature; tests substitute a checker
// that ignores its context.
type checkFunc func(context.Context, *history.History, history.Options, incremental.Config) (*incremental.Result, error)

func mainWith(ctx context.Context, check checkFunc, args []string, examples fs.FS, stdin io.Reader, stdout, stderr io.Writer) int {
	names := ExampleNames(examples)
	c, err := parse(args, stdout, stderr, names, isTerminal(stderr))
	if errors.Is(err, flag.ErrHelp) {
		return ExitValid
	}
	if err != nil {
		if err != errShown {
			fmt.Fprintf(stderr, "streamcheck check: %v\n", err)
		}
		return ExitError
	}
	r := &runner{c: c, stderr: stderr, checkFn: check}
	stop, err := startProfiles(c)
	if err != nil {
		return r.fail(err)
	}
	code := r.run(ctx, examples, names, stdin, stdout)
	if err := stop(); err != nil {
		return r.fail(err)
	}
	return code
}

// startProfiles starts the profiles asked for; the returned func writes
// them. Speed work on large histories needs profiles of the real command,
// ingest included, not only of benchmarks.
func startProfiles(c config) (func() error, error) {
	var cpu *os.File
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		cpu = f
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return err
			}
		}
		if c.memProfile == "" {
			return nil
		}
		f, err := os.Create(c.memProfile)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}, nil
}

type runner struct {
	c       config
	stderr  io.Writer
	start   time.Time
	checkFn checkFunc
	// validAt is the snapshot level at which a history invalid at the
	// serializable level checked is valid (NoteAllowedUnderSnapshot).
	validAt string
}

func (r *runner) progressf(format string, args ...any) {
	if r.c.progress {
		fmt.Fprintf(r.stderr, "streamcheck: "+format+"\n", args...)
	}
}

func (r *runner) fail(err error) int {
	fmt.Fprintf(r.stderr, "streamcheck check: %v\n", err)
	if errors.Is(err, incremental.ErrMissingTimestamps) {
		fmt.Fprintf(r.stderr, "streamcheck check: record client start and end times, or check a level without real-time order (--level %s)\n", history.Serializable)
	}
	return ExitError
}

func (r *runner) run(ctx context.Context, examples fs.FS, names []string, stdin io.Reader, stdout io.Writer) int {
	c := r.c
	r.start = time.Now()
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	// A stamped history's compact path first (stamps.go): when its
	// witness holds, the history is never held whole (h stays nil: the
	// report of a valid history names no transaction).
	var h *history.History
	res, facts := r.compact(ctx)
	if res == nil {
		r.progressf("reading %s", c.file)
		var format ingest.Format
		var err error
		h, format, err = read(c.file, examples, names, stdin)
		if err != nil {
			return r.fail(err)
		}
		if len(h.Txns) == 0 {
			// Not a verdict: an empty history would be vacuously valid, and
			// exit 0 would tell a pipeline that a recorder which wrote
			// nothing had recorded a correct database.
			return r.fail(&history.Error{Pos: history.Pos{Source: source(c.file)}, Err: history.ErrNoTransactions})
		}
		r.progressf("read %s (%s) in %s; checking %s", report.Plural(len(h.Txns), "transaction"), format, since(r.start), c.opts.Level)

		facts = r.useFacts(h)
		stop := r.ticker()
		res, err = r.check(ctx, h)
		stop()
		if err != nil {
			return r.fail(err)
		}
	}
	st := res.Stats
	r.progressf("encoded %d variables, %d nodes in %s; solved in %s (%d conflicts); cores in %s (%d checks)",
		st.Vars, st.Nodes, round(st.EncodeTime), round(st.SolveTime), st.Conflicts, round(st.CoreTime), st.CoreChecks)

	if st.ByStricter {
		r.progressf("the witness satisfies %s, which implies %s", st.StricterLevel, res.Options.Level)
	}
	rep := report.New(res, h)
	rep.MaxAnomalies = c.maxAnomalies
	if res.Verdict == incremental.Invalid {
		rep.ValidAt = r.validAt
	}
	txns := res.Stats.Txns // the compact path's count
	if h != nil {
		txns = len(h.Txns)
	}
	code := facts.apply(rep, h, outcome(res, txns)).ExitCode()

	// Files first: a failure to write them is an error (exit 2) and the
	// report below must not claim a witness file that is not there.
	hint := "witness order available with --witness"
	if c.witness != "" {
		if res.Verdict == incremental.Valid {
			if err := writeWitness(c.witness, res.Witness); err != nil {
				return r.fail(err)
			}
			hint = "witness order written to " + c.witness
		} else {
			fmt.Fprintf(r.stderr, "streamcheck check: no witness written: the verdict is %s\n", res.Verdict)
		}
	}
	if c.dotDir != "" && len(rep.Anomalies) > 0 {
		files, err := writeDOT(c.dotDir, rep.Anomalies)
		if err != nil {
			return r.fail(err)
		}
		r.progressf("wrote %s", strings.Join(files, ", "))
	}
	var err error
	switch c.format {
	case "json":
		err = report.WriteJSON(stdout, rep)
	default:
		err = report.WriteText(stdout, rep, report.TextOptions{ValidHint: hint})
	}
	if err != nil {
		return r.fail(fmt.Errorf("write report: %w", err))
	}
	return code
}

// check runs the checker under ctx (the --timeout, an interrupt). The
// checker polls its context only between solver steps and not while
// encoding, so a single long step can overrun the deadline; the command
// promises the user a time budget, so once ctx is done it waits a grace
// period more and then reports unknown. The abandoned check goroutine
// dies with the process.
func (r *runner) check(ctx context.Context, h *history.History) (*incremental.Result, error) {
	type outcome struct {
		res *incremental.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := r.checkFn(ctx, h, r.c.opts, incremental.Config{MaxAnomalies: r.c.maxAnomalies})
		if err == nil && res.Verdict == incremental.Invalid {
			// A serializable level's anomalies that snapshot isolation
			// allows (write skew) say so, and so does a history valid
			// there: most databases promise SI, not serializability.
			if si, ok := incremental.NoteAllowedUnderSnapshot(ctx, h, res); ok {
				r.validAt = si.String()
			}
		}
		done <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-done:
		return o.res, o.err
	case <-ctx.Done():
	}
	grace := time.NewTimer(graceFor(r.c.timeout))
	defer grace.Stop()
	select {
	case o = <-done:
		return o.res, o.err
	case <-grace.C:
		fmt.Fprintf(r.stderr, "streamcheck check: the checker did not stop within %s of the deadline or interrupt; reporting unknown without it\n", graceFor(r.c.timeout))
		res := &incremental.Result{Verdict: incremental.Unknown, Options: r.c.opts}
		res.Stats.Txns = len(h.Txns)
		res.Stats.TimedOutAny = true
		return res, nil
	}
}

// graceFor is how long past the deadline the checker may take to notice
// it: a second plus 5% of the budget.
func graceFor(timeout time.Duration) time.Duration {
	return time.Second + timeout/20
}

// outcome puts a check's result in the terms of the exit status rule
// that check and run share (cliutil.Outcome). An input error never gets
// here: it stops the command before the check (C2).
func outcome(res *incremental.Result, txns int) cliutil.Outcome {
	o := cliutil.Outcome{Transactions: uint64(txns)}
	switch res.Verdict {
	case incremental.Invalid:
		o.Anomalies = max(1, uint64(len(res.Anomalies)))
	case incremental.Unknown:
		o.Partial = true
	}
	return o
}

// source is how positions name FILE: ingest names standard input "-",
// and a bundled example by its path under examples/.
func source(file string) string {
	if name, ok := strings.CutPrefix(file, ExamplePrefix); ok {
		return "examples/" + name
	}
	return file
}

// ticker prints a line now and then while a check runs, so that a long
// check on a terminal does not look hung: after 5s, then at doubling
// intervals up to one a minute, so a long check stays a few lines. The
// returned func stops it and waits for it, so no line is written after
// the report.
func (r *runner) ticker() (stop func()) {
	if !r.c.progress {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		every := 5 * time.Second
		t := time.NewTimer(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.progressf("still checking after %s", since(r.start).Round(time.Second))
				every = min(2*every, time.Minute)
				t.Reset(every)
			}
		}
	}()
	return func() { close(done); <-exited }
}

// read reads FILE: "-" is stdin, example:NAME a bundled history, anything
// else a path. Input errors are *history.Error naming line and field.
func read(file string, examples fs.FS, names []string, stdin io.Reader) (*history.History, ingest.Format, error) {
	switch {
	case file == "-":
		return ingest.ReadHistory(stdin, "-")
	case strings.HasPrefix(file, ExamplePrefix):
		name := strings.TrimPrefix(file, ExamplePrefix)
		p := examplePath(examples, name)
		if p == "" {
			return nil, 0, fmt.Errorf("no bundled example %q (have %s)", name, exampleList(names))
		}
		f, err := examples.Open(p)
		if err != nil {
			return nil, 0, err
		}
		defer f.Close()
		return ingest.ReadHistory(f, "examples/"+p)
	}
	return ingest.ReadFile(file)
}

// ExampleNames lists the bundled examples: the root files of examples
// without their extension, sorted.
func ExampleNames(examples fs.FS) []string {
	if examples == nil {
		return nil
	}
	entries, err := fs.ReadDir(examples, ".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, strings.TrimSuffix(e.Name(), path.Ext(e.Name())))
		}
	}
	sort.Strings(names)
	return names
}

func examplePath(examples fs.FS, name string) string {
	if examples == nil || name == "" || strings.ContainsAny(name, "/\\*?[") {
		return ""
	}
	m, _ := fs.Glob(examples, name+".*")
	if len(m) != 1 {
		return ""
	}
	return m[0]
}

func writeWitness(file string, order []string) error {
	var b strings.Builder
	for _, id := range order {
		b.WriteString(id)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write witness: %w", err)
	}
	return nil
}

// writeDOT writes anomaly-N.dot per anomaly into dir, creating it.
func writeDOT(dir string, anomalies []report.Anomaly) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write dot: %w", err)
	}
	var files []string
	for i, a := range anomalies {
		name := fmt.Sprintf("anomaly-%d.dot", i+1)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, report.DOT(a), 0o644); err != nil {
			return nil, fmt.Errorf("write dot: %w", err)
		}
		files = append(files, p)
	}
	return files, nil
}

// isTerminal reports whether w is a character device, which is what
// --progress defaults on; a pipe or a file gets no progress lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func since(t time.Time) time.Duration { return round(time.Since(t)) }

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(10 * time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d
}
