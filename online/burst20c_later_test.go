package online

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// r4LaterCase is stream i of the cut's tests: the cover's streams
// (generated presets, unknowns in doubt for the whole stream, small
// random steps) for even i, and for odd i a mixed burst inside one tick
// (lists, duplicates, unknowns, an injected anomaly in one of three),
// stepped once at its end as run steps it or in batches of 50-250.
func r4LaterCase(t *testing.T, i int) ([]history.Txn, history.Options, []int) {
	if i%2 == 0 {
		return coverCase(t, i/2)
	}
	rng := rand.New(rand.NewPCG(uint64(i), 0x20c7))
	cfg, _ := gen.Preset("mixed")
	cfg.Seed = uint64(i + 1)
	cfg.Txns = 300 + rng.IntN(500)
	cfg.Keys = 5 + rng.IntN(40)
	cfg.UnknownRatio = 0.02
	cfg.DupValueRatio = 0.05 * float64(i%3)
	cfg.Latency = 8000
	if i%3 == 0 {
		types := gen.InjectTypes()
		cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := burstOptions()
	if i%4 == 3 {
		opts.InitialState = history.InitialEmpty
	}
	batches := []int{len(h.Txns) + 1}
	if i%5 == 1 {
		batches = []int{50 + rng.IntN(200)}
	}
	return byStart(h), opts, batches
}

// runR4Later is runCover with R4's cut switched by off and naive.
func runR4Later(t *testing.T, off, naive bool, txns []history.Txn, opts history.Options, batches []int) coverRun {
	t.Helper()
	o1, o2 := r4LaterOff, r4LaterNaive
	r4LaterOff, r4LaterNaive = off, naive
	// The naive cut may disagree with the bodies: that is one of the
	// differences TestR4LaterNaiveDiffers looks for, counted, not a
	// failed step.
	quietDisagree = naive
	defer func() { r4LaterOff, r4LaterNaive, quietDisagree = o1, o2, false }()
	return runCover(t, keepAfterMode, txns, opts, batches)
}

// TestR4LaterSameReachability holds R4's cut (docs/SEMANTICS.md §5 "R4:
// the writers real time puts after t are reached through t") to the
// visit of every writer it replaces: on the cover's streams and on
// bursts inside one tick, every step makes the same eviction choices
// (members, ghosts and their keys, decisions), raises the same alerts,
// and leaves the same orders among the members, kept or implied by real
// time and session order. It counts the cuts, and those at which t was
// overtaken (the writers after the cut visited), so that it cannot pass
// on streams that take neither.
//
//	STREAMCHECK_COVER_N=400 go test ./online -run TestR4LaterSameReachability
func TestR4LaterSameReachability(t *testing.T) {
	var cuts, overtaken int
	r4LaterCount = func(o bool) {
		cuts++
		if o {
			overtaken++
		}
	}
	defer func() { r4LaterCount = nil }()
	n := coverCases(t)
	for i := range n {
		txns, opts, batches := r4LaterCase(t, i)
		visit := runR4Later(t, true, false, txns, opts, batches)
		cut := runR4Later(t, false, false, txns, opts, batches)
		if d := diffCover(visit, cut); d != "" {
			t.Fatalf("stream %d (%d transactions, batches %v): %s", i, len(txns), batches, d)
		}
	}
	if cuts == 0 || overtaken == 0 {
		t.Fatalf("%d cuts, %d of them overtaken: the streams do not exercise the rule", cuts, overtaken)
	}
	t.Logf("%d cuts, %d with t overtaken", cuts, overtaken)
}

// TestR4LaterNaiveDiffers: the cut passes only writers that are neither
// k's live version nor a fixed initial value. The naive cut, which
// leaves out every writer that starts after effEnd(t)+2Δ, misses that
// the live version follows t when it starts there (t overtaken on k):
// t becomes k's live version and the live version's reads are replaced
// as if t overwrote it, an order the completions do not have. The sweep
// of TestR4LaterSameReachability must see that on its streams.
func TestR4LaterNaiveDiffers(t *testing.T) {
	for i := range 200 {
		txns, opts, batches := r4LaterCase(t, i)
		visit := runR4Later(t, true, false, txns, opts, batches)
		naive := runR4Later(t, false, true, txns, opts, batches)
		if d := diffCover(visit, naive); d != "" {
			t.Logf("stream %d: %s", i, d)
			return
		}
	}
	t.Fatal("the naive cut changed nothing: the sweep cannot tell the rule from it")
}
