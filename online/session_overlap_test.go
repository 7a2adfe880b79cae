package online

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestOverlappingSessionKeepsItsOrder (§5 "A session whose transactions
// overlap"): T3 and T7 are one session's, T3 first, but T3 runs until 39
// and T7 is over at 13. T5 starts at 16, after T7 in real time, and T3
// reads T5's z3: T3 -session-> T7 -realtime-> T5 -wr-> T3. T7 closes
// first and has no ops; had it left while T3 was open, no instance held
// T3 -> T5 and the anomaly was never alerted, not even at the end of
// input. Later writes of another key keep the stream going. The same
// with T7 writing a key of its own.
func TestOverlappingSessionKeepsItsOrder(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	for _, t7 := range []string{"T7[13,13] (session c1)", "T7[13,13] w q 1 (session c1)"} {
		text := "T3[12,39] r z 3 (session c1)\n" + t7 + "\nT5[16,27] w z 3 (session c2)"
		for i := range 10 {
			text += fmt.Sprintf("\nZ%d[%d,%d] w y %d (session c9)", i, 50+10*i, 55+10*i, i)
		}
		h, err := history.ParseCompact(text)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.InDoubt = 1
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil || res.Verdict != incremental.Invalid {
			t.Fatalf("check: %v %v, want invalid", res.Verdict, err)
		}
		fired, _ := sweep(t, h, opts)
		var core []string
		if len(fired) > 0 {
			core = slices.Sorted(slices.Values(fired[0].core))
		}
		if len(fired) == 0 || fired[0].w != 40 || !slices.Equal(core, []string{"T3", "T5", "T7"}) {
			t.Fatalf("%s: alerts %v, want core T3 T5 T7 when T3 closes (w = 40)", t7, fired)
		}
	}
}
