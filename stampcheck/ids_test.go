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

// TestSortByStamp holds sortByStamp to the comparison sort it stands
// for, stable by stamp with runs of equal stamps ordered by tie (or by
// index when tie is nil), on dense stamps (the counting sort), sparse
// ones (the radix sort) and negative ones, with many ties and none, and
// on index lists that are increasing (every caller's) and not.
func TestSortByStamp(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 2000 {
		n := rng.IntN(200)
		if round%100 == 0 {
			n = 5000 + rng.IntN(5000)
		}
		stamps := make([]int64, n)
		base := int64(rng.Uint64()) >> rng.IntN(64)
		spread := []int64{1, 3, int64(n) + 1, 4*int64(n) + 1, 4*int64(n) + 2, 1 << 40}[rng.IntN(6)]
		for i := range stamps {
			stamps[i] = base + rng.Int64N(spread)
			if round%7 == 0 {
				stamps[i] = -stamps[i]
			}
		}
		extra := make([]int, n) // the tie's key
		for i := range extra {
			extra[i] = rng.IntN(3)
		}
		idx := make([]int32, 0, n)
		for i := range n {
			if rng.IntN(4) != 0 {
				idx = append(idx, int32(i))
			}
		}
		if round%5 == 4 {
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		}
		var tie func(a, b int32) int
		if round%2 == 0 {
			tie = func(a, b int32) int { return cmp.Or(cmp.Compare(extra[a], extra[b]), cmp.Compare(a, b)) }
		}
		want := slices.Clone(idx)
		slices.SortFunc(want, func(a, b int32) int {
			if c := cmp.Compare(stamps[a], stamps[b]); c != 0 {
				return c
			}
			if tie != nil {
				return tie(a, b)
			}
			return cmp.Compare(a, b)
		})
		got := slices.Clone(idx)
		sortByStamp(got, func(i int32) int64 { return stamps[i] }, tie)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d (n=%d, spread %d): got %v, want %v", round, n, spread, got, want)
		}
	}
}
