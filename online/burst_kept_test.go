package online

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestKeptModelProbesSameAlerts: the probes answered from the kept model
// (solver F2 in the prober's solves and the prober's own test, assumed;
// docs/SEMANTICS.md §5, "A probe answered from the kept model under its
// assumption") change which questions a step's budget pays for, never
// an alert: bursts with injected anomalies, stepped as run steps them,
// give the same alert ids with the test on and off, and the test
// answers some questions on them.
func TestKeptModelProbesSameAlerts(t *testing.T) {
	types := gen.InjectTypes()
	defer func() { noAssume = false }()
	hits, alerts := int64(0), 0
	for i := range 6 {
		rng := rand.New(rand.NewPCG(uint64(i), 0x6b657074))
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(100 + i)
		cfg.Txns = 300 + rng.IntN(900)
		cfg.Keys = 20 + rng.IntN(200)
		cfg.Latency = 8000
		cfg.UnknownRatio = 0.02
		cfg.DupValueRatio = 0.05 * float64(i%2)
		for range rng.IntN(3) {
			cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(off bool) []string {
			noAssume = off
			var out []string
			for _, a := range burstRun(t, h, burstOptions(), false) {
				out = append(out, a.ID)
			}
			slices.Sort(out)
			return out
		}
		before := assumeHits.Load()
		on := ids(false)
		hits += assumeHits.Load() - before
		alerts += len(on)
		if off := ids(true); !slices.Equal(on, off) {
			t.Fatalf("burst %d (%v): alerts %v with the kept-model probes, %v without", i, cfg.Inject, on, off)
		}
	}
	if hits == 0 || alerts == 0 {
		t.Fatalf("the prober's test answered %d questions, %d alerts: the comparison does not exercise it", hits, alerts)
	}
	t.Logf("the prober's test answered %d questions; %d alerts, the same both ways", hits, alerts)
}
