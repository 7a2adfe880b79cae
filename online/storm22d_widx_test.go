package online

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestStorm22dLookupManyHashes holds a lookup of several hashes at once
// to a map (the union of every position added under one of them): a
// page is matched against every hash of the query that falls in its
// range (matchPage), hashes crowded so that several fall in one page and
// equal ones span pages, with absent hashes mixed in and pending entries
// not yet in a run.
func TestStorm22dLookupManyHashes(t *testing.T) {
	defer func(n int) { widxEvery = n }(widxEvery)
	widxEvery = 16
	rng := rand.New(rand.NewPCG(3, 4))
	o := NewOnlineConfig(history.DefaultOptions(), OnlineConfig{Evict: true})
	model := map[uint32][]int{}
	var hashes []uint32
	for i := range 16*41 + 7 {
		for range rng.IntN(9) {
			h := uint32(rng.IntN(60)) * 3 // few hashes, with gaps
			if rng.IntN(3) == 0 {
				h = rng.Uint32()
			}
			o.widx.pending = append(o.widx.pending, widxEntry{h, uint32(i)})
			model[h] = append(model[h], i)
			hashes = append(hashes, h)
		}
		o.indexWrites(i, nil)
		if !o.widx.on {
			t.Fatal(o.SpillError())
		}
	}
	if len(o.widx.runs) < 2 || len(o.widx.pending) == 0 {
		t.Fatalf("%d runs, %d pending: the lookup's paths are not all exercised", len(o.widx.runs), len(o.widx.pending))
	}
	for range 300 {
		var qs []uint32
		for range 1 + rng.IntN(12) {
			switch rng.IntN(3) {
			case 0:
				qs = append(qs, uint32(rng.IntN(180))) // often absent
			default:
				qs = append(qs, hashes[rng.IntN(len(hashes))])
			}
		}
		slices.Sort(qs)
		qs = slices.Compact(qs)
		var want []int
		for _, q := range qs {
			want = append(want, model[q]...)
		}
		slices.Sort(want)
		want = slices.Compact(want)
		got, err := o.lookupWrites(qs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("hashes %v: %v, want %v", qs, got, want)
		}
	}
}
