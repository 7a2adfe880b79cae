package online

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// recycleShapes are the generated streams TestRecycleStepByStep runs:
// every shape of issue 22's table.
func recycleShapes() []recycleShape {
	type shape = recycleShape
	return []shape{
		{"rmw", "", func(c *gen.Config) { c.ListRatio, c.UnknownRatio, c.DupValueRatio = 0, 0, 0 }, history.InitialEmpty},
		{"duplicates", "", func(c *gen.Config) { c.ListRatio, c.DupValueRatio = 0, 0.3 }, history.InitialEmpty},
		{"unknowns", "", func(c *gen.Config) { c.ListRatio, c.UnknownRatio = 0.1, 0.05 }, history.InitialEmpty},
		{"lists", "", func(c *gen.Config) { c.ListRatio = 0.4 }, history.InitialEmpty},
		{"long", "", func(c *gen.Config) { c.Latency, c.Concurrency = 20_000_000, 24 }, history.InitialEmpty},
		{"unknown-init", "", func(c *gen.Config) { c.UnknownRatio = 0.03 }, history.InitialUnknown},
		{"storm", "", func(c *gen.Config) { c.InjectRate = 0.02 }, history.InitialUnknown},
		{"storm-lists", "", func(c *gen.Config) { c.InjectRate = 0.05; c.ListRatio = 0.3 }, history.InitialEmpty},
	}
}

// recycleShape is a generated stream: a gen preset ("": mixed) and what
// changes in it, under an initial state.
type recycleShape struct {
	name, preset string
	cfg          func(c *gen.Config)
	init         history.InitialState
}

// stream is the shape's stream for seed (1,200 transactions over 16
// sessions, more keys for later seeds) in start order, with the options
// the step-by-step twins check it under.
func (sh recycleShape) stream(t *testing.T, seed int) (history.Options, []history.Txn) {
	t.Helper()
	preset := sh.preset
	if preset == "" {
		preset = "mixed"
	}
	cfg, err := gen.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed = uint64(seed + 1)
	cfg.Txns, cfg.Sessions, cfg.OpsPerTxn, cfg.Keys = 1200, 16, 6, 60+40*seed
	sh.cfg(&cfg)
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 5_000_000
	opts.InitialState = sh.init
	return opts, byStart(h)
}

// recycleN is the number of seeds per shape: STREAMCHECK_RECYCLE_N, 3 by
// default, 1 under -short.
func recycleN() int {
	n := 3
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_RECYCLE_N")); err == nil && v > 0 {
		n = v
	}
	if testing.Short() {
		n = 1
	}
	return n
}

// TestRecycleStepByStep holds the recycled arrays of a step (docs/SEMANTICS.md
// §5 "A step's arrays recycled") to the fresh build they replace: two
// evicting engines, one recycling the last step's encoder and solver into
// the next step's and one building every step's on fresh arrays, are
// fed the same stream of every shape and stepped together; after every
// step their alerts (ids, classes, cores), their reduced-instance state
// (members, ghosts, kept orders, decisions, initial values: hashEv) and
// their counters (checks, conflicts, constraints, pruned) must be equal.
// Seeds per shape: STREAMCHECK_RECYCLE_N (default 3).
func TestRecycleStepByStep(t *testing.T) {
	for _, sh := range recycleShapes() {
		for seed := range recycleN() {
			t.Run(fmt.Sprintf("%s/%d", sh.name, seed), func(t *testing.T) {
				opts, txns := sh.stream(t, seed)
				recycleCompare(t, opts, txns, 40+20*seed)
			})
		}
	}
}

// recycleCompare steps a recycling and a fresh engine on txns, every
// every releases and once more after closing all, and fails at the first
// step they differ. It returns the alerts.
func recycleCompare(t *testing.T, opts history.Options, txns []history.Txn, every int) int {
	t.Helper()
	ctx := context.Background()
	rec := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	fresh := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	fresh.noRecycle = true
	stepNo, alerts, recycled := 0, 0, 0
	step := func() {
		stepNo++
		if rec.droppedEnc != nil {
			recycled++
		}
		ga, err := rec.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wa, err := fresh.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		alerts += len(ga)
		if g, w := alertKeys(ga), alertKeys(wa); !slices.Equal(g, w) {
			t.Fatalf("step %d: alerts recycled %v, fresh %v", stepNo, g, w)
		}
		if g, w := engineState(rec), engineState(fresh); g != w {
			t.Fatalf("step %d: state recycled %s, fresh %s", stepNo, g, w)
		}
	}
	// Both engines are fed alike: release and close on rec, mirrored.
	feedAlike(opts, txns, func(i int) {
		if (i+1)%every == 0 {
			step()
		}
	}, rec, fresh)
	rec.CloseAll()
	fresh.CloseAll()
	step()
	if recycled == 0 {
		t.Fatalf("%d steps, none on a recycled encoder", stepNo)
	}
	t.Logf("%d steps, %d on a recycled encoder, %d alerts", stepNo, recycled, alerts)
	return alerts
}

func alertKeys(as []*Alert) []string {
	var out []string
	for _, a := range as {
		out = append(out, fmt.Sprintf("%s %s %v", a.ID, a.Anomaly.Class, a.Core))
	}
	return out
}

// engineState is a digest of what an engine carries to its next step.
func engineState(o *Online) string {
	hs := sha256.New()
	hashEv(hs, &o.ev)
	fmt.Fprintf(hs, "o %d %d %d %d %d\n", o.checks, o.conflicts, o.constraints, o.pruned, len(o.pending))
	return fmt.Sprintf("%x (checks %d, conflicts %d, constraints %d, members %d)", hs.Sum(nil)[:8], o.checks, o.conflicts, o.constraints, len(o.ev.memberList()))
}
