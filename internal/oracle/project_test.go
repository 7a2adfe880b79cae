package oracle

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

func randomSubset(rng *rand.Rand, h *history.History) []string {
	var ids []string
	for i := range h.Txns {
		if rng.IntN(2) == 0 {
			ids = append(ids, h.Txns[i].ID)
		}
	}
	return ids
}

func allIDs(h *history.History) []string {
	var ids []string
	for i := range h.Txns {
		ids = append(ids, h.Txns[i].ID)
	}
	return ids
}

// TestProjectSoundAndMonotone checks invariant O4 on generated histories:
// H|H is H; H|C invalid implies H|C' invalid for C ⊆ C' (and so H
// invalid); and a core shrunk by deletion from all of H passes CheckCore.
func TestProjectSoundAndMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	check := func(h *history.History, o history.Options) bool {
		v, _, err := Check(h, o)
		if err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
		return v
	}
	var cores int
	for range tinyCount(t, 2000) {
		h := RandomTiny(rng, randomTinyConfig(rng))
		o := randomOptions(rng)
		if p := Project(h, o, allIDs(h)); !reflect.DeepEqual(p, h) {
			t.Fatalf("H|H differs from H:\n%s\n%s", compactOf(h), compactOf(p))
		}
		small := randomSubset(rng, h)
		var large []string
		for _, id := range allIDs(h) {
			if rng.IntN(2) == 0 || contains(small, id) {
				large = append(large, id)
			}
		}
		if !check(Project(h, o, small), o) && check(Project(h, o, large), o) {
			t.Fatalf("%s Δ=%d: H|%v invalid but H|%v valid\n%s", o.Level, o.Skew, small, large, compactOf(h))
		}
		if check(h, o) {
			continue
		}
		core, err := ShrinkCore(h, o, allIDs(h))
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckCore(h, o, core); err != nil {
			t.Fatalf("%s Δ=%d: shrunk core %v: %v\n%s", o.Level, o.Skew, core, err, compactOf(h))
		}
		cores++
	}
	t.Logf("%d cores shrunk and checked", cores)
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestProjectRule pins the projection's cases on small histories, each
// against the rule of docs/SEMANTICS.md §3 as written.
func TestProjectRule(t *testing.T) {
	strict := history.DefaultOptions()
	strict.Level = history.StrictSerializable
	serial := history.DefaultOptions()
	unknownInit := strict
	unknownInit.InitialState = history.InitialUnknown
	for _, tc := range []struct {
		name, text string
		opts       history.Options
		core       []string
		want       string // H|C in compact form
	}{
		{"all writers of a duplicate must be in C (J)",
			"A[0,10] w x5 · B[40,50] w x5 · R[60,70] r x5", strict,
			[]string{"A", "R"}, "A[0,10] w x 5\nR[60,70]\n"},
		{"a writer after the reader in real time is not possible",
			"A[0,10] w x5 · R[20,30] r x5 · B[40,50] w x5", strict,
			[]string{"A", "R"}, "A[0,10] w x 5\nR[20,30] r x 5\n"},
		{"without real time every writer is possible",
			"A[0,10] w x5 · R[20,30] r x5 · B[40,50] w x5", serial,
			[]string{"A", "R"}, "A[0,10] w x 5\nR[20,30]\n"},
		{"a later writer of the reader's session is not possible",
			"R r x5 (session c) · A w x5 (session c) · B w x5", history.Options{Level: history.StrongSessionSerializable, InDoubt: -1},
			[]string{"R", "B"}, "R r x 5 (session c)\nB w x 5\n"},
		{"aborted and intermediate writers count",
			"A[0,10] w x5 (aborted) · B[0,10] w x5, w x6 · R[20,30] r x5 · W[0,5] w x5", strict,
			[]string{"W", "R", "B"}, "B[0,10] w x 5, w x 6\nR[20,30]\nW[0,5] w x 5\n"},
		{"a garbage read is kept",
			"A[0,10] w x1 · R[20,30] r x9", strict,
			[]string{"R"}, "R[20,30] r x 9\n"},
		{"a read of null has only the initial state, unless somebody writes null",
			"A[0,10] w x1 · R[20,30] r x null · N[0,5] w x null", strict,
			[]string{"R", "A"}, "A[0,10] w x 1\nR[20,30]\n"},
		{"a read of null with no null writer is kept",
			"A[0,10] w x1 · R[20,30] r x null", strict,
			[]string{"R"}, "R[20,30] r x null\n"},
		{"under an unknown initial state the initial state is a writer too, always present",
			"A[0,10] w x1 · R[20,30] r x7", unknownInit,
			[]string{"R"}, "R[20,30] r x 7\n"},
		{"an internal read is kept",
			"A[0,10] w x1 · R[20,30] w x1, r x1", strict,
			[]string{"R"}, "R[20,30] w x 1, r x 1\n"},
		{"an internal list read still needs the appenders of its prefix",
			"A[0,10] append l 4 · R[20,30] append l 3, r l [4 3]", strict,
			[]string{"R"}, "R[20,30] append l 3\n"},
		{"a list read needs every appender of its elements",
			"A[0,10] append l 1 · B[0,10] append l 2 · C[0,10] append l 1 · R[20,30] r l [1 2]", strict,
			[]string{"A", "B", "R"}, "A[0,10] append l 1\nB[0,10] append l 2\nR[20,30]\n"},
		{"a list read whose appenders are all in C is kept",
			"A[0,10] append l 1 · B[0,10] append l 2 · R[20,30] r l [1 2], r x null", strict,
			[]string{"A", "B", "R"}, "A[0,10] append l 1\nB[0,10] append l 2\nR[20,30] r l [1 2], r x null\n"},
	} {
		h, err := history.ParseCompact(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := compactOf(Project(h, tc.opts, tc.core)); got != tc.want {
			t.Errorf("%s: H|%v =\n%s want\n%s", tc.name, tc.core, got, tc.want)
		}
	}
}
