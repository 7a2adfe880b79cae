// Command streamcheck proves whether a database keeps its promised
// isolation level. Each subcommand lives in a library package; this file
// only dispatches.
//
//	streamcheck check example:lost-update   # a bundled history
//	streamcheck check [flags] FILE          # FILE, "-" (stdin), example:NAME
//	streamcheck gen [flags] > h.jsonl       # synthetic histories
//	streamcheck sat [flags] FILE.cnf        # the solver on DIMACS CNF
//	streamcheck run [flags] < events.jsonl  # online checking: stdin, a file or Kafka
//	streamcheck canary --dsn DSN            # anomaly hunting on PostgreSQL or MySQL/MariaDB
//	streamcheck demo --duration 20s         # all of it in one process
//	streamcheck demo --broker-only 127.0.0.1:9092  # only its Kafka broker, for run --source kafka
//	streamcheck help [COMMAND]
//	streamcheck version                     # also --version
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/streamcheck/streamcheck/internal/canarycmd"
	"github.com/streamcheck/streamcheck/internal/checkcmd"
	"github.com/streamcheck/streamcheck/internal/convertcmd"
	"github.com/streamcheck/streamcheck/internal/democmd"
	"github.com/streamcheck/streamcheck/internal/gencmd"
	"github.com/streamcheck/streamcheck/internal/runcmd"
	"github.com/streamcheck/streamcheck/internal/satcmd"
)

// The bundled example histories, read by `check example:NAME`.
//
//go:embed examples
var embedded embed.FS

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

func commands() []command {
	examples, _ := fs.Sub(embedded, "examples")
	return []command{
		{"check", "check a recorded history against an isolation level", func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
			return checkcmd.MainContext(ctx, args, examples, stdin, stdout, stderr)
		}},
		{"gen", "generate a synthetic history with injected anomalies", func(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
			return gencmd.Main(args, stdout, stderr)
		}},
		{"sat", "decide a DIMACS CNF formula with streamcheck's solver", satcmd.MainContext},
		{"run", "check a stream of transactions online (stdin, a followed file or Kafka)", runcmd.Main},
		{"canary", "run an anomaly-hunting workload against PostgreSQL or MySQL/MariaDB", canarycmd.Main},
		{"convert", "convert a history between formats (native, Elle, Cobra, dbcop, text)", convertcmd.Main},
		{"demo", "run the online checker on a simulated store that loses updates, or (--broker-only) just a Kafka broker", democmd.Main},
	}
}

func main() {
	// The first interrupt stops a check or a solve, which then reports
	// what it has; the second one kills the process as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() { <-ctx.Done(); stop() }()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		usage(stderr, cmds)
		return checkcmd.ExitError
	}
	// Help that was asked for goes to stdout with exit 0, for the whole
	// tool and for each command alike; usage printed because of a mistake
	// goes to stderr with exit 2.
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if args[0] != "help" || len(args) == 1 {
			usage(stdout, cmds)
			return 0
		}
		if len(args) > 2 {
			fmt.Fprintf(stderr, "streamcheck help: want one command, got %q\n", args[1:])
			return checkcmd.ExitError
		}
		switch args[1] {
		case "help":
			usage(stdout, cmds)
			return 0
		case "version":
			fmt.Fprintln(stdout, "usage: streamcheck version\n\nPrints the module version and VCS revision streamcheck was built from\n(also: streamcheck --version).")
			return 0
		}
		for _, c := range cmds {
			if c.name == args[1] {
				// Each command prints its help on stdout for -h.
				return c.run(ctx, []string{"-h"}, stdin, stdout, stderr)
			}
		}
		fmt.Fprintf(stderr, "streamcheck help: unknown command %q\n\n", args[1])
		usage(stderr, cmds)
		return checkcmd.ExitError
	case "version", "-version", "--version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "streamcheck version: unexpected argument %q\n", args[1])
			return checkcmd.ExitError
		}
		fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
		return 0
	}
	for _, c := range cmds {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "streamcheck: unknown command %q\n\n", args[0])
	usage(stderr, cmds)
	return checkcmd.ExitError
}

// versionLine says which build this is: the module version (a tag for
// `go install ...@v1.2.3`, "(devel)" for a build in a checkout), the VCS
// revision and time when the build stamped them (-buildvcs, on by default
// in a checkout) and the Go toolchain. A bug report quoting it names the
// code exactly.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "streamcheck (no build information) " + runtime.Version()
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	line := "streamcheck " + v
	var rev, when, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		line += " " + rev
		if modified == "true" {
			line += "+dirty"
		}
		if when != "" {
			line += " " + when
		}
	}
	return line + " " + bi.GoVersion
}

func usage(w io.Writer, cmds []command) {
	examples, _ := fs.Sub(embedded, "examples")
	var b strings.Builder
	b.WriteString("usage: streamcheck COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(&b, "  %-8s %s\n", "version", "print the version streamcheck was built from (also --version)")
	fmt.Fprintf(&b, "  %-8s %s\n", "help", "show this text; help COMMAND shows that command's flags")
	b.WriteString("\nRun `streamcheck help COMMAND` or `streamcheck COMMAND -h` for a command's flags.\n\nBundled examples (streamcheck check example:NAME):\n")
	for _, n := range checkcmd.ExampleNames(examples) {
		fmt.Fprintf(&b, "  example:%s\n", n)
	}
	io.WriteString(w, b.String())
}
