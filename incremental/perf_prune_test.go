package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/solver"
)

// TestPruneAgreesWithUnpruned is the differential test of the fast path's
// encode-time pruning (read-from candidates and list parses ruled out by
// real time, unknown writers ordered by their forced readers, unread
// unknown transactions left out): on random tiny histories the pruned and
// the unpruned instance must agree on satisfiability. It is cheaper than
// the brute-force oracle, so it runs more histories
// (STREAMCHECK_TINY scales it like TestAgainstBruteForce).
func TestPruneAgreesWithUnpruned(t *testing.T) {
	var cases []tinyCase
	for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
		for _, skew := range []int64{0, 3} {
			cases = append(cases, tinyCase{level: lv, skew: skew, indoubt: history.NoInDoubt})
		}
	}
	cases = append(cases,
		tinyCase{level: history.StrictSerializable, skew: 0, indoubt: 0},
		tinyCase{level: history.StrictSerializable, skew: 2, indoubt: 5},
		tinyCase{level: history.StrictSerializable, skew: 0, indoubt: history.NoInDoubt, initial: history.InitialUnknown},
	)
	n := 3 * tinyCount(300)
	for ci, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 11))
			cfg, opts := c.setup()
			var sat, unsat int
			for i := 0; i < n; i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				p := prepare(h, opts)
				solve := func(cfg encodeConfig) solver.Status {
					e := newEncoder(p, cfg)
					e.encode()
					return e.solve(context.Background())
				}
				got, want := solve(encodeConfig{}), solve(encodeConfig{noPrune: true})
				if got != want {
					t.Fatalf("history %d: pruned %v, unpruned %v\n%s", i, got, want, dump(h))
				}
				if got == solver.Sat {
					sat++
				} else {
					unsat++
				}
			}
			t.Logf("%d sat, %d unsat", sat, unsat)
		})
	}
}
