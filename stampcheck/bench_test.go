package stampcheck_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// BenchmarkFacts times the check phase (the history in memory, as check
// holds it after reading) with the store's stamps and, on the same
// history without them, the black-box checker. BENCHMARKS.md quotes it:
//
//	go test ./stampcheck -run '^$' -bench Facts -benchtime 3x -timeout 60m
//
// STREAMCHECK_BENCH_BLACKBOX=1 adds the black-box runs, which take
// minutes at 1M.
func BenchmarkFacts(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		h, _, err := gen.GenerateStamps(gen.Config{Txns: n, Seed: 1, UnknownRatio: 0})
		if err != nil {
			b.Fatal(err)
		}
		for _, lv := range []history.Level{history.Serializable, history.StrictSerializable} {
			opts := history.DefaultOptions()
			opts.Level = lv
			b.Run(fmt.Sprintf("txns=%d/%s/facts", n, lv), func(b *testing.B) {
				loopCPU(b, func() {
					rep, err := stampcheck.Check(context.Background(), h, opts, incremental.Config{})
					if err != nil || !rep.ByFacts {
						b.Fatalf("%v %v", rep, err)
					}
				})
			})
		}
		for _, lv := range []history.Level{history.SnapshotIsolation, history.StrongSnapshotIsolation} {
			opts := history.DefaultOptions()
			opts.Level = lv
			b.Run(fmt.Sprintf("txns=%d/%s/facts", n, lv), func(b *testing.B) {
				loopCPU(b, func() {
					rep, err := stampcheck.CheckSnapshotLevel(context.Background(), h, opts, stampcheck.RulesFor(lv), nil)
					if err != nil || !rep.ByFacts {
						b.Fatalf("%v %v", rep, err)
					}
				})
			})
		}
		if testing.Short() || !blackBox() {
			continue
		}
		plain := &history.History{Txns: h.Txns}
		for _, lv := range []history.Level{history.Serializable, history.StrictSerializable, history.SnapshotIsolation} {
			opts := history.DefaultOptions()
			opts.Level = lv
			b.Run(fmt.Sprintf("txns=%d/%s/black-box", n, lv), func(b *testing.B) {
				loopCPU(b, func() {
					res, err := incremental.Check(context.Background(), plain, opts, incremental.Config{})
					if err != nil || res.Verdict != incremental.Valid {
						b.Fatalf("%v %v", res, err)
					}
				})
			})
		}
	}
}

func blackBox() bool { return os.Getenv("STREAMCHECK_BENCH_BLACKBOX") != "" }

// cpuSeconds is the process's user+system CPU time: on a machine shared
// with other work, the figure to compare (wall time counts the waiting).
// It includes the garbage collector's background workers, which the
// check's allocations cost.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// loopCPU runs f under b.Loop and reports the CPU seconds per run as
// cpu-s/op.
func loopCPU(b *testing.B, f func()) {
	runtime.GC() // the history's garbage is not the check's
	start, n := cpuSeconds(), 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric((cpuSeconds()-start)/float64(n), "cpu-s/op")
}
