package online

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestTxnLogSparseModel holds the chunked log with sparse drops
// (txnlog.go, SEMANTICS §5 "Sparse log chunks") to a plain slice through
// random spills and reloads, and checks the rule itself: no chunk that is
// no longer the last stays held with looseMax or fewer bodies in memory,
// and no chunk is dropped with more.
func TestTxnLogSparseModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var l txnLog
	var model []history.Txn
	spilled := map[int]bool{}
	l.inMem = func(i int) bool { return !spilled[i] }
	inMem := func(c int) int {
		n := 0
		for i := c * logChunkSize; i < min(len(model), (c+1)*logChunkSize); i++ {
			if !spilled[i] {
				n++
			}
		}
		return n
	}
	check := func(c int, what string) {
		t.Helper()
		if c < 0 {
			return
		}
		if n := inMem(c); n > looseMax {
			t.Fatalf("%s dropped chunk %d with %d bodies in memory", what, c, n)
		}
	}
	for range 60000 {
		switch n := len(model); {
		case n == 0 || rng.IntN(3) == 0:
			tx := history.Txn{ID: fmt.Sprint(n), Start: int64(n), Ops: []history.Op{{Kind: history.Write, Key: "k", Value: history.Value(fmt.Sprint(n))}}}
			got, c := l.append(tx)
			if got != n {
				t.Fatalf("append gave %d, want %d", got, n)
			}
			model = append(model, tx)
			check(c, "append")
		default:
			// Mostly spills, as an evicting engine's; a few bodies come
			// back (quarantined, replayed).
			i := rng.IntN(n)
			if spilled[i] {
				if rng.IntN(16) == 0 {
					delete(spilled, i)
					l.markUnspilled(i)
					l.put(i, model[i])
				}
				continue
			}
			spilled[i] = true
			check(l.markSpilled(i, history.Txn{ID: model[i].ID, Start: model[i].Start}), "markSpilled")
		}
	}
	for i := range model {
		if spilled[i] {
			continue
		}
		if !l.inMemory(i) {
			t.Fatalf("%d: in memory in the model, not in the log", i)
		}
		if got := l.at(i); !reflect.DeepEqual(*got, model[i]) {
			t.Fatalf("%d: %+v, want %+v", i, *got, model[i])
		}
	}
	held := 0
	for c := range len(l.chunks) - 1 {
		if l.chunks[c] == nil {
			continue
		}
		held++
		if n := inMem(c); n <= looseMax {
			t.Fatalf("chunk %d held with %d bodies in memory (at most %d: dropped)", c, n, looseMax)
		}
	}
	if held == len(l.chunks)-1 {
		t.Fatalf("no chunk dropped of %d", len(l.chunks))
	}
}

