package online

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// TestTaintCacheMatchesFull runs generated storms (every preset,
// duplicates, unknown outcomes, 4-9 injected anomalies) through an engine
// that holds the taint of at most two quarantined writers
// (storm_taint.go, SEMANTICS §5 "The taint index as a cache") and one
// that holds all of it, and against check: same first verdict as check,
// every core a minimal violation on its own (checkAlertCores), the same
// alert ids and cores as the full engine, the same ids restored before
// every step. STREAMCHECK_STORM_N sets the number of histories (the long
// sweep: STREAMCHECK_STORM_N=1000).
func TestTaintCacheMatchesFull(t *testing.T) {
	defer func(k, w int) { taintKept, widxEvery = k, w }(taintKept, widxEvery)
	n := 8
	if testing.Short() {
		n = 3
	}
	if s := os.Getenv("STREAMCHECK_STORM_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	alertsOf := func(o *Online) []string {
		var out []string
		for _, a := range o.Alerts() {
			out = append(out, a.ID+" "+strings.Join(slices.Sorted(slices.Values(a.Core)), ","))
		}
		slices.Sort(out)
		return out
	}
	var dropped, retaken, alerts, disagree int
	for i := range n {
		h, opts, cfg, rng := generatedCase(t, i, 131, 80, 120, 4+i%6)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		widxEvery = 1 + rng.IntN(12)
		taintKept = 1 << 30
		_, full := sweep(t, h, opts)
		taintKept = 1
		fired, o := sweep(t, h, opts)
		if (len(fired) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d (%v): alerts %v, check %s", i, cfg.Inject, fired, res.Verdict)
		}
		checkAlertCores(t, h, opts, fired)
		if got, want := alertsOf(o), alertsOf(full); !slices.Equal(got, want) {
			t.Fatalf("history %d (%v): alerts with the taint cached %v, held %v", i, cfg.Inject, got, want)
		}
		_, restored := sweepRoundTrip(t, h, opts, true)
		if got, want := alertsOf(restored), alertsOf(o); !slices.Equal(got, want) {
			t.Fatalf("history %d: alerts %v restored before every step, %v uninterrupted", i, got, want)
		}
		if len(o.taintHeld) > 2+o.unchecked+2*taintKept {
			t.Fatalf("history %d: %d writers' taint held", i, len(o.taintHeld))
		}
		dropped += o.taintDropped
		retaken += o.retaken
		alerts += o.Stats().Alerts
		disagree += o.Stats().Disagreements
	}
	t.Logf("%d histories, %d alerts, %d taint entries dropped, %d taken back, %d disagreements", n, alerts, dropped, retaken, disagree)
	if dropped == 0 {
		t.Errorf("no taint entry was dropped: the cache was not exercised")
	}
}

// TestTaintRetaken: a key written by a quarantined writer and by nobody
// after it is read once the writer's taint was dropped. The read must be
// dropped (the projection), not alerted as a garbage read: the engine
// takes the entry back from the write index and judges again.
func TestTaintRetaken(t *testing.T) {
	defer func(k int) { taintKept = k }(taintKept)
	taintKept = 1
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	step := func(txns ...history.Txn) []*Alert {
		t.Helper()
		o.Release(txns...)
		for _, tx := range txns {
			o.Close(tx.ID)
		}
		as, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	txn := func(id string, s int64, ops ...history.Op) history.Txn {
		return history.Txn{ID: id, Start: s, End: s + 10, HasTime: true, Status: history.Committed, Ops: ops}
	}
	w := func(k, v string) history.Op {
		return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
	}
	r := func(k, v string) history.Op {
		return history.Op{Kind: history.Read, Key: history.Key(k), Value: history.Value(v)}
	}
	// Stale reads, each quarantining its writer W (which also writes a
	// cold key nobody writes again).
	for k := range 8 {
		at := int64(1000 * k)
		x, cold := "x"+strconv.Itoa(k), "cold"+strconv.Itoa(k)
		if as := step(txn("W"+strconv.Itoa(k), at, w(x, "1"), w(cold, "1")), txn("V"+strconv.Itoa(k), at+20, w(x, "2")), txn("R"+strconv.Itoa(k), at+40, r(x, "1"))); len(as) != 1 {
			t.Fatalf("anomaly %d: %d alerts", k, len(as))
		}
	}
	if o.taintDropped == 0 {
		t.Fatalf("no taint dropped (%d held)", len(o.taintHeld))
	}
	if o.taintHolds(0) {
		t.Fatal("W0's taint still held")
	}
	// W0 wrote cold0=1, and its taint is gone: a read of it has no
	// writer in the instance.
	if as := step(txn("C", 100000, r("cold0", "1"))); len(as) != 0 {
		t.Fatalf("alerts on a read of a quarantined writer's value: %v", as[0].Core)
	}
	if st := o.Stats(); st.Disagreements != 0 || st.Healed != 0 || o.retaken == 0 {
		t.Fatalf("disagreements %d, heals %d, taken back %d", st.Disagreements, st.Healed, o.retaken)
	}
	if st := o.Stats(); st.Window != 0 {
		t.Fatalf("window %d after C closed: its read still pins it", st.Window)
	}
}
