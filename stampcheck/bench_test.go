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

// BenchmarkCompact is the compact path's own share of `check FILE`
// (docs/SEMANTICS.md §10 "The compact path of check"): AddIDs of a
// generated stamped history whose keys and values are numbered already
// (ingest.ScanNative's numbering stands in for a map here, outside the
// timing), then the level's witness. Decoding is ingest's and not timed.
// BENCHMARKS.md quotes it:
//
//	go test ./stampcheck -run '^$' -bench Compact -benchtime 3x
func BenchmarkCompact(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	h, _, err := gen.GenerateStamps(gen.Config{Txns: n, Seed: 1, UnknownRatio: 0})
	if err != nil {
		b.Fatal(err)
	}
	texts := map[history.Value]int32{history.Null: stampcheck.NullID}
	id := func(v history.Value) int32 {
		x, ok := texts[v]
		if !ok {
			x = int32(len(texts))
			texts[v] = x
		}
		return x
	}
	type numbered struct{ keys, vals, lists []int32 }
	nums := make([]numbered, len(h.Txns))
	for i := range h.Txns {
		nb := &nums[i]
		for _, op := range h.Txns[i].Ops {
			nb.keys = append(nb.keys, id(op.Key))
			if op.IsList {
				nb.vals = append(nb.vals, int32(len(nb.lists)))
				for _, v := range op.List {
					nb.lists = append(nb.lists, id(v))
				}
			} else {
				nb.vals = append(nb.vals, id(op.Value))
			}
		}
	}
	for _, lv := range []history.Level{history.Serializable, history.SnapshotIsolation} {
		opts := history.DefaultOptions()
		opts.Level = lv
		b.Run(fmt.Sprintf("txns=%d/%s", n, lv), func(b *testing.B) {
			loopCPU(b, func() {
				c := stampcheck.NewCompact(n)
				for i := range h.Txns {
					nb := &nums[i]
					c.AddIDs(&h.Txns[i], h.FactsOf(i), nb.keys, nb.vals, nb.lists)
				}
				var res *incremental.Result
				var why string
				if lv.BeginCommit() {
					res, why = c.CheckSnapshot(opts, stampcheck.RulesFor(lv))
				} else {
					res, why = c.CheckSerial(opts)
				}
				if res == nil {
					b.Fatalf("not witnessed: %s", why)
				}
			})
		})
	}
}
