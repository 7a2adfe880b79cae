package online

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/state"
)

// TestRetention: with a retention bound that deletes most evicted bodies
// of a 40,000-transaction stream with anomalies spread over it, the
// engine raises the alerts, ids included, of one that keeps every body;
// each core is a minimal violation of the whole history; an engine
// restored from its durable snapshot every few steps (into a copy of its
// body file, holes and all) raises the same alerts and deletes the same
// bodies; and the body file's blocks before the cut are freed.
func TestRetention(t *testing.T) {
	defer func(n int) { rewindEvery = n }(rewindEvery)
	rewindEvery = 2048
	cfg, _ := gen.Preset("blindw-rw")
	cfg.Txns, cfg.Seed = 40000, 9
	cfg.Inject = []string{"lost-update", "write-skew", "lost-update", "write-skew", "lost-update"}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	dir := t.TempDir()
	ret := Retention{MaxBytes: 300 << 10}
	live := filepath.Join(dir, "bodies")
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(live), Retention: ret})
	through := NewOnlineConfig(opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(filepath.Join(dir, "through")), Retention: ret})
	all := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	const batch = 700
	closed := 0
	for i, k := 0, 0; i < len(h.Txns); i, k = i+batch, k+1 {
		for _, e := range []*Online{o, through, all} {
			e.Release(h.Txns[i:min(i+batch, len(h.Txns))]...)
			for _, tx := range h.Txns[closed:i] {
				e.Close(tx.ID)
			}
			if _, err := e.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		closed = i
		if k%5 != 4 {
			continue
		}
		snap, sync, err := o.SnapshotDurable()
		if err != nil {
			t.Fatal(err)
		}
		if err := sync(); err != nil {
			t.Fatal(err)
		}
		// The checkpoint is durable: what it no longer names may go.
		if err := o.Punch()(); err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(live)
		if err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(dir, fmt.Sprintf("bodies-%d", k))
		if err := os.WriteFile(copyPath, file, 0o600); err != nil {
			t.Fatal(err)
		}
		if o, err = RestoreOnlineAt(opts, state.NewFileBodies(copyPath), snap, nil); err != nil {
			t.Fatalf("after %d: %v", i, err)
		}
		o.SetRetention(ret)
		live = copyPath
	}
	for _, e := range []*Online{o, through, all} {
		e.CloseAll()
		if _, err := e.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(e *Online) (out []string) {
		for _, a := range e.Alerts() {
			out = append(out, a.ID)
			if a.PastRetention != "" {
				t.Errorf("alert %s %v: %s", a.ID, a.Core, a.PastRetention)
			}
		}
		return out
	}
	if want := ids(all); len(want) < 3 || !slices.Equal(ids(through), want) || !slices.Equal(ids(o), want) {
		t.Fatalf("alerts %v with retention, %v restored, %v keeping every body (want several)", ids(through), ids(o), want)
	}
	rs := through.RetentionStats()
	if got := o.RetentionStats(); got.Floor != rs.Floor || got.Gone != rs.Gone {
		t.Fatalf("restored: %+v, ran through: %+v", got, rs)
	}
	if rs.Floor < len(h.Txns)/2 || rs.Gone < len(h.Txns)/3 {
		t.Fatalf("retention deleted little: %+v of %d", rs, len(h.Txns))
	}
	t.Logf("retention: %+v; %d alerts; %d replays from a rewind point", rs, len(all.Alerts()), through.rewound)
	// Each core is a minimal violation of the whole history.
	for _, a := range through.Alerts() {
		checkCoreByCheck(t, h, opts, a.Core)
	}
	if _, sync, err := o.SnapshotDurable(); err != nil || sync() != nil {
		t.Fatal(err)
	}
	if err := o.Punch()(); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(live, &st); err != nil {
		t.Fatal(err)
	}
	if used := st.Blocks * 512; used > st.Size-rs.Cut/2 {
		t.Errorf("body file: %d bytes, %d in use, cut at %d: the holes were not punched", st.Size, used, rs.Cut)
	}
}

// TestRetentionNamesGoneWriter: a stale read of a value whose writer is
// past retention raises an alert (the trigger does not need the body)
// that says the read's writer may be gone, rather than a core that would
// claim the value was never written.
func TestRetentionNamesGoneWriter(t *testing.T) {
	defer func(n int) { rewindEvery = n }(rewindEvery)
	rewindEvery = 1024
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true, Retention: Retention{MaxBytes: 64 << 10}})
	all := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	txn := func(id string, at int64, ops ...history.Op) history.Txn {
		return history.Txn{ID: id, Session: id, HasSession: true, Start: at, End: at + 5, HasTime: true, Status: history.Committed, Ops: ops}
	}
	w := func(k, v string) history.Op {
		return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
	}
	var stream []history.Txn
	stream = append(stream, txn("W0", 10, w("x", "0")), txn("W1", 20, w("x", "1")))
	for i := range 30000 {
		stream = append(stream, txn(fmt.Sprintf("F%d", i), int64(100+10*i), w(fmt.Sprintf("k%d", i%50), fmt.Sprint(i))))
	}
	stream = append(stream, txn("R", int64(100+10*30000), history.Op{Kind: history.Read, Key: "x", Value: "0"}))
	for i := 0; i < len(stream); i += 500 {
		for _, e := range []*Online{o, all} {
			e.Release(stream[i:min(i+500, len(stream))]...)
			for _, tx := range stream[:i] {
				e.Close(tx.ID)
			}
			if _, err := e.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, e := range []*Online{o, all} {
		e.CloseAll()
		if _, err := e.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(all.Alerts()) != 1 || len(o.Alerts()) != 1 {
		t.Fatalf("alerts %d keeping every body, %d with retention; want 1", len(all.Alerts()), len(o.Alerts()))
	}
	a := o.Alerts()[0]
	t.Logf("keeping every body: %v %s; with retention: %v %s: %s", all.Alerts()[0].Core, all.Alerts()[0].Type, a.Core, a.Type, a.PastRetention)
	if !strings.Contains(a.PastRetention, "R read x=0") {
		t.Fatalf("alert %v does not name the read whose writer is gone: %q", a.Core, a.PastRetention)
	}
	if rs := o.RetentionStats(); rs.Gone == 0 || !o.gone(0) {
		t.Fatalf("W0's body was not deleted: %+v", rs)
	}
}

// TestSetAside: what setAside quarantines is exactly what was released
// or time-closed since the last satisfiable step, which leaves a part of
// that step's instance, so checking goes on without the anomaly among
// them (here a lost update) being found again, and the alert names them.
func TestSetAside(t *testing.T) {
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true, Retention: Retention{MaxBytes: 1 << 20}})
	txn := func(id string, at int64, ops ...history.Op) history.Txn {
		return history.Txn{ID: id, Session: id, HasSession: true, Start: at, End: at + 5, HasTime: true, Status: history.Committed, Ops: ops}
	}
	w := func(k, v string) history.Op {
		return history.Op{Kind: history.Write, Key: history.Key(k), Value: history.Value(v)}
	}
	r := func(k, v string) history.Op {
		return history.Op{Kind: history.Read, Key: history.Key(k), Value: history.Value(v)}
	}
	ctx := context.Background()
	o.Release(txn("A", 10, w("x", "0")), txn("B", 20, w("y", "0")))
	o.Close("A")
	if as, err := o.Step(ctx); err != nil || len(as) != 0 {
		t.Fatal(as, err)
	}
	// A lost update on x, and B closes: all since the last step.
	o.Release(txn("C", 30, r("x", "0"), w("x", "1")), txn("D", 31, r("x", "0"), w("x", "2")))
	o.Close("B", "C", "D")
	a, err := o.setAside(ctx)
	if err != nil || a == nil {
		t.Fatal(a, err)
	}
	if !slices.Equal(a.Core, []string{"B", "C", "D"}) || a.Type != PastRetentionType || !strings.Contains(a.PastRetention, "3 transactions") {
		t.Fatalf("set aside %v (%s): %s", a.Core, a.Type, a.PastRetention)
	}
	o.Release(txn("E", 100, r("x", "0")))
	o.CloseAll()
	if as, err := o.Step(ctx); err != nil || len(as) != 0 {
		t.Fatalf("after setting aside: %v %v", as, err)
	}
	if st := o.Stats(); st.SetAside != 3 || st.Disagreements != 0 {
		t.Fatalf("%+v", st)
	}
}
