package online

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/incremental"
)

// TestQuarantineInPlaceMatchesReplay is the guard of alert batches and
// quarantine in place (docs/SEMANTICS.md §5 "Alert batches",
// "Quarantine in place"): on generated storms (many injected anomalies
// in a short history, every preset, duplicates and unknown outcomes), the
// engine that quarantines in place and the one that replays after every
// batch raise the same first verdict as check, the same alert ids, and
// every core re-checks as a minimal violation on its own
// (checkAlertCores). A fact left in place that the replay would not have
// kept, or a heal that started from the wrong point, shows as a
// different id set or a core that does not violate.
// STREAMCHECK_STORM_N sets the number of histories (documented in
// BENCHMARKS.md; 8 by default, 3 under -short).
func TestQuarantineInPlaceMatchesReplay(t *testing.T) {
	defer func(b bool, n, w int) { inPlaceEnabled, rewindEvery, widxEvery = b, n, w }(inPlaceEnabled, rewindEvery, widxEvery)
	n := 8
	if testing.Short() {
		n = 3
	}
	if s := os.Getenv("STREAMCHECK_STORM_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	var alerts, inPlace, healed, differ int
	for i := range n {
		h, opts, cfg, rng := generatedCase(t, i, 97, 80, 120, 4+i%6)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rewindEvery = 4 + rng.IntN(30)
		// Runs of a few releases: every confirmation reads the write
		// index's runs, not only its pending entries (writeidx.go).
		widxEvery = 1 + rng.IntN(12)
		ids := func(o *Online) []string {
			var out []string
			for _, a := range o.Alerts() {
				out = append(out, a.ID)
			}
			slices.Sort(out)
			return out
		}
		inPlaceEnabled = false
		wantFired, replayed := sweep(t, h, opts)
		inPlaceEnabled = true
		fired, o := sweep(t, h, opts)
		if (len(fired) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d (%v): alerts %v, check %s", i, cfg.Inject, fired, res.Verdict)
		}
		checkAlertCores(t, h, opts, fired)
		if len(fired) > 0 && len(wantFired) > 0 && fired[0].w != wantFired[0].w {
			t.Fatalf("history %d (%v): first alert at %d in place, %d replaying", i, cfg.Inject, fired[0].w, wantFired[0].w)
		}
		if got, want := ids(o), ids(replayed); !slices.Equal(got, want) {
			// Allowed only where anomalies share transactions (§5 "Alert
			// batches"); counted, and the cores were checked above.
			differ++
			t.Logf("history %d (%v): ids in place %v, replaying %v", i, cfg.Inject, got, want)
		}
		_, restored := sweepRoundTrip(t, h, opts, true)
		if got, want := ids(restored), ids(o); !slices.Equal(got, want) {
			t.Fatalf("history %d: ids %v restored before every step, %v uninterrupted", i, got, want)
		}
		st := o.Stats()
		alerts += st.Alerts
		inPlace += st.InPlace
		healed += st.Healed
	}
	t.Logf("%d histories, %d alerts, %d batches quarantined in place, %d heals, %d id sets differ", n, alerts, inPlace, healed, differ)
	if inPlace == 0 {
		t.Errorf("no batch was quarantined in place: the rule was not exercised")
	}
	if differ > n/4 {
		t.Errorf("%d of %d histories alert different ids in place", differ, n)
	}
}
