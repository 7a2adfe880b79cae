package online

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// TestGhostGrowth feeds the file $STREAMCHECK_GROWTH_FILE (a recorded or
// generated stream, in start order) through the evicting engine at run's
// defaults (strict serializable, unknown initial state, a one-minute
// in-doubt horizon), a step every 800 transactions, and logs every
// $STREAMCHECK_GROWTH_EVERY transactions (10,000 by default) the window,
// the ghosts, the key-less ghosts (skeletons) and the kept orders: the
// curve of what the instance holds besides the window (§5 "Skeletons
// behind an anchor"). Skipped without the variable.
//
//	STREAMCHECK_GROWTH_FILE=rmw100k.jsonl go test ./online -run TestGhostGrowth -v -timeout 1h
func TestGhostGrowth(t *testing.T) {
	growthRun(t, "STREAMCHECK_GROWTH_FILE", history.InitialUnknown, nil)
}

// growthRun is the growth measurement: the file $env through the
// evicting engine (strict serializable, initial state init, a one-minute
// in-doubt horizon), a step every 800 transactions, and every
// $STREAMCHECK_GROWTH_EVERY transactions (10,000 by default) a line of
// what the instance holds, then more's lines. Skipped without $env.
func growthRun(t *testing.T, env string, init history.InitialState, more func(o *Online)) {
	path := os.Getenv(env)
	if path == "" {
		t.Skip(env + " not set")
	}
	every := 10000
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_GROWTH_EVERY")); err == nil && n > 0 {
		every = n
	}
	h, _, err := ingest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = init
	opts.InDoubt = int64(time.Minute)
	txns := byStart(h)
	h = nil
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	start := time.Now()
	step := func() {
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	log := func(n int) {
		s := o.Stats()
		st := &o.ev
		skeletons := 0
		for _, gk := range st.GhostKeys {
			if len(gk) == 0 {
				skeletons++
			}
		}
		t.Logf("txns %d: window %d, ghosts %d, skeletons %d, tail %d, kept %d, alerts %d, disagreements %d (%.0f s)",
			n, s.Window, s.Ghosts, skeletons, len(st.Tail), len(st.Kept), s.Alerts, s.Disagreements, time.Since(start).Seconds())
		if more != nil {
			more(o)
		}
	}
	feedInStartOrder(o, opts, txns, func(i int) {
		if (i+1)%800 == 0 {
			step()
		}
		if (i+1)%every == 0 {
			log(i + 1)
		}
	})
	step()
	log(len(txns))
}
