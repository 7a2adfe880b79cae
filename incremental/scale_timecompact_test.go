package incremental

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// timeCompactOf fills a TimeCompact from h, numbering keys and values as
// the native decoder does (one number per distinct text, null 0, keys
// and values in one space); facts[i] are txn i's (nil: none).
func timeCompactOf(h *history.History, facts []history.Facts) *TimeCompact {
	c := NewTimeCompact(len(h.Txns))
	texts := map[history.Value]int32{history.Null: 0}
	id := func(v history.Value) int32 {
		x, ok := texts[v]
		if !ok {
			x = int32(len(texts))
			texts[v] = x
		}
		return x
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		var keys, vals []int32
		for _, op := range t.Ops {
			keys = append(keys, id(op.Key))
			vals = append(vals, id(op.Value))
		}
		var f history.Facts
		if facts != nil {
			f = facts[i]
		}
		c.AddIDs(t, f, keys, vals)
	}
	return c
}

// TestTimeCompactAgainstCheck is the differential test of the compact
// path at the serializable levels (docs/SEMANTICS.md §3 "T2"): on tiny
// random histories (repeated values, unknown outcomes, aborts, sessions,
// skew) and generated ones, TimeCompact.Check answers exactly when Check
// answers by the witness from client time, with the same result and
// witness order, except where the form refused while reading (a list on
// a transaction the witness leaves out: the full path then decides).
func TestTimeCompactAgainstCheck(t *testing.T) {
	ctx := context.Background()
	var answered, total int
	compare := func(name string, h *history.History, opts history.Options) {
		t.Helper()
		if h.Validate() != nil {
			return
		}
		total++
		want, err := Check(ctx, h, opts, Config{})
		if err != nil {
			// An input error of Check (a real-time level without times):
			// the form must refuse it.
			if res, _ := timeCompactOf(h, nil).Check(ctx, opts, Config{}); res != nil {
				t.Fatalf("%s: the compact form answers where Check fails: %v", name, err)
			}
			return
		}
		tc := timeCompactOf(h, nil)
		got, why := tc.Check(ctx, opts, Config{})
		byTime := want.Stats.ByTime
		if got == nil && tc.Why() != "" {
			return // refused while reading: the full path decides
		}
		if (got != nil) != byTime {
			t.Fatalf("%s at %s: compact %v (%s), Check by time %v\n%+v", name, opts.Level, got != nil, why, byTime, h.Txns)
		}
		if got == nil {
			return
		}
		answered++
		if got.Verdict != want.Verdict || !slices.Equal(got.Witness, want.Witness) || got.Stats.Txns != want.Stats.Txns ||
			got.Stats.ByStricter != want.Stats.ByStricter || got.Stats.StricterLevel != want.Stats.StricterLevel {
			t.Fatalf("%s at %s: compact %+v\nCheck %+v", name, opts.Level, got, want)
		}
	}
	n := tinyCount(300)
	for ci, c := range []tinyCase{
		{level: history.StrictSerializable, indoubt: history.NoInDoubt},
		{level: history.StrictSerializable, skew: 3, indoubt: history.NoInDoubt},
		{level: history.StrictSerializable, skew: 2, indoubt: 5},
		{level: history.Serializable, indoubt: history.NoInDoubt},
		{level: history.StrongSessionSerializable, skew: 3, indoubt: history.NoInDoubt},
	} {
		rng := rand.New(rand.NewPCG(uint64(ci), 1927))
		cfg, opts := c.setup()
		cfg.Lists = ci%2 == 1
		for i := 0; i < n; i++ {
			compare(c.String(), oracle.RandomTiny(rng, cfg), opts)
		}
	}
	for seed := uint64(1); seed <= 12; seed++ {
		g := gen.Config{Txns: 1000 + 300*int(seed), Keys: 20 * int(seed), Seed: seed, Sessions: 8, OpsPerTxn: 1 + int(seed%4),
			AbortRatio: 0.05, UnknownRatio: 0.02 * float64(seed%2), DupValueRatio: 0.05 * float64(seed%3), Concurrency: 6}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
			opts := history.DefaultOptions()
			opts.Level = lv
			compare("gen", h, opts)
		}
	}
	t.Logf("%d of %d histories answered on the compact form", answered, total)
	if answered == 0 {
		t.Fatal("no history answered: the test proves nothing")
	}
}

// TestTimeCompactRefuses holds the form's refusals: on a history its
// witness settles, each input error History.Validate reports and each
// input that is another path's to check (database facts, a list, a
// transaction without client time) is refused, here on an added aborted
// transaction, which the witness itself would leave out.
func TestTimeCompactRefuses(t *testing.T) {
	ctx := context.Background()
	h, _, err := gen.Generate(gen.Config{Txns: 200, Keys: 40, Seed: 7, Sessions: 4, OpsPerTxn: 3, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	if res, why := timeCompactOf(h, nil).Check(ctx, opts, Config{}); res == nil {
		t.Fatalf("the unchanged history is not settled: %s", why)
	}
	// The victim: one more transaction, aborted, writing a key of its own.
	last := h.Txns[len(h.Txns)-1]
	extra := history.Txn{ID: "extra", Session: last.Session, HasSession: true, Start: last.End + 1, End: last.End + 2, HasTime: true,
		Status: history.Aborted, Ops: []history.Op{{Kind: history.Write, Key: "z", Value: "1"}}}
	victim := len(h.Txns)
	for _, c := range []struct {
		name   string
		mutate func(h *history.History, f []history.Facts)
	}{
		{"duplicate id", func(h *history.History, f []history.Facts) { h.Txns[victim].ID = h.Txns[3].ID }},
		{"end before start", func(h *history.History, f []history.Facts) { h.Txns[victim].End = h.Txns[victim].Start - 1 }},
		{"no client time", func(h *history.History, f []history.Facts) {
			h.Txns[victim].HasTime, h.Txns[victim].Start, h.Txns[victim].End = false, 0, 0
		}},
		{"facts", func(h *history.History, f []history.Facts) { f[victim].Has = history.HasStartTS }},
		{"list", func(h *history.History, f []history.Facts) {
			h.Txns[victim].Ops = append(h.Txns[victim].Ops, history.Op{Kind: history.Append, Key: "l", Value: "1"})
		}},
	} {
		m := &history.History{Txns: append(slices.Clone(h.Txns), extra)}
		m.Txns[victim].Ops = slices.Clone(extra.Ops)
		facts := make([]history.Facts, len(m.Txns))
		if res, why := timeCompactOf(m, facts).Check(ctx, opts, Config{}); res == nil {
			t.Fatalf("%s: the history with the extra transaction is not settled: %s", c.name, why)
		}
		c.mutate(m, facts)
		tc := timeCompactOf(m, facts)
		if res, _ := tc.Check(ctx, opts, Config{}); res != nil || tc.Why() == "" {
			t.Fatalf("%s: not refused (why %q)", c.name, tc.Why())
		}
	}
}
