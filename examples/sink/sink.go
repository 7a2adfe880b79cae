// Command sink is an alert sink written outside the streamcheck module: it
// compiles against the public types only (alerts.Sink, verdict.Alert), which
// is what alerts' TestExampleSinkBuilds checks. It prints one line per alert.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/verdict"
)

// lineSink writes "id type core" per alert.
type lineSink struct{ w io.Writer }

var _ alerts.Sink = lineSink{}

func (lineSink) Name() string { return "example-lines" }

func (s lineSink) Deliver(ctx context.Context, a verdict.Alert) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(s.w, "%s %s (promised %s) core %s\n", a.ID, a.Type, a.PromisedLevel, strings.Join(a.Core, ","))
	return err
}

func main() {
	a := verdict.Alert{ID: "example", PromisedLevel: "serializable",
		Anomaly: verdict.Anomaly{Type: "lost-update", Core: []string{"T1", "T2"}}}
	if err := (lineSink{os.Stdout}).Deliver(context.Background(), a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
