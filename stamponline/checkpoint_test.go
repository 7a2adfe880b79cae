package stamponline

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/sionline"
	"github.com/streamcheck/streamcheck/window"
)

// innerDurable builds and restores the level's black-box engine over a
// durable body file, as `run` with a state directory does.
func innerDurable(opts history.Options, bodies online.BodyFile) (func() (Inner, error), func([]byte) (Inner, error)) {
	if sionline.Levels(opts.Level) {
		cfg := sionline.Config{Stream: "s", Bodies: bodies}
		return func() (Inner, error) { return sionline.New(opts, cfg) },
			func(snap []byte) (Inner, error) { return sionline.Restore(opts, cfg, snap) }
	}
	return func() (Inner, error) {
			return online.NewOnlineConfig(opts, online.OnlineConfig{Evict: true, Bodies: bodies, Stream: "s"}), nil
		}, func(snap []byte) (Inner, error) {
			o, err := online.RestoreOnlineAt(opts, bodies, snap, nil)
			if err == nil {
				o.SetStream("s")
			}
			return o, err
		}
}

// ckpt is what `run` stores at a checkpoint: the events it covers, the
// window, the driver's state and the engine's snapshot (its files synced
// up to what it counts on; here they are in memory and outlive the
// "process").
type ckpt struct {
	pos           int
	win, drv, eng []byte
}

// crashStats says what a crashing run went through, so that a sweep can
// show it covered restarts before, across and after a fallback.
type crashStats struct {
	ckpts, crashes                int
	afterFallback, acrossFallback int // restored from a snapshot taken after the fallback; crashed after a fallback the snapshot predates
	catching                      int // checkpoints taken while the black-box engine was catching up (E6)
}

