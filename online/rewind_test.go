package online

import (
	"context"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/incremental"
)

// TestRewindPoints: replaying after an alert from a rewind point instead
// of from the first transaction raises the same alerts at the same
// watermarks, on generated histories with several injected anomalies
// (so several replays, most of them from a point), each alert a core,
// the first verdict check's, and with no disagreement between the
// reduced instance and the bodies; and so does an engine restored from
// its snapshot before every step (the points are part of it).
func TestRewindPoints(t *testing.T) {
	defer func(n int) { rewindEvery = n }(rewindEvery)
	// Every batch replays here: quarantine in place would skip the
	// replays this test exercises (TestQuarantineInPlaceMatchesReplay
	// holds that one to them).
	defer func(b bool) { inPlaceEnabled = b }(inPlaceEnabled)
	inPlaceEnabled = false
	var rewound, replays, sameCores, alerts int
	for i := range tinyCount(10) {
		h, opts, cfg, rng := generatedCase(t, i, 41, 120, 180, 2+i%4)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rewindEvery = 1 << 30
		want, _ := sweep(t, h, opts)
		rewindEvery = 3 + rng.IntN(20)
		got, o := sweep(t, h, opts)
		rt, _ := sweepRoundTrip(t, h, opts, true)
		if (len(got) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d (%v): alerts %v, check %s", i, cfg.Inject, got, res.Verdict)
		}
		watermarks := func(fs []firing) []int64 {
			var ws []int64
			for _, f := range fs {
				if !f.updated {
					ws = append(ws, f.w)
				}
			}
			return ws
		}
		if !slices.Equal(watermarks(want), watermarks(got)) {
			t.Fatalf("history %d (%v), points every %d: alerts at %v replaying from the start, %v from points",
				i, cfg.Inject, rewindEvery, watermarks(want), watermarks(got))
		}
		if !slices.EqualFunc(got, rt, func(a, b firing) bool { return a.w == b.w && slices.Equal(a.core, b.core) && a.updated == b.updated }) {
			t.Fatalf("history %d: from points %v, restored before every step %v", i, got, rt)
		}
		checkAlertCores(t, h, opts, got)
		for k := range min(len(want), len(got)) {
			if slices.Equal(want[k].core, got[k].core) {
				sameCores++
			}
		}
		alerts += len(got)
		rewound += o.rewound
		replays += len(o.Alerts())
	}
	t.Logf("%d of %d replays from a rewind point; %d of %d alerts with the same core as a replay from the start", rewound, replays, sameCores, alerts)
	if rewound < replays/3 {
		t.Errorf("only %d of %d replays started from a rewind point", rewound, replays)
	}
}