// TestSparseChunksLeaveMemory: writers of keys nobody writes again stay
// ghosts (the keys' live versions) for the rest of the stream; before
// sparse drops each held the whole chunk it was released in. Here one
// such writer sits in every chunk, every chunk but the last two is
// dropped all the same, the ghosts' bodies are where the engine needs
// them (a stale read of one is alerted with the right core), and a
// snapshot restores to the same engine.
func TestSparseChunksLeaveMemory(t *testing.T) {
	h, o := evictingEngine(t, "W0[0,10] w x1")
	ctx := context.Background()
	step := func(txns ...history.Txn) []*Alert {
		t.Helper()
		o.Release(txns...)
		for _, tx := range txns {
			o.Close(tx.ID)
		}
		as, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	step(h.Txns...)
	const fillers = 5*logChunkSize + 100
	var batch []history.Txn
	for i := range fillers {
		at := int64(100 + 10*i)
		key := history.Key(fmt.Sprintf("f%d", i%50))
		if i%logChunkSize == 7 {
			// Written once: its writer is a ghost to the end.
			key = history.Key(fmt.Sprintf("cold%d", i))
		}
		batch = append(batch, history.Txn{ID: fmt.Sprintf("F%d", i), Start: at, End: at + 5, HasTime: true, Status: history.Committed,
			Ops: []history.Op{{Kind: history.Write, Key: key, Value: history.Value(fmt.Sprint(i))}}})
		if len(batch) == 500 || i == fillers-1 {
			step(batch...)
			batch = batch[:0]
		}
	}
	if o.SpillError() != nil {
		t.Fatal(o.SpillError())
	}
	held := 0
	for c := range len(o.log.chunks) - 1 {
		if o.log.chunks[c] != nil {
			held++
		}
	}
	if held > 1 {
		t.Fatalf("%d of %d chunks held in memory (stats %+v)", held, len(o.log.chunks), o.Stats())
	}
	ghost := 2*logChunkSize + 7 // F(2*logChunkSize+7), release position +1
	if !o.ev.Member.get(ghost+1) || o.ev.GhostKeys[ghost+1] == nil || !o.log.inMemory(ghost+1) || o.spill.spilled(ghost+1) {
		t.Fatalf("the cold writer F%d: member %v, ghost keys %v, in memory %v", ghost, o.ev.Member.get(ghost+1), o.ev.GhostKeys[ghost+1], o.log.inMemory(ghost+1))
	}
	// A second write of the cold key, then a read of the first value
	// after it: a stale read through the ghost, whose body is loose.
	end := int64(100 + 10*fillers)
	cold := history.Key(fmt.Sprintf("cold%d", ghost))
	as := step(history.Txn{ID: "W2", Start: end, End: end + 5, HasTime: true, Status: history.Committed,
		Ops: []history.Op{{Kind: history.Write, Key: cold, Value: "x"}}})
	as = append(as, step(history.Txn{ID: "R", Start: end + 10, End: end + 15, HasTime: true, Status: history.Committed,
		Ops: []history.Op{{Kind: history.Read, Key: cold, Value: history.Value(fmt.Sprint(ghost))}}})...)
	if len(as) != 1 || !slices.Equal(slices.Sorted(slices.Values(as[0].Core)), []string{fmt.Sprintf("F%d", ghost), "R", "W2"}) {
		t.Fatalf("alerts %v, want one with F%d, R and W2", as, ghost)
	}
	sameSnapshot(t, o, restoredFromBodies(t, o))
}

// TestAlertsKeptBounded: the engine keeps every pending alert and the
// newest keptAlerts others (alert_kept.go, SEMANTICS §5 "The alerts an
// engine keeps"), counts every one, and a snapshot carries the count and
// the pending alert.
func TestAlertsKeptBounded(t *testing.T) {
	defer func(k int) { keptAlerts = k }(keptAlerts)
	keptAlerts = 2
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	const anomalies = 12
	var ids []string
	for k := range anomalies {
		at := int64(1000 * k)
		x := history.Key(fmt.Sprintf("x%d", k))
		txn := func(id string, s int64, op history.Op) history.Txn {
			return history.Txn{ID: fmt.Sprintf("%s%d", id, k), Start: at + s, End: at + s + 10, HasTime: true, Status: history.Committed, Ops: []history.Op{op}}
		}
		// A stale read: R reads W's value after V overwrote it.
		w := txn("W", 0, history.Op{Kind: history.Write, Key: x, Value: "1"})
		v := txn("V", 20, history.Op{Kind: history.Write, Key: x, Value: "2"})
		r := txn("R", 40, history.Op{Kind: history.Read, Key: x, Value: "1"})
		o.Release(w, v, r)
		o.Close(w.ID, r.ID)
		if k != 0 {
			// The first anomaly's V stays open: its alert is pending.
			o.Close(v.ID)
		}
		as, err := o.Step(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(as) != 1 {
			t.Fatalf("anomaly %d: %d alerts", k, len(as))
		}
		ids = append(ids, as[0].ID)
	}
	st := o.Stats()
	if i, ok := o.index["V0"]; !ok || i != 1 {
		t.Fatalf("V0 (open, quarantined) left the ID index: %d %v (spilled %v)", i, ok, o.spill.spilled(1))
	}
	if st.Alerts != anomalies || st.Pending != 1 {
		t.Fatalf("stats: %d alerts, %d pending; want %d, 1", st.Alerts, st.Pending, anomalies)
	}
	kept := o.Alerts()
	if len(kept) > 2*keptAlerts+1 {
		t.Fatalf("%d alerts kept, want at most %d", len(kept), 2*keptAlerts+1)
	}
	if kept[0].ID != ids[0] || kept[len(kept)-1].ID != ids[anomalies-1] {
		t.Fatalf("kept %d alerts from %s to %s: not the pending one and the newest", len(kept), kept[0].ID, kept[len(kept)-1].ID)
	}
	back := restoredFromBodies(t, o)
	if st := back.Stats(); st.Alerts != anomalies || st.Pending != 1 {
		t.Fatalf("restored: %d alerts, %d pending", st.Alerts, st.Pending)
	}
	// The pending alert is still resolved and judged on its own members.
	for _, e := range []*Online{o, back} {
		e.Close("V0")
		if _, err := e.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if st := e.Stats(); st.Pending != 0 || st.Alerts != anomalies {
			t.Fatalf("after V0 closed: %d alerts, %d pending (%v)", st.Alerts, st.Pending, e.closed.get(1))
		}
	}
}