// runCrashing is runStream with checkpoints and crashes: after some
// drains (the step boundaries at which `run` checkpoints) it takes a
// checkpoint; now and then, some events after one, the "process" dies
// (its window, driver and engines are dropped; what they wrote to their
// files after the checkpoint stays there, as after kill -9) and a new
// one restores the last checkpoint and reads on from the events it
// covers. It returns every alert delivered by any incarnation and the
// last engine. maxCrashes < 0 restarts from a checkpoint at every step
// boundary, losing nothing: every piece of the engine's state then
// crosses a snapshot while it matters.
func runCrashing(t testing.TB, h *history.History, opts history.Options, f feed, rng *rand.Rand, maxCrashes int) ([]*online.Alert, *Engine, crashStats) {
	t.Helper()
	ctx := context.Background()
	lo, hi := h.Txns[0].Start, h.Txns[0].End
	for _, x := range h.Txns {
		lo, hi = min(lo, x.Start), max(hi, x.End)
	}
	late := f.lateness
	if late < 0 {
		late = hi - lo + 1
	}
	wcfg := window.Config{Partitions: 1, Lateness: late, Skew: opts.Skew, InDoubt: opts.InDoubt}
	dcfg := driver.Config{Tick: f.tick, Skew: opts.Skew, Lateness: wcfg.Lateness}
	logFile, bodies := online.NewMemBodyFile(true), online.NewMemBodyFile(true)
	build, restoreInner := innerDurable(opts, bodies)
	cfg := Config{Stream: "s", Inner: build, Log: logFile, CatchSteps: f.catchSteps}

	win, err := window.New(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := New(opts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := driver.New(dcfg, win, eng, driver.NewState(1))
	var fired []*online.Alert
	var last *ckpt
	var st crashStats
	fellBackAtCkpt := false
	drain := func() {
		for n := 0; d.HasReady() && (f.readies == 0 || n < f.readies); n++ {
			rd, err := d.Ready(ctx)
			if err != nil {
				t.Fatal(err)
			}
			fired = append(fired, rd.Alerts...)
		}
	}
	for n := 0; n < len(f.order); {
		i := f.order[n]
		switch rej := d.Accept(0, int64(n), h.Txns[i], 0); {
		case rej != nil && (rej.Window == nil || rej.Window.Reason != window.Late):
			t.Fatalf("%s set aside: %+v", h.Txns[i].ID, rej)
		case rej != nil:
			eng.NoteLate(&rej.Window.Txn, h.FactsOf(i))
		default:
			eng.NoteFacts(&h.Txns[i], h.FactsOf(i))
		}
		n++
		if n%f.batch != 0 {
			continue
		}
		drain()
		every := maxCrashes < 0
		if every || rng.IntN(3) == 0 {
			es, sync, err := eng.SnapshotDurable()
			if err != nil {
				t.Fatal(err)
			}
			if err := sync(); err != nil {
				t.Fatal(err)
			}
			ds, err := json.Marshal(d.State())
			if err != nil {
				t.Fatal(err)
			}
			last = &ckpt{pos: n, win: win.Snapshot(), drv: ds, eng: es}
			fellBackAtCkpt = eng.Inner() != nil
			st.ckpts++
			if eng.catch != nil {
				st.catching++
			}
		}
		// Dying right after a fallback the last checkpoint predates (the
		// fallback's replay lost with the process) is the case most
		// likely to go wrong: made likelier.
		across := eng.Inner() != nil && !fellBackAtCkpt
		if every || last != nil && st.crashes < maxCrashes && (rng.IntN(4) == 0 || across && rng.IntN(2) == 0) {
			if eng.Inner() != nil {
				if fellBackAtCkpt {
					st.afterFallback++
				} else {
					st.acrossFallback++
				}
			}
			st.crashes++
			if win, err = window.Restore(wcfg, last.win); err != nil {
				t.Fatal(err)
			}
			var ds driver.State
			if err := json.Unmarshal(last.drv, &ds); err != nil {
				t.Fatal(err)
			}
			if f.downgrade {
				// The checkpoint as a build before the log's key
				// numbering wrote it (keyedlog_test.go).
				var log *online.MemBodyFile
				log, last.eng = downgrade(t, logFile, last.eng)
				logFile, cfg.Log = log, log
			}
			if eng, err = Restore(opts, cfg, last.eng, restoreInner); err != nil {
				t.Fatal(err)
			}
			d = driver.New(dcfg, win, eng, ds)
			n = last.pos
		}
	}
	d.EndInput()
	f.readies = 0
	drain()
	rd, err := d.Final(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return append(fired, rd.Alerts...), eng, st
}

// alertIDSet is the sorted set of ids among fired.
func alertIDSet(fired []*online.Alert) []string {
	var ids []string
	for _, a := range fired {
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// TestCheckpointRestart is the checkpoint of the stamps' engine
// (docs/SEMANTICS.md §10 "A checkpoint of the stamps' engine"): on
// random tiny stamped histories (anomalies injected, a fact falsified in
// half of them) and on generated streams with injected anomalies (which
// fall back part way), at every level the engine serves, a run that
// checkpoints at random step boundaries and dies at random moments
// after a checkpoint, each time restarting from the last one, delivers
// exactly the alert ids of an uninterrupted run on the same arrival
// (an id may be delivered twice, none lost, none new), and ends with the
// same fast-path outcome (items replayed, why it fell back). The sweep
// must have restarted from snapshots taken before and after a fallback
// and died after a fallback its snapshot predates.
// restartHistory is history i of the restart sweeps: below n a tiny
// stamped one (nil when two of a session's transactions tie), from n
// on a longer generated stream whose anomalies make it fall back after
// many steps on the stamps.
func restartHistory(t *testing.T, rng *rand.Rand, cfg oracle.TinyConfig, i, n int) *history.History {
	t.Helper()
	if i < n {
		h := oracle.RandomTinyStamps(rng, cfg, oracle.CommitStart, 0.5)
		if sessionTies(h) {
			return nil
		}
		return h
	}
	h, _, err := gen.GenerateStamps(gen.Config{Txns: 200, Seed: uint64(i), Inject: []string{"lost-update", "write-skew"}, UnknownRatio: 0})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheckpointRestart(t *testing.T) {
	n := sweep(t, 80)
	for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.SnapshotIsolation, history.StrongSessionSnapshotIsolation} {
		t.Run(lv.String(), func(t *testing.T) {
			var all crashStats
			cfg := oracle.DefaultTinyConfig()
			cfg.Timestamps, cfg.Sessions = true, true
			for i := 0; i < n+2; i++ {
				rng := rand.New(rand.NewPCG(uint64(i), 2902))
				h := restartHistory(t, rng, cfg, i, n)
				if h == nil {
					continue
				}
				opts := history.DefaultOptions()
				opts.Level = lv
				if i < n && rng.IntN(4) == 0 {
					opts.InitialState = history.InitialUnknown
				}
				if i >= n {
					opts.InitialState, opts.InDoubt = history.InitialEmpty, 5_000_000
				}
				for k := 0; k < 2; k++ {
					f := randomFeed(rng, h)
					f.late = true
					if i >= n {
						// gen's clock is in nanoseconds: ticks of a
						// millisecond or so, as run's are of its scale.
						f.tick *= 1_000_000
						if f.lateness >= 0 {
							f.lateness *= 1_000_000
						}
					}
					want, ref := runStream(t, h, opts, f)
					got, eng, st := runCrashing(t, h, opts, f, rng, []int{3, -1}[k])
					all.ckpts += st.ckpts
					all.crashes += st.crashes
					all.afterFallback += st.afterFallback
					all.acrossFallback += st.acrossFallback
					if w, g := alertIDSet(want), alertIDSet(got); !slices.Equal(w, g) {
						t.Fatalf("history %d feed %+v (%+v): alert ids %v, uninterrupted %v\n%s", i, f, st, g, w, dumpFacts(h))
					}
					wr, wf := ref.FastPath()
					gr, gf := eng.FastPath()
					if wr != gr || wf != gf {
						t.Fatalf("history %d feed %+v (%+v): fast path %d %q, uninterrupted %d %q", i, f, st, gr, gf, wr, wf)
					}
					if ws, gs := ref.Stats(), eng.Stats(); ws.Released != gs.Released || ws.Steps != gs.Steps || ws.Alerts != gs.Alerts ||
						ws.Unchecked != gs.Unchecked || ws.Window != gs.Window || ws.Pending != gs.Pending {
						t.Fatalf("history %d: stats %+v, uninterrupted %+v", i, gs, ws)
					}
					// The driver's calls as the engine logged them: a
					// restart neither lost nor repeated one.
					if !reflect.DeepEqual(logCalls(t, ref), logCalls(t, eng)) {
						t.Fatalf("history %d feed %+v (%+v): the call log differs from the uninterrupted run's", i, f, st)
					}
				}
			}
			t.Logf("%d checkpoints, %d restarts: %d from a snapshot after the fallback, %d across it", all.ckpts, all.crashes, all.afterFallback, all.acrossFallback)
			if all.crashes == 0 || all.afterFallback == 0 || all.acrossFallback == 0 {
				t.Errorf("the sweep misses a case: %+v", all)
			}
		})
	}
}

// logCalls is e's call log read back, an empty list read as nil (the
// window's snapshot does not tell the two apart, nor does any check).
func logCalls(t testing.TB, e *Engine) []call {
	t.Helper()
	var out []call
	err := e.log.each(func(c *call) error {
		for n := range c.txn.Ops {
			if len(c.txn.Ops[n].List) == 0 {
				c.txn.Ops[n].List = nil
			}
		}
		out = append(out, *c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckpointSession: a session's members kept for the session-order
// check cross a checkpoint. A (session s, long) is released, the engine
// restarts, then B, a later member of s whose commit_ts puts it before A,
// is released while A is still open (so the frontier does not catch it):
// only the members restored from the snapshot make the fast path see the
// inversion and fall back as the uninterrupted run does.
func TestCheckpointSession(t *testing.T) {
	h := &history.History{}
	stamped(h, "A 0 100 w x 1", 3, 3)
	stamped(h, "B 3 4 w y 1", 2, 2)
	stamped(h, "C 10 11 r z null", 4, 4)
	stamped(h, "D 20 21 r z null", 5, 5)
	for i := range 2 {
		h.Txns[i].Session, h.Txns[i].HasSession = "s", true
	}
	opts := history.DefaultOptions()
	opts.Level, opts.InitialState = history.StrongSessionSerializable, history.InitialEmpty
	f := feed{order: []int{0, 1, 2, 3}, batch: 1, tick: 1}
	_, ref := runStream(t, h, opts, f)
	_, eng, _ := runCrashing(t, h, opts, f, rand.New(rand.NewPCG(1, 1)), -1)
	wr, wf := ref.FastPath()
	gr, gf := eng.FastPath()
	if wf == "" || wr != gr || wf != gf {
		t.Fatalf("fast path after restarts %d %q, uninterrupted %d %q (which must fall back on session order)", gr, gf, wr, wf)
	}
}
