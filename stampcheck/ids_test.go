package stampcheck

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestIDSetDup: idSet.dup finds two equal ids wherever they are, and
// never calls two different ids equal, also when their hashes collide
// (forced here: a 64-bit collision is too rare to meet by chance, and it
// is the case where the text decides).
func TestIDSetDup(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + rng.IntN(300)
		var s idSet
		s.init(0)
		ids := make([]string, n)
		for i := range ids {
			ids[i] = "t" + strconv.Itoa(i)
		}
		want := false
		if round%2 == 1 && n > 1 {
			// One id repeated at a random later position.
			i := rng.IntN(n - 1)
			j := i + 1 + rng.IntN(n-1-i)
			ids[j] = ids[i]
			want = true
		}
		for _, id := range ids {
			s.add(id)
		}
		if round%4 >= 2 {
			// Collide the hashes of a few different ids with others.
			for range 1 + rng.IntN(5) {
				a, b := rng.IntN(n), rng.IntN(n)
				// Every copy of ids[a] gets ids[b]'s hash: equal ids
				// keep equal hashes, as a hash function gives them.
				for i := range ids {
					if ids[i] == ids[a] {
						s.hash[i] = s.hash[b]
					}
				}
			}
		}
		if got := s.dup(); got != want {
			t.Fatalf("round %d: %d ids, dup %v, want %v", round, n, got, want)
		}
		if got := s.dup(); got != want {
			t.Fatalf("round %d: dup asked again: %v, want %v", round, got, want)
		}
	}
}

// TestRadixSort: radixSort sorts as slices.Sort does, and stably (the
// stamps' order relies on it: equal stamps stay in index order).
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 17, 1000} {
		a := make([]uint64, n)
		for i := range a {
			a[i] = rng.Uint64()
			if i%3 == 0 {
				a[i] &= 0xffff // small values: most digits zero
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		if got := radixSort(a, func(v uint64) uint64 { return v }); !slices.Equal(got, want) {
			t.Fatalf("n=%d: not sorted", n)
		}
		// Stability, and negative keys through sortByStamp's mapping:
		// few distinct stamps, so most have ties.
		ps := make([]stampPair, n)
		for i := range ps {
			ps[i] = stampPair{int64(rng.IntN(7)) - 3, int32(i)}
		}
		wantPs := slices.Clone(ps)
		slices.SortStableFunc(wantPs, func(x, y stampPair) int { return cmp.Compare(x.ts, y.ts) })
		if got := radixSort(ps, func(x stampPair) uint64 { return uint64(x.ts) ^ 1<<63 }); !slices.Equal(got, wantPs) {
			t.Fatalf("n=%d: pairs not sorted stably", n)
		}
	}
}
