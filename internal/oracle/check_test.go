package oracle

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// randomOptions draws every combination the oracle gives a meaning to.
func randomOptions(rng *rand.Rand) history.Options {
	o := history.DefaultOptions()
	o.Level = []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable}[rng.IntN(3)]
	o.Skew = []int64{0, 0, 2, 5}[rng.IntN(4)]
	o.InDoubt = []int64{history.NoInDoubt, 0, 5}[rng.IntN(3)]
	if rng.IntN(3) == 0 {
		o.InitialState = history.InitialUnknown
	}
	return o
}

// randomTinyConfig varies the generator beyond its default mix.
func randomTinyConfig(rng *rand.Rand) TinyConfig {
	cfg := DefaultTinyConfig()
	cfg.InitialValues = rng.IntN(4) == 0
	cfg.Keys = rng.IntN(4)
	cfg.Values = 2 + rng.IntN(3)
	cfg.Unknowns = rng.IntN(4) != 0
	if rng.IntN(2) == 0 {
		cfg.Mutate = 0.6
		cfg.MaxMutations = 3
	}
	return cfg
}

// naiveValid is the definition of docs/SEMANTICS.md §4 with no cleverness: for
// every subset of the unknown transactions (write-free ones included) and
// every permutation, ask ReplayWitness, which shares no code with Check's
// search.
func naiveValid(h *history.History, opts history.Options) bool {
	var committed, unknown []string
	for i := range h.Txns {
		switch h.Txns[i].Status {
		case history.Committed:
			committed = append(committed, h.Txns[i].ID)
		case history.Unknown:
			unknown = append(unknown, h.Txns[i].ID)
		}
	}
	for m := 0; m < 1<<len(unknown); m++ {
		ids := slices.Clone(committed)
		for j, id := range unknown {
			if m&(1<<j) != 0 {
				ids = append(ids, id)
			}
		}
		found := false
		permute(ids, 0, func(order []string) bool {
			found = ReplayWitness(h, opts, order) == nil
			return found
		})
		if found {
			return true
		}
	}
	return false
}

// permute calls f on every permutation of ids[k:] (with ids[:k] fixed)
// until f returns true.
func permute(ids []string, k int, f func([]string) bool) bool {
	if k == len(ids) {
		return f(ids)
	}
	for i := k; i < len(ids); i++ {
		ids[k], ids[i] = ids[i], ids[k]
		done := permute(ids, k+1, f)
		ids[k], ids[i] = ids[i], ids[k]
		if done {
			return true
		}
	}
	return false
}

// TestCheckAgreesWithNaiveEnumeration is the oracle's own oracle: Check's
// pruned, memoized search must give the verdict of plain enumeration, and
// its witness must replay.
func TestCheckAgreesWithNaiveEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	counts := map[bool]int{}
	for range tinyCount(t, 3000) {
		h := RandomTiny(rng, randomTinyConfig(rng))
		opts := randomOptions(rng)
		valid, witness, err := Check(h, opts)
		if err != nil {
			t.Fatalf("%v\n%s", err, compactOf(h))
		}
		counts[valid]++
		if want := naiveValid(h, opts); valid != want {
			t.Fatalf("%s Δ=%d indoubt=%d initial=%s: Check says valid=%v, enumeration %v\n%s",
				opts.Level, opts.Skew, opts.InDoubt, opts.InitialState, valid, want, compactOf(h))
		}
		if valid {
			if err := ReplayWitness(h, opts, witness); err != nil {
				t.Fatalf("witness %v does not replay: %v\n%s", witness, err, compactOf(h))
			}
		}
	}
	t.Logf("valid %d, invalid %d", counts[true], counts[false])
}

// TestCheckMonotone: weaker levels, a larger Δ and a longer in-doubt
// horizon only remove order constraints, so they never turn valid into
// invalid (Jepsen's hierarchy; docs/SEMANTICS.md §1 history I).
func TestCheckMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	check := func(h *history.History, o history.Options) bool {
		v, _, err := Check(h, o)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for range tinyCount(t, 3000) {
		h := RandomTiny(rng, randomTinyConfig(rng))
		o := randomOptions(rng)
		o.Level = history.StrictSerializable
		strict := check(h, o)
		o.Level = history.StrongSessionSerializable
		session := check(h, o)
		o.Level = history.Serializable
		serial := check(h, o)
		if strict && !session || session && !serial {
			t.Fatalf("strict %v, strong-session %v, serializable %v\n%s", strict, session, serial, compactOf(h))
		}
		o.Level = history.StrictSerializable
		wider := o
		wider.Skew += 3
		if strict && !check(h, wider) {
			t.Fatalf("valid at Δ=%d, invalid at Δ=%d\n%s", o.Skew, wider.Skew, compactOf(h))
		}
		never := o
		never.InDoubt = history.NoInDoubt
		o.InDoubt = 0
		if check(h, o) && !check(h, never) {
			t.Fatalf("valid with in-doubt 0, invalid with none\n%s", compactOf(h))
		}
	}
}

