package sionline

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/window"
)

// TestSI33ScreenCounts streams a native file (STREAMCHECK_SI33_FILE) as
// `run --level strong-snapshot-isolation --lateness 10ms` does (tick
// 100ms, in-doubt 1m, initial state unknown) and logs the screens by
// where the step was (a first screen, or one after a re-admission) and
// how they were decided (the sweep, the search valid, the search not),
// with the transactions each held, and the named reads' causes as
// TestSI32NamedCauses does. Skipped without the variable.
func TestSI33ScreenCounts(t *testing.T) {
	path := os.Getenv("STREAMCHECK_SI33_FILE")
	if path == "" {
		t.Skip("STREAMCHECK_SI33_FILE not set")
	}
	h, _, err := ingest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 60e9, InitialState: history.InitialUnknown}
	var eng *Engine
	counts := map[string]int{}
	sizes := map[string]int{}
	defer func() { traceScreen, traceCompanion, traceNamed = nil, nil, nil }()
	traceScreen = func(readmit bool, how string, ok bool, n int) {
		where := "first"
		if readmit {
			where = "readmit"
		}
		k := fmt.Sprintf("%s %s %v", where, how, ok)
		counts[k]++
		sizes[k] += n
	}
	last := map[writeKey]string{}
	lastOps := map[writeKey][]history.Op{}
	named := map[string]int{}
	shown := 0
	traceCompanion = func(ev string, ops []history.Op) {
		for _, op := range ops {
			if op.Kind != history.Read {
				last[writeKey{op.Key, op.Value}] = ev
				lastOps[writeKey{op.Key, op.Value}] = ops
			}
		}
	}
	traceNamed = func(k history.Key, v history.Value) {
		ev, ok := last[writeKey{k, v}]
		if !ok {
			ev = "nothing traced"
		}
		named[ev]++
		if ev == "dropped (K7)" && shown < 8 && os.Getenv("STREAMCHECK_SI33_SHOW") != "" {
			shown++
			t.Logf("named %s=%s, companion's writes %v", k, v, lastOps[writeKey{k, v}])
		}
	}
	wcfg := window.Config{Partitions: 1, Lateness: 10e6, InDoubt: opts.InDoubt}
	order := make([]int, len(h.Txns))
	for i := range order {
		order[i] = i
	}
	t0 := time.Now()
	alerts, e := feed(t, h, opts, wcfg, arrival{order: order, batch: 1, tick: 100e6, restart: -1})
	eng = e
	var out []string
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s: %d screens, %d txns", k, n, sizes[k]))
	}
	slices.Sort(out)
	var nm []string
	for k, n := range named {
		nm = append(nm, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(nm)
	st := eng.Stats()
	t.Logf("%d txns, %d alerts, %v: checks %d, diagnosed %d, readmits %d, resets %d, readmitted %d, companions %d, evicted %d",
		len(h.Txns), len(alerts), time.Since(t0), st.Checks, eng.diagnosed, eng.readmits, eng.resets, eng.readmitted, eng.companions, st.Evicted)
	t.Logf("screens:\n%s", strings.Join(out, "\n"))
	t.Logf("reads named, by what became of the writer: %s", strings.Join(nm, ", "))
}
