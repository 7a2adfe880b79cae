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

// TestPinnedCap: with a cap the evicting engine never holds more pinned
// transactions than the cap after a step, counts what it set aside, raises
// no alert on valid histories (setting aside only removes constraints),
// and every alert it raises on invalid ones is a core of the history (the
// oracle's core check, on histories small enough for it).
func TestPinnedCap(t *testing.T) {
	const maxPinned = 3
	var capped, checked int
	for i := range tinyCount(30) {
		rng := rand.New(rand.NewPCG(uint64(i), 41))
		cfg, _ := gen.Preset([]string{"blindw-rw", "mixed"}[i%2])
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 30 + rng.IntN(60)
		cfg.Keys = 4 + rng.IntN(10)
		cfg.Sessions = 6
		cfg.Concurrency = 4
		if i%3 == 0 {
			types := gen.InjectTypes()
			cfg.Inject = []string{types[rng.IntN(len(types))]}
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true, MaxPinned: maxPinned})
		txns := append([]history.Txn(nil), h.Txns...)
		sort.SliceStable(txns, func(a, b int) bool { return txns[a].Start < txns[b].Start })
		var alerts []*Alert
		for n, tx := range txns {
			o.Release(tx)
			for _, u := range txns[:n] {
				if e := opts.EffectiveEnd(&u); e != math.MaxInt64 && e < tx.Start {
					o.Close(u.ID)
				}
			}
			as, err := o.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			alerts = append(alerts, as...)
			if st := o.Stats(); st.Pinned > maxPinned && st.Pending == 0 {
				t.Fatalf("history %d: %d pinned after a step, cap %d", i, st.Pinned, maxPinned)
			}
		}
		o.CloseAll()
		as, err := o.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		alerts = append(alerts, as...)
		if len(cfg.Inject) == 0 && len(alerts) > 0 {
			t.Fatalf("history %d (valid): alert %v with the cap", i, alerts[0].Core)
		}
		for _, a := range alerts {
			checkCoreByCheck(t, h, opts, a.Core)
			checked++
		}
		capped += o.Stats().Capped
	}
	if capped == 0 {
		t.Fatal("the cap never set anything aside: the test does not exercise it")
	}
	t.Logf("%d transactions set aside by a cap of %d; %d alert cores re-checked", capped, maxPinned, checked)
}

// checkCoreByCheck: the core's projection violates the level and every
// one-transaction deletion of it satisfies it (subset-minimal).
func checkCoreByCheck(t *testing.T, h *history.History, opts history.Options, core []string) {
	t.Helper()
	verdict := func(ids []string) incremental.Verdict {
		in := make([]bool, len(h.Txns))
		for i := range h.Txns {
			in[i] = slices.Contains(ids, h.Txns[i].ID)
		}
		res, err := incremental.Check(context.Background(), incremental.Prepare(h, opts).Project(in), opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return res.Verdict
	}
	if v := verdict(core); v != incremental.Invalid {
		t.Fatalf("core %v alone: %s", core, v)
	}
	for i := range core {
		rest := slices.Delete(slices.Clone(core), i, i+1)
		if v := verdict(rest); v != incremental.Valid {
			t.Fatalf("core %v without %s: %s, so it is not minimal", core, core[i], v)
		}
	}
}
