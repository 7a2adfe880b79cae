package online

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestGhostIndexMatchesRebuild drives generated streams of every kind
// that changes GhostKeys (read-modify-write registers, duplicates, list
// keys and tail ghosts, unknown outcomes and their skeletons, an unknown
// initial state, injected anomalies and the replays from rewind points
// they cause, a snapshot restored before every step) with the engine's
// self-checks on (TestMain): after every step the ghost index equals a
// rebuild from GhostKeys, and every build picks exactly the ghosts the
// pass over every member picked. The verdict is check's. A maintenance
// site skipped (a hook in dropGhostKey, r5Remove or becomeGhost) fails
// it; so does a keptCover range that misses a covered ghost.
func TestGhostIndexMatchesRebuild(t *testing.T) {
	if !selfCheck.Load() {
		t.Skip("STREAMCHECK_SELFCHECK=0")
	}
	defer func(n int) { rewindEvery = n }(rewindEvery)
	p0, a0 := ghostBuildStats.picked.Load(), ghostBuildStats.all.Load()
	for i := range tinyCount(16) {
		rng := rand.New(rand.NewPCG(uint64(i), 113))
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 80 + rng.IntN(200)
		cfg.Keys = 6 + rng.IntN(60)
		cfg.Sessions, cfg.Concurrency = 6, 4
		switch i % 4 {
		case 1:
			cfg.ListRatio, cfg.MaxListLen = 0.3, 2+rng.IntN(6)
		case 2:
			cfg.UnknownRatio = 0.03
		case 3:
			cfg.DupValueRatio = 0.3
		}
		if i%3 == 1 {
			types := gen.InjectTypes()
			cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.InDoubt = 4_000_000
		if i%2 == 1 {
			opts.InitialState = history.InitialUnknown
		}
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		rewindEvery = 1 << 30
		if i%3 == 2 {
			rewindEvery = 3 + rng.IntN(20)
		}
		got, _ := sweepRoundTrip(t, h, opts, i%5 == 4)
		if (len(got) > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("stream %d (%v): alerts %v, check %s\n%s", i, cfg.Inject, got, res.Verdict, dump(h))
		}
	}
	picked, all := ghostBuildStats.picked.Load()-p0, ghostBuildStats.all.Load()-a0
	t.Logf("builds picked %d of %d ghosts", picked, all)
	if picked >= all {
		t.Errorf("builds picked every ghost (%d of %d): the streams do not exercise the index", picked, all)
	}
}
