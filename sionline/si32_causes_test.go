package sionline

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/window"
)

// TestSI32NamedCauses streams a native file (STREAMCHECK_SI32_FILE) as
// `run --level strong-snapshot-isolation --lateness 10ms` does (tick
// 100ms, in-doubt 1m, the initial state unknown as `run`'s default, or
// empty with STREAMCHECK_SI32_INIT=empty) and logs, for the versions the
// screens' reads named (diagnose), what became of their in-doubt writer
// when its chunk or a later one left (traceCompanion): refused as a
// companion and why, dropped by K7, or nothing traced (a committed
// writer the witness ordered differently, or a segment named for an
// initial value). Counts are per read named, a version named at several
// steps counted at each. Skipped without the variable.
func TestSI32NamedCauses(t *testing.T) {
	path := os.Getenv("STREAMCHECK_SI32_FILE")
	if path == "" {
		t.Skip("STREAMCHECK_SI32_FILE not set")
	}
	h, _, err := ingest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 60e9, InitialState: history.InitialUnknown}
	if os.Getenv("STREAMCHECK_SI32_INIT") == "empty" {
		opts.InitialState = history.InitialEmpty
	}
	last := map[writeKey]string{}
	refused := map[string]int{}
	named := map[string]int{}
	defer func() { traceCompanion, traceNamed = nil, nil }()
	traceCompanion = func(ev string, ops []history.Op) {
		refused[ev]++
		for _, op := range ops {
			if op.Kind != history.Read {
				last[writeKey{op.Key, op.Value}] = ev
			}
		}
	}
	traceNamed = func(k history.Key, v history.Value) {
		ev, ok := last[writeKey{k, v}]
		if !ok {
			ev = "nothing traced"
		}
		named[ev]++
	}
	wcfg := window.Config{Partitions: 1, Lateness: 10e6, InDoubt: opts.InDoubt}
	order := make([]int, len(h.Txns))
	for i := range order {
		order[i] = i
	}
	al, eng := feed(t, h, opts, wcfg, arrival{order: order, batch: 1, tick: 100e6, restart: -1})
	show := func(m map[string]int) string {
		var out []string
		for k, n := range m {
			out = append(out, fmt.Sprintf("%s: %d", k, n))
		}
		slices.Sort(out)
		return strings.Join(out, ", ")
	}
	st := eng.Stats()
	t.Logf("%d txns, %d alerts, initial %v: checks %d, diagnosed %d, readmits %d, resets %d, readmitted %d, companions %d", len(h.Txns), len(al), opts.InitialState, st.Checks, eng.diagnosed, eng.readmits, eng.resets, eng.readmitted, eng.companions)
	t.Logf("reads named, by what became of the writer: %s", show(named))
	t.Logf("companion events: %s", show(refused))
}
