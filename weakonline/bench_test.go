package weakonline

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/window"
)

// BenchmarkStream runs a generated unique-value register stream (the
// mixed preset without lists, duplicates or unknown outcomes) through
// the window, the driver and the engine, in start order, as run does;
// WEAKONLINE_BENCH_TXNS sets its length (default 50,000):
//
//	go test ./weakonline -run '^$' -bench Stream -benchtime 1x
func BenchmarkStream(b *testing.B) {
	n := 50000
	if s := os.Getenv("WEAKONLINE_BENCH_TXNS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	c, err := gen.Preset("mixed")
	if err != nil {
		b.Fatal(err)
	}
	c.ListRatio, c.DupValueRatio, c.UnknownRatio, c.Txns, c.Seed = 0, 0, 0, n, 7
	h, _, err := gen.Generate(c)
	if err != nil {
		b.Fatal(err)
	}
	h = releaseOrder(h)
	for _, lv := range []history.Level{history.ReadCommitted, history.ReadAtomic, history.Causal} {
		b.Run(lv.String(), func(b *testing.B) {
			for range b.N {
				opts := history.DefaultOptions()
				opts.Level = lv
				win, _ := window.New(window.Config{Partitions: 1, Lateness: 20_000_000, InDoubt: opts.InDoubt})
				e, _ := New(opts, Config{})
				d := driver.New(driver.Config{Tick: 100_000_000, Lateness: 20_000_000}, win, e, driver.NewState(1))
				ctx := context.Background()
				for i := range h.Txns {
					if rej := d.Accept(0, int64(i), h.Txns[i], 0); rej != nil {
						b.Fatalf("%+v", rej)
					}
					for d.HasReady() {
						if _, err := d.Ready(ctx); err != nil {
							b.Fatal(err)
						}
					}
				}
				d.EndInput()
				for d.HasReady() {
					d.Ready(ctx)
				}
				rd, err := d.Final(ctx)
				if err != nil || len(rd.Alerts) > 0 || e.Stats().Alerts > 0 {
					b.Fatalf("alerts on a valid stream: %v", err)
				}
				b.ReportMetric(float64(len(h.Txns))/b.Elapsed().Seconds(), "txn/s")
			}
		})
	}
}
