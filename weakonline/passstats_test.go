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

// TestPassStats logs what the last retirement pass held and why, at read
// committed on gen's default shape and on unique values without lists,
// under both initial states, as run feeds them (10ms lateness, a tick of
// 100ms, the default pass floor): the counts by reason BENCHMARKS.md
// quotes. A measurement, not a test of a rule: it runs only with
// WEAKONLINE_PASSSTATS=<transactions>.
func TestPassStats(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("WEAKONLINE_PASSSTATS"))
	if n <= 0 {
		t.Skip("WEAKONLINE_PASSSTATS=<transactions> runs it")
	}
	ctx := context.Background()
	for _, shape := range []string{"default", "unique", "few-lists"} {
		for _, init := range []history.InitialState{history.InitialUnknown, history.InitialEmpty} {
			c, err := gen.Preset("mixed")
			if err != nil {
				t.Fatal(err)
			}
			c.Txns, c.Seed, c.UnknownRatio = n, 1, 0
			switch shape {
			case "unique":
				c.ListRatio, c.DupValueRatio, c.AbortRatio = 0, 0, 0
			case "few-lists":
				// A list key in a hundred: the list members are held
				// and the rest retire beside them (R8).
				c.ListRatio = 0.01
			}
			h, _, err := gen.Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			opts := history.DefaultOptions()
			opts.Level = history.ReadCommitted
			opts.InitialState = init
			late := int64(10_000_000)
			win, err := window.New(window.Config{Partitions: 1, Lateness: late, Skew: opts.Skew, InDoubt: opts.InDoubt})
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(opts, Config{Stream: "stats"})
			if err != nil {
				t.Fatal(err)
			}
			d := driver.New(driver.Config{Tick: 100_000_000, Skew: opts.Skew, Lateness: late}, win, e, driver.NewState(1))
			rejected := 0
			for k := range h.Txns {
				if d.Accept(0, int64(k), h.Txns[k], 0) != nil {
					rejected++
				}
				for d.HasReady() {
					if _, err := d.Ready(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			st := e.Stats()
			t.Logf("%s, initial state %v, %d transactions (%d set aside): held %d at the end, retired %d, fast path %v; last pass %+v",
				shape, init, n, rejected, len(e.txns), e.sum.n, e.fast != nil, e.LastPass())
			_ = st
		}
	}
}
