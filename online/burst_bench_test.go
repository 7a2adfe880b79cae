package online

import (
	"context"
	"fmt"
	"runtime/pprof"
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

// BenchmarkBurstRun steps a burst as `run` does at the end of standard
// input: the first step has every transaction released and all but the
// unknown outcomes closed (an unknown closes at the in-doubt horizon, a
// later tick), the second closes the rest. It reports each step's CPU
// seconds and the window the first one leaves, which the one-step
// benchmark does not show: what the first step pins, the second encodes
// again.
//
//	go test ./online -run '^$' -bench BurstRun -benchtime 1x
func BenchmarkBurstRun(b *testing.B) {
	for _, n := range []int{10000, 30000, 100000} {
		b.Run(fmt.Sprintf("txns=%d", n), func(b *testing.B) {
			h := burstHistory(b, n)
			opts := burstOptions()
			var cpu1, cpu2 int64
			var window int
			for b.Loop() {
				o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
				o.Release(h.Txns...)
				for _, t := range h.Txns {
					if t.Status != history.Unknown {
						o.Close(t.ID)
					}
				}
				c0 := cpuNanos()
				// Labelled, so that a profile tells the steps apart
				// (go tool pprof -tagfocus step=1).
				var err error
				pprof.Do(context.Background(), pprof.Labels("step", "1"), func(ctx context.Context) { _, err = o.Step(ctx) })
				if err != nil {
					b.Fatal(err)
				}
				c1 := cpuNanos()
				window = o.Stats().Window
				o.CloseAll()
				var alerts []*Alert
				pprof.Do(context.Background(), pprof.Labels("step", "2"), func(ctx context.Context) { alerts, err = o.Step(ctx) })
				if err != nil {
					b.Fatal(err)
				}
				if len(alerts) != 0 {
					b.Fatalf("alert %s on a generated history without anomalies", alerts[0].Class)
				}
				cpu1 += c1 - c0
				cpu2 += cpuNanos() - c1
			}
			b.ReportMetric(float64(cpu1)/1e9/float64(b.N), "step1-cpu-s")
			b.ReportMetric(float64(cpu2)/1e9/float64(b.N), "step2-cpu-s")
			b.ReportMetric(float64(window), "window-after-1")
		})
	}
}
