package online

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/state"
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

// TestSnapshotDurableRoundTrip: an engine whose bodies live in a durable
// file, restored at every checkpoint from the snapshot and a copy of the
// file as SnapshotDurable left it (with bytes a crash left after that
// length), or every fourth time from SnapshotBodies' bodies into a new
// file, has the same full Snapshot as an engine that ran through; the
// run goes on with the restored one. 30,000 transactions fill and drop
// log chunks (4,096 each), and the injected anomalies bring alerts and
// the replays after them, which read bodies back (unstub). A body file
// cut short is refused.
func TestSnapshotDurableRoundTrip(t *testing.T) {
	for _, preset := range []string{"mixed", "blindw-rw"} {
		for _, evict := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/evict=%v", preset, evict), func(t *testing.T) {
				testSnapshotDurableRoundTrip(t, preset, evict)
			})
		}
	}
}

func testSnapshotDurableRoundTrip(t *testing.T, preset string, evict bool) {
	cfg, _ := gen.Preset(preset)
	// Evenly spread anomalies: the second comes after chunks free of
	// cores were written out, so the replay after it reads them back
	// (spill.loose).
	cfg.Txns, cfg.Seed = 30000, 5
	cfg.Inject = []string{"lost-update", "write-skew"}
	if preset == "mixed" || !evict {
		cfg.Txns = 5000 // pinned list keys, or nothing evicted: slower steps
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	dir := t.TempDir()
	live := filepath.Join(dir, "bodies")
	o := NewOnlineConfig(opts, OnlineConfig{Evict: evict, Bodies: state.NewFileBodies(live)})
	through := NewOnlineConfig(opts, OnlineConfig{Evict: evict})
	const batch = 700
	closed := 0
	for i, k := 0, 0; i < len(h.Txns); i, k = i+batch, k+1 {
		for _, e := range []*Online{o, through} {
			e.Release(h.Txns[i:min(i+batch, len(h.Txns))]...)
			for _, tx := range h.Txns[closed:i] {
				e.Close(tx.ID)
			}
			if _, err := e.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		closed = i
		// What a crash after the checkpoint leaves: more records, a torn one.
		copyPath := filepath.Join(dir, fmt.Sprintf("bodies-%d", k))
		back, snap, file := durableCheckpoint(t, o, opts, live, copyPath, []byte{7, 1, 2, 3})
		if k%4 == 3 {
			// A checkpoint of the earlier form (bodies handed over) into a
			// new body file, as a run on a version 2 state directory.
			old, bodies, err := o.SnapshotBodies(0)
			if err != nil {
				t.Fatal(err)
			}
			copyPath = filepath.Join(dir, fmt.Sprintf("bodies-%d-from-old", k))
			back, err = RestoreOnlineAt(opts, state.NewFileBodies(copyPath), old, func(body func([]byte) error) error {
				for _, b := range bodies {
					if err := body(b); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("after %d, from bodies: %v", i, err)
			}
		}
		want, _ := through.Snapshot()
		for name, e := range map[string]*Online{"restored": back, "restored before": o} {
			if got, _ := e.Snapshot(); !bytes.Equal(got, want) {
				t.Fatalf("after %d: %s engine differs from one that ran through", i, name)
			}
		}
		if len(file) > 0 {
			short := filepath.Join(dir, "short")
			if err := os.WriteFile(short, file[:len(file)-1], 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := RestoreOnlineAt(opts, state.NewFileBodies(short), snap, nil); err == nil {
				t.Fatal("a body file cut short was not noticed")
			}
		}
		o, live = back, copyPath
	}
	for _, e := range []*Online{o, through} {
		e.CloseAll()
		if _, err := e.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(o.Alerts()) != len(through.Alerts()) || len(o.Alerts()) == 0 {
		t.Fatalf("%d alerts, %d running through (want some)", len(o.Alerts()), len(through.Alerts()))
	}
	if evict && o.Stats().Evicted == 0 {
		t.Fatal("nothing evicted: the body file was not exercised")
	}
}
