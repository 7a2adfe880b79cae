package stampcheck_test

import (
	"context"
	"fmt"
	"os"
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
				for b.Loop() {
					rep, err := stampcheck.Check(context.Background(), h, opts, incremental.Config{})
					if err != nil || !rep.ByFacts {
						b.Fatalf("%v %v", rep, err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("txns=%d/snapshot-isolation/facts", n), func(b *testing.B) {
			for b.Loop() {
				if f := stampcheck.CheckSnapshot(h, history.DefaultOptions(), stampcheck.SnapshotRules{}); f.Outcome != stampcheck.Witnessed {
					b.Fatal(f.Why)
				}
			}
		})
		if testing.Short() || !blackBox() {
			continue
		}
		plain := &history.History{Txns: h.Txns}
		for _, lv := range []history.Level{history.Serializable, history.StrictSerializable} {
			opts := history.DefaultOptions()
			opts.Level = lv
			b.Run(fmt.Sprintf("txns=%d/%s/black-box", n, lv), func(b *testing.B) {
				for b.Loop() {
					res, err := incremental.Check(context.Background(), plain, opts, incremental.Config{})
					if err != nil || res.Verdict != incremental.Valid {
						b.Fatalf("%v %v", res, err)
					}
				}
			})
		}
	}
}

func blackBox() bool { return os.Getenv("STREAMCHECK_BENCH_BLACKBOX") != "" }
