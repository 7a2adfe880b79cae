package online

import (
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// parkScript runs the history of the park tests: A [0,25] and B [20,30]
// blind-write x (their order undecided: an isolated group), filler
// transactions on keys of their own until the group is parked, then late,
// and a step after each. It returns the engine and whether A and B were
// parked before late was released.
func parkScript(t *testing.T, opts history.Options, park bool, early []history.Txn, late ...history.Txn) (*Online, bool) {
	t.Helper()
	defer func(p bool) { parkGroups = p }(parkGroups)
	parkGroups = park
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	step := func() {
		t.Helper()
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	next := int64(100)
	filler := func(n int) {
		for range n {
			id := fmt.Sprintf("fill%d", next)
			o.Release(stormTxn(id, id, next, next+1, wOp("f"+id, "1")))
			o.Close(id)
			next += 2
		}
	}
	o.Release(stormTxn("A", "sa", 0, 25, wOp("x", "1")))
	o.Release(stormTxn("B", "sb", 20, 30, wOp("x", "2")))
	o.Close("A", "B")
	o.Release(early...)
	filler(10)
	step()
	for range 3 {
		filler(parkAfter/2 + 10)
		step()
	}
	parked := len(o.ev.Parked) == 1 && o.ev.parkedCount() == 2
	if park && !parked {
		t.Fatalf("A and B not parked (parked %v, back-offs %v): the history does not test the rule", o.ev.Parked, o.ev.Backoff)
	}
	for _, tx := range late {
		o.Release(tx)
		o.Close(tx.ID)
	}
	for _, tx := range early {
		o.Close(tx.ID)
	}
	filler(10)
	step()
	o.CloseAll()
	step()
	return o, parked
}

// parkCores returns the engine's alerts as sorted cores.
func parkCores(o *Online) []string {
	var out []string
	for _, a := range o.Alerts() {
		c := slices.Clone(a.Core)
		slices.Sort(c)
		out = append(out, fmt.Sprint(c))
	}
	slices.Sort(out)
	return out
}

// TestParkReadmitsOnKey: under an unknown initial state, C, long after A
// and B, reads x = 3, a value nobody wrote. Without A and B it reads x's
// initial version, which nothing contradicts; with them it reads a
// version both overwrote before it began (C rw→ A rt→ C). Parked, A and
// B must come back when C touches x, and the anomaly must be alerted as
// by the engine that never parks and by check.
func TestParkReadmitsOnKey(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialUnknown
	late := stormTxn("C", "sc", 1_000_000, 1_000_001, rOp("x", "3"))
	parkCheck(t, opts, nil, late)
}

// TestParkReadmitsOnSession: Y [30,35] reads z's initial version and
// stays open; F [-5,100], released after A and B were parked, precedes A
// in A's session and writes z: F so→ A rt→ Y rw→ F, an anomaly only
// with A in the instance, through no key of A's (F and Y alone are
// concurrent). The arrival in A's session must re-admit A and B. (F
// starts before the releases it follows, as the engine's own tests of
// sessions release it; the window would not.)
func TestParkReadmitsOnSession(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	early := []history.Txn{stormTxn("Y", "sy", 30, 35, rOp("z", string(history.Null)))}
	late := stormTxn("F", "sa", -5, 100, wOp("z", "1"))
	parkCheck(t, opts, early, late)
}

func parkCheck(t *testing.T, opts history.Options, early []history.Txn, late history.Txn) {
	t.Helper()
	kept, _ := parkScript(t, opts, false, early, late)
	o, _ := parkScript(t, opts, true, early, late)
	want, got := parkCores(kept), parkCores(o)
	if len(want) == 0 {
		t.Fatal("the engine that never parks alerts nothing: the history does not test the rule")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("parked engine alerts %v, the one that never parks %v", got, want)
	}
	if readmitTrace.Load() == 0 {
		t.Fatal("nothing re-admitted")
	}
	// check agrees on the whole history.
	bodies, err := o.bodies()
	if err != nil {
		t.Fatal(err)
	}
	res, err := incremental.Check(context.Background(), &history.History{Txns: bodies}, opts, incremental.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != incremental.Invalid {
		t.Fatalf("check says %v", res.Verdict)
	}
	if st := o.Stats(); st.Disagreements != 0 {
		t.Fatalf("%d disagreements", st.Disagreements)
	}
}

// parkStorm is a storm as the issue's, long enough for groups to park
// (the back-off's wait and parkAfter), with few keys on every other
// history, so that later arrivals touch parked groups.
func parkStorm(t *testing.T, i int) (*history.History, history.Options) {
	t.Helper()
	cfg, err := gen.Preset("blindw-rw")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.Keys, cfg.Seed = 6000, 12, 200, uint64(i+1)
	if i%2 == 1 {
		cfg.Keys = 30
	}
	cfg.InjectRate = 0.05
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The injected groups' keys are touched by nothing else: a late
	// transaction on one of every three such keys, 2,500 releases after
	// its first access (its group parked by then), re-admits the group,
	// and a read of a value nobody wrote is an anomaly only with it.
	txns := byStart(h)
	first := map[history.Key]int{}
	for p, tx := range txns {
		for _, op := range tx.Ops {
			if _, ok := first[op.Key]; !ok && strings.Contains(string(op.Key), "inj") {
				first[op.Key] = p
			}
		}
	}
	keys := slices.Sorted(maps.Keys(first))
	late := 0
	for j, k := range keys {
		p := first[k] + 2500
		if j%3 != 0 || p >= len(txns) {
			continue
		}
		op := wOp(string(k), "7777")
		if j%2 == 0 {
			op = rOp(string(k), "9999")
		}
		start := txns[p].Start + 1
		h.Txns = append(h.Txns, stormTxn(fmt.Sprintf("late%d", j), fmt.Sprintf("late%d", j), start, start+100, op))
		late++
	}
	if late == 0 {
		t.Fatal("no late transaction on an injected key")
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InDoubt = 60_000_000_000
	opts.InitialState = history.InitialUnknown
	return h, opts
}

// TestParkStormsAsBefore holds parking to the engine that never parks on
// generated storms under an unknown initial state, stepped every 50
// releases, with rewind points every 512 releases (alerts replay from
// points that hold parked groups) and the self-checks on (a rewind
// point's copy is its state's JSON): check's verdict, the same alert ids
// and cores, no disagreement; and groups must park and be re-admitted. A
// third engine, restored from its snapshot before every step, must hold
// the same members and parked groups as the one that never stops.
// STREAMCHECK_PARK_N sets the number of histories (2, 1 under -short).
func TestParkStormsAsBefore(t *testing.T) {
	defer func(p bool, e int) { parkGroups, rewindEvery = p, e }(parkGroups, rewindEvery)
	defer SetSelfCheck(SetSelfCheck(true))
	rewindEvery = 512
	n := 2
	if testing.Short() {
		n = 1
	}
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_PARK_N")); err == nil {
		n = v
	}
	ctx := context.Background()
	alerts := func(o *Online) []string {
		var out []string
		for _, a := range o.Alerts() {
			c := slices.Clone(a.Core)
			slices.Sort(c)
			out = append(out, fmt.Sprint(a.ID, c, a.Updated))
		}
		slices.Sort(out)
		return out
	}
	parked, readmitted := 0, 0
	for i := range n {
		h, opts := parkStorm(t, i)
		res, err := incremental.Check(ctx, h, opts, incremental.Config{})
		if err != nil {
			t.Fatal(err)
		}
		wo := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		rt := NewOnlineConfig(opts, OnlineConfig{Evict: true})
		before, beforeR := parkTrace.Load(), readmitTrace.Load()
		step := func(e *Online, park bool) {
			t.Helper()
			parkGroups = park
			if _, err := e.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		restore := func() {
			t.Helper()
			snap, err := rt.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			if rt, err = RestoreOnline(opts, snap); err != nil {
				t.Fatal(err)
			}
		}
		txns := byStart(h)
		var open []int
		for k := range txns {
			for _, e := range []*Online{wo, o, rt} {
				e.Release(txns[k])
			}
			open = append(open, k)
			w := txns[k].Start
			keep := open[:0]
			for _, j := range open {
				if e := opts.EffectiveEnd(&txns[j]); e != math.MaxInt64 && e+opts.Skew < w-opts.Skew {
					for _, e := range []*Online{wo, o, rt} {
						e.Close(txns[j].ID)
					}
				} else {
					keep = append(keep, j)
				}
			}
			open = keep
			if (k+1)%50 != 0 {
				continue
			}
			step(wo, false)
			step(o, true)
			restore()
			step(rt, true)
			if !slices.Equal(o.ev.memberList(), rt.ev.memberList()) || !(len(o.ev.Parked) == 0 && len(rt.ev.Parked) == 0 || reflect.DeepEqual(o.ev.Parked, rt.ev.Parked)) {
				t.Fatalf("history %d, %d released: restored engine %d members, %d parked groups; uninterrupted %d, %d", i, k+1, len(rt.ev.memberList()), len(rt.ev.Parked), len(o.ev.memberList()), len(o.ev.Parked))
			}
		}
		for _, e := range []*Online{wo, o, rt} {
			e.CloseAll()
		}
		step(wo, false)
		step(o, true)
		restore()
		step(rt, true)
		groups := int(parkTrace.Load() - before)
		parked += groups
		readm := int(readmitTrace.Load() - beforeR)
		readmitted += readm
		if got := o.Stats().Alerts; (got > 0) != (res.Verdict == incremental.Invalid) {
			t.Fatalf("history %d: %d alerts, check %s", i, got, res.Verdict)
		}
		if got, want := alerts(o), alerts(wo); !slices.Equal(got, want) {
			t.Fatalf("history %d: alerts parking\n%v\nnever parking\n%v", i, got, want)
		}
		if got, want := alerts(rt), alerts(wo); !slices.Equal(got, want) {
			t.Fatalf("history %d: alerts parking with restores\n%v\nnever parking\n%v", i, got, want)
		}
		if d := o.Stats().Disagreements + rt.Stats().Disagreements; d != 0 {
			t.Fatalf("history %d: %d disagreements", i, d)
		}
		t.Logf("history %d: %d alerts, window %d (never parking %d), groups parked %d, re-admitted %d (2 engines), replays from a point %d", i, o.Stats().Alerts, o.Stats().Window, wo.Stats().Window, groups, readm, o.rewound)
	}
	if parked == 0 {
		t.Fatal("no group parked: the test compares nothing")
	}
	if readmitted == 0 {
		t.Fatal("no group re-admitted: the test compares nothing")
	}
}
