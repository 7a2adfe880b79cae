package online

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// injectedBurst generates gen's mixed workload as one burst (8 µs
// transactions, 2% unknown outcomes, repeated values when i is odd) of
// txns transactions over keys keys, with minInject to minInject+2
// anomalies of types drawn from rng injected. It returns the history and
// the configuration (its Inject names the anomalies).
func injectedBurst(t *testing.T, rng *rand.Rand, seed uint64, txns, keys, i, minInject int) (*history.History, gen.Config) {
	t.Helper()
	types := gen.InjectTypes()
	cfg, _ := gen.Preset("mixed")
	cfg.Seed = seed
	cfg.Txns = txns
	cfg.Keys = keys
	cfg.Latency = 8000
	cfg.UnknownRatio = 0.02
	cfg.DupValueRatio = 0.05 * float64(i%2)
	for range minInject + rng.IntN(3) {
		cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, cfg
}

// burstAlertIDs steps h as run does (burstRun) and returns its alerts'
// ids, sorted.
func burstAlertIDs(t *testing.T, h *history.History) []string {
	t.Helper()
	var out []string
	for _, a := range burstRun(t, h, burstOptions(), false) {
		out = append(out, a.ID)
	}
	slices.Sort(out)
	return out
}

// burstRun steps a burst as run does (BenchmarkBurstRun): everything
// released at once, a step with the unknown outcomes still open, then
// every transaction closed and a last step; one, if oneStep, closes
// everything before its only step. It returns the alerts, with their
// latest cores.
func burstRun(t *testing.T, h *history.History, opts history.Options, oneStep bool) []*Alert {
	t.Helper()
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	o.Release(byStart(h)...)
	if !oneStep {
		for _, x := range h.Txns {
			if x.Status != history.Unknown {
				o.Close(x.ID)
			}
		}
		if _, err := o.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	o.CloseAll()
	if _, err := o.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o.Alerts()
}

// TestBurstAnomaliesAlerted: an anomaly inside a burst (every
// transaction within microseconds of the next, one tick) is alerted by
// the engine stepped as run steps a burst, with the first verdict of
// check; every alert's core is a violation on its own, and dropping any
// one of its transactions makes it pass; the ids are those of the
// engine that checks the whole burst in one step, all closed. Two
// bursts by default; the sweep:
//
//	STREAMCHECK_BURST_N=40 go test ./online -run TestBurstAnomaliesAlerted -timeout 2h
func TestBurstAnomaliesAlerted(t *testing.T) {
	n := 2
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_BURST_N")); err == nil && v > 0 {
		n = v
	}
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 0xb1a5))
		h, cfg := injectedBurst(t, rng, uint64(i+1), 200+rng.IntN(600), 20+rng.IntN(100), i, 1)
		opts := burstOptions()
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		alerts := burstRun(t, h, opts, false)
		if (len(alerts) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("burst %d (%v): %d alerts, check %s", i, cfg.Inject, len(alerts), res.Verdict)
		}
		// A core is judged by its projection (docs/SEMANTICS.md §3), as
		// the differential harness of internal/runcmd judges it.
		verdict := func(ids []string) incremental.Verdict {
			r, err := incremental.Check(context.Background(), incremental.Project(h, opts, ids), opts, incremental.Config{})
			if err != nil {
				t.Fatal(err)
			}
			return r.Verdict
		}
		var ids []string
		for _, a := range alerts {
			ids = append(ids, a.ID)
			if v := verdict(a.Core); v != incremental.Invalid {
				t.Fatalf("burst %d: the core %v of alert %s (%s) is %s on its own", i, a.Core, a.ID, a.Class, v)
			}
			for j := range a.Core {
				if v := verdict(slices.Delete(slices.Clone(a.Core), j, j+1)); v != incremental.Valid {
					t.Fatalf("burst %d: the core %v of alert %s (%s) is not minimal: without %s it is %s", i, a.Core, a.ID, a.Class, a.Core[j], v)
				}
			}
		}
		var once []string
		for _, a := range burstRun(t, h, opts, true) {
			once = append(once, a.ID)
		}
		slices.Sort(ids)
		slices.Sort(once)
		if !slices.Equal(ids, once) {
			t.Fatalf("burst %d (%v): ids stepped as run %v, in one step %v", i, cfg.Inject, ids, once)
		}
	}
}
