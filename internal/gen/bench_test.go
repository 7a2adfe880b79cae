package gen

import (
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// BenchmarkGenerate streams 100K transactions of each preset, discarding
// them, so it measures the simulation alone.
func BenchmarkGenerate(b *testing.B) {
	for _, name := range PresetNames() {
		b.Run(fmt.Sprintf("workload=%s/txns=100000", name), func(b *testing.B) {
			cfg, err := Preset(name)
			if err != nil {
				b.Fatal(err)
			}
			cfg.Txns = 100000
			ops := 0
			for b.Loop() {
				ops = 0
				if _, err := GenerateStream(cfg, func(t history.Txn) error { ops += len(t.Ops); return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(cfg.Txns), "ns/txn")
			b.ReportMetric(float64(ops)/float64(cfg.Txns), "ops/txn")
		})
	}
}
