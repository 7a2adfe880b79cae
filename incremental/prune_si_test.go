package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestSIPruneDifferential holds the strong-SI search with its encode-time
// pruning (real-time pruning of read sources and list parses,
// docs/SEMANTICS.md §3 "Pruning the search at strong snapshot
// isolation") to the same search without it (Config.NoPrune) and both to
// the brute-force oracle, on tiny histories with duplicate values, lists,
// unknown outcomes, aborts, sessions and timestamps. It fails if a
// pruned candidate was needed (a valid history judged invalid), and if
// the pruning never fires (the rules would be dead code and the test
// vacuous). The other levels of the family get no pruning: their
// verdicts must not depend on NoPrune either, which the loop checks too.
// STREAMCHECK_TINY=10000 is the long run.
func TestSIPruneDifferential(t *testing.T) {
	n := tinyCount(300)
	for ci, c := range siTinyCases() {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 2424))
			cfg, opts := c.setup()
			cfg.Values = 2 // duplicates everywhere: what the pruning is for
			pruned, valid := 0, 0
			for i := 0; i < n; i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				if want {
					valid++
				}
				for _, noPrune := range []bool{false, true} {
					res, err := Check(context.Background(), h, opts, Config{NoPrune: noPrune, noStricter: true})
					if err != nil {
						t.Fatalf("%v\n%s", err, dump(h))
					}
					if got := res.Verdict == Valid; got != want {
						t.Fatalf("history %d, NoPrune=%v: checker says valid=%v, oracle says %v (pruned %d)\n%s", i, noPrune, got, want, res.Stats.Pruned, dump(h))
					}
					if want {
						if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
							t.Fatalf("history %d, NoPrune=%v: witness %v does not replay: %v\n%s", i, noPrune, res.Witness, err, dump(h))
						}
					}
					if noPrune && res.Stats.Pruned != 0 {
						t.Fatalf("history %d: %d pruned with NoPrune", i, res.Stats.Pruned)
					}
					if !noPrune {
						pruned += res.Stats.Pruned
					}
				}
			}
			if c.level == history.StrongSnapshotIsolation && pruned == 0 {
				t.Fatalf("strong SI: no read source or parse was pruned in %d histories", n)
			}
			if c.level != history.StrongSnapshotIsolation && pruned != 0 {
				t.Fatalf("%s: %d pruned; the pruning's argument holds at strong SI only", c.level, pruned)
			}
			t.Logf("%d valid of %d, %d pruned", valid, n, pruned)
		})
	}
}
