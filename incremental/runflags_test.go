package incremental

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
	rng := rand.New(rand.NewPCG(4, 4))
	var f runFlags
	var model []bool
	for range 5000 {
		switch n := len(model); {
		case n == 0 || rng.IntN(3) == 0:
			v := rng.IntN(2) == 0
			f.push(v)
			model = append(model, v)
		case rng.IntN(200) == 0:
			v := rng.IntN(2) == 0
			f.setAll(v)
			for i := range model {
				model[i] = v
			}
		default:
			i, v := rng.IntN(n), rng.IntN(2) == 0
			f.set(i, v)
			model[i] = v
		}
		if f.len() != len(model) || !slices.Equal(f.bools(), model) {
			t.Fatalf("flags %v, model %v", f.bools(), model)
		}
	}
	if m := makeFlags(130); m.len() != 130 || slices.Contains(m.bools(), true) {
		t.Fatal("makeFlags")
	}
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
