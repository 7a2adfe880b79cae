package weakonline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// scheduleCount is def, or $STREAMCHECK_TINY when set (the count of the
// serializable engine's schedule differential, so one variable sizes a
// hunt of both).
func scheduleCount(def int) int {
	if s := os.Getenv("STREAMCHECK_TINY"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	if testing.Short() {
		return max(def/10, 5)
	}
	return def
}

// scheduleSeed is $STREAMCHECK_SCHEDULE_SEED, or def.
func scheduleSeed(def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv("STREAMCHECK_SCHEDULE_SEED"), 10, 64); err == nil {
		return v
	}
	return def
}

// scheduleFeed draws an arrival order, a tick, a batch size, a lateness
// and a restart point. With start-order arrival the lateness may be far
// below the history's span, so that a transaction closes (and retirement
// passes run) while later ones are still to come; any other order needs
// the span to be let through.
func scheduleFeed(rng *rand.Rand, h *history.History) feed {
	f := randomFeed(rng, h, []int64{1, 2, 3, 7, 10, 40})
	f.batch = []int{1, 1, 2, 3, 5, 12}[rng.IntN(6)]
	inStart := true
	for k := 1; k < len(f.order); k++ {
		if h.Txns[f.order[k]].Start < h.Txns[f.order[k-1]].Start {
			inStart = false
		}
	}
	if inStart && rng.IntN(2) == 0 {
		f.lateness = []int64{1, 3, 8, 20}[rng.IntN(4)]
	}
	if rng.IntN(4) == 0 {
		f.restart = rng.IntN(len(f.order))
	}
	return f
}

// TestWeakAgreesUnderSchedules is the weak levels' schedule differential
// (the serializable engine's is online's TestOnlineAgreesUnderSchedules):
// histories of 5 to 12 transactions from oracle.RandomTiny (lists,
// duplicates, unknown outcomes, aborts, sessions), the in-doubt horizon
// drawn from {none, 0, 1, 4, 12, 40}, Δ, the initial state (with initial
// values in the store under an unknown one), and a random arrival order,
// tick, batch, lateness and restart. At every level weakonline runs:
//
//   - the first verdict online is the offline back end's under the
//     real-time read rule (W3), which is the brute-force oracle's where
//     the rule changes nothing;
//   - the engine with the fast path and retirement raises the alerts, ids
//     and events of the engine without the fast path and of the keeping
//     engine (F2, R3; the ids because cores are canonical);
//   - every alert's core violates on its own and is minimal (W4).
//
// $STREAMCHECK_TINY sets the count per level, $STREAMCHECK_SCHEDULE_SEED
// draws other histories (a hunt), $STREAMCHECK_SCHEDULE_FROM skips the
// first ones (a hunt split across processes):
//
//	STREAMCHECK_SCHEDULE_SEED=1 STREAMCHECK_TINY=60000 go test ./weakonline -run TestWeakAgreesUnderSchedules -timeout 60m
func TestWeakAgreesUnderSchedules(t *testing.T) {
	seed := scheduleSeed(31)
	n := scheduleCount(400)
	// $STREAMCHECK_SCHEDULE_FROM skips the histories before it (still
	// drawn), so that a hunt can be split across processes.
	from, _ := strconv.Atoi(os.Getenv("STREAMCHECK_SCHEDULE_FROM"))
	for _, lv := range weakLevels {
		if !Levels(lv) {
			t.Fatalf("%s is listed but weakonline does not run it", lv)
		}
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3100+uint64(lv)))
			var invalid, oracleAgree, alerts, skipped, inDoubtClosed, retired int
			// A failure inside the harness (runFeed's own checks) stops
			// the test there: say which history it was.
			var cur string
			defer func() {
				if t.Failed() {
					t.Logf("failed at %s", cur)
				}
			}()
			for i := range n {
				cfg := oracle.DefaultTinyConfig()
				cfg.MinTxns, cfg.MaxTxns, cfg.Values = 5, 12, 4
				cfg.Keys = 2 + rng.IntN(3)
				cfg.Lists = rng.IntN(2) == 0
				opts := history.DefaultOptions()
				opts.Level = lv
				opts.Skew = []int64{0, 0, 2}[rng.IntN(3)]
				opts.InDoubt = []int64{history.NoInDoubt, 0, 1, 4, 12, 40}[rng.IntN(6)]
				if rng.IntN(3) == 0 {
					opts.InitialState = history.InitialUnknown
					cfg.InitialValues = rng.IntN(2) == 0
				}
				h := releaseOrder(oracle.RandomTiny(rng, cfg))
				if h.Validate() != nil {
					continue
				}
				f := scheduleFeed(rng, h)
				if i < from {
					continue // drawn, so that the histories after it are the same
				}
				desc := fmt.Sprintf("%s history %d (skew %d, in-doubt %d, initial %v, tick %d, batch %d, lateness %d, restart %d, order %v)",
					lv, i, opts.Skew, opts.InDoubt, opts.InitialState, f.tick, f.batch, f.lateness, f.restart, f.order)
				cur = desc + "\n" + dump(h)
				want := offline(t, h, opts)
				if want == incremental.Unknown {
					skipped++
					continue
				}
				if rtVacuous(h, opts) {
					ok, _, err := oracle.Check(h, opts)
					if err != nil {
						t.Fatal(err)
					}
					if ok != (want == incremental.Valid) {
						t.Fatalf("%s: oracle says valid=%v, offline %v\n%s", desc, ok, want, dump(h))
					}
					oracleAgree++
				}
				if opts.InDoubt >= 0 {
					for k := range h.Txns {
						if h.Txns[k].Status == history.Unknown {
							inDoubtClosed++
							break
						}
					}
				}
				fired, e := runFeed(t, h, opts, f)
				retired += e.sum.n + e.causalRetired
				if got := len(fired) > 0; got != (want == incremental.Invalid) {
					t.Fatalf("%s: online alerted=%v, offline %v\n%s", desc, got, want, dump(h))
				}
				nf := f
				nf.noFast = true
				slow := must(runFeed(t, h, opts, nf))
				nf.noRetire = true
				full, fe := runFeed(t, h, opts, nf)
				checkCores(t, h, opts, full, fe)
				// The same alerts at the same events with the same ids:
				// the cores are canonical (docs/SEMANTICS.md §5
				// "Canonical cores at the weak levels").
				for k, other := range [][]firing{slow, full} {
					sameAlerts(t, fmt.Sprintf("%s, %s\n%s", desc, []string{"without the fast path", "keeping every transaction"}[k], dump(h)), fired, other)
				}
				if t.Failed() {
					t.Fatalf("%s\n%s", desc, dump(h))
				}
				if want == incremental.Invalid {
					invalid++
				}
				alerts += len(fired)
				if (i+1)%5000 == 0 {
					t.Logf("%s (seed %d): %d histories passed", lv, seed, i+1)
				}
			}
			t.Logf("%s (seed %d): %d histories, %d invalid (%d alerts), %d also against the oracle, %d with an unknown outcome under an in-doubt horizon, %d undecided offline, %d transactions retired",
				lv, seed, n, invalid, alerts, oracleAgree, inDoubtClosed, skipped, retired)
			if invalid == 0 || invalid == n {
				t.Fatalf("%s: %d of %d invalid: the mix tests nothing", lv, invalid, n)
			}
			if inDoubtClosed == 0 {
				t.Fatalf("%s: no unknown outcome under an in-doubt horizon: the horizon is not exercised", lv)
			}
		})
	}
}
