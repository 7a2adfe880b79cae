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
// checkpoint), then restored again at every checkpoint, has the same full
// Snapshot as an engine that ran through, and a body count that does not
// match is refused. The evicted bodies go back to the spill as records
// (restoreSpilled); blindw-rw evicts most, mixed pins its list keys.
func TestSnapshotBodiesRoundTrip(t *testing.T) {
	for _, preset := range []string{"mixed", "blindw-rw"} {
		for _, evict := range []bool{false, true} {
			testSnapshotBodiesRoundTrip(t, preset, evict)
		}
	}
}

func testSnapshotBodiesRoundTrip(t *testing.T, preset string, evict bool) {
	cfg, _ := gen.Preset(preset)
	cfg.Txns, cfg.Seed = 300, 9
	cfg.Inject = []string{"lost-update"}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	{
		o := NewOnlineConfig(opts, OnlineConfig{Evict: evict})
		through := NewOnlineConfig(opts, OnlineConfig{Evict: evict})
		var stored [][]byte
		for i := 0; i < len(h.Txns); i += 50 {
			for _, e := range []*Online{o, through} {
				e.Release(h.Txns[i:min(i+50, len(h.Txns))]...)
				for _, tx := range h.Txns[:i] {
					e.Close(tx.ID)
				}
				if _, err := e.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
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
			want, _ := through.Snapshot()
			for name, e := range map[string]*Online{"restored": back, "restored before": o} {
				if got, _ := e.Snapshot(); !bytes.Equal(got, want) {
					t.Fatalf("%s evict=%v, after %d: %s engine differs from one that ran through", preset, evict, i, name)
				}
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
				t.Fatalf("%s evict=%v, after %d: restored from JSON bodies differs", preset, evict, i)
			}
			o = back
		}
	}
}
