package incremental

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// burstHistory is a generated history (the mixed workload: registers
// and lists, 32 sessions, 16 concurrent) whose transactions last 8 µs on
// average, about one starting every microsecond: the whole of it falls
// inside one tick of `run`.
func burstHistory(tb testing.TB, n int) *history.History {
	cfg, err := gen.Preset("mixed")
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Txns, cfg.Seed, cfg.Latency = n, 1, 8000
	h, _, err := gen.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
