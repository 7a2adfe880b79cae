package incremental

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestScaleProbe prints timings on one generated history; it runs only
// with STREAMCHECK_PROBE=<txns>.
func TestScaleProbe(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STREAMCHECK_PROBE"))
	if n == 0 {
		t.Skip("set STREAMCHECK_PROBE=<txns>")
	}
	wls := []string{"mixed", "blindw-rw"}
	if w := os.Getenv("STREAMCHECK_PROBE_WORKLOAD"); w != "" {
		wls = []string{w}
	}
	levels := []history.Level{history.StrictSerializable, history.Serializable}
	if l := os.Getenv("STREAMCHECK_PROBE_LEVEL"); l != "" {
		lv, err := history.ParseLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		levels = []history.Level{lv}
	}
	for _, wl := range wls {
		cfg, _ := gen.Preset(wl)
		cfg.Txns = n
		cfg.Sessions = 32
		cfg.OpsPerTxn = 8
		cfg.Keys = 5000
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, lv := range levels {
			opts := history.DefaultOptions()
			opts.Level = lv
			t0 := time.Now()
			res, err := Check(context.Background(), h, opts, Config{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s n=%d: %s in %v (encode %v solve %v) reads=%d pairs=%d vars=%d nodes=%d conflicts=%d",
				wl, lv, len(h.Txns), res.Verdict, time.Since(t0), res.Stats.EncodeTime, res.Stats.SolveTime, res.Stats.Reads, res.Stats.Pairs, res.Stats.Vars, res.Stats.Nodes, res.Stats.Conflicts)
		}
	}
}
