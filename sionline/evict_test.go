package sionline

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// live streams h through a window whose lateness covers the longest
// transaction (so that the engine evicts as `run` would), accepting in
// start order with a random delay of up to half the lateness, draining
// every batch events, snapshotting and restoring the engine at restart
// (>= 0). It returns the alerts and the engine.
func live(t *testing.T, h *history.History, opts history.Options, rng *rand.Rand, tick int64, batch, restart int) ([]*online.Alert, *Engine) {
	t.Helper()
	wcfg, order := liveOrder(h, opts, rng)
	return feed(t, h, opts, wcfg, arrival{order: order, batch: batch, tick: tick, restart: restart})
}

// liveOrder is live's window and arrival order: start plus a random delay
// below the lateness's slack, so nothing is late.
func liveOrder(h *history.History, opts history.Options, rng *rand.Rand) (window.Config, []int) {
	var longest int64
	for _, x := range h.Txns {
		longest = max(longest, x.End-x.Start)
	}
	delay := longest/2 + 1
	wcfg := window.Config{Partitions: 1, Lateness: longest + delay + 2*opts.Skew + 1, Skew: opts.Skew, InDoubt: opts.InDoubt}
	order := make([]int, len(h.Txns))
	key := make([]int64, len(h.Txns))
	for i := range order {
		order[i] = i
		key[i] = h.Txns[i].Start + rng.Int64N(delay)
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(key[x], key[y]) })
	return wcfg, order
}

// TestEvictionMatchesCheck streams generated read-modify-write streams
// (duplicates, unknown outcomes, list keys, aborts, either initial
// state, with and without injected lost updates, read skews and G1)
// through an evicting engine at strong SI, with the witness's choices
// taken at once (WaitWindow 0: the most evictions, and the resets they
// cause) and with the default wait, snapshotting and restoring midway:
// the first verdict is check's on the whole stream, every alert's core is
// invalid on its own there, and every anomaly-free stream evicts when the
// witness's choices are taken at once. STREAMCHECK_SIONLINE_EVICT=N runs
// N streams (default 8).
func TestEvictionMatchesCheck(t *testing.T) {
	count := 8
	if testing.Short() {
		count = 3
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SIONLINE_EVICT")); err == nil && n > 0 {
		count = n
	}
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	evicted, readmits, diagnosed := 0, 0, 0
	for i := 0; i < count; i++ {
		rng := rand.New(rand.NewPCG(uint64(i), 2828))
		h, cfg := mixedStream(t, i, rng, 150, 250, []float64{0, 0.02, 0.1})
		opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 5_000_000, InitialState: history.InitialEmpty}
		if i%4 >= 2 {
			opts.InitialState = history.InitialUnknown
		}
		WaitWindow = []int{0, 4096}[(i/2)%2]
		// Segments of a few transactions: a failed screen re-admits a
		// suffix of the archive before it brings back the whole.
		segTxns = []int{2, 8, 256}[(i/4)%3]
		name := fmt.Sprintf("%d/lists=%.1f/unknown=%.2f/init=%s/inject=%v/wait=%d/seg=%d", i, cfg.ListRatio, cfg.UnknownRatio, opts.InitialState, cfg.Inject, WaitWindow, segTxns)
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			want, err := incremental.Check(ctx, h, opts, incremental.Config{MaxAnomalies: 1})
			if err != nil {
				t.Fatal(err)
			}
			restart := -1
			if rng.IntN(2) == 0 {
				restart = len(h.Txns) / 2
			}
			fired, eng := live(t, h, opts, rng, 100_000+rng.Int64N(2_000_000), 1+rng.IntN(8), restart)
			if (len(fired) > 0) != (want.Verdict == incremental.Invalid) {
				t.Fatalf("%d alerts, check says %s", len(fired), want.Verdict)
			}
			for _, a := range fired {
				r, err := incremental.Check(ctx, incremental.Project(h, opts, a.Core), opts, incremental.Config{MaxAnomalies: 1})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != incremental.Invalid {
					t.Fatalf("alert core %v is %s on its own", a.Core, r.Verdict)
				}
			}
			st := eng.Stats()
			if WaitWindow == 0 && st.Evicted == 0 && len(fired) == 0 {
				t.Errorf("nothing evicted from %d transactions", len(h.Txns))
			}
			evicted += st.Evicted
			readmits += eng.readmits
			diagnosed += eng.diagnosed
			t.Logf("evicted %d, window %d at the end, resets %d, suffixes re-admitted %d, steps sent to a segment by a read %d", st.Evicted, st.Window, eng.resets, eng.readmits, eng.diagnosed)
		})
	}
	t.Logf("%d streams, %d evictions, %d suffixes re-admitted, %d steps sent to a segment by a read", count, evicted, readmits, diagnosed)
	if count >= 8 && readmits == 0 {
		t.Errorf("no stream re-admitted a suffix of its archive: the rule is not exercised")
	}
	if count >= 8 && diagnosed == 0 {
		t.Errorf("no step was sent to a segment by a read (diagnose.go): the rule is not exercised")
	}
}
