package incremental

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestSpilledBodiesServeAlerts: W1's body leaves memory once W2 overwrites
// it and both are evicted; a later stale read of x1 needs it back, for the
// alert's core and for rendering it.
func TestSpilledBodiesServeAlerts(t *testing.T) {
	h, o := evictingEngine(t, "W1[0,10] w x1, w y1 · W2[20,30] w x2, w y2 · W3[40,50] w y3 · R[100,110] r x1")
	ctx := context.Background()
	o.Release(h.Txns[:3]...)
	o.Close("W1", "W2", "W3")
	if _, err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	i, _ := o.find("W1")
	if !o.spill.spilled(i) || len(o.released[i].Ops) != 0 {
		t.Fatalf("W1 not spilled (stats %+v, spill error %v)", o.Stats(), o.SpillError())
	}
	// A restart from a checkpoint with the bodies stored apart, read one
	// at a time: W1 goes straight back to the spill.
	snap, bodies, err := o.SnapshotBodies(0)
	if err != nil {
		t.Fatal(err)
	}
	o, err = RestoreOnlineEach(o.opts, snap, func(body func([]byte) error) error {
		for _, b := range bodies {
			if err := body(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i, _ := o.find("W1"); !o.spill.spilled(i) || len(o.released[i].Ops) != 0 {
		t.Fatalf("W1 in memory after the restore (spill error %v)", o.SpillError())
	}
	o.Release(h.Txns[3])
	o.Close("R")
	alerts, err := o.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 || !slices.Equal(alerts[0].Core, []string{"W1", "W2", "R"}) {
		t.Fatalf("alerts %v, want one with core W1 W2 R", func() (c [][]string) {
			for _, a := range alerts {
				c = append(c, a.Core)
			}
			return
		}())
	}
	w1 := o.Txn("W1")
	if w1 == nil || len(w1.Ops) != 2 || w1.Ops[0].Kind != history.Write {
		t.Fatalf("W1 as rendered: %+v", w1)
	}
	// The whole snapshot carries every body, spilled ones included.
	snap, err = o.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	back, err := RestoreOnline(o.opts, snap)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Txn("W2"); got == nil || len(got.Ops) != 2 {
		t.Fatalf("W2 after restore: %+v", got)
	}
}

// TestSpillCodecRoundTrip: every generated body, lists and unknown
// outcomes included, comes back from a spill record as it went in, and a
// record cut short never panics and is an error unless only its last byte
// is missing.
func TestSpillCodecRoundTrip(t *testing.T) {
	var txns []history.Txn
	for _, preset := range gen.PresetNames() {
		cfg, _ := gen.Preset(preset)
		cfg.Txns, cfg.UnknownRatio, cfg.Seed = 300, 0.1, 7
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		txns = append(txns, h.Txns...)
	}
	txns = append(txns,
		history.Txn{ID: "empty-list", Ops: []history.Op{{Kind: history.Read, IsList: true, Key: "l", List: []history.Value{}}}},
		history.Txn{ID: "pos", Pos: history.Pos{Source: "f.jsonl", Line: 7, Offset: -1}, Start: -5, End: 1 << 62, HasTime: true})
	for i := range txns {
		rec := appendTxn(nil, &txns[i])
		back, err := decodeTxn(rec)
		if err != nil || !reflect.DeepEqual(back, txns[i]) {
			t.Fatalf("%s: got %+v (%v), want %+v", txns[i].ID, back, err, txns[i])
		}
		if i%50 == 0 {
			for n := 0; n < len(rec); n++ {
				if _, err := decodeTxn(rec[:n]); err == nil && n < len(rec)-1 {
					t.Fatalf("%s: a record cut to %d of %d bytes decoded", txns[i].ID, n, len(rec))
				}
			}
		}
	}
}

// TestReplayInSmallChunks: the rebuild after an alert replays the released
// history a chunk per step; with chunks of a few transactions, generated
// histories with injected anomalies (alerts, so replays) still agree with
// check and every alert is a core.
func TestReplayInSmallChunks(t *testing.T) {
	defer func(n int) { replayChunk = n }(replayChunk)
	replayChunk = 5
	sweepGenerated(t, tinyCount(30), 29, func(int) int { return 2 })
}
