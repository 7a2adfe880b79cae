package online

import (
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/state"
)

// TestWriteIndexMatchesScan is the guard of the write index (writeidx.go
// W1, docs/SEMANTICS.md §5 "The write index"): after a generated stream
// (every preset, lists, duplicates, unknown outcomes, injected anomalies)
// with runs of a few releases each (so that short histories write and
// merge many), H|S found through the index is H|S found by the pass over
// every body, for random sets S, and again on the engine restored from a
// durable snapshot (fences read back, pending rebuilt: W3). An entry the
// index lost shows as a missing writer, and so as a different history.
func TestWriteIndexMatchesScan(t *testing.T) {
	defer func(n int) { widxEvery = n }(widxEvery)
	n := 12
	if testing.Short() {
		n = 4
	}
	runs := 0
	for i := range n {
		h, opts, cfg, rng := generatedCase(t, i, 131, 150, 250, 2+i%5)
		widxEvery = 1 + rng.IntN(12)
		_, o := sweep(t, h, opts)
		if !o.widx.on {
			t.Fatalf("history %d: the write index is off (%v)", i, o.SpillError())
		}
		runs += len(o.widx.runs)
		compare := func(o *Online, what string) {
			t.Helper()
			for range 20 {
				var set []int
				for p := range o.log.len() {
					if rng.IntN(4) == 0 {
						set = append(set, p)
					}
				}
				got, gotPos, err := o.localHistory(set)
				if err != nil {
					t.Fatal(err)
				}
				o.widx.on = false
				want, wantPos, err := o.localHistory(set)
				o.widx.on = true
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(gotPos, wantPos) || !reflect.DeepEqual(got, want) {
					t.Fatalf("history %d (%v), %s, S=%v: H|S by the index has positions %v, by every body %v", i, cfg.Inject, what, set, gotPos, wantPos)
				}
			}
		}
		compare(o, "run through")

		// The same stream into a durable body file, restored from its
		// snapshot.
		path := filepath.Join(t.TempDir(), "bodies")
		d := NewOnlineConfig(opts, OnlineConfig{Evict: true, Bodies: state.NewFileBodies(path)})
		d.Release(sortedByStart(h)...)
		d.CloseAll()
		if _, err := d.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
		snap, sync, err := d.SnapshotDurable()
		if err != nil {
			t.Fatal(err)
		}
		if err := sync(); err != nil {
			t.Fatal(err)
		}
		back, err := RestoreOnlineAt(opts, state.NewFileBodies(path), snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !back.widx.on || len(back.widx.runs) != len(d.widx.runs) || back.widx.covered != d.widx.covered || len(back.widx.pending) != len(d.widx.pending) {
			t.Fatalf("history %d: restored index on=%v, %d runs covering %d, %d pending; saved %d runs covering %d, %d pending",
				i, back.widx.on, len(back.widx.runs), back.widx.covered, len(back.widx.pending), len(d.widx.runs), d.widx.covered, len(d.widx.pending))
		}
		compare(back, "restored")
	}
	if runs == 0 {
		t.Fatal("no run was written: the index's file path was not exercised")
	}
}

// TestWriteIndexLookup holds the runs and their merges to a map: every
// position added under a hash is found (W1), through pages, fences and
// merges, with hashes crowded so that equal ones span pages.
func TestWriteIndexLookup(t *testing.T) {
	defer func(n int) { widxEvery = n }(widxEvery)
	widxEvery = 16
	rng := rand.New(rand.NewPCG(1, 2))
	o := NewOnlineConfig(history.DefaultOptions(), OnlineConfig{Evict: true})
	model := map[uint32][]int{}
	for i := range 16 * 37 {
		for range rng.IntN(9) {
			h := uint32(rng.IntN(40)) // few hashes: long runs of equal ones
			if rng.IntN(3) == 0 {
				h = rng.Uint32()
			}
			o.widx.pending = append(o.widx.pending, widxEntry{h, uint32(i)})
			model[h] = append(model[h], i)
		}
		o.indexWrites(i, nil)
		if !o.widx.on {
			t.Fatal(o.SpillError())
		}
	}
	if len(o.widx.runs) < 2 {
		t.Fatalf("%d runs", len(o.widx.runs))
	}
	for h, want := range model {
		got, err := o.lookupWrites([]uint32{h})
		if err != nil {
			t.Fatal(err)
		}
		want = slices.Compact(slices.Sorted(slices.Values(want)))
		if !slices.Equal(got, want) {
			t.Fatalf("hash %d: %v, want %v", h, got, want)
		}
	}
}

func sortedByStart(h *history.History) []history.Txn {
	txns := slices.Clone(h.Txns)
	slices.SortStableFunc(txns, func(a, b history.Txn) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	return txns
}
