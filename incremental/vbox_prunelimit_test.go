package incremental

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestPruneSearchOffOnlyWhereSettled holds vboxPruneLimit
// (docs/SEMANTICS.md §3, "V1c replaces the search at insertion") to its
// argument: the solver's search at edge insertion is off exactly where
// the encoder runs V1 and V1c (e.vbox != nil; vboxSettle asks the same
// question of every edge of the finished instance), and on everywhere
// else (pl-2+ and the snapshot levels keep it). It encodes tiny and generated histories at every level of the SAT
// back end under each encoding configuration and checks, per instance,
// that the search ran (PruneLemmas may be 0 on an instance that needs
// none) only without V1, and that somewhere in the sweep it did prune
// without V1 and V1c did settle with V1 (the sweep exercises both sides).
func TestPruneSearchOffOnlyWhereSettled(t *testing.T) {
	var hs []*history.History
	rng := rand.New(rand.NewPCG(27, 27))
	for len(hs) < tinyCount(60) {
		h, err := history.ParseCompact(randomVboxText(rng))
		if err == nil && h.Validate() == nil {
			hs = append(hs, h)
		}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		cfg, err := gen.Preset(gen.PresetNames()[0])
		if err != nil {
			t.Fatal(err)
		}
		cfg.Seed, cfg.Txns, cfg.Keys = seed, 200, 20
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if seed == 3 {
			// Without timestamps, where V1 runs at the serializable levels.
			for i := range h.Txns {
				h.Txns[i].Start, h.Txns[i].End = 0, 0
			}
		}
		hs = append(hs, h)
	}
	configs := []encodeConfig{
		{dropUnobserved: true},
		{dropUnobserved: true, noPrune: true},
		{dropUnobserved: true, guarded: true},
		{dropUnobserved: true, record: true},
		{dropUnobserved: true, readsToCome: true},
		{},
	}
	var searchedOff, settled, prunedOn int
	for _, info := range history.Levels() {
		if info.Backend != history.BackendSAT {
			continue
		}
		for _, h := range hs {
			opts := history.DefaultOptions()
			opts.Level = info.Level
			p := prepare(h, opts)
			for ci, cfg := range configs {
				off := vboxPruneLimit(p, cfg) == -1
				e := newEncoder(p, cfg)
				e.encode()
				// pl-2+ and the snapshot levels keep the search
				// (vboxPruneLimit).
				keeps := info.Level == history.PL2Plus || info.Level.BeginCommit()
				if on := e.vbox != nil && !keeps; off != on {
					t.Fatalf("%s, config %d: search at insertion off=%v but V1 on=%v", info.Level, ci, off, on)
				}
				st := e.s.Stats()
				switch {
				case off && st.PruneLemmas > 0:
					t.Fatalf("%s, config %d: %d lemmas at insertion with the search off", info.Level, ci, st.PruneLemmas)
				case off:
					searchedOff++
					if e.vbox.settled > 0 {
						settled++
					}
				case st.PruneLemmas > 0:
					prunedOn++
				}
			}
		}
	}
	if searchedOff == 0 || settled == 0 || prunedOn == 0 {
		t.Fatalf("the sweep does not exercise both sides: %d instances with the search off (%d settled), %d pruned at insertion", searchedOff, settled, prunedOn)
	}
}
