package online

import (
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestSessEndKeepsASessionTie (docs/SEMANTICS.md §5 "An unknown decided
// committed ends at its anchor's end", lead34): U and M of one session
// start at 44, U ends first, so U precedes M, and M reads U's y1, which
// decides U committed. K, U's next member by start, ends at 70. Given
// K's end, U would rank after M (a tie of starts goes by end) and M's
// read of y1 would be a garbage read in the instance: a disagreement,
// which the self-check makes a failure. The first history is the
// schedule hunt's (seed 111, history 18,572), the second the part of it
// that matters; online must agree with check (first verdict, cores) at
// every step schedule tried, with no disagreement. Mutation:
// sessTieOff = true fails both.
func TestSessEndKeepsASessionTie(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	for n, text := range []string{
		`T1[14,34] r x null, w x 1, w x 4, r x 4 (session c1)
T2[44,44] w y 3, r y 3, w y 1 (unknown) (session c1)
T3[52,70] w y 3, r y 3 (session c1)
T4[81,93] r x 4, w x 4, r x 4, w x 1, r y null (unknown) (session c1)
T5[100,106] r y 1, w y 4, w y 1, r y 1 (session c1)
T6[117,143] r x 4, r x 4 (session c1)
T7[44,45] r x 4, w x 3, r y 1 (session c1)`,
		`U[44,44] w y1 (unknown) (session c) · M[44,45] r y1 (session c) · K[52,70] w y3 (session c) · P[100,106] r y1 (session c)`,
	} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { sessTieCase(t, text) })
	}
}

// sessTieCase streams text at every instant, with a restart before
// every step, and under 129 step schedules; each run must agree with
// check and find no disagreement.
func sessTieCase(t *testing.T, text string) {
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.Skew, opts.InDoubt = 0, 40
	sweep(t, h, opts)
	sweepRoundTrip(t, h, opts, true)
	for s := uint64(0); s < 64; s++ {
		for _, p := range []float64{0.5, 0.2} {
			scheduleAgrees(t, h, opts, false, fmt.Sprintf("schedule %d, share %.1f", s, p), p, s)
		}
	}
	scheduleAgrees(t, h, opts, false, "hunt's schedule", 0.5, 5876458727858557715)
}
