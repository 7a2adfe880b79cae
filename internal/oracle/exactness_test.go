package oracle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamcheck/streamcheck/history"
)

// TestExactness runs the histories of docs/SEMANTICS.md with their offline
// verdicts and cores (testdata/exactness). Commands:
//
//	history name=N            parse the input with history.ParseCompact;
//	                          prints it back, to show it parsed as meant
//	check [opts]              valid: <witness> | invalid [(on its face: X)]
//	core ids=(A,B) [opts]     CheckCore: "core" or the failed condition
//	cores [opts]              every core, by enumeration of all subsets
//	replay order=(A,B) [opts] ReplayWitness: "ok" or its error
//	project ids=(A,B) [opts]  H|C
//
// opts: level=NAME (default strict-serializable), skew=Δ, indoubt=D
// (default none: +∞), initial=empty|unknown. Every witness printed is also
// replayed; every core printed is also checked with CheckCore.
func TestExactness(t *testing.T) {
	var h *history.History
	datadriven.RunTest(t, "testdata/exactness", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd == "history" {
			var err error
			if h, err = history.ParseCompact(d.Input); err != nil {
				return "error: " + err.Error()
			}
			return compactOf(h)
		}
		opts := ddOptions(t, d)
		switch d.Cmd {
		case "check":
			valid, w, err := Check(h, opts)
			switch {
			case err != nil:
				return "error: " + err.Error()
			case valid:
				if err := ReplayWitness(h, opts, w); err != nil {
					t.Fatalf("witness %v does not replay: %v", w, err)
				}
				return "valid: " + strings.Join(w, " ")
			}
			if a := TrivialAnomaly(h, opts); a != "" {
				return fmt.Sprintf("invalid (on its face: %s)", a)
			}
			return "invalid"
		case "core":
			if err := CheckCore(h, opts, ddIDs(t, d, "ids")); err != nil {
				return err.Error()
			}
			return "core"
		case "cores":
			cores, err := Cores(h, opts)
			if err != nil {
				return "error: " + err.Error()
			}
			var b strings.Builder
			for _, c := range cores {
				if err := CheckCore(h, opts, c); err != nil {
					t.Fatalf("Cores gave %v: %v", c, err)
				}
				fmt.Fprintf(&b, "{%s}\n", strings.Join(c, " "))
			}
			if len(cores) == 0 {
				return "none"
			}
			return b.String()
		case "replay":
			if err := ReplayWitness(h, opts, ddIDs(t, d, "order")); err != nil {
				return err.Error()
			}
			return "ok"
		case "project":
			return compactOf(Project(h, opts, ddIDs(t, d, "ids")))
		}
		t.Fatalf("unknown command %s", d.Cmd)
		return ""
	})
}

func ddOptions(t *testing.T, d *datadriven.TestData) history.Options {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	for _, a := range d.CmdArgs {
		if len(a.Vals) != 1 {
			continue
		}
		v := a.Vals[0]
		var err error
		switch a.Key {
		case "level":
			opts.Level, err = history.ParseLevel(v)
		case "skew":
			_, err = fmt.Sscan(v, &opts.Skew)
		case "indoubt":
			_, err = fmt.Sscan(v, &opts.InDoubt)
		case "initial":
			opts.InitialState, err = history.ParseInitialState(v)
		}
		if err != nil {
			t.Fatalf("%s: %v", a.Key, err)
		}
	}
	return opts
}

func ddIDs(t *testing.T, d *datadriven.TestData, key string) []string {
	a, ok := d.Arg(key)
	if !ok {
		t.Fatalf("%s: missing %s=(...)", d.Cmd, key)
	}
	return a.Vals
}
