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
//	streamcheck help
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
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
		{"run", "check a stream of transactions online (stdin or a followed file)", runcmd.Main},
		{"canary", "run an anomaly-hunting workload against PostgreSQL or MySQL/MariaDB", canarycmd.Main},
		{"convert", "convert a history between formats (native, Elle, Cobra, dbcop, text)", convertcmd.Main},
		{"demo", "run the online checker on a simulated store that loses updates, nothing installed", democmd.Main},
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
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout, cmds)
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

func usage(w io.Writer, cmds []command) {
	examples, _ := fs.Sub(embedded, "examples")
	var b strings.Builder
	b.WriteString("usage: streamcheck COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-6s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(&b, "  %-6s %s\n", "help", "show this text")
	b.WriteString("\nRun `streamcheck COMMAND -h` for a command's flags.\n\nBundled examples (streamcheck check example:NAME):\n")
	for _, n := range checkcmd.ExampleNames(examples) {
		fmt.Fprintf(&b, "  example:%s\n", n)
	}
	io.WriteString(w, b.String())
}
