package incremental

import (
	"context"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// BenchmarkTimeoutOvershoot measures how long Check runs past its
// deadline (issue 20, item 6): --timeout promises a time budget, and the
// search, the core shrink and the explanation must notice the deadline
// on their own. overshoot-ms is the time from the deadline to Check's
// return, the largest over the iterations (wall time: on a shared
// machine it also counts waiting for a core); overshoot-cpu-ms is the
// CPU time the process spent in that interval (GC included). The cases need a long
// search: a generated history of 20K transactions without timestamps at
// serializable (every two writers of a key an order variable), and the
// anomaly through a read of a 100K- or 1M-element list, whose core and
// explanation handle the whole list.
//
//	go test ./incremental -run '^$' -bench TimeoutOvershoot -benchtime 3x
func BenchmarkTimeoutOvershoot(b *testing.B) {
	const budget = 2 * time.Second
	cases := []struct {
		name string
		h    func(testing.TB) *history.History
	}{
		{"serializable-notime/txns=20000", func(tb testing.TB) *history.History {
			h := burstHistory(tb, 20000)
			for i := range h.Txns {
				h.Txns[i].HasTime, h.Txns[i].Start, h.Txns[i].End = false, 0, 0
			}
			return h
		}},
		{"list-g-single/elements=1e+05", func(testing.TB) *history.History { return gen.ListRead(100000, 1, "g-single") }},
		{"list-g-single/elements=1e+06", func(testing.TB) *history.History { return gen.ListRead(1000000, 1, "g-single") }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			h := c.h(b)
			opts := history.DefaultOptions()
			var worst time.Duration
			var worstCPU int64
			b.ResetTimer()
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), budget)
				deadline, _ := ctx.Deadline()
				atDeadline := make(chan int64, 1)
				timer := time.AfterFunc(budget, func() { atDeadline <- cpuNanos() })
				if _, err := Check(ctx, h, opts, Config{MaxAnomalies: 10}); err != nil {
					b.Fatal(err)
				}
				worst = max(worst, time.Since(deadline))
				if !timer.Stop() {
					worstCPU = max(worstCPU, cpuNanos()-<-atDeadline)
				}
				cancel()
			}
			b.ReportMetric(float64(max(worst, 0))/1e6, "overshoot-ms")
			b.ReportMetric(float64(worstCPU)/1e6, "overshoot-cpu-ms")
		})
	}
}
