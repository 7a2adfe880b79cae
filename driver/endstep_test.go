package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// TestEndInputStepsToTheLastStart is D4: after EndInput the drain steps
// no tick above the one over the greatest start accepted, even with
// unknown outcomes whose in-doubt horizon reaches far past the stream;
// Final gives the closings left, in one step. A checkpoint taken between
// EndInput and the drain restores the same schedule (EndTick is in
// State). Mutations seen to fail it: the drain left as it was (every
// closing tick stepped), and Ended left out of State's JSON (the
// restored driver steps the closings tick by tick).
func TestEndInputStepsToTheLastStart(t *testing.T) {
	finals := 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var txns []history.Txn
		val := 0
		for i := range 80 {
			start := int64(rng.IntN(2000))
			x := history.Txn{ID: fmt.Sprintf("t%d", i), Session: fmt.Sprintf("s%d", i%4), HasSession: true,
				Start: start, End: start + 1 + int64(rng.IntN(40)), HasTime: true, Status: history.Committed}
			if rng.IntN(5) == 0 {
				x.Status = history.Unknown
			}
			for range 1 + rng.IntN(3) {
				val++
				x.Ops = append(x.Ops, history.Op{Kind: history.Write, Key: history.Key(fmt.Sprintf("k%d", rng.IntN(5))), Value: history.IntValue(int64(val))})
			}
			txns = append(txns, x)
		}
		slices.SortStableFunc(txns, func(a, b history.Txn) int { return int(a.End - b.End) })
		var traces []string
		for _, restart := range []bool{false, true} {
			tr, nf := endStepRun(t, txns, restart)
			traces = append(traces, tr)
			finals += nf
		}
		if traces[0] != traces[1] {
			t.Fatalf("seed %d: restarted after EndInput, the drain steps differently:\n%s\nwithout the restart:\n%s", seed, traces[1], traces[0])
		}
	}
	if finals == 0 {
		t.Fatal("no closing was left to Final: the streams do not exercise D4")
	}
}

// endStepRun feeds txns to a driver with a long in-doubt horizon and
// returns the trace of the end of input (the drain and Final) and how
// many closings Final gave; with restart the driver is rebuilt from a
// checkpoint right after EndInput.
func endStepRun(t *testing.T, txns []history.Txn, restart bool) (string, int) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialEmpty
	opts.InDoubt = 100_000 // fifty times the stream's span
	cfg := Config{Tick: 25, Lateness: 60}
	win, err := window.New(window.Config{Partitions: 1, Lateness: cfg.Lateness, InDoubt: opts.InDoubt})
	if err != nil {
		t.Fatal(err)
	}
	d := New(cfg, win, online.NewOnlineConfig(opts, online.OnlineConfig{Evict: true}), NewState(1))
	ctx := context.Background()
	maxStart := int64(-1)
	for i, x := range txns {
		if d.Accept(0, int64(i), x, 0) == nil {
			maxStart = max(maxStart, x.Start)
		}
		for d.HasReady() {
			if _, err := d.Ready(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.EndInput()
	if restart {
		d = restarted(t, d, cfg, opts, 1)
	}
	var b strings.Builder
	for d.HasReady() {
		rd, err := d.Ready(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Tick > d.TickAbove(maxStart) {
			t.Fatalf("the end of input stepped at %d, past the tick %d over the last start", rd.Tick, d.TickAbove(maxStart))
		}
		printReady(&b, &rd)
	}
	rd, err := d.Final(ctx)
	if err != nil {
		t.Fatal(err)
	}
	printReady(&b, &rd)
	return b.String(), len(rd.Closed)
}
