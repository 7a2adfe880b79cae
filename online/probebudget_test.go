package online

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// TestProbeBudgetTrace feeds a recorded stream through the evicting
// engine as run would at strict serializability (initial state empty,
// in-doubt 1 m, a step every 256 releases) and logs, every 8 steps, the window by pin reason, the CPU seconds, and where the
// step's probes went (by the rule that asked, decided or not), and the
// reasons the members stay (pinTrace, grouped). It measures; it asserts
// only that the instance never disagrees with the bodies. The issue 22
// probe-budget investigation (BENCHMARKS.md, probe):
//
//	streamcheck gen --workload mixed --list-ratio 0 --unknown-ratio 0.02 --txns 50000 --seed 1 -o u2.jsonl
//	STREAMCHECK_PROBE_TRACE=u2.jsonl go test ./online -run TestProbeBudgetTrace -v
//
// STREAMCHECK_PROBE_TRACE_N caps the transactions read,
// STREAMCHECK_PROBE_TRACE_INDOUBT sets the in-doubt horizon (1m),
// STREAMCHECK_PROBE_TRACE_INITIAL the initial state (empty),
// STREAMCHECK_PROBE_TRACE_FULL logs in full the reasons that start so,
// STREAMCHECK_PROBE_TRACE_STEP sets the releases per step (256; run's
// tick of 100 ms is about 800 releases on those streams).
func TestProbeBudgetTrace(t *testing.T) {
	f := os.Getenv("STREAMCHECK_PROBE_TRACE")
	if f == "" {
		t.Skip("set STREAMCHECK_PROBE_TRACE=<jsonl>")
	}
	h, _, err := ingest.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_PROBE_TRACE_N")); err == nil && n < len(h.Txns) {
		h.Txns = h.Txns[:n]
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 60_000_000_000
	if s, err := history.ParseInitialState(os.Getenv("STREAMCHECK_PROBE_TRACE_INITIAL")); err == nil {
		opts.InitialState = s // run's default is unknown
	}
	if d, err := time.ParseDuration(os.Getenv("STREAMCHECK_PROBE_TRACE_INDOUBT")); err == nil {
		opts.InDoubt = d.Nanoseconds()
	}
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	probes := map[string][2]int{}
	probeTrace = func(kind string, decided bool) {
		// The rule that asked: the first caller outside the prober.
		pcs := make([]uintptr, 8)
		fr := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
		for {
			f, more := fr.Next()
			fn := f.Function[strings.LastIndex(f.Function, ".")+1:]
			if fn == "commitOf" || fn == "edgeDecided" {
				kind += " (" + fn + ")"
			}
			if !strings.HasPrefix(fn, "func") && fn != "edgeDecided" && fn != "commitOf" && fn != "noCommit" && fn != "commitOpen" && fn != "IncidentEdges" || !more {
				kind += " from " + fn
				break
			}
		}
		c := probes[kind]
		if decided {
			c[0]++
		} else {
			c[1]++
		}
		probes[kind] = c
	}
	why := map[string]string{}
	pinTrace = func(tx *history.Txn, reason string) {
		// A rule's reason is kept over the list rule's, which r4Skip
		// and the prefix fold may ask on the way.
		if old, ok := why[tx.ID]; ok && (!strings.HasPrefix(old, "list:") && strings.HasPrefix(reason, "list:") || strings.HasPrefix(old, "R4: undecided")) {
			return
		}
		why[tx.ID] = reason
	}
	defer func() { probeTrace, pinTrace = nil, nil }()
	every := 256
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_PROBE_TRACE_STEP")); err == nil && n > 0 {
		every = n
	}
	c0 := cpuNanos()
	feedInStartOrder(o, opts, byStart(h), func(i int) {
		if (i+1)%every != 0 {
			return
		}
		clear(why)
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if (i+1)/every%8 != 0 {
			return
		}
		st := o.Stats()
		by := ""
		for r, c := range st.PinnedBy {
			if c > 0 {
				by += fmt.Sprintf(" %s %d", PinReason(r), c)
			}
		}
		t.Logf("%d txns, %.1f CPU s: window %d, pinned %d (%s), back-offs %d", i+1, float64(cpuNanos()-c0)/1e9, st.Window, st.Pinned, strings.TrimSpace(by), len(o.ev.Backoff))
		var ps []string
		for k, c := range probes {
			ps = append(ps, fmt.Sprintf("%s: %d decided, %d not", k, c[0], c[1]))
		}
		sort.Strings(ps)
		t.Logf("  probes of the last 8 steps: %s", strings.Join(ps, "; "))
		clear(probes)
		reasons := map[string]int{}
		for _, w := range why {
			// The rule and its first words: "R4: an earlier writer".
			f := strings.Fields(w)
			r := strings.Join(f[:min(len(f), 4)], " ")
			if strings.Contains(w, "(unknown") {
				r += " (an unknown outcome)" // the other end of an edge
			}
			reasons[r]++
		}
		t.Logf("  why members stayed at the last step: %v", reasons)
		if pre := os.Getenv("STREAMCHECK_PROBE_TRACE_FULL"); pre != "" {
			// Every member whose reason starts so, in full.
			for id, w := range why {
				if strings.HasPrefix(w, pre) {
					t.Logf("    %s: %s", id, w)
				}
			}
		}
		if st.Disagreements != 0 {
			t.Fatalf("%d disagreements", st.Disagreements)
		}
	})
}
