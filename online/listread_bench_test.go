package online

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// BenchmarkListReadOnline is BenchmarkListRead (package incremental) for
// the online engine: one Step of the evicting engine over the same
// histories (the generator is a copy of that package's test helper).
//
//	go test ./online -run '^$' -bench ListReadOnline -benchtime 1x
func BenchmarkListReadOnline(b *testing.B) {
	type shape struct {
		name      string
		appenders int
		init      history.InitialState
		invalid   bool
	}
	shapes := []shape{
		{"valid", 1, history.InitialEmpty, false},
		{"valid", 100, history.InitialUnknown, false},
		{"g-single", 1, history.InitialEmpty, true},
		{"garbage", 1, history.InitialEmpty, true},
	}
	for _, n := range []int{10000, 100000, 1000000} {
		for _, sh := range shapes {
			var h *history.History
			opts := history.DefaultOptions()
			opts.InitialState = sh.init
			name := fmt.Sprintf("%s/elements=%.0e/appenders=%d/initial=%s", sh.name, float64(n), sh.appenders, sh.init)
			b.Run("online/"+name, func(b *testing.B) {
				if h == nil {
					h = gen.ListRead(n, sh.appenders, sh.name)
				}
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
					if got := len(alerts) > 0; got != sh.invalid {
						b.Fatalf("%d alerts, want invalid %v", len(alerts), sh.invalid)
					}
				}
				b.ReportMetric(float64(cpuNanos()-cpu0)/1e9/float64(b.N), "cpu-s/op")
			})
		}
	}
}
