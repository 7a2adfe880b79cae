package incremental

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestExactnessHistories runs every history of docs/SEMANTICS.md through the
// checker (testdata/exactness) and, for each check, through the oracle too.
//
//	history name=N   parse the input (history.ParseCompact)
//	check [level=L] [skew=Δ] [indoubt=D] [initial=empty|unknown] [max=N]
//	                 valid: <witness> | invalid, then one line per anomaly
func TestExactnessHistories(t *testing.T) {
	var h *history.History
	datadriven.RunTest(t, "testdata/exactness", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "history":
			var err error
			if h, err = history.ParseCompact(d.Input); err != nil {
				return "error: " + err.Error()
			}
			return ""
		case "check":
			opts, max := ddOptions(t, d)
			res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: max})
			if err != nil {
				return "error: " + err.Error()
			}
			want, _, oerr := oracle.Check(h, opts)
			if oerr != nil {
				t.Fatalf("oracle: %v", oerr)
			}
			if (res.Verdict == Valid) != want {
				t.Errorf("%s: checker says %s, oracle says valid=%v", d.Pos, res.Verdict, want)
			}
			return formatResult(t, h, opts, res)
		}
		t.Fatalf("unknown command %s", d.Cmd)
		return ""
	})
}

func formatResult(t *testing.T, h *history.History, opts history.Options, res *Result) string {
	var b strings.Builder
	switch res.Verdict {
	case Valid:
		if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
			t.Errorf("witness %v does not replay: %v", res.Witness, err)
		}
		fmt.Fprintf(&b, "valid: %s\n", strings.Join(res.Witness, " "))
	default:
		fmt.Fprintf(&b, "%s\n", res.Verdict)
	}
	for i, a := range res.Anomalies {
		if i == 0 {
			if err := oracle.CheckCore(h, opts, a.Core); err != nil {
				t.Errorf("core %v: %v", a.Core, err)
			}
		}
		fmt.Fprintf(&b, "%s (%s) core=%s\n", a.Type, a.Class, strings.Join(a.Core, ","))
		for _, line := range a.Text {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	return b.String()
}

func ddOptions(t *testing.T, d *datadriven.TestData) (history.Options, int) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	max := 1
	for _, arg := range d.CmdArgs {
		val := ""
		if len(arg.Vals) > 0 {
			val = arg.Vals[0]
		}
		var err error
		switch arg.Key {
		case "level":
			opts.Level, err = history.ParseLevel(val)
		case "skew":
			opts.Skew, err = strconv.ParseInt(val, 10, 64)
		case "indoubt":
			opts.InDoubt, err = strconv.ParseInt(val, 10, 64)
		case "initial":
			opts.InitialState, err = history.ParseInitialState(val)
		case "max":
			max, err = strconv.Atoi(val)
		default:
			t.Fatalf("%s: unknown argument %s", d.Pos, arg.Key)
		}
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
	}
	return opts, max
}
