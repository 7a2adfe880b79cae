package incremental

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// dupCliff is n committed transactions writing x = 1 and n reading it,
// each its own session, without timestamps: trivially valid, and issue
// 27's duplicate-value cliff (every read had n candidates and every pair
// of writers an order variable with an rw edge per reader).
func dupCliff(n int) *history.History {
	h := &history.History{}
	for i := 0; i < n; i++ {
		h.Txns = append(h.Txns, history.Txn{ID: fmt.Sprintf("w%d", i), Session: fmt.Sprintf("w%d", i), Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: "x", Value: "1"}}})
	}
	for i := 0; i < n; i++ {
		h.Txns = append(h.Txns, history.Txn{ID: fmt.Sprintf("r%d", i), Session: fmt.Sprintf("r%d", i), Status: history.Committed,
			Ops: []history.Op{{Kind: history.Read, Key: "x", Value: "1"}}})
	}
	return h
}

// unknownCliff is a generated history of n transactions on 100 keys, a
// share of them of unknown outcome (issue 27's unknown-outcome cliff).
func unknownCliff(tb testing.TB, n int, ratio float64) *history.History {
	cfg, err := gen.Preset("mixed")
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Txns, cfg.Seed, cfg.Keys, cfg.UnknownRatio, cfg.AbortRatio = n, 1, 100, ratio, 0
	h, _, err := gen.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// BenchmarkCliffs are issue 27's regression benchmarks. They run with
// pruning on only: with Config.NoPrune the duplicate cases run out of
// memory and the 50%-unknown one took 482 s against 14 s on a loaded
// machine; the before figures are main's binary side by side
// (BENCHMARKS.md).
//
//	go test ./incremental -run '^$' -bench Cliffs -benchtime 3x
func BenchmarkCliffs(b *testing.B) {
	cases := []struct {
		name    string
		h       func(testing.TB) *history.History
		level   history.Level
		offToo  bool
		timeout bool
	}{
		{"dup/writers=500,readers=500", func(testing.TB) *history.History { return dupCliff(500) }, history.Serializable, false, false},
		{"dup/writers=5000,readers=5000", func(testing.TB) *history.History { return dupCliff(5000) }, history.Serializable, false, false},
		{"unknown/txns=25000,keys=100,unknown=100%", func(tb testing.TB) *history.History { return unknownCliff(tb, 25000, 1) }, history.Serializable, false, false},
		{"unknown/txns=5000,keys=100,unknown=50%", func(tb testing.TB) *history.History { return unknownCliff(tb, 5000, 0.5) }, history.Serializable, false, false},
	}
	for _, c := range cases {
		h := c.h(b)
		opts := history.DefaultOptions()
		opts.Level = c.level
		for _, off := range []bool{false, true} {
			if off && !c.offToo {
				continue
			}
			b.Run(fmt.Sprintf("%s/noprune=%v", c.name, off), func(b *testing.B) {
				for b.Loop() {
					res, err := Check(context.Background(), h, opts, Config{NoPrune: off})
					if err != nil {
						b.Fatal(err)
					}
					if res.Verdict != Valid {
						b.Fatalf("verdict %s", res.Verdict)
					}
					b.ReportMetric(float64(res.Stats.Pairs), "pairs")
					b.ReportMetric(float64(res.Stats.Vars), "vars")
				}
			})
		}
	}
}
