package incremental

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// BenchmarkListRead measures one read of a long list, offline (Check),
// at 10^4..10^6 elements: valid reads appended by one transaction or by
// 100 (under the unknown initial state too, where every prefix may be
// the initial list), and reads in an anomaly, whose core search and
// explanation handle the list text (the online engine on the same
// histories: package online, BenchmarkListReadOnline). cpu-s/op is the
// CPU seconds per operation (user and system, GC included): on a shared machine the wall
// time also counts waiting for a core.
//
//	go test ./incremental -run '^$' -bench ListRead -benchtime 1x
func BenchmarkListRead(b *testing.B) {
	type shape struct {
		name      string
		appenders int
		init      history.InitialState
		want      Verdict
	}
	shapes := []shape{
		{"valid", 1, history.InitialEmpty, Valid},
		{"valid", 100, history.InitialUnknown, Valid},
		{"g-single", 1, history.InitialEmpty, Invalid},
		{"garbage", 1, history.InitialEmpty, Invalid},
	}
	for _, n := range []int{10000, 100000, 1000000} {
		for _, sh := range shapes {
			var h *history.History
			build := func(b *testing.B) {
				if h == nil {
					h = gen.ListRead(n, sh.appenders, sh.name)
				}
				b.ResetTimer()
			}
			opts := history.DefaultOptions()
			opts.InitialState = sh.init
			name := fmt.Sprintf("%s/elements=%.0e/appenders=%d/initial=%s", sh.name, float64(n), sh.appenders, sh.init)
			if sh.name == "valid" && sh.appenders == 1 {
				// The yardstick: decoding the same history from its
				// JSON Lines text, as check and run do first.
				b.Run("decode/"+name, func(b *testing.B) {
					build(b)
					var text []byte
					for i := range h.Txns {
						text = ingest.AppendNative(text, &h.Txns[i])
						text = append(text, '\n')
					}
					b.SetBytes(int64(len(text)))
					b.ResetTimer()
					cpu0 := cpuNanos()
					for b.Loop() {
						if _, _, err := ingest.ReadHistory(bytes.NewReader(text), "bench"); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cpuNanos()-cpu0)/1e9/float64(b.N), "cpu-s/op")
				})
			}
			b.Run("check/"+name, func(b *testing.B) {
				build(b)
				cpu0 := cpuNanos()
				for b.Loop() {
					res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 10})
					if err != nil {
						b.Fatal(err)
					}
					if res.Verdict != sh.want {
						b.Fatalf("verdict %s, want %s", res.Verdict, sh.want)
					}
				}
				b.ReportMetric(float64(cpuNanos()-cpu0)/1e9/float64(b.N), "cpu-s/op")
			})
		}
	}
}
