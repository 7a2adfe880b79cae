package online

import (
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestPg31BypassFromKeys: the bypass and the fold judged from the
// touched keys' side (pg31_bypasskeys.go) give the same alerts at every
// step as the per-ghost scan, and leave out and fold exactly as many
// ghosts (docs/SEMANTICS.md §5 "B2 and B3 from the touched keys' side").
// The self-check compares the two verdicts ghost by ghost on top.
func TestPg31BypassFromKeys(t *testing.T) {
	prev := SetSelfCheck(true)
	defer SetSelfCheck(prev)
	shapes := recycleShapes()
	wide := func(c *gen.Config) { c.Keys *= 20 }
	shapes = append(shapes,
		recycleShape{"wide-blindw", "blindw-wh", wide, history.InitialEmpty},
		recycleShape{"wide-blindw-rw", "blindw-rw", wide, history.InitialUnknown},
		recycleShape{"wide-rmw-storm", "mixed", func(c *gen.Config) { wide(c); c.InjectRate = 0.05; c.ListRatio = 0 }, history.InitialEmpty},
		recycleShape{"rmw", "mixed", func(c *gen.Config) { c.ListRatio = 0 }, history.InitialUnknown},
	)
	fused, left, folded := 0, 0, 0
	for _, sh := range shapes {
		for seed := range recycleN() {
			t.Run(fmt.Sprintf("%s/%d", sh.name, seed), func(t *testing.T) {
				opts, txns := sh.stream(t, seed)
				n := pg31FusedBuilds.Load()
				on, scan := twinCompare(t, opts, txns, 40+20*seed, "judging keys from their side", func(e *Online) { e.noFusedBypass = true })
				if on.bypassed != scan.bypassed || on.folded != scan.folded {
					t.Fatalf("left out %d and folded %d judging keys from their side, %d and %d scanning", on.bypassed, on.folded, scan.bypassed, scan.folded)
				}
				fused += int(pg31FusedBuilds.Load() - n)
				left += on.bypassed
				folded += on.folded
			})
		}
	}
	t.Logf("%d builds judged from the keys' side; %d ghosts left out, %d folded", fused, left, folded)
	if fused == 0 || left == 0 || folded == 0 {
		t.Fatalf("the streams did not exercise the rule: %d builds, %d left out, %d folded", fused, left, folded)
	}
}
