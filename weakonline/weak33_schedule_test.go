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

// TestWeakAgreesUnderSchedulesInParts is TestWeakAgreesUnderSchedules
// on instances of several components: each history is the union of two
// or three random tiny histories on keys and sessions of their own, their
// times shifted so that they interleave, so that one exact check often
// meets violations in more than one component and the canonical cores
// are searched component by component (docs/SEMANTICS.md §5 "Canonical
// cores searched in their component"). At every level: the first
// verdict online is the offline back end's; the engine with the fast
// path and retirement raises the alerts, ids and events of the engine
// without the fast path and of the keeping engine; every core violates
// on its own and is minimal. $STREAMCHECK_TINY sets the count per level,
// $STREAMCHECK_SCHEDULE_SEED draws other histories, and
// $STREAMCHECK_SCHEDULE_FROM skips the first ones:
//
//	STREAMCHECK_SCHEDULE_SEED=3 STREAMCHECK_TINY=20000 go test ./weakonline -run TestWeakAgreesUnderSchedulesInParts -timeout 60m
func TestWeakAgreesUnderSchedulesInParts(t *testing.T) {
	seed := scheduleSeed(33)
	n := scheduleCount(200)
	from, _ := strconv.Atoi(os.Getenv("STREAMCHECK_SCHEDULE_FROM"))
	for _, lv := range weakLevels {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3300+uint64(lv)))
			var invalid, alerts, several, skipped int
			var cur string
			defer func() {
				if t.Failed() {
					t.Logf("failed at %s", cur)
				}
			}()
			for i := range n {
				cfg := oracle.DefaultTinyConfig()
				cfg.MinTxns, cfg.MaxTxns, cfg.Values = 3, 6, 4
				cfg.Keys = 2 + rng.IntN(2)
				cfg.Lists = rng.IntN(2) == 0
				opts := history.DefaultOptions()
				opts.Level = lv
				opts.Skew = []int64{0, 0, 2}[rng.IntN(3)]
				opts.InDoubt = []int64{history.NoInDoubt, 0, 1, 4, 12, 40}[rng.IntN(6)]
				if rng.IntN(3) == 0 {
					opts.InitialState = history.InitialUnknown
					cfg.InitialValues = rng.IntN(2) == 0
				}
				h := &history.History{}
				for part := range 2 + rng.IntN(2) {
					p := oracle.RandomTiny(rng, cfg)
					pre := fmt.Sprintf("p%d.", part)
					shift := int64(rng.IntN(30))
					for _, tx := range p.Txns {
						tx.ID = pre + tx.ID
						if tx.HasSession {
							tx.Session = pre + tx.Session
						}
						tx.Start += shift
						tx.End += shift
						ops := make([]history.Op, len(tx.Ops))
						for j, op := range tx.Ops {
							op.Key = history.Key(pre) + op.Key
							ops[j] = op
						}
						tx.Ops = ops
						h.Txns = append(h.Txns, tx)
					}
				}
				h = releaseOrder(h)
				if h.Validate() != nil {
					continue
				}
				f := scheduleFeed(rng, h)
				if i < from {
					continue
				}
				desc := fmt.Sprintf("%s history %d (skew %d, in-doubt %d, initial %v, tick %d, batch %d, lateness %d, restart %d, order %v)",
					lv, i, opts.Skew, opts.InDoubt, opts.InitialState, f.tick, f.batch, f.lateness, f.restart, f.order)
				cur = desc + "\n" + dump(h)
				want := offline(t, h, opts)
				if want == incremental.Unknown {
					skipped++
					continue
				}
				fired, _ := runFeed(t, h, opts, f)
				if got := len(fired) > 0; got != (want == incremental.Invalid) {
					t.Fatalf("%s: online alerted=%v, offline %v\n%s", desc, got, want, dump(h))
				}
				nf := f
				nf.noFast = true
				slow := must(runFeed(t, h, opts, nf))
				nf.noRetire = true
				full, fe := runFeed(t, h, opts, nf)
				checkCores(t, h, opts, full, fe)
				for k, other := range [][]firing{slow, full} {
					sameAlerts(t, fmt.Sprintf("%s, %s\n%s", desc, []string{"without the fast path", "keeping every transaction"}[k], dump(h)), fired, other)
				}
				if t.Failed() {
					t.Fatalf("%s\n%s", desc, dump(h))
				}
				if want == incremental.Invalid {
					invalid++
				}
				if len(fired) > 1 {
					several++
				}
				alerts += len(fired)
				if (i+1)%5000 == 0 {
					t.Logf("%s (seed %d): %d histories passed", lv, seed, i+1)
				}
			}
			t.Logf("%s (seed %d): %d histories, %d invalid (%d alerts; %d with more than one), %d undecided offline",
				lv, seed, n, invalid, alerts, several, skipped)
			if invalid == 0 || invalid == n {
				t.Fatalf("%s: %d of %d invalid: the mix tests nothing", lv, invalid, n)
			}
		})
	}
}
