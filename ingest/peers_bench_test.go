package ingest_test

import (
	"bytes"
	"testing"

	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// BenchmarkReadPeerHistory reads one generated 10,000-transaction register
// history (integer keys, 8 operations a transaction, aborts) written in
// native JSON Lines and in each peer format convert writes; txn/s is the
// figure to compare between formats.
func BenchmarkReadPeerHistory(b *testing.B) {
	cfg, err := gen.Preset("mixed")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Txns, cfg.ListRatio, cfg.UnknownRatio, cfg.Seed = 10000, 0, 0, 1
	h, _, err := gen.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	peerProject(h)
	for _, to := range []string{"native", "dbcop", "text", "elle-edn"} {
		data, err := encode(h, to)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(to, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				back, _, err := ingest.ReadHistory(bytes.NewReader(data), to)
				if err != nil {
					b.Fatal(err)
				}
				n = len(back.Txns)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "txn/s")
		})
	}
}
