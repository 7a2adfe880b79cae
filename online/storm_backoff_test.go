package online

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/solver"
)

// TestIsolatedBackoffEndsOnSession is the history that breaks an isolated
// group judged by its keys alone (docs/SEMANTICS.md §5 "Isolated groups
// stay backed off"). A [0,25] and B [20,30] blind-write x, concurrent,
// and nothing else touches x: their order is undecided, and A is backed
// off. Then F [5,6], after A in A's session, reads y's initial version
// that Y [-10,15] overwrote: A so→ F rw→ Y rt→ B decides A before B
// (B overwrites A, which may then leave), through no key of A's. A rule
// that kept A's back-off on for ever because no arrival touched x keeps
// A in the window; F's arrival in A's session must end it.
func TestIsolatedBackoffEndsOnSession(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	step := func() {
		t.Helper()
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Filler: transactions on keys of their own, one session each, so
	// that releases pass (the back-off's wait counts releases).
	next := int64(100)
	filler := func(n int) {
		for range n {
			id := fmt.Sprintf("fill%d", next)
			o.Release(stormTxn(id, id, next, next+1, wOp("f"+id, "1")))
			o.Close(id)
			next += 2
		}
	}
	o.Release(stormTxn("Y", "sy", -10, 15, wOp("y", "1")))
	o.Release(stormTxn("A", "sa", 0, 25, wOp("x", "1")))
	o.Release(stormTxn("B", "sb", 20, 30, wOp("x", "2")))
	o.Close("Y", "A", "B")
	filler(10)
	step()
	i := o.index["A"]
	if _, held := o.ev.Backoff[i]; !held || len(o.inWindow("A")) == 0 {
		t.Fatalf("A not backed off in the window (backed off %v, window %v): the history does not test the rule", held, o.inWindow("A", "B"))
	}
	// Past the first wait, A is an isolated group with B, and stays
	// backed off without a probe.
	filler(backoffFirst + 10)
	step()
	if len(o.inWindow("A")) == 0 {
		t.Fatal("A left with its order against B undecided")
	}
	if !isolatedNow(t, o, "A") {
		t.Fatal("A and B are not judged an isolated group")
	}
	// F joins A's session: the group is no longer isolated.
	o.Release(stormTxn("F", "sa", 5, 6, rOp("y", string(history.Null))))
	o.Close("F")
	if isolatedNow(t, o, "A") {
		t.Fatal("A is judged isolated with F, after it in its session, in the instance")
	}
	filler(2 * backoffMax)
	for range 3 {
		step()
		filler(10)
	}
	if in := o.inWindow("A"); len(in) > 0 {
		t.Fatalf("A still in the window (back-off %+v) after F decided A before B", o.ev.Backoff[i])
	}
	if st := o.Stats(); st.Alerts != 0 || st.Disagreements != 0 {
		t.Fatalf("%d alerts, %d disagreements on a consistent history", st.Alerts, st.Disagreements)
	}
}

// isolatedNow builds the instance a step would and asks isolatedGroup of
// id's member, as if its back-off had begun at the last release.
func isolatedNow(t *testing.T, o *Online, id string) bool {
	t.Helper()
	ctx := context.Background()
	r := o.build()
	if r.solve(ctx) != solver.Sat {
		t.Fatal("the instance is not satisfiable")
	}
	s := newEvictStep(ctx, o, r)
	for tx := range r.h.Txns {
		if r.pos[tx] == o.index[id] {
			return s.isolatedGroup(int32(tx), o.log.len())
		}
	}
	t.Fatalf("%s is not in the instance", id)
	return false
}

// stormStream is a storm as the issue's: blind writes and reads with
// injected anomalies of every kind, under an unknown initial state on
// every other history.
func stormStream(t *testing.T, i int) (*history.History, history.Options) {
	t.Helper()
	cfg, err := gen.Preset("blindw-rw")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.Keys, cfg.Seed = 1500, 12, 60, uint64(i+1)
	cfg.InjectRate = 0.05
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 60_000_000_000
	if i%2 == 0 {
		opts.InitialState = history.InitialUnknown
	}
	return h, opts
}

// TestStormBackoffsAsBefore holds the list rule's back-off, the isolated
// groups' back-off, the region memo, the regions left out of the last
// check and the batch ended at its regions' cores to the engine without
// them, on
// generated storms: the same first verdict as check, the same alert ids
// and cores, every core a minimal violation (checkAlertCores), no
// disagreement with the bodies; and the rules must act (a list back-off
// given, an isolated group held, a region answered by the memo).
// STREAMCHECK_STORM_N sets the number of histories (4, 2 under -short).
func TestStormBackoffsAsBefore(t *testing.T) {
	defer func(a, b, c, d, e bool) {
		listBackoff, isolatedBackoff, stormMemo, stormSeparate, stormEndOnRegionCore = a, b, c, d, e
	}(listBackoff, isolatedBackoff, stormMemo, stormSeparate, stormEndOnRegionCore)
	n := 4
	if testing.Short() {
		n = 2
	}
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_STORM_N")); err == nil {
		n = v
	}
	hits := stormMemoHits.Load()
	for i := range n {
		h, opts := stormStream(t, i)
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		listBackoff, isolatedBackoff, stormMemo, stormSeparate, stormEndOnRegionCore = false, false, false, false, false
		want, wo := sweep(t, h, opts)
		listBackoff, isolatedBackoff, stormMemo, stormSeparate, stormEndOnRegionCore = true, true, true, true, true
		got, o := sweep(t, h, opts)
		if (len(got) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d: %d alerts, check %s", i, len(got), res.Verdict)
		}
		checkAlertCores(t, h, opts, got)
		key := func(fs []firing) []string {
			var out []string
			for _, f := range fs {
				out = append(out, fmt.Sprint(f.typ, f.core, f.updated))
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(key(got), key(want)) {
			t.Fatalf("history %d: alerts with the rules\n%v\nwithout\n%v", i, key(got), key(want))
		}
		ids := func(o *Online) []string {
			var out []string
			for _, a := range o.Alerts() {
				out = append(out, a.ID)
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(ids(o), ids(wo)) {
			t.Fatalf("history %d: ids with the rules %v, without %v", i, ids(o), ids(wo))
		}
		if d := o.Stats().Disagreements; d != 0 {
			t.Fatalf("history %d: %d disagreements", i, d)
		}
		t.Logf("history %d (initial %v): %d alerts, window %d", i, opts.InitialState, len(got), o.Stats().Window)
	}
	if stormMemoHits.Load() == hits {
		t.Fatal("the memo answered no region: the test compares nothing")
	}
}