// TestReplayWitnessRejectsTampering: a witness with a committed
// transaction left out, an id repeated, an id not in the history or an
// aborted one added must not pass. Reordering is tested on the histories
// of docs/SEMANTICS.md (testdata/exactness, "replay"), and against enumeration
// in TestCheckAgreesWithNaiveEnumeration.
func TestReplayWitnessRejectsTampering(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var tampered int
	n := tinyCount(t, 2000)
	for range n {
		h := RandomTiny(rng, randomTinyConfig(rng))
		opts := randomOptions(rng)
		valid, w, err := Check(h, opts)
		if err != nil || !valid || len(w) == 0 {
			continue
		}
		tampered++
		if err := ReplayWitness(h, opts, w[1:]); err == nil && h.Txns[idx(h, w[0])].Status == history.Committed {
			t.Fatalf("dropping committed %s passed\n%s", w[0], compactOf(h))
		}
		if err := ReplayWitness(h, opts, append(slices.Clone(w), w[0])); err == nil {
			t.Fatalf("repeating %s passed\n%s", w[0], compactOf(h))
		}
		if err := ReplayWitness(h, opts, append(slices.Clone(w), "nobody")); err == nil {
			t.Fatalf("an unknown id passed\n%s", compactOf(h))
		}
		for i := range h.Txns {
			if h.Txns[i].Status == history.Aborted {
				if err := ReplayWitness(h, opts, append(slices.Clone(w), h.Txns[i].ID)); err == nil {
					t.Fatalf("aborted %s in the order passed\n%s", h.Txns[i].ID, compactOf(h))
				}
			}
		}
	}
	if tampered < n/5 {
		t.Fatalf("only %d valid histories to tamper with", tampered)
	}
}

func idx(h *history.History, id string) int {
	return slices.IndexFunc(h.Txns, func(t history.Txn) bool { return t.ID == id })
}

// TestCheckRejects: the oracle refuses what it cannot give a meaning to,
// rather than answering something.
func TestCheckRejects(t *testing.T) {
	strict := history.Options{Level: history.StrictSerializable, InDoubt: history.NoInDoubt}
	for _, tc := range []struct {
		name, text string
		opts       history.Options
		want       string
	}{
		{"too many transactions",
			"A w x1 · B w x1 · C w x1 · D w x1 · E w x1 · F w x1 · G w x1 · H w x1 · I w x1 (unknown)",
			history.DefaultOptions(), "too large"},
		{"a level it does not implement (no level has constant 31)", "A w x1",
			history.Options{Level: history.Level(31)}, "not supported"},
		{"real time without timestamps", "A[0,1] w x1 · B r x1", strict, "needs timestamps"},
		{"a scalar read of a list key", "A append l 1 · B r l 1", history.DefaultOptions(), "reads list key"},
		{"invalid input", "A w x1 · A w x2", history.DefaultOptions(), "duplicate id"},
	} {
		h, err := history.ParseCompact(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Check(h, tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// Nine transactions of which one is a write-free unknown and one is
	// aborted are only seven candidates.
	h, _ := history.ParseCompact("A w x1 · B w x1 · C w x1 · D w x1 · E w x1 · F w x1 · G w x1 · H r x1 (unknown) · I w x2 (aborted)")
	if valid, _, err := Check(h, history.DefaultOptions()); err != nil || !valid {
		t.Errorf("seven candidates: valid=%v err=%v", valid, err)
	}
}

func BenchmarkCheckTiny(b *testing.B) {
	rng := rand.New(rand.NewPCG(13, 14))
	hs := make([]*history.History, 1000)
	for i := range hs {
		hs[i] = RandomTiny(rng, DefaultTinyConfig())
	}
	opts := history.Options{Level: history.StrictSerializable, InDoubt: history.NoInDoubt}
	i := 0
	for b.Loop() {
		if _, _, err := Check(hs[i%len(hs)], opts); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
