package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestTimeWitnessAgainstBruteForce holds timeWitness (docs/SEMANTICS.md §3,
// "T1: a witness from client time") to the brute-force oracle on random
// tiny histories with timestamps, sessions, unknown and aborted
// transactions and repeated values: every order it builds must replay
// under the oracle's own witness check at the strict level (real time,
// session order, every read), and the history must be valid by the
// oracle; it must build some, or the test proves nothing.
// STREAMCHECK_TINY raises the count.
func TestTimeWitnessAgainstBruteForce(t *testing.T) {
	n := tinyCount(400)
	for ci, c := range []tinyCase{
		{level: history.StrictSerializable, indoubt: history.NoInDoubt},
		{level: history.StrictSerializable, skew: 3, indoubt: history.NoInDoubt},
		{level: history.Serializable, indoubt: history.NoInDoubt},
		{level: history.StrongSessionSerializable, skew: 3, indoubt: history.NoInDoubt},
	} {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 27))
			cfg, opts := c.setup()
			cfg.Lists = false
			strict := strictOf(opts)
			built, valid := 0, 0
			for i := 0; i < n; i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				order := timeWitness(context.Background(), h, strict)
				want := oracleValid(t, h, opts)
				if want {
					valid++
				}
				if order == nil {
					continue
				}
				built++
				ids := make([]string, len(order))
				for j, x := range order {
					ids[j] = h.Txns[x].ID
				}
				if err := oracle.ReplayWitness(h, strict, ids); err != nil {
					t.Fatalf("history %d: the time witness does not replay: %v\n%+v", i, err, h.Txns)
				}
				if !want {
					t.Fatalf("history %d: a time witness for a history the oracle finds invalid\n%+v", i, h.Txns)
				}
				res, err := Check(context.Background(), h, opts, Config{})
				if err != nil || res.Verdict != Valid || !res.Stats.ByTime {
					t.Fatalf("history %d: Check: %v %+v", i, err, res)
				}
			}
			t.Logf("%d histories valid by the oracle, %d settled by the time witness", valid, built)
			if built == 0 {
				t.Fatal("no time witness built: the sweep tests nothing")
			}
		})
	}
}

// oracleValid is the brute-force oracle's verdict on h.
func oracleValid(t *testing.T, h *history.History, opts history.Options) bool {
	t.Helper()
	ok, _, err := oracle.Check(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
