package checkcmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

// config is what the command line asks for.
type config struct {
	file         string
	opts         history.Options
	maxAnomalies int
	timeout      time.Duration
	format       string
	dotDir       string
	witness      string
	progress     bool
	cpuProfile   string
	memProfile   string
}

// nsValue is a non-negative nanosecond count given as a Go duration
// ("1ms", "2.5s") or a plain integer meaning nanoseconds, since history
// timestamps are nanoseconds and a bare number should mean one.
type nsValue struct {
	ns *int64
	// none, when not empty, is accepted as NoInDoubt (+∞).
	none bool
}

func (v nsValue) String() string {
	if v.ns == nil {
		return ""
	}
	if v.none && *v.ns == history.NoInDoubt {
		return "none"
	}
	return time.Duration(*v.ns).String()
}

func (v nsValue) Set(s string) error {
	n, err := parseNS(s, v.none)
	if err != nil {
		return err
	}
	*v.ns = n
	return nil
}

// parseNS reads a duration or an integer count of nanoseconds; with none,
// also "none", "inf" or "∞" for history.NoInDoubt.
func parseNS(s string, none bool) (int64, error) {
	s = strings.TrimSpace(s)
	if none {
		switch s {
		case "none", "inf", "∞":
			return history.NoInDoubt, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("negative duration %s", s)
		}
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		want := "a duration like 10ms or an integer number of ns"
		if none {
			want += ", or none"
		}
		return 0, fmt.Errorf("%q is not %s", s, want)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", s)
	}
	return int64(d), nil
}

// enumValue accepts one of a fixed set of words.
type enumValue struct {
	p     *string
	words []string
}

func (v enumValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v enumValue) Set(s string) error {
	for _, w := range v.words {
		if s == w {
			*v.p = s
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(v.words, ", "))
}

// levelValue parses a Jepsen level name.
type levelValue struct{ l *history.Level }

func (v levelValue) String() string {
	if v.l == nil {
		return ""
	}
	return v.l.String()
}

func (v levelValue) Set(s string) error {
	l, err := history.ParseLevel(s)
	if err != nil {
		return err
	}
	*v.l = l
	return nil
}

// initialValue parses --initial-state.
type initialValue struct{ s *history.InitialState }

func (v initialValue) String() string {
	if v.s == nil {
		return ""
	}
	return v.s.String()
}

func (v initialValue) Set(s string) error {
	st, err := history.ParseInitialState(s)
	if err != nil {
		return err
	}
	*v.s = st
	return nil
}

const usageHead = `usage: streamcheck check [flags] FILE

Checks a recorded history against an isolation level and reports each
anomaly with its minimal core and an explanation.

FILE is a history in native JSON Lines or Jepsen/Elle EDN or JSON (detected
from content, gzip too), "-" for standard input, or example:NAME for a
history bundled with streamcheck (%s).
Other checkers' histories are read too: a directory of Cobra or Viper logs,
dbcop's history.bincode, PolySI/Plume text, AWDIT's test format.

Exit status: 0 the history satisfies the level, 1 an anomaly was found,
3 unknown (the --timeout ran out first), 2 usage or input error.

Flags:
`

// errShown is a usage error that has been printed already.
var errShown = errors.New("usage error shown")

// parse reads the arguments after "check". Flags may come before or after
// FILE. terminal is the default of --progress. -h prints the usage on
// stdout and returns flag.ErrHelp.
func parse(args []string, stdout, stderr io.Writer, examples []string, terminal bool) (config, error) {
	c := config{opts: history.DefaultOptions(), maxAnomalies: 10, format: "text", progress: terminal}
	fs := flag.NewFlagSet("streamcheck check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The flag package prints a bad flag's error itself, then calls Usage:
	// a hint is enough there, and -h prints the whole text below.
	fs.Usage = func() {}
	fullUsage := func(w io.Writer) {
		fmt.Fprintf(w, usageHead, exampleList(examples))
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		io.WriteString(w, history.LevelTable("\nLevels:\n", "  "))
	}
	fs.Var(levelValue{&c.opts.Level}, "level", "isolation `LEVEL`, as Jepsen names it: "+strings.Join(history.LevelNames(), ", ")+" (see Levels below)")
	fs.Var(nsValue{ns: &c.opts.Skew}, "skew", "clock-skew bound Δ for real-time order: a `DURATION` (1ms) or integer ns")
	fs.Var(nsValue{ns: &c.opts.InDoubt, none: true}, "indoubt", "in-doubt horizon for transactions of unknown outcome: a `DURATION`, integer ns, or none (+∞)")
	fs.Var(initialValue{&c.opts.InitialState}, "initial-state", "what keys hold before their first write: `empty|unknown`")
	fs.IntVar(&c.maxAnomalies, "max-anomalies", c.maxAnomalies, "report at most this many independent anomalies")
	fs.DurationVar(&c.timeout, "timeout", 0, "give up with exit status 3 after this long without an anomaly (0: no limit)")
	fs.Var(enumValue{&c.format, []string{"text", "json"}}, "format", "output `text|json`")
	fs.StringVar(&c.dotDir, "dot", "", "write one Graphviz file per anomaly into `DIR`")
	fs.StringVar(&c.witness, "witness", "", "for a valid history, write a serial order (one id per line) to `FILE`")
	fs.BoolVar(&c.progress, "progress", terminal, "report progress on stderr (default: when stderr is a terminal)")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of reading and checking to `FILE` (go tool pprof)")
	fs.StringVar(&c.memProfile, "memprofile", "", "write an allocation profile to `FILE` at the end (go tool pprof)")

	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fullUsage(stdout)
				return c, err
			}
			fmt.Fprintln(stderr, "run 'streamcheck check -h' for usage")
			return c, errShown
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case len(files) == 0:
		fullUsage(stderr)
		return c, errors.New("missing FILE")
	case len(files) > 1:
		return c, fmt.Errorf("one FILE expected, got %d: %s", len(files), strings.Join(files, " "))
	}
	c.file = files[0]
	if c.maxAnomalies < 1 {
		return c, fmt.Errorf("--max-anomalies must be at least 1, not %d", c.maxAnomalies)
	}
	if c.timeout < 0 {
		return c, fmt.Errorf("--timeout must not be negative")
	}
	return c, nil
}

func exampleList(names []string) string {
	if len(names) == 0 {
		return "none bundled"
	}
	var out []string
	for _, n := range names {
		out = append(out, "example:"+n)
	}
	return strings.Join(out, ", ")
}
