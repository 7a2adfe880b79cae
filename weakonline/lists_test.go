package weakonline

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestTinyListsFastPath holds the fast path's parses of list reads
// (docs/SEMANTICS.md §5 "Lists in the fast path") to the exact check on
// tiny histories made mostly of list ops: one or two keys, each a list
// with probability one third (histories without a list op are skipped),
// more transactions than the general sweep, stale reads and mutations
// that make reads show old, forked or garbled versions. Each history in
// a random arrival order, with the fast path and without (the same
// alerts at the same events), and its first verdict is the offline back
// end's under the same rule (W3). The empty and the unknown initial
// state alike.
func TestTinyListsFastPath(t *testing.T) {
	for _, lv := range weakLevels {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(lv), 2661))
			cfg := oracle.DefaultTinyConfig()
			cfg.MinTxns, cfg.MaxTxns, cfg.Keys, cfg.MaxOps = 3, 7, 1+rng.IntN(2), 5
			n := count(300)
			ran, invalid, vouched, lost := 0, 0, 0, 0
			for i := 0; ran < n && i < 50*n; i++ {
				h := releaseOrder(oracle.RandomTiny(rng, cfg))
				if !hasLists(h) {
					continue
				}
				ran++
				opts := history.DefaultOptions()
				opts.Level = lv
				opts.Skew = int64(rng.IntN(2))
				if rng.IntN(2) == 0 {
					opts.InitialState = history.InitialUnknown
				}
				want := offline(t, h, opts)
				if want == incremental.Unknown {
					continue
				}
				f := randomFeed(rng, h, []int64{1, 3, 10, 40})
				f.noRetire = true
				fired, e := runFeed(t, h, opts, f)
				f.noFast = true
				what := fmt.Sprintf("history %d (init %v, skew %d, tick %d, batch %d, order %v)\n%s", i, opts.InitialState, opts.Skew, f.tick, f.batch, f.order, dump(h))
				sameAlerts(t, what, fired, must(runFeed(t, h, opts, f)))
				if got := len(fired) > 0; got != (want == incremental.Invalid) {
					t.Fatalf("%s: online alerted=%v, offline %v", what, got, want)
				}
				if want == incremental.Invalid {
					invalid++
				}
				if on, why, skipped := e.FastPath(); on {
					vouched += skipped
				} else if why != "" {
					lost++
				}
			}
			t.Logf("%s: %d histories with lists, %d invalid; the fast path vouched for %d steps, was given up in %d", lv, ran, invalid, vouched, lost)
			if ran < n || invalid == 0 || invalid == ran || vouched == 0 {
				t.Fatalf("%s: %d histories, %d invalid, %d steps vouched for: the mix tests nothing", lv, ran, invalid, vouched)
			}
		})
	}
}

func hasLists(h *history.History) bool {
	for i := range h.Txns {
		if hasListOp(&h.Txns[i]) {
			return true
		}
	}
	return false
}

// TestListReadOfDeadLetter: a list read showing an element a dead letter
// appended is dropped by the projection (the dead letter is a possible
// writer outside the instance, §3 for lists), and by the fast path too.
// Before, the fast path found no parse for it, the exact check found the
// instance valid, the rebuilt fast path was in the same trouble and was
// given up: every later step checked the whole instance (gen's default
// stream at lateness 10ms dead-letters a few late events).
func TestListReadOfDeadLetter(t *testing.T) {
	h, err := history.ParseCompact(`D[0,10] append x 1 (session d)
A[0,10] append x 2 (session a)
R[20,30] r x [1 2] (session r)
S[40,50] r x [1 2] (session s)`)
	if err != nil {
		t.Fatal(err)
	}
	for _, lv := range weakLevels {
		for _, init := range []history.InitialState{history.InitialEmpty, history.InitialUnknown} {
			opts := history.DefaultOptions()
			opts.Level, opts.InitialState = lv, init
			e, err := New(opts, Config{Stream: "test"})
			if err != nil {
				t.Fatal(err)
			}
			e.AddUnchecked(h.Txns[0])
			for _, tx := range h.Txns[1:] {
				e.Release(tx)
				e.Close(tx.ID)
				if a, err := e.Step(context.Background()); err != nil || len(a) > 0 {
					t.Fatalf("%s %v: step after %s: %d alerts, %v", lv, init, tx.ID, len(a), err)
				}
			}
			if on, lost, skipped := e.FastPath(); !on || e.checks > 0 || skipped != 3 {
				t.Fatalf("%s %v: fast path on=%v (lost %q), %d checks, %d steps without one; want it on, no check", lv, init, on, lost, e.checks, skipped)
			}
		}
	}
}
