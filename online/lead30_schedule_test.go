package online

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// scheduleAgrees sweeps h with a coarser step schedule (sweepWith: a step
// at each instant with probability p, drawn from sseed) and fails unless
// the first verdict is check's and every alert is a core; it returns the
// number of alerts. Eviction decides at step boundaries, so a rule that
// is exact when every instant is a step may lose an order when several
// releases, closes and horizon ends fall into one step; the daemon's tick
// makes such batches the normal case.
func scheduleAgrees(t *testing.T, h *history.History, opts history.Options, roundTrip bool, desc string, p float64, sseed uint64) int {
	t.Helper()
	srng := rand.New(rand.NewPCG(sseed, 7))
	res, err := incremental.Check(context.Background(), h, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	fired, _ := sweepWith(t, h, opts, roundTrip, desc, func() bool { return srng.Float64() < p })
	if (len(fired) > 0) != (res.Verdict == incremental.Invalid) {
		t.Fatalf("%s: online alerts %v, offline %s\n%s", desc, fired, res.Verdict, dump(h))
	}
	checkAlertCores(t, h, opts, fired)
	if t.Failed() {
		t.Fatalf("%s\n%s", desc, dump(h))
	}
	return len(fired)
}

// TestOnlineAgreesUnderSchedules: TestOnlineAgreesWithOffline on larger
// tiny histories (up to 12 transactions, so that eviction has members to
// remove), with the in-doubt horizon, Δ and the initial state drawn per
// history and a random step schedule (every instant, about half of them,
// or about one in five). The first verdict equals check's and every alert
// is a core.
func TestOnlineAgreesUnderSchedules(t *testing.T) {
	defer SetSelfCheck(SetSelfCheck(true))
	n := tinyCount(400)
	sweepEvicted = 0
	// $STREAMCHECK_SCHEDULE_SEED draws other histories (a longer hunt).
	seed := uint64(30)
	if v, err := strconv.ParseUint(os.Getenv("STREAMCHECK_SCHEDULE_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 2611))
	cfg := oracle.DefaultTinyConfig()
	cfg.MinTxns, cfg.MaxTxns, cfg.Values = 5, 12, 4
	alerts := 0
	for i := 0; i < n; i++ {
		cfg.Keys = 2 + rng.IntN(3)
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		opts := history.DefaultOptions()
		opts.Level = history.StrictSerializable
		opts.Skew = []int64{0, 0, 2}[rng.IntN(3)]
		opts.InDoubt = []int64{0, 1, 4, 12, 40}[rng.IntN(5)]
		if rng.IntN(3) == 0 {
			opts.InitialState = history.InitialUnknown
		}
		p := []float64{1, 0.5, 0.2}[rng.IntN(3)]
		seed := rng.Uint64()
		desc := fmt.Sprintf("history %d (skew %d, in-doubt %d, initial %v, step share %.1f, schedule seed %d)", i, opts.Skew, opts.InDoubt, opts.InitialState, p, seed)
		alerts += scheduleAgrees(t, h, opts, false, desc, p, seed)
	}
	t.Logf("%d histories, %d alerts, %d evictions", n, alerts, sweepEvicted)
	if sweepEvicted == 0 {
		t.Error("no transaction was evicted: the test exercises nothing of eviction")
	}
}
