package online

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
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
	if o.ev.park.readmitted == 0 {
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
