package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
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

// TestSIPruneGenerated is the pruning's differential on generated
// histories of a few thousand transactions with hot keys (duplicate
// values, lists, unknown outcomes, aborts; write skews valid at strong SI
// from gen's --valid-at), where the pruning removes most read-from
// variables: pruned and plain search agree on the verdict, the valid ones
// are valid (the pruning removed no needed candidate), the ones with
// injected anomalies forbidden at strong SI are invalid in both (it
// removed no needed constraint either), and pruning fired. Sizes are
// kept small for `go test ./...`; STREAMCHECK_SIPRUNE_COUNT and
// STREAMCHECK_SIPRUNE_TXNS scale it up.
func TestSIPruneGenerated(t *testing.T) {
	count := envInt("STREAMCHECK_SIPRUNE_COUNT", 4)
	txns := envInt("STREAMCHECK_SIPRUNE_TXNS", 800)
	if testing.Short() {
		count = 2
	}
	for i := 0; i < count; i++ {
		cfg, err := gen.Preset("mixed")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Seed = uint64(i + 1)
		cfg.Txns = txns
		cfg.Keys = 200 + 50*i
		cfg.ValidAt = history.StrongSnapshotIsolation.String()
		injected := i%2 == 1
		if injected {
			cfg.Inject = []string{"lost-update", "G-single", "read-skew", "G-single-realtime"}
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrongSnapshotIsolation
		var verdicts [2]Verdict
		var vars [2]int
		for j, noPrune := range []bool{false, true} {
			res, err := Check(context.Background(), h, opts, Config{NoPrune: noPrune})
			if err != nil {
				t.Fatal(err)
			}
			verdicts[j], vars[j] = res.Verdict, res.Stats.Vars
			if !noPrune && !injected && res.Stats.Pruned == 0 {
				t.Errorf("history %d: nothing pruned", i)
			}
			for _, a := range res.Anomalies {
				if err := oracle.CheckCore(h, opts, a.Core); err != nil {
					t.Errorf("history %d, NoPrune=%v: core %v: %v", i, noPrune, a.Core, err)
				}
			}
		}
		want := Valid
		if injected {
			want = Invalid
		}
		if verdicts[0] != want || verdicts[1] != want {
			t.Fatalf("history %d (injected=%v): pruned %s, plain %s, want %s", i, injected, verdicts[0], verdicts[1], want)
		}
		t.Logf("history %d: %s, %d variables pruned, %d plain", i, verdicts[0], vars[0], vars[1])
	}
}
