package online

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestStormRegionsUnionViolates is the history that breaks the naive
// region rule (docs/SEMANTICS.md §5 "Alert batches by region"): each key
// region is consistent on its own, and only their union violates. At
// strong session serializability without time, sessions A (T1 then T3)
// and B (T4 then T2) tie the regions {T1, T2} (key x) and {T3, T4}
// (key y): T2 wr→ T1 so→ T3 wr→ T4 so→ T2. A search that trusted the
// regions to be independent (checked each, largest included, and
// stopped) finds nothing; the search must end with the check of all
// that is left, and find the four-transaction core.
func TestStormRegionsUnionViolates(t *testing.T) {
	h := &history.History{Txns: []history.Txn{
		{ID: "T1", Session: "A", HasSession: true, Status: history.Committed, Ops: []history.Op{{Kind: history.Read, Key: "x", Value: "1"}}},
		{ID: "T3", Session: "A", HasSession: true, Status: history.Committed, Ops: []history.Op{{Kind: history.Write, Key: "y", Value: "1"}}},
		{ID: "T4", Session: "B", HasSession: true, Status: history.Committed, Ops: []history.Op{{Kind: history.Read, Key: "y", Value: "1"}}},
		{ID: "T2", Session: "B", HasSession: true, Status: history.Committed, Ops: []history.Op{{Kind: history.Write, Key: "x", Value: "1"}}},
	}}
	opts := history.DefaultOptions()
	opts.Level = history.StrongSessionSerializable
	if regions := keyRegions(h); len(regions) != 2 {
		t.Fatalf("regions %v: want two", regions)
	}
	for _, on := range []bool{false, true} {
		func() {
			defer func(b bool) { stormRegions = b }(stormRegions)
			stormRegions = on
			o := &Online{opts: opts}
			ans, err := o.batchCores(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			if len(ans) != 1 || !slices.Equal(ans[0].Core, []string{"T1", "T3", "T4", "T2"}) {
				t.Fatalf("regions %v: cores %v, want one core of all four", on, ans)
			}
		}()
	}
}

// TestStormRegionsAsWhole holds the search by region to the search on
// the whole alert history it replaces (stormRegions off, the naive model):
// on generated storms (every preset, duplicates, unknown outcomes, an
// unknown initial state on every other history), both engines raise the
// same first verdict as check and the same alert ids, and every core
// re-checks as a minimal violation on its own (checkAlertCores). Ids may
// differ only where anomalies share transactions (§5 "Alert batches");
// such histories are counted and bounded. STREAMCHECK_STORM_N sets the
// number of histories (8 by default, 3 under -short).
func TestStormRegionsAsWhole(t *testing.T) {
	defer func(b bool) { stormRegions = b }(stormRegions)
	n := 8
	if testing.Short() {
		n = 3
	}
	if s := os.Getenv("STREAMCHECK_STORM_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	ids := func(o *Online) []string {
		var out []string
		for _, a := range o.Alerts() {
			out = append(out, a.ID)
		}
		slices.Sort(out)
		return out
	}
	var alerts, differ int
	before := stormRegionCores.Load()
	for i := range n {
		h, opts, cfg, _ := generatedCase(t, i, 2222, 80, 120, 4+i%6)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		stormRegions = false
		wantFired, whole := sweep(t, h, opts)
		stormRegions = true
		fired, o := sweep(t, h, opts)
		if (len(fired) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d (%v): alerts %v, check %s", i, cfg.Inject, fired, res.Verdict)
		}
		checkAlertCores(t, h, opts, fired)
		if len(fired) > 0 && len(wantFired) > 0 && fired[0].w != wantFired[0].w {
			t.Fatalf("history %d (%v): first alert at %d by region, %d on the whole", i, cfg.Inject, fired[0].w, wantFired[0].w)
		}
		if got, want := ids(o), ids(whole); !slices.Equal(got, want) {
			differ++
			t.Logf("history %d (%v): ids by region %v, on the whole %v", i, cfg.Inject, got, want)
		}
		alerts += o.Stats().Alerts
	}
	inRegions := stormRegionCores.Load() - before
	t.Logf("%d histories, %d alerts, %d id sets differ, %d cores found in a region", n, alerts, differ, inRegions)
	if alerts == 0 || inRegions == 0 {
		t.Fatalf("%d alerts, %d cores found in a region: the test compares nothing", alerts, inRegions)
	}
	if differ > n/4 {
		t.Errorf("%d of %d histories alert different ids by region", differ, n)
	}
}
