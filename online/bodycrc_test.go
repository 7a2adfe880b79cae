package online

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/state"
)

// durableRun is an engine with a durable body file after the first half
// of a generated history, its snapshot, and the rest of the history.
type durableRun struct {
	opts       history.Options
	snap, file []byte
	rest       []history.Txn
	ids        []string // the first half's ids, closed before the rest
}

func newDurableRun(t *testing.T, dir string) *durableRun {
	t.Helper()
	cfg, _ := gen.Preset("blindw-rw")
	// More than a log chunk (4,096) before the snapshot: offset blocks
	// are written out too. The anomalies come after it, so confirming
	// them reads evicted bodies back from the file.
	// (13,000: a replay after an alert counted its evictions again, and
	// 12,000 reached 4,096 evictions only so; a quarantine in place does
	// not replay.)
	cfg.Txns, cfg.Seed = 13000, 9
	cfg.Inject = []string{"lost-update", "write-skew", "G-single"}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	live := filepath.Join(dir, "bodies")
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(live)})
	half := len(h.Txns) / 2
	const batch = 500
	for i := 0; i < half; i += batch {
		o.Release(h.Txns[i:min(i+batch, half)]...)
		for _, tx := range h.Txns[max(i-batch, 0):i] {
			o.Close(tx.ID)
		}
		if _, err := o.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	snap, sync, err := o.SnapshotDurable()
	if err != nil {
		t.Fatal(err)
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	if o.Stats().Evicted < logChunkSize {
		t.Fatalf("%d evicted: no offset block written out", o.Stats().Evicted)
	}
	file, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	d := &durableRun{opts: opts, snap: snap, file: file, rest: h.Txns[half:]}
	for _, tx := range h.Txns[max(half-batch, 0):half] {
		d.ids = append(d.ids, tx.ID)
	}
	return d
}

// restore restores the snapshot from body file bytes file.
func (d *durableRun) restore(t *testing.T, path string, file []byte) (*Online, error) {
	t.Helper()
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return RestoreOnlineAt(d.opts, state.NewFileBodies(path), d.snap, nil)
}

// finish runs the rest of the history through o and returns its alert
// ids: confirming each alert reads the evicted bodies of its history.
func (d *durableRun) finish(o *Online) ([]string, error) {
	for _, id := range d.ids {
		o.Close(id)
	}
	o.Release(d.rest...)
	o.CloseAll()
	found, err := o.Step(context.Background())
	var ids []string
	for _, a := range found {
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	return ids, err
}

// TestBodyFileBitFlip: one bit flipped anywhere in a durable body file
// (records, offset blocks, rewind points) is either never read, and then
// changes nothing, or found: the restore, a snapshot that reads every
// body, or the step that confirms an alert fails with ErrCorrupt. Never
// a different engine or a different alert: a body that feeds a proof is
// the body that was written. Before the records had checksums, a flipped
// bit in a value was read back as another value, silently.
func TestBodyFileBitFlip(t *testing.T) {
	dir := t.TempDir()
	d := newDurableRun(t, dir)
	ref, err := d.restore(t, filepath.Join(dir, "ref"), d.file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(20, 8))
	flips, alertFlips := 150, 12
	if testing.Short() {
		flips, alertFlips = 30, 3
	}
	var wantAlerts []string
	found := 0
	for k := range flips {
		off := rng.IntN(len(d.file))
		bit := byte(1) << rng.IntN(8)
		file := bytes.Clone(d.file)
		file[off] ^= bit
		o, err := d.restore(t, filepath.Join(dir, "flipped"), file)
		switch {
		case err != nil:
		case k < alertFlips:
			// The run goes on: confirming its alerts reads the evicted
			// bodies back.
			if wantAlerts == nil {
				r, _ := d.restore(t, filepath.Join(dir, "ref2"), d.file)
				if wantAlerts, err = d.finish(r); err != nil || len(wantAlerts) == 0 {
					t.Fatalf("reference run: alerts %v, %v", wantAlerts, err)
				}
			}
			var got []string
			if got, err = d.finish(o); err == nil && !slices.Equal(got, wantAlerts) {
				t.Fatalf("bit %02x at byte %d flipped: alerts %v, want %v", bit, off, got, wantAlerts)
			}
		default:
			var got []byte
			if got, err = o.Snapshot(); err == nil && !bytes.Equal(got, want) {
				t.Fatalf("bit %02x at byte %d flipped: restored and read back silently, a different engine", bit, off)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("bit %02x at byte %d flipped: %v, not ErrCorrupt", bit, off, err)
			}
			found++
		}
	}
	if found == 0 {
		t.Fatal("no flipped bit was found: the test reads nothing back")
	}
	t.Logf("%d of %d flips found, the rest in bytes never read", found, flips)
}

// TestBodyFileWithoutChecksums: a body file written before records had
// checksums (snapshot version 4) is restored and read as it was, and
// what the engine appends to it has checksums from its old length on:
// the run ends with the alerts of a run that never stopped.
func TestBodyFileWithoutChecksums(t *testing.T) {
	dir := t.TempDir()
	d := newDurableRun(t, dir)
	r, err := d.restore(t, filepath.Join(dir, "ref"), d.file)
	if err != nil {
		t.Fatal(err)
	}
	want, err := d.finish(r)
	if err != nil {
		t.Fatal(err)
	}

	// The same run with a writer of version 4: no checksums.
	cfg, _ := gen.Preset("blindw-rw")
	// (13,000: a replay after an alert counted its evictions again, and
	// 12,000 reached 4,096 evictions only so; a quarantine in place does
	// not replay.)
	cfg.Txns, cfg.Seed = 13000, 9
	cfg.Inject = []string{"lost-update", "write-skew", "G-single"}
	h, _, _ := gen.Generate(cfg)
	live := filepath.Join(dir, "old")
	o := NewOnlineConfig(d.opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(live)})
	o.spill.crcFrom = math.MaxInt64
	half := len(h.Txns) / 2
	for i := 0; i < half; i += 500 {
		o.Release(h.Txns[i:min(i+500, half)]...)
		for _, tx := range h.Txns[max(i-500, 0):i] {
			o.Close(tx.ID)
		}
		if _, err := o.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	snap, sync, err := o.SnapshotDurable()
	if err != nil {
		t.Fatal(err)
	}
	if err := sync(); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(snap, &m); err != nil {
		t.Fatal(err)
	}
	m["Version"] = snapshotVersionNoCRC
	delete(m["Spill"].(map[string]any), "CRCFrom")
	old, _ := json.Marshal(m)
	back, err := RestoreOnlineAt(d.opts, state.NewFileBodies(live), old, nil)
	if err != nil {
		t.Fatal(err)
	}
	if end := back.spill.end; back.spill.crcFrom != end {
		t.Fatalf("checksums from %d, the old file ends at %d", back.spill.crcFrom, end)
	}
	got, err := d.finish(back)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("from a version 4 body file: alerts %v (%v), want %v", got, err, want)
	}
	if back.spill.end == back.spill.crcFrom {
		t.Fatal("nothing appended: the checksummed part was not exercised")
	}
}
