package online

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunFlagsRoundTrip: any flags come back from their run lengths, the
// version-2 form (one bool each) still reads, and a long run costs a
// number, not a bool per transaction.
func TestRunFlagsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := [][]bool{nil, {true}, {false}, {true, true, false}, {false, false, true}}
	for range 200 {
		f := make([]bool, rng.IntN(200))
		for i := range f {
			f[i] = rng.IntN(3) == 0
		}
		cases = append(cases, f)
	}
	for range 100 {
		// Runs across words, and words all one way.
		var f []bool
		for v := rng.IntN(2) == 0; len(f) < 2000; v = !v {
			for range rng.IntN(300) {
				f = append(f, v)
			}
		}
		cases = append(cases, f)
	}
	for _, bs := range cases {
		f := flagsOf(bs)
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(naiveRuns(bs)); string(b) != string(want) {
			t.Fatalf("%v as %s, want %s", bs, b, want)
		}
		var back runFlags
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%v as %s: %v", bs, b, err)
		}
		if got := back.bools(); !slices.Equal(got, bs) && len(bs) > 0 {
			t.Fatalf("%v as %s came back as %v", bs, b, got)
		}
		old, _ := json.Marshal(bs)
		back = runFlags{}
		if err := json.Unmarshal(old, &back); err != nil || !slices.Equal(back.bools(), bs) && len(bs) > 0 {
			t.Fatalf("version-2 form %s came back as %v (%v)", old, back.bools(), err)
		}
	}
	long := makeFlags(1_000_000)
	long.set(500, true)
	if b, _ := json.Marshal(long); len(b) > 30 {
		t.Fatalf("a million flags with one set take %d bytes: %s", len(b), b)
	}
	for _, bad := range []string{`[-1]`, `[1,"x"]`, `{}`} {
		var f runFlags
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("%s read as %v", bad, f.bools())
		}
	}
}

// TestRunFlagsModel holds the bits to a []bool through pushes, sets and
// setAll, across word boundaries.
func TestRunFlagsModel(t *testing.T) {
	for _, fold := range [][2]int{{1024, 512}, {1, 1}, {3, 1}, {4, 2}} {
		foldAbove, foldKeep = fold[0], fold[1]
		testRunFlagsModel(t)
	}
	foldAbove, foldKeep = 1024, 512
	if m := makeFlags(130); m.len() != 130 || slices.Contains(m.bools(), true) {
		t.Fatal("makeFlags")
	}
}

// testRunFlagsModel: with the words of old flags folded into the prefix
// (small fold sizes), and sets mostly to the settled value as an
// engine's are, so that the prefix has both fill and odd words.
func testRunFlagsModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, uint64(foldAbove)))
	var f runFlags
	var model []bool
	settled := rng.IntN(2) == 0
	for step := range 20000 {
		switch n := len(model); {
		case n == 0 || rng.IntN(3) == 0:
			v := rng.IntN(2) == 0
			f.push(v)
			model = append(model, v)
		case rng.IntN(2000) == 0:
			v := rng.IntN(2) == 0
			f.setAll(v)
			for i := range model {
				model[i] = v
			}
		default:
			i, v := rng.IntN(n), rng.IntN(8) != 0 == settled
			f.set(i, v)
			model[i] = v
		}
		if step%97 != 0 {
			continue
		}
		if f.len() != len(model) || !slices.Equal(f.bools(), model) {
			t.Fatalf("fold %d/%d, step %d: flags %v, model %v", foldAbove, foldKeep, step, f.bools(), model)
		}
		if ones := countTrue(model); f.count() != ones {
			t.Fatalf("fold %d/%d, step %d: count %d, model %d", foldAbove, foldKeep, step, f.count(), ones)
		}
		b, err := json.Marshal(f)
		if want, _ := json.Marshal(naiveRuns(model)); err != nil || string(b) != string(want) {
			t.Fatalf("fold %d/%d, step %d: runs %s, want %s", foldAbove, foldKeep, step, b, want)
		}
		var back runFlags
		if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back.bools(), model) {
			t.Fatalf("fold %d/%d, step %d: %s came back as %v (%v)", foldAbove, foldKeep, step, b, back.bools(), err)
		}
		if c := f.clone(); c.count() != back.count() || back.count() != f.count() || !slices.Equal(c.bools(), model) {
			t.Fatalf("fold %d/%d, step %d: count %d, decoded %d, copied %d", foldAbove, foldKeep, step, f.count(), back.count(), c.count())
		}
	}
	if foldAbove < 1024 && f.base == 0 {
		t.Fatalf("fold %d/%d: nothing folded", foldAbove, foldKeep)
	}
}

// countTrue counts the true flags of a model.
func countTrue(bs []bool) int {
	n := 0
	for _, v := range bs {
		if v {
			n++
		}
	}
	return n
}

// naiveRuns is the run-length form one flag at a time.
func naiveRuns(bs []bool) []int {
	runs := []int{}
	cur, n := false, 0
	for _, v := range bs {
		if v != cur {
			runs = append(runs, n)
			cur, n = v, 0
		}
		n++
	}
	return append(runs, n)
}

// TestRunFlagsFolded: a long stream of settled flags with a few that are
// not holds a bounded number of words, whatever its length.
func TestRunFlagsFolded(t *testing.T) {
	var f runFlags
	for i := range 2_000_000 {
		f.push(i%100_000 == 7) // a quarantined transaction now and then
		if i > 0 && i%1000 == 0 {
			f.set(i-1000, true) // closing, late
			f.set(i-1000, false)
		}
	}
	if len(f.words) > foldAbove || len(f.odd) != 20 {
		t.Fatalf("2M flags hold %d words and %d odd words", len(f.words), len(f.odd))
	}
	if !f.get(7) || f.get(8) || !f.get(1_900_007) || f.next(8, true) != 100_007 {
		t.Fatal("folded flags misread")
	}
	// A set made whole, as a replay makes one, keeps no array of its size
	// once folded.
	whole := makeFlags(2_000_000)
	whole.set(123_456, true)
	whole.push(false)
	if cap(whole.words) > 2*foldAbove || !whole.get(123_456) || whole.len() != 2_000_001 {
		t.Fatalf("a folded whole set holds %d words of capacity", cap(whole.words))
	}
}
