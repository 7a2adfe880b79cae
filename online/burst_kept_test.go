package online

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeptModelProbesSameAlerts: the probes answered from the kept model
// (solver F2 in the prober's solves and the prober's own test, assumed;
// docs/SEMANTICS.md §5, "A probe answered from the kept model under its
// assumption") change which questions a step's budget pays for, never
// an alert: bursts with injected anomalies, stepped as run steps them,
// give the same alert ids with the test on and off, and the test
// answers some questions on them.
func TestKeptModelProbesSameAlerts(t *testing.T) {
	defer func() { noAssume = false }()
	hits, alerts := int64(0), 0
	for i := range 6 {
		rng := rand.New(rand.NewPCG(uint64(i), 0x6b657074))
		h, cfg := injectedBurst(t, rng, uint64(100+i), 300+rng.IntN(900), 20+rng.IntN(200), i, 0)
		ids := func(off bool) []string {
			noAssume = off
			return burstAlertIDs(t, h)
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
