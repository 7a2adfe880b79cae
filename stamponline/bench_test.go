package stamponline

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/state"
	"github.com/streamcheck/streamcheck/window"
)

// cpuSeconds is the process's user and system CPU time so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkStream is the engine's share of `run --stamps`: a generated
// stamped stream (gen's store, every committed transaction stamped)
// through the window and the driver at run's defaults (lateness 10 s,
// tick 100 ms), decoded already, with the call log in memory. It fails
// if the stamps stop vouching. BENCHMARKS.md quotes it:
//
//	go test ./stamponline -run '^$' -bench Stream -benchtime 3x -cpuprofile cpu.prof
func BenchmarkStream(b *testing.B) {
	for _, n := range []int{100_000} {
		h, _, err := gen.GenerateStamps(gen.Config{Txns: n, Seed: 1, UnknownRatio: 0})
		if err != nil {
			b.Fatal(err)
		}
		for _, lv := range []history.Level{history.Serializable, history.SnapshotIsolation} {
			b.Run(fmt.Sprintf("txns=%d/%s", n, lv), func(b *testing.B) {
				opts := history.DefaultOptions()
				opts.Level = lv
				opts.InDoubt = int64(60e9)
				runtime.GC() // the generator's garbage is not the stream's
				start := cpuSeconds()
				for b.Loop() {
					streamAll(b, h, opts)
				}
				// CPU seconds, not wall time: the box is shared, and
				// BENCHMARKS.md compares transactions per CPU second.
				b.ReportMetric(float64(n*b.N)/(cpuSeconds()-start), "txn/cpu-s")
			})
		}
	}
}

func streamAll(b *testing.B, h *history.History, opts history.Options) {
	ctx := context.Background()
	wcfg := window.Config{Partitions: 1, Lateness: 10e9, Skew: opts.Skew, InDoubt: opts.InDoubt}
	win, err := window.New(wcfg)
	if err != nil {
		b.Fatal(err)
	}
	// The call log in a file, as in run.
	eng, err := New(opts, Config{Inner: innerFor(opts), Log: state.NewFileBodies("")})
	if err != nil {
		b.Fatal(err)
	}
	d := driver.New(driver.Config{Tick: 100e6, Skew: opts.Skew, Lateness: wcfg.Lateness}, win, eng, driver.NewState(1))
	for i := range h.Txns {
		if rej := d.Accept(0, int64(i), h.Txns[i], 0); rej != nil {
			b.Fatalf("%s set aside: %+v", h.Txns[i].ID, rej)
		}
		eng.NoteFacts(&h.Txns[i], h.Facts[i])
		for d.HasReady() {
			if _, err := d.Ready(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	d.EndInput()
	for d.HasReady() {
		if _, err := d.Ready(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := d.Final(ctx); err != nil {
		b.Fatal(err)
	}
	if _, why := eng.FastPath(); why != "" {
		b.Fatalf("the stamps stopped vouching: %s", why)
	}
}
