package runcmd

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/config"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/online"
)

// TestClosureFlagReachesTheEngine: `--closure=false` (check.closure in the
// config file) must reach the evicting engine, from the start and after a
// restore, and the default must keep the closure on: the switch exists so
// that users can measure the closure on their own stream, which means
// nothing if it silently does not switch. A valid read-modify-write
// stream asks the engine hundreds of order questions.
func TestClosureFlagReachesTheEngine(t *testing.T) {
	cfg, err := gen.Preset("mixed")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.OpsPerTxn, cfg.Keys = 1500, 16, 6, 2000
	cfg.ListRatio, cfg.UnknownRatio = 0, 0
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	txns := append([]history.Txn(nil), h.Txns...)
	sort.SliceStable(txns, func(i, j int) bool { return txns[i].Start < txns[j].Start })
	feed := func(o *online.Online, opts history.Options) online.OnlineStats {
		var open []int
		for i := range txns {
			o.Release(txns[i])
			open = append(open, i)
			keep := open[:0]
			for _, j := range open {
				if e := opts.EffectiveEnd(&txns[j]); e != math.MaxInt64 && e+opts.Skew < txns[i].Start-opts.Skew {
					o.Close(txns[j].ID)
				} else {
					keep = append(keep, j)
				}
			}
			open = keep
			if (i+1)%128 == 0 {
				if _, err := o.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		}
		o.CloseAll()
		if _, err := o.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
		return o.Stats()
	}
	for _, on := range []bool{true, false} {
		c := config.Default()
		c.Check.Closure = on
		r := &runner{cfg: &runConfig{Config: c}}
		r.cfg.opts = history.DefaultOptions()
		r.cfg.opts.Level = history.StrictSerializable
		e, err := r.newEngine()
		if err != nil {
			t.Fatal(err)
		}
		o, ok := e.(*online.Online)
		if !ok {
			t.Fatalf("strict-serializable built %T, not the evicting engine", e)
		}
		st := feed(o, r.cfg.opts)
		used := st.Closure.Hits + st.Closure.Around + st.Closure.Builds
		t.Logf("closure %v: %d evicted, %+v", on, st.Evicted, st.Closure)
		if on && used == 0 {
			t.Errorf("closure on (the default): never used (%+v)", st.Closure)
		}
		if !on && used != 0 {
			t.Errorf("--closure=false: the engine still used it (%+v)", st.Closure)
		}
		if st.Alerts != 0 {
			t.Errorf("closure %v: %d alerts on a valid stream", on, st.Alerts)
		}
	}
	// After a restore the snapshot does not carry the switch: the runner
	// sets it again (loop.go, the restore path calls SetNoClosure).
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := online.NewOnlineConfig(opts, online.OnlineConfig{Evict: true})
	o.SetNoClosure(true)
	if st := feed(o, opts); st.Closure.Hits+st.Closure.Around+st.Closure.Builds != 0 {
		t.Errorf("SetNoClosure(true): the engine still used the closure (%+v)", st.Closure)
	}
}
