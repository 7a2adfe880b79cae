package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestSessionFirstAgainstBruteForce: at serializable and snapshot
// isolation without timestamps, check first tries the strong session
// variant (sessionFirst) and keeps its witness only when it is satisfied.
// On random tiny histories with sessions and no client time, with the
// pre-check on, the verdict is the oracle's at the level asked, every
// witness replays at it, and every core passes its core check. The sweep
// must see histories the session level settles and histories valid at the
// level but not at its session variant (so that a pre-check whose failure
// decided the verdict would show).
func TestSessionFirstAgainstBruteForce(t *testing.T) {
	n := tinyCount(300)
	for _, c := range []struct{ level, session history.Level }{
		{history.Serializable, history.StrongSessionSerializable},
		{history.SnapshotIsolation, history.StrongSessionSnapshotIsolation},
	} {
		t.Run(c.level.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(c.level), 18))
			cfg := oracle.DefaultTinyConfig()
			cfg.Timestamps, cfg.Sessions, cfg.Unknowns, cfg.Aborts = false, true, true, true
			opts := history.DefaultOptions()
			opts.Level, opts.InitialState = c.level, history.InitialEmpty
			sopts := opts
			sopts.Level = c.session
			var byStricter, onlyLevel int
			for i := 0; i < n; i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 2})
				if err != nil {
					t.Fatalf("%v\n%s", err, dump(h))
				}
				if got := res.Verdict == Valid; got != want {
					t.Fatalf("history %d: checker says valid=%v, oracle says %v\n%s", i, got, want, dump(h))
				}
				if !want {
					for _, a := range res.Anomalies {
						if err := oracle.CheckCore(h, opts, a.Core); err != nil {
							t.Fatalf("history %d: core %v: %v\n%s", i, a.Core, err, dump(h))
						}
					}
					continue
				}
				if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
					t.Fatalf("history %d: witness %v (by stricter %v) does not replay: %v\n%s", i, res.Witness, res.Stats.ByStricter, err, dump(h))
				}
				if res.Stats.ByStricter {
					byStricter++
				}
				if sv, _, err := oracle.Check(h, sopts); err == nil && !sv {
					onlyLevel++
				}
			}
			t.Logf("valid by the session level first: %d; valid at %s only: %d", byStricter, c.level, onlyLevel)
			if byStricter == 0 || onlyLevel == 0 {
				t.Errorf("the sweep misses a case: %d settled by %s, %d valid only at %s", byStricter, c.session, onlyLevel, c.level)
			}
		})
	}
}
