package incremental

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunFlagsRoundTrip: any flag slice comes back from its run lengths,
// the version-2 form (one bool each) still reads, and a long run costs a
// number, not a bool per transaction.
func TestRunFlagsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []runFlags{nil, {}, {true}, {false}, {true, true, false}, {false, false, true}}
	for range 200 {
		f := make(runFlags, rng.IntN(50))
		for i := range f {
			f[i] = rng.IntN(3) == 0
		}
		cases = append(cases, f)
	}
	for _, f := range cases {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		var back runFlags
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%v as %s: %v", f, b, err)
		}
		if (f == nil) != (back == nil) || !slices.Equal(f, back) {
			t.Fatalf("%v as %s came back as %v", f, b, back)
		}
		old, _ := json.Marshal([]bool(f))
		back = nil
		if err := json.Unmarshal(old, &back); err != nil || !slices.Equal(f, back) {
			t.Fatalf("version-2 form %s came back as %v (%v)", old, back, err)
		}
	}
	long := make(runFlags, 1_000_000)
	long[500] = true
	if b, _ := json.Marshal(long); len(b) > 30 {
		t.Fatalf("a million flags with one set take %d bytes: %s", len(b), b)
	}
	for _, bad := range []string{`[-1]`, `[1,"x"]`, `{}`} {
		var f runFlags
		if err := json.Unmarshal([]byte(bad), &f); err == nil {
			t.Errorf("%s read as %v", bad, f)
		}
	}
}
