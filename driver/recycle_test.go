package driver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// callRecorder is an engine that keeps copies of what it is given.
type callRecorder struct {
	rel    []history.Txn
	closed []string
	steps  int
}

func (c *callRecorder) AddUnchecked(history.Txn) {}
func (c *callRecorder) Release(txns ...history.Txn) {
	for _, t := range txns {
		t.Ops = slices.Clone(t.Ops)
		c.rel = append(c.rel, t)
	}
}
func (c *callRecorder) Close(ids ...string) { c.closed = append(c.closed, ids...) }
func (c *callRecorder) CloseAll()           {}
func (c *callRecorder) Step(context.Context) ([]*online.Alert, error) {
	c.steps++
	return nil, nil
}

// TestQueuesRecycled holds the recycling of State.Rel's and State.Close's
// arrays (recycled) to what the plain queues gave: every accepted
// transaction is given to the engine once, in release order (start, end,
// ID), with its body intact; every one closes once; each Ready's view
// (Released) is what the engine was given until the next call, and the
// queue left holds whole transactions. Mutations seen to fail it: move
// without copying the tail (out := r.spare[:0]: transactions lost), the
// old array cleared before the tail is copied out of it (bodies lost),
// and the move done in Ready itself (the view cleared before the next
// call).
func TestQueuesRecycled(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 29))
		var txns []history.Txn
		for i := range 400 {
			start := int64(i*10 + rng.IntN(200))
			x := history.Txn{ID: fmt.Sprintf("t%d", i), Start: start, End: start + 1 + int64(rng.IntN(60)),
				HasTime: true, Status: history.Committed,
				Ops: []history.Op{{Kind: history.Write, Key: history.Key(fmt.Sprintf("k%d", rng.IntN(7))), Value: history.IntValue(int64(i))}}}
			txns = append(txns, x)
		}
		// Arrival in end order, as events are emitted at commit.
		slices.SortStableFunc(txns, func(a, b history.Txn) int { return int(a.End - b.End) })
		win, err := window.New(window.Config{Partitions: 1, Lateness: 250})
		if err != nil {
			t.Fatal(err)
		}
		eng := &callRecorder{}
		d := New(Config{Tick: 1 + int64(rng.IntN(40)), Lateness: 250}, win, eng, NewState(1))
		var accepted []history.Txn
		var lastViews []history.Txn
		var lastWant []history.Txn
		ctx := context.Background()
		check := func(where string) {
			// The last Ready's view is valid until the next call: checked
			// before it, after the Readys that followed it.
			if !slices.EqualFunc(lastViews, lastWant, txnEq) {
				t.Fatalf("seed %d, %s: a Ready's Released view changed before the next call", seed, where)
			}
		}
		for i, x := range txns {
			if d.Accept(0, int64(i), x, 0) == nil {
				accepted = append(accepted, x)
			}
			for d.HasReady() {
				n := len(eng.rel)
				rd, err := d.Ready(ctx)
				if err != nil {
					t.Fatal(err)
				}
				lastViews, lastWant = rd.Released, slices.Clone(eng.rel[n:])
				check("after Ready")
				// Every queue left must still hold its own elements: the
				// tail is a copy of what Ready did not give.
				for _, r := range d.st.Rel {
					if r.ID == "" || len(r.Ops) != 1 {
						t.Fatalf("seed %d: a queued transaction lost its body: %+v", seed, r)
					}
				}
			}
			check("before the next Accept")
			lastViews, lastWant = nil, nil
		}
		d.EndInput()
		for d.HasReady() {
			if _, err := d.Ready(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.Final(ctx); err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(accepted)
		slices.SortStableFunc(want, func(a, b history.Txn) int {
			switch {
			case a.Start != b.Start:
				return int(a.Start - b.Start)
			case a.End != b.End:
				return int(a.End - b.End)
			}
			return cmpStr(a.ID, b.ID)
		})
		if !slices.EqualFunc(eng.rel, want, txnEq) {
			t.Fatalf("seed %d: the engine was given %d transactions, not the %d accepted in release order", seed, len(eng.rel), len(want))
		}
		closed := slices.Clone(eng.closed)
		slices.Sort(closed)
		ids := make([]string, len(want))
		for i := range want {
			ids[i] = want[i].ID
		}
		slices.Sort(ids)
		if !slices.Equal(closed, ids) {
			t.Fatalf("seed %d: closings %v, want every released id once", seed, closed)
		}
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func txnEq(a, b history.Txn) bool {
	return a.ID == b.ID && a.Start == b.Start && a.End == b.End && slices.EqualFunc(a.Ops, b.Ops, func(x, y history.Op) bool {
		return x.Kind == y.Kind && x.Key == y.Key && x.Value == y.Value
	})
}
