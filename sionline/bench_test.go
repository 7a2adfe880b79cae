package sionline

import (
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/window"
)

// BenchmarkRMW streams issue 28's read-modify-write stream (the mixed
// preset, 2% unknown outcomes, 10% list keys; `streamcheck gen --txns
// 5000 --workload mixed --unknown-ratio 0.02 --list-ratio 0.1 --seed 28`)
// through a window of 10ms lateness and a 10ms tick at strong snapshot
// isolation, as `run --level strong-snapshot-isolation --lateness 10ms
// --tick 10ms --initial-state empty` does. For profiles
// (-cpuprofile); BENCHMARKS.md times the binary.
// STREAMCHECK_SIBENCH_TXNS=N streams N transactions instead,
// STREAMCHECK_SIBENCH_SEED=S generates with seed S (issue 28's
// acceptance stream is seed 1), STREAMCHECK_SIBENCH_COMPANIONS=off
// runs without companions, STREAMCHECK_SIBENCH_VALUEORDER=off without
// the sweep's value order (NoValueOrder),
// STREAMCHECK_SIBENCH_WAIT=N sets WaitWindow to N,
// STREAMCHECK_SIBENCH_SEG=N makes segments of N transactions (segTxns),
// STREAMCHECK_SIBENCH_UNKNOWN=F the unknown-outcome ratio to F (what the
// re-admissions owe to in-doubt writers), STREAMCHECK_SIBENCH_INIT=unknown
// an unknown initial state and STREAMCHECK_SIBENCH_TICK=NS a tick of NS
// nanoseconds (`run`'s defaults: unknown, 100ms);
// STREAMCHECK_SIBENCH_NAMEINIT=off names no segment for a read an
// unknown initial state could explain (NoNameInitial).
func BenchmarkRMW(b *testing.B) {
	cfg, err := gen.Preset("mixed")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Txns, cfg.UnknownRatio, cfg.ListRatio, cfg.Seed = 5000, 0.02, 0.1, 28
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIBENCH_TXNS")); err == nil && n > 0 {
		cfg.Txns = n
	}
	if n, err := strconv.ParseUint(os.Getenv("STREAMCHECK_SIBENCH_SEED"), 10, 64); err == nil {
		cfg.Seed = n
	}
	if f, err := strconv.ParseFloat(os.Getenv("STREAMCHECK_SIBENCH_UNKNOWN"), 64); err == nil && f >= 0 {
		cfg.UnknownRatio = f
	}
	if os.Getenv("STREAMCHECK_SIBENCH_COMPANIONS") == "off" {
		defer func(c bool) { NoCompanions = c }(NoCompanions)
		NoCompanions = true
	}
	if os.Getenv("STREAMCHECK_SIBENCH_VALUEORDER") == "off" {
		defer func(c bool) { NoValueOrder = c }(NoValueOrder)
		NoValueOrder = true
	}
	if os.Getenv("STREAMCHECK_SIBENCH_UCOMP") == "off" {
		defer func(c bool) { NoUnknownInitCompanions = c }(NoUnknownInitCompanions)
		NoUnknownInitCompanions = true
	}
	if os.Getenv("STREAMCHECK_SIBENCH_NAMEINIT") == "off" {
		defer func(c bool) { NoNameInitial = c }(NoNameInitial)
		NoNameInitial = true
	}
	if os.Getenv("STREAMCHECK_SIBENCH_PASTBEGIN") == "off" {
		defer func(c bool) { NoPastBegin = c }(NoPastBegin)
		NoPastBegin = true
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIBENCH_SEG")); err == nil && n > 0 {
		defer func(s int) { segTxns = s }(segTxns)
		segTxns = n
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIBENCH_WAIT")); err == nil && n >= 0 {
		defer func(w int) { WaitWindow = w }(WaitWindow)
		WaitWindow = n
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 60e9, InitialState: history.InitialEmpty}
	if os.Getenv("STREAMCHECK_SIBENCH_INIT") == "unknown" {
		opts.InitialState = history.InitialUnknown
	}
	tick := int64(10e6)
	if n, err := strconv.ParseInt(os.Getenv("STREAMCHECK_SIBENCH_TICK"), 10, 64); err == nil && n > 0 {
		tick = n
	}
	wcfg := window.Config{Partitions: 1, Lateness: 10e6, InDoubt: opts.InDoubt}
	order := make([]int, len(h.Txns))
	for i := range order {
		order[i] = i
	}
	b.ResetTimer()
	for range b.N {
		_, eng := feed(b, h, opts, wcfg, arrival{order: order, batch: 1, tick: tick, restart: -1})
		st := eng.Stats()
		b.ReportMetric(float64(st.Checks), "checks")
		b.ReportMetric(float64(eng.resets), "resets")
		b.ReportMetric(float64(eng.readmits), "readmits")
		b.ReportMetric(float64(eng.diagnosed), "diagnosed")
		b.ReportMetric(float64(eng.failedScreens), "failed-screens")
		b.ReportMetric(float64(eng.serialScreens), "serial-screens")
		b.ReportMetric(float64(eng.companions), "companions")
		b.ReportMetric(float64(eng.listRepairs), "list-repairs")
		b.ReportMetric(float64(eng.pastBegins), "past-begins")
		b.ReportMetric(float64(eng.sweepGaveUp), "sweep-gave-up")
		b.ReportMetric(float64(st.Window), "window")
		if eng.ghost != nil {
			b.ReportMetric(float64(len(eng.ghost.Comp)), "companions-held")
		}
		b.ReportMetric(float64(st.Evicted), "evicted")
	}
}
