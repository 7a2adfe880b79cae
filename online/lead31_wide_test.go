package online

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestOnlineAgreesWide is TestOnlineAgreesUnderSchedules on the
// dimensions that test holds fixed: a restart (snapshot and restore)
// before every step for a third of the histories (half of them the
// daemon's durable checkpoint and restore from a body file), the compact closure off
// for a third (its "is this order decided" answers then come from solver
// probes, so the two must agree with check alike), initial values no
// event wrote when the initial state is unknown, and wider value domains
// and transactions. The first verdict equals check's and every alert is a
// core. $STREAMCHECK_WIDE_SEED draws other histories.
func TestOnlineAgreesWide(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	defer func(v, d bool) { sweepNoClosure, sweepDurable = v, d }(sweepNoClosure, sweepDurable)
	n := tinyCount(300)
	if testing.Short() {
		n = 60
	}
	sweepEvicted = 0
	seed := uint64(31)
	if v, err := strconv.ParseUint(os.Getenv("STREAMCHECK_WIDE_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 3107))
	alerts, restarts, noClosure := 0, 0, 0
	for i := 0; i < n; i++ {
		cfg := oracle.DefaultTinyConfig()
		cfg.MinTxns, cfg.MaxTxns = 5, 12
		cfg.Keys = 1 + rng.IntN(4)
		cfg.Values = 2 + rng.IntN(4)
		cfg.MaxOps = 3 + rng.IntN(3)
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.Skew = []int64{0, 0, 1, 3}[rng.IntN(4)]
		opts.InDoubt = []int64{0, 1, 2, 4, 12, 40, 200}[rng.IntN(7)]
		if rng.IntN(3) == 0 {
			opts.InitialState = history.InitialUnknown
			cfg.InitialValues = rng.IntN(2) == 0
		}
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		roundTrip := rng.IntN(3) == 0
		// Half the restarts are the daemon's, from a body file.
		sweepDurable = roundTrip && rng.IntN(2) == 0
		sweepNoClosure = rng.IntN(3) == 0
		p := []float64{1, 0.5, 0.2, 0.05}[rng.IntN(4)]
		sseed := rng.Uint64()
		desc := fmt.Sprintf("history %d (skew %d, in-doubt %d, initial %v, restarts %v, durable %v, closure off %v, step share %.2f, schedule seed %d)",
			i, opts.Skew, opts.InDoubt, opts.InitialState, roundTrip, sweepDurable, sweepNoClosure, p, sseed)
		alerts += scheduleAgrees(t, h, opts, roundTrip, desc, p, sseed)
		if roundTrip {
			restarts++
		}
		if sweepNoClosure {
			noClosure++
		}
	}
	t.Logf("%d histories (%d with restarts, %d without the closure), %d alerts, %d evictions", n, restarts, noClosure, alerts, sweepEvicted)
	if sweepEvicted == 0 {
		t.Error("no transaction was evicted: the test exercises nothing of eviction")
	}
}
