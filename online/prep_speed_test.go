package online

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// reducedStep is one step's reduced instance as the evicting engine built
// it, with what its encoder was told besides the history.
type reducedStep struct {
	h       *history.History
	opts    history.Options
	kept    [][2]int32
	decided map[int32]bool
}

// captureReducedSteps streams the TestWindowProbe workload (blindw-rw, 32
// sessions, 8 operations, 5K keys, unknown initial state) through the
// evicting engine, stepping every `every` transactions, and returns the
// reduced instance of each step: the per-step rebuild measured alone.
// each, if set, sees every step's instance before the engine solves it.
func captureReducedSteps(tb testing.TB, n, every int, each func(*reduced)) []reducedStep {
	h := probeHistory(tb, "blindw-rw", n, 5000)
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 5_000_000
	opts.InitialState = history.InitialUnknown
	txns := byStart(h)
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	var out []reducedStep
	step := func() {
		// build has no effect on the engine: Step builds the same
		// instance again.
		r := o.build()
		if len(r.h.Txns) > 0 {
			decided := map[int32]bool{}
			for i, d := range o.ev.Decided {
				if at, ok := r.at[i]; ok {
					decided[at] = d
				}
			}
			out = append(out, reducedStep{h: r.h, opts: o.opts, kept: r.e.Kept(), decided: decided})
			if each != nil {
				each(r)
			}
		}
		if _, err := o.Step(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	feedInStartOrder(o, opts, txns, func(i int) {
		if (i+1)%every == 0 {
			step()
		}
	})
	o.CloseAll()
	step()
	return out
}

// BenchmarkReducedRebuild measures what the evicting engine spends per
// step on its reduced instance, on the instances of a TestWindowProbe run
// (STREAMCHECK_BENCH_REDUCED_TXNS transactions, 40K by default, a step
// every 800): prepare alone (without and with the previous step's tables),
// prepare and newEncoder, and all of prepare, newEncoder, encode and solve.
//
//	go test ./online -run '^$' -bench ReducedRebuild -benchmem
func BenchmarkReducedRebuild(b *testing.B) {
	n := 40000
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_BENCH_REDUCED_TXNS")); err == nil && v > 0 {
		n = v
	}
	steps := captureReducedSteps(b, n, 800, nil)
	txns := 0
	for _, st := range steps {
		txns += len(st.h.Txns)
	}
	ctx := context.Background()
	for _, upTo := range []string{"prepare-fresh", "prepare", "newEncoder", "solve"} {
		b.Run(upTo, func(b *testing.B) {
			for b.Loop() {
				// Each step takes over the previous one's tables, as the
				// engine does (prepare-fresh: it does not).
				var last *incremental.Prepared
				for _, st := range steps {
					if upTo == "prepare-fresh" {
						incremental.Prepare(st.h, st.opts)
						continue
					}
					p := incremental.PrepareReusing(last, st.h, st.opts)
					last = p
					if upTo == "prepare" {
						continue
					}
					e := incremental.NewEncoder(p, incremental.WindowEncodeConfig(st.kept, st.decided))
					if upTo == "newEncoder" {
						continue
					}
					e.EncodeCtx(ctx)
					e.Solve(ctx)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(steps)), "ns/step")
			b.ReportMetric(float64(txns)/float64(len(steps)), "txns/step")
		})
	}
}
