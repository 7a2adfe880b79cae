package sionline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// si31Arrival draws how a history of the schedule differential reaches
// the engine: each transaction accepted at its start plus a random delay
// (none, up to half the longest interval, or up to the whole lateness
// slack), a lateness of the longest interval plus that slack plus
// 2Δ+1, plus sometimes more (the watermark lags further), a batch of
// 1-5 accepts between drains, a tick of 1, 2, 5 or 13 time units, and a
// third of the time a snapshot and restore after a random accept.
func si31Arrival(h *history.History, opts history.Options, rng *rand.Rand) (window.Config, arrival) {
	var longest int64
	for _, x := range h.Txns {
		longest = max(longest, x.End-x.Start)
	}
	delay := []int64{1, longest/2 + 1, longest + 1}[rng.IntN(3)]
	extra := []int64{0, 0, 3, 25}[rng.IntN(4)]
	wcfg := window.Config{Partitions: 1, Lateness: longest + delay + 2*opts.Skew + 1 + extra, Skew: opts.Skew, InDoubt: opts.InDoubt}
	order := make([]int, len(h.Txns))
	key := make([]int64, len(h.Txns))
	for i := range order {
		order[i] = i
		key[i] = h.Txns[i].Start + rng.Int64N(delay)
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(key[x], key[y]) })
	a := arrival{order: order, batch: 1 + rng.IntN(5), tick: []int64{1, 2, 5, 13}[rng.IntN(4)], restart: -1}
	if rng.IntN(3) == 0 {
		a.restart = rng.IntN(len(h.Txns))
	}
	return wcfg, a
}

// si31Env reads a non-negative integer knob.
func si31Env(name string, def uint64) uint64 {
	if v, err := strconv.ParseUint(os.Getenv(name), 10, 64); err == nil {
		return v
	}
	return def
}

// TestSIAgreesUnderSchedules is the serializable engine's schedule
// differential (online.TestOnlineAgreesUnderSchedules) at every level of
// the snapshot-isolation family the engine runs (Levels): histories of
// 5-12 transactions from oracle.RandomTiny over 2-4 keys (registers and
// lists, duplicates, aborted and unknown outcomes, sessions, stale
// snapshots), the in-doubt horizon drawn from {+∞, 0, 1, 4, 12, 40}, Δ
// from {0, 0, 2}, a third with an unknown initial state, each streamed
// through the window, the driver and an evicting engine in a random
// arrival (si31Arrival) with the eviction's wait (WaitWindow 0, 2 or
// 128) and segment size (2, 8 or 256) drawn too. The first verdict is
// check's at the checked level (and the oracle's where it can enumerate
// the history); every alert's core is a subset-minimal core of the whole
// history by the oracle (oracle.CheckCore, S2-S4), and one without
// needs_realtime violates the promise on the stream released when it
// fired (S6).
//
// STREAMCHECK_SI31_COUNT=N runs N histories per level (default 300, 40
// with -short); STREAMCHECK_SI31_SEED=S draws other histories (a hunt);
// STREAMCHECK_SI31_FROM=I draws the first I and runs the rest (a hunt
// resumed after a fix).
func TestSIAgreesUnderSchedules(t *testing.T) {
	count := int(si31Env("STREAMCHECK_SI31_COUNT", 300))
	if testing.Short() && os.Getenv("STREAMCHECK_SI31_COUNT") == "" {
		count = 40
	}
	seed := si31Env("STREAMCHECK_SI31_SEED", 31)
	from := int(si31Env("STREAMCHECK_SI31_FROM", 0))
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	for _, d := range history.Levels() {
		if !Levels(d.Level) {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3128+uint64(d.Level)))
			invalid, alerts, evicted, oracled := 0, 0, 0, 0
			for i := 0; i < count; i++ {
				c := si31Draw(rng, d.Level)
				if i < from {
					continue // drawn, not run: a hunt resumed (STREAMCHECK_SI31_FROM)
				}
				if i > from && i%5000 == 0 {
					t.Logf("%d histories passed (%d to %d)", i-from, from, i-1) // a long hunt's progress (-v shows it at once)
				}
				h, promised, checked, wcfg, a := c.h, c.promised, c.checked, c.wcfg, c.a
				WaitWindow, segTxns = c.wait, c.seg
				desc := fmt.Sprintf("seed %d history %d: %s", seed, i, c)
				if err := h.Validate(); err != nil {
					continue
				}
				res, err := incremental.Check(context.Background(), h, checked, incremental.Config{MaxAnomalies: 1})
				if err != nil {
					t.Fatal(err)
				}
				valid := res.Verdict != incremental.Invalid
				if ok, _, err := oracle.Check(h, checked); err == nil {
					oracled++
					if ok != valid {
						t.Fatalf("%s: check says %s, the oracle valid=%t\n%s", desc, res.Verdict, ok, dump(h))
					}
				} else if !errors.Is(err, oracle.ErrTooLarge) {
					t.Fatal(err)
				}
				fired, eng := feed(t, h, promised, wcfg, a)
				if (len(fired) > 0) == valid {
					t.Fatalf("%s: %d alerts, check says %s\n%s", desc, len(fired), res.Verdict, dump(h))
				}
				for _, al := range fired {
					si31CheckAlert(t, h, promised, checked, al, desc)
				}
				if !valid {
					invalid++
				}
				alerts += len(fired)
				evicted += eng.Stats().Evicted
			}
			t.Logf("%d histories from %d (%d by the oracle too), %d invalid, %d alerts, %d evictions", count-from, from, oracled, invalid, alerts, evicted)
			if n := count - from; n >= 100 && (invalid < n/10 || invalid > n*9/10) {
				t.Errorf("%d of %d histories invalid: the generator is lopsided", invalid, n)
			}
			if count-from >= 100 && Bounded(d.Level) && evicted == 0 {
				t.Error("nothing was evicted: the test exercises nothing of eviction")
			}
		})
	}
}

