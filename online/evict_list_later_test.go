package online

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// Tests of the list rule's pass over the appenders real time puts after
// the fold (evict_list_later.go, docs/SEMANTICS.md §5 "Lists: appenders
// that real time puts after the fold").

// listLaterHistory: with a skew of 5, B follows A by session order only
// (it starts 1 after A's end, within 2Δ), and C, of another session,
// starts after B but overlaps A. R's read puts C first: C A B. A may not
// fold before C is ordered; the naive cover stops at B, A's first
// successor by the level's order, and never looks at C.
const listLaterHistory = `A[0,10] append l 1 (session s)
B[11,20] append l 2 (session s)
C[12,21] append l 3 (session u)
R[100,110] r l [3 1 2] (session v)`

func listLaterOpts() history.Options {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.Skew = 5
	opts.InDoubt = 1_000
	return opts
}

// TestListLaterNaiveFirstWrong: the history is valid (check); the
// engine with the rule (and with every appender asked) agrees, alerts
// nothing and its reduced instance never disagrees with the bodies; the
// naive cover folds A ahead of C, and the reduced instance then finds a
// violation the bodies do not confirm.
func TestListLaterNaiveFirstWrong(t *testing.T) {
	h, err := history.ParseCompact(listLaterHistory)
	if err != nil {
		t.Fatal(err)
	}
	opts := listLaterOpts()
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Valid {
		t.Fatalf("check: %s, want VALID", res.Verdict)
	}
	defer func() { listLaterMode = listLaterRule }()
	for _, mode := range []int{listLaterRule, listLaterEvery, listLaterNaiveFirst} {
		listLaterMode = mode
		alerts, disagree := sweepQuiet(t, h, opts)
		wrong := alerts > 0 || disagree > 0
		if wrong != (mode == listLaterNaiveFirst) {
			t.Errorf("mode %d: %d alerts, %d disagreements", mode, alerts, disagree)
		}
	}
}

// sweepQuiet is sweep's schedule (a step at every start and closing)
// that counts the alerts and the disagreements instead of failing: the
// naive mode is expected to disagree.
func sweepQuiet(t *testing.T, h *history.History, opts history.Options) (alerts, disagree int) {
	t.Helper()
	quietDisagree = true
	defer func() { quietDisagree = false }()
	o, alerts, err := sweepSteps(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return alerts, int(o.Stats().Disagreements)
}

// sweepSteps runs sweep's schedule on a new evicting engine and returns
// it, the alerts raised, and the first step error (the run stops there).
func sweepSteps(h *history.History, opts history.Options) (o *Online, alerts int, err error) {
	o = NewOnlineConfig(opts, OnlineConfig{Evict: true})
	txns := slices.Clone(h.Txns)
	sort.SliceStable(txns, func(i, j int) bool { return txns[i].Start < txns[j].Start })
	var instants []int64
	for _, tx := range txns {
		instants = append(instants, tx.Start+1, opts.EffectiveEnd(&tx)+2*opts.Skew+1)
	}
	slices.Sort(instants)
	step := func() error {
		as, err := o.Step(context.Background())
		alerts += len(as)
		return err
	}
	next, closed := 0, map[string]bool{}
	for _, w := range instants {
		for next < len(txns) && txns[next].Start < w {
			o.Release(txns[next])
			next++
		}
		for i := range next {
			tx := &txns[i]
			if e := opts.EffectiveEnd(tx); !closed[tx.ID] && e != math.MaxInt64 && e+opts.Skew < w-opts.Skew {
				closed[tx.ID] = true
				o.Close(tx.ID)
			}
		}
		if err := step(); err != nil {
			return o, alerts, err
		}
	}
	o.CloseAll()
	return o, alerts, step()
}

// TestListLaterMatchesCheck: bursts inside one step (the mixed preset with
// lists, unknowns in doubt past the stream's end, an unknown initial state
// and injected anomalies in some) and list streams with a clock skew,
// stepped at every start and closing, give check's verdict with the rule,
// and no disagreement of the reduced instance with the bodies; the rule
// must have stopped scans early on them.
func TestListLaterMatchesCheck(t *testing.T) {
	stops := 0
	listLaterStops = func() { stops++ }
	defer func() { listLaterStops = nil }()
	types := gen.InjectTypes()
	for i := range tinyCount(16) {
		rng := rand.New(rand.NewPCG(uint64(i), 0x1a7e))
		var h *history.History
		var opts history.Options
		var alerts, disagree int
		if i%2 == 0 {
			cfg, _ := gen.Preset("mixed")
			cfg.Seed = uint64(i + 1)
			cfg.Txns = 150 + rng.IntN(300)
			cfg.Keys = 8 + rng.IntN(40)
			cfg.ListRatio = 0.3 + 0.4*rng.Float64()
			cfg.UnknownRatio = 0.03
			cfg.Latency = 8000
			if i%4 == 0 {
				cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
			}
			var err error
			if h, _, err = gen.Generate(cfg); err != nil {
				t.Fatal(err)
			}
			opts = burstOptions()
			alerts, disagree = burstQuiet(t, h, opts)
		} else {
			h, opts, _, _ = listCase(t, i, 0x1a7e, 60, 200)
			opts.Skew = int64(rng.IntN(300)) * 1000
			alerts, disagree = sweepQuiet(t, h, opts)
		}
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		if disagree > 0 || (alerts > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("stream %d: %d alerts, %d disagreements, check %s", i, alerts, disagree, res.Verdict)
		}
	}
	if stops == 0 {
		t.Fatal("the rule never stopped a scan: these streams do not exercise it")
	}
	t.Logf("%d scans stopped early", stops)
}

// burstQuiet is run on a burst that one tick holds: every transaction
// released at once, the decided ones closed, one step; then the end of
// input (every transaction closed) and the final step.
func burstQuiet(t *testing.T, h *history.History, opts history.Options) (alerts, disagree int) {
	t.Helper()
	quietDisagree = true
	defer func() { quietDisagree = false }()
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	step := func() {
		as, err := o.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		alerts += len(as)
	}
	o.Release(byStart(h)...)
	for _, x := range h.Txns {
		if x.Status != history.Unknown {
			o.Close(x.ID)
		}
	}
	step()
	o.CloseAll()
	step()
	return alerts, int(o.Stats().Disagreements)
}
