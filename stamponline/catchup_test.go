package stamponline

import (
	"cmp"
	"context"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// TestCatchUpInParts is the fallback's replay in parts (doc.go E6,
// driver D5; docs/SEMANTICS.md §10 "The fallback in parts"): on generated
// streams whose injected anomalies make the stamps stop vouching part way,
// at every level the engine serves, a run whose catch-up goes one logged
// step per driver step, with arrivals between its parts (a drain does one
// Ready at a time) and with a checkpoint and a restart at every step
// boundary, raises exactly the alerts of the run that replays the whole
// log in one step: the same ids with the same cores, the same call log,
// fast-path outcome and counters. The sweep must have caught up in more
// than one part and checkpointed mid-way.
func TestCatchUpInParts(t *testing.T) {
	n := sweep(t, 3)
	for _, lv := range []history.Level{history.Serializable, history.StrictSerializable, history.SnapshotIsolation, history.StrongSessionSnapshotIsolation} {
		t.Run(lv.String(), func(t *testing.T) {
			parts, midway := 0, 0
			for i := 0; i < n; i++ {
				h, _, err := gen.GenerateStamps(gen.Config{Txns: 200, Seed: uint64(100 + i), Inject: []string{"lost-update", "write-skew"}, UnknownRatio: 0})
				if err != nil {
					t.Fatal(err)
				}
				opts := history.DefaultOptions()
				opts.Level = lv
				opts.InitialState, opts.InDoubt = history.InitialEmpty, 5_000_000
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				f := randomFeed(rng, h)
				f.late = true
				f.tick *= 1_000_000
				if f.lateness >= 0 {
					f.lateness *= 1_000_000
				}
				f.catchSteps = 1 << 30
				want, ref := runStream(t, h, opts, f)
				if _, why := ref.FastPath(); why == "" {
					continue // never fell back: nothing to catch up
				}
				f.catchSteps, f.readies = 1, 1
				got, eng := runStream(t, h, opts, f)
				parts += eng.catches
				sameRun(t, i, "in parts", want, got, ref, eng)
				crashed, ceng, st := runCrashing(t, h, opts, f, rng, -1)
				midway += st.catching
				if w, g := alertIDSet(want), alertIDSet(crashed); !slices.Equal(w, g) {
					t.Fatalf("stream %d restarted at every boundary (%+v): %d alert ids, in one step %d", i, st, len(g), len(w))
				}
				if !reflect.DeepEqual(logCalls(t, ref), logCalls(t, ceng)) {
					t.Fatalf("stream %d restarted at every boundary: the call log differs", i)
				}
			}
			t.Logf("%d catch-up parts between ticks, %d checkpoints mid-way", parts, midway)
			if parts == 0 || midway == 0 {
				t.Errorf("the sweep never caught up in parts (%d) or never checkpointed mid-way (%d)", parts, midway)
			}
		})
	}
}

// sameRun fails unless two runs of one stream raised the same alerts (ids
// and cores) and ended alike.
func sameRun(t *testing.T, i int, what string, want, got []*online.Alert, ref, eng *Engine) {
	t.Helper()
	byID := func(as []*online.Alert) []*online.Alert {
		as = slices.Clone(as)
		slices.SortStableFunc(as, func(a, b *online.Alert) int { return cmp.Compare(a.ID, b.ID) })
		return as
	}
	w, g := byID(want), byID(got)
	if len(w) != len(g) {
		t.Fatalf("stream %d %s: %d alerts, in one step %d", i, what, len(g), len(w))
	}
	for k := range w {
		if w[k].ID != g[k].ID || !slices.Equal(w[k].Core, g[k].Core) || w[k].Class != g[k].Class {
			t.Fatalf("stream %d %s: alert %s %v %s, in one step %s %v %s", i, what, g[k].ID, g[k].Core, g[k].Class, w[k].ID, w[k].Core, w[k].Class)
		}
	}
	wr, wf := ref.FastPath()
	gr, gf := eng.FastPath()
	if wr != gr || wf != gf {
		t.Fatalf("stream %d %s: fast path %d %q, in one step %d %q", i, what, gr, gf, wr, wf)
	}
	if ws, gs := ref.Stats(), eng.Stats(); ws != gs {
		t.Fatalf("stream %d %s: stats %+v, in one step %+v", i, what, gs, ws)
	}
	if !reflect.DeepEqual(logCalls(t, ref), logCalls(t, eng)) {
		t.Fatalf("stream %d %s: the call log differs", i, what)
	}
}

// TestCatchUpAtTheEnd: a fallback decided in the last step (a dead-lettered
// writer without stamps, given by Final, or before Flush, after a stream the
// stamps carried through many steps) is caught up to its end before Final
// or Flush returns (driver D5): nothing would resume it. The run that catches up one logged step
// per part ends as the one that replays the log in one step.
func TestCatchUpAtTheEnd(t *testing.T) {
	h, _, err := gen.GenerateStamps(gen.Config{Txns: 120, Seed: 3, UnknownRatio: 0})
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.Serializable
	opts.InitialState, opts.InDoubt = history.InitialEmpty, 5_000_000
	run := func(catchSteps int, flush bool) ([]*online.Alert, *Engine) {
		ctx := context.Background()
		win, err := window.New(window.Config{Partitions: 1, Lateness: 1_000_000, Skew: opts.Skew, InDoubt: opts.InDoubt})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := New(opts, Config{Stream: "s", Inner: innerFor(opts), CatchSteps: catchSteps})
		if err != nil {
			t.Fatal(err)
		}
		d := driver.New(driver.Config{Tick: 1_000_000, Skew: opts.Skew, Lateness: 1_000_000}, win, eng, driver.NewState(1))
		var fired []*online.Alert
		order := make([]int, len(h.Txns))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start) })
		for _, i := range order {
			if rej := d.Accept(0, int64(i), h.Txns[i], 0); rej != nil {
				t.Fatalf("%s set aside: %+v", h.Txns[i].ID, rej)
			}
			eng.NoteFacts(&h.Txns[i], h.FactsOf(i))
			for d.HasReady() {
				rd, err := d.Ready(ctx)
				if err != nil {
					t.Fatal(err)
				}
				fired = append(fired, rd.Alerts...)
			}
		}
		if why := eng.failed; why != "" {
			t.Fatalf("the stamps stopped vouching before the end: %s", why)
		}
		last := h.Txns[order[len(order)-1]]
		dl := history.Txn{ID: "dead-letter", Status: history.Committed, Start: last.Start, End: last.End, HasTime: true,
			Ops: []history.Op{{Kind: history.Write, Key: "zz", Value: history.IntValue(1)}}}
		var rd driver.Ready
		if flush {
			// An interrupt without a state directory: the writer reaches
			// the engine off schedule, and Flush steps.
			eng.AddUnchecked(dl)
			rd, err = d.Flush(ctx)
		} else {
			d.SetAside(0, int64(len(h.Txns)), &dl)
			d.EndInput()
			rd, err = d.Final(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		return append(fired, rd.Alerts...), eng
	}
	for _, flush := range []bool{false, true} {
		want, ref := run(1<<30, flush)
		got, eng := run(1, flush)
		if eng.Pending() || eng.Inner() == nil {
			t.Fatalf("flush %v: the driver returned with the catch-up left half done (pending %v)", flush, eng.Pending())
		}
		if ref.steps < 5 {
			t.Fatalf("only %d steps before the fallback: nothing to catch up in parts", ref.steps)
		}
		sameRun(t, 0, "caught up at the end", want, got, ref, eng)
	}
}