// si31CheckAlert: al's core is a subset-minimal core of h at the checked
// level (the oracle, or check on the projection when the core is too
// large for it, which only happens if the core has more than
// oracle.MaxTxns members); without needs_realtime it violates the promise
// on the stream released when it fired.
func si31CheckAlert(t *testing.T, h *history.History, promised, checked history.Options, al *online.Alert, desc string) {
	t.Helper()
	if al.Level != checked.Level || al.Promised != promised.Level {
		t.Fatalf("%s: alert says level %s promised %s", desc, al.Level, al.Promised)
	}
	if err := oracle.CheckCore(h, checked, al.Core); err != nil {
		if !errors.Is(err, oracle.ErrTooLarge) {
			t.Fatalf("%s: alert core %v: %v\n%s", desc, al.Core, err, dump(h))
		}
		r, err := incremental.Check(context.Background(), incremental.Project(h, checked, al.Core), checked, incremental.Config{MaxAnomalies: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != incremental.Invalid {
			t.Fatalf("%s: alert core %v is %s on its own\n%s", desc, al.Core, r.Verdict, dump(h))
		}
	}
	if !al.NeedsRealtime && promised.Level != checked.Level {
		if ok, _, err := oracle.Check(oracle.Project(released(h, al.Watermark), promised, al.Core), promised); err == nil && ok {
			t.Fatalf("%s: core %v without needs_realtime satisfies %s\n%s", desc, al.Core, promised.Level, dump(h))
		}
	}
}

// si31Case is one history of the schedule differential with everything
// drawn for it.
type si31Case struct {
	h                 *history.History
	promised, checked history.Options
	wcfg              window.Config
	a                 arrival
	wait, seg         int
}

func (c si31Case) String() string {
	return fmt.Sprintf("%s checked as %s, skew %d, in-doubt %d, initial %v, wait %d, seg %d, lateness %d, batch %d, tick %d, restart %d, order %v",
		c.promised.Level, c.checked.Level, c.promised.Skew, c.promised.InDoubt, c.promised.InitialState, c.wait, c.seg, c.wcfg.Lateness, c.a.batch, c.a.tick, c.a.restart, c.a.order)
}

// si31Draw draws the next case at promised level lv.
func si31Draw(rng *rand.Rand, lv history.Level) si31Case {
	cfg := oracle.DefaultTinyConfig()
	cfg.MinTxns, cfg.MaxTxns, cfg.Values = 5, 12, 4
	cfg.Keys = 2 + rng.IntN(3)
	cfg.InitialValues = rng.IntN(4) == 0
	cfg.Anomalous = []float64{0.2, 0.5, 0.8}[rng.IntN(3)]
	h := oracle.RandomTiny(rng, cfg)
	if rng.IntN(2) == 0 {
		// Up to 12 transactions: a second tiny history beside the
		// first, its sessions and ids apart, shifted to overlap it or
		// follow it (the oracle enumerates only up to oracle.MaxTxns;
		// beyond, check's verdict and the cores' re-check stand).
		cfg.MinTxns, cfg.MaxTxns = 2, 12-len(h.Txns)
		if cfg.MaxTxns >= 2 {
			g := oracle.RandomTiny(rng, cfg)
			hl, gl := h.ListKeys(), g.ListKeys()
			for _, x := range g.Txns {
				for _, op := range x.Ops {
					if hl[op.Key] != gl[op.Key] && slices.ContainsFunc(h.Txns, func(t history.Txn) bool {
						return slices.ContainsFunc(t.Ops, func(o history.Op) bool { return o.Key == op.Key })
					}) {
						g.Txns = nil // a key a list in one, a register in the other
					}
				}
			}
			var span int64
			for _, x := range h.Txns {
				span = max(span, x.End)
			}
			shift := rng.Int64N(span + 20)
			for _, x := range g.Txns {
				x.ID, x.Session = "U"+x.ID, "u"+x.Session
				x.Start, x.End = x.Start+shift, x.End+shift
				h.Txns = append(h.Txns, x)
			}
		}
	}
	// In the window's release order (start, then end, then id), which
	// is the order the engine ranks a session's transactions in when
	// two of them start at the same instant; check ranks such a tie by
	// input order. The two differ only on a session whose transactions
	// overlap (one starts when the other starts), which no sequential
	// client produces; the report of session si31 describes it.
	slices.SortStableFunc(h.Txns, func(x, y history.Txn) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.End, y.End), cmp.Compare(x.ID, y.ID))
	})
	promised := history.Options{Level: lv, Skew: []int64{0, 0, 2}[rng.IntN(3)],
		InDoubt: []int64{history.NoInDoubt, 0, 1, 4, 12, 40}[rng.IntN(6)], InitialState: history.InitialEmpty}
	if rng.IntN(3) == 0 {
		promised.InitialState = history.InitialUnknown
	}
	checked := promised
	checked.Level = Checked(lv)
	c := si31Case{h: h, promised: promised, checked: checked}
	c.wait = []int{0, 2, 128}[rng.IntN(3)]
	c.seg = []int{2, 8, 256}[rng.IntN(3)]
	c.wcfg, c.a = si31Arrival(h, promised, rng)
	return c
}
