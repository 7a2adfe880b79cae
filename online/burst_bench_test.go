package online

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// burstHistory is gen.Burst, failing tb on error.
func burstHistory(tb testing.TB, n int) *history.History {
	h, err := gen.Burst(n)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// burstOptions are run's defaults.
func burstOptions() history.Options {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialUnknown
	opts.InDoubt = int64(time.Minute)
	return opts
}

// BenchmarkBurst is `run` on a burst that one tick holds (issue 20, item
// 7): the evicting engine is given every transaction at once, and steps
// once, as run does at the end of standard input. Besides time it
// reports the CPU seconds per step (user and system, GC included: on a
// shared machine the wall time also counts waiting for a core) and the
// span of the burst in event time.
//
//	go test ./online -run '^$' -bench Burst -benchtime 1x
func BenchmarkBurst(b *testing.B) {
	for _, n := range []int{10000, 30000, 100000} {
		b.Run(fmt.Sprintf("txns=%d", n), func(b *testing.B) {
			h := burstHistory(b, n)
			span := h.Txns[len(h.Txns)-1].End - h.Txns[0].Start
			opts := burstOptions()
			b.ResetTimer()
			cpu0 := cpuNanos()
			for b.Loop() {
				o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
				o.Release(h.Txns...)
				o.CloseAll()
				alerts, err := o.Step(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if len(alerts) != 0 {
					b.Fatalf("alert %s on a generated history without anomalies", alerts[0].Class)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuNanos()-cpu0)/1e9/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(span)/1e6, "span-ms")
		})
	}
}
