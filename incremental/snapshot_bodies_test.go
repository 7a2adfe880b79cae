package incremental

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestSnapshotBodiesRoundTrip: an engine restored from SnapshotBodies and
// bodies saved piecewise (as run saves them, only the new ones at each
// checkpoint) has the same full Snapshot as the original, and a body
// count that does not match is refused.
func TestSnapshotBodiesRoundTrip(t *testing.T) {
	cfg, _ := gen.Preset("mixed")
	cfg.Txns, cfg.Seed = 300, 9
	cfg.Inject = []string{"lost-update"}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	for _, evict := range []bool{false, true} {
		o := NewOnlineConfig(opts, OnlineConfig{Evict: evict})
		var stored [][]byte
		for i := 0; i < len(h.Txns); i += 50 {
			o.Release(h.Txns[i:min(i+50, len(h.Txns))]...)
			for _, tx := range h.Txns[:i] {
				o.Close(tx.ID)
			}
			if _, err := o.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
			snap, bodies, err := o.SnapshotBodies(len(stored))
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, bodies...)
			back, err := RestoreOnlineBodies(opts, snap, stored)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := o.Snapshot()
			got, _ := back.Snapshot()
			if !bytes.Equal(got, want) {
				t.Fatalf("evict=%v, after %d: restored engine differs", evict, i)
			}
			if _, err := RestoreOnlineBodies(opts, snap, stored[1:]); err == nil {
				t.Fatal("a missing body was not noticed")
			}
			// Bodies stored as JSON, as before the body codec, still read.
			asJSON := make([][]byte, len(stored))
			for j, b := range stored {
				tx, err := decodeBody(b)
				if err != nil {
					t.Fatal(err)
				}
				if asJSON[j], err = json.Marshal(&tx); err != nil {
					t.Fatal(err)
				}
			}
			if old, err := RestoreOnlineBodies(opts, snap, asJSON); err != nil {
				t.Fatal(err)
			} else if got, _ := old.Snapshot(); !bytes.Equal(got, want) {
				t.Fatalf("evict=%v, after %d: restored from JSON bodies differs", evict, i)
			}
			o = back
		}
	}
}
