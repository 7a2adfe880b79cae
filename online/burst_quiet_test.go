package online

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// quietCases is how many generated streams TestQuietStepChangesNothing
// runs: STREAMCHECK_QUIET_N, or 60.
//
//	STREAMCHECK_QUIET_N=600 go test ./online -run TestQuietStep
func quietCases(t *testing.T) int {
	if v := os.Getenv("STREAMCHECK_QUIET_N"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 60
}

// quietTrace feeds txns (in start order) in batches: each batch is
// released and stepped, then whatever a later start has closed is
// closed and stepped (a step of closings alone, if any closed), then, if
// extra, stepped once more with nothing new; at the end everything
// closes (CloseAll), and a step and, if extra, one more follow. It
// returns, per step that is not an extra one, the engine's state and the
// alerts it raised (the extra steps must raise none). Without extra the
// rule is off (noQuiet): every step is checked.
func quietTrace(t *testing.T, txns []history.Txn, opts history.Options, batch int, extra bool) []string {
	t.Helper()
	if !extra {
		old := noQuiet
		noQuiet = true
		defer func() { noQuiet = old }()
	}
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	var out []string
	step := func(counted bool) {
		alerts, err := o.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !counted {
			if len(alerts) > 0 {
				t.Fatalf("a step with nothing new raised %s", alerts[0].ID)
			}
			return
		}
		var b strings.Builder
		st := o.Stats()
		fmt.Fprintf(&b, "window %d evicted %d ghosts %d members %v", st.Window, st.Evicted, st.Ghosts, o.ev.Member.bools())
		for _, a := range alerts {
			fmt.Fprintf(&b, "\nalert %s %s %v", a.ID, a.Class, a.Core)
		}
		out = append(out, b.String())
	}
	closed := make([]bool, len(txns))
	for lo := 0; lo < len(txns); lo += batch {
		hi := min(lo+batch, len(txns))
		o.Release(txns[lo:hi]...)
		step(true)
		w := txns[hi-1].Start
		any := false
		for j := range txns[:hi] {
			if e := opts.EffectiveEnd(&txns[j]); !closed[j] && e != math.MaxInt64 && e+opts.Skew < w-opts.Skew {
				o.Close(txns[j].ID)
				closed[j], any = true, true
			}
		}
		if any {
			step(true)
		}
		if extra {
			step(false)
		}
	}
	o.CloseAll()
	step(true)
	if extra {
		step(false)
	}
	return out
}

// TestQuietStepChangesNothing: a step with nothing new since a
// satisfiable one is skipped (docs/SEMANTICS.md §5 "A step with nothing
// new is not checked"), and skipping it is as if it had not been called:
// on generated streams with injected anomalies and unknown outcomes, the
// engine stepped once more after every step gives, step by step, the
// same window and the same alerts as the engine without the rule that
// is not; and the rule skipped steps. A closing or CloseAll that did not
// clear quiet would skip the step after it, and its alerts and
// evictions with it (mutated once each, Close and CloseAll: stream 0
// fails).
func TestQuietStepChangesNothing(t *testing.T) {
	before := quietSteps
	for i := range quietCases(t) {
		h, opts, _, rng := generatedCase(t, i, 0x901e7, 30, 60, i%3)
		txns := byStart(h)
		batch := 1 + rng.IntN(12)
		plain := quietTrace(t, txns, opts, batch, false)
		extra := quietTrace(t, txns, opts, batch, true)
		for j := range plain {
			if plain[j] != extra[j] {
				t.Fatalf("stream %d, step %d: stepped once more after each step\n%s\nagainst\n%s", i, j, extra[j], plain[j])
			}
		}
	}
	if quietSteps == before {
		t.Fatal("no step was skipped")
	}
}

// TestQuietStepSameAlertsAsChecking: the engine that skips the steps
// with nothing new raises, over the stream, the alerts of the one that
// checks them (noQuiet), which may evict more at them.
func TestQuietStepSameAlertsAsChecking(t *testing.T) {
	alertsOf := func(trace []string) []string {
		var as []string
		for _, s := range trace {
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "alert ") {
					as = append(as, l)
				}
			}
		}
		return as
	}
	for i := range quietCases(t) {
		h, opts, _, rng := generatedCase(t, i, 0x901e7, 30, 60, i%3)
		txns := byStart(h)
		batch := 1 + rng.IntN(12)
		skip := alertsOf(quietTrace(t, txns, opts, batch, true))
		noQuiet = true
		check := alertsOf(quietTrace(t, txns, opts, batch, true))
		noQuiet = false
		if strings.Join(skip, "\n") != strings.Join(check, "\n") {
			t.Fatalf("stream %d: skipping quiet steps\n%s\nchecking them\n%s", i, strings.Join(skip, "\n"), strings.Join(check, "\n"))
		}
	}
}
