package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// siTinyCases are the snapshot-isolation family's settings: every level
// of the family at Δ = 0 and Δ > 0, an in-doubt horizon, and the unknown
// initial state.
func siTinyCases() []tinyCase {
	var cases []tinyCase
	for _, d := range history.Levels() {
		if !d.Level.BeginCommit() {
			continue
		}
		for _, skew := range []int64{0, 3} {
			cases = append(cases, tinyCase{level: d.Level, skew: skew, indoubt: history.NoInDoubt})
		}
		cases = append(cases,
			tinyCase{level: d.Level, skew: 2, indoubt: 5},
			tinyCase{level: d.Level, indoubt: history.NoInDoubt, initial: history.InitialUnknown})
	}
	return cases
}

// TestSIAgainstBruteForce is issue 24's acceptance 1 on the SAT side: on
// random tiny histories (duplicates, unknown outcomes, aborted and
// intermediate writers, lists, sessions, timestamps) the BC-polygraph
// encoding agrees with the oracle's begin-commit enumeration at every
// level of the family; every witness schedule replays and every first
// core passes the oracle's core check (a violation on its own, none
// without any one member). STREAMCHECK_TINY=10000 is the acceptance run.
func TestSIAgainstBruteForce(t *testing.T) {
	n := tinyCount(150)
	for ci, c := range siTinyCases() {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 24))
			cfg, opts := c.setup()
			var valid, invalid int
			for i := 0; i < n; i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				// Pruning on and off (NoPrune every third history): the
				// real-time pruning at strong SI (perf_prune.go, applied
				// in encode_si.go) must not change a verdict.
				conf := Config{MaxAnomalies: 3, noStricter: i%2 == 1, NoPrune: i%3 == 2}
				res, err := Check(context.Background(), h, opts, conf)
				if err != nil {
					t.Fatalf("%v\n%s", err, dump(h))
				}
				got := res.Verdict == Valid
				if got != want {
					t.Fatalf("history %d: checker says valid=%v, oracle says %v\n%s", i, got, want, dump(h))
				}
				if got {
					valid++
					// A witness of the stricter pre-check is a schedule of a
					// stronger level of the family, and so one of this level.
					if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
						t.Fatalf("history %d: witness %v (by stricter %v) does not replay: %v\n%s", i, res.Witness, res.Stats.ByStricter, err, dump(h))
					}
					continue
				}
				invalid++
				if len(res.Anomalies) == 0 {
					t.Fatalf("history %d: invalid with no anomaly\n%s", i, dump(h))
				}
				for _, a := range res.Anomalies {
					if err := oracle.CheckCore(h, opts, a.Core); err != nil {
						t.Fatalf("history %d: core %v: %v\n%s", i, a.Core, err, dump(h))
					}
				}
			}
			t.Logf("%d histories: %d valid, %d invalid", valid+invalid, valid, invalid)
		})
	}
}
