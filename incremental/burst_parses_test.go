package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestLastStartKeepsTheEncoding: bounding the initial prefixes of list
// parses (lastStart, docs/SEMANTICS.md §3 "List parses: the initial
// prefix ends before a preceding appender") leaves the encoding as it
// was: on generated list histories under an unknown initial state
// (duplicates, unknown outcomes, injected anomalies, bursts of
// overlapping transactions), the instance has the same variables and
// edges and the same verdict with the bound and without it, and the
// bound spared walks. A bound one prefix short (the prefix that ends
// right before the first preceding appender's appends dropped) changes
// the instance on the first history (mutated once, observed, reverted).
// burstCase is history i of the encoding comparisons: gen's mixed
// preset with lists, duplicates and unknown outcomes on few keys, every
// other one a burst, with up to two injected anomalies, prepared at
// strict serializability under an unknown initial state; and what was
// injected.
func burstCase(t *testing.T, i int) (*prepared, []string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(i), 0xb0b5))
	cfg, _ := gen.Preset("mixed")
	cfg.Seed = uint64(i + 1)
	cfg.Txns = 40 + rng.IntN(200)
	cfg.Keys = 3 + rng.IntN(20)
	cfg.UnknownRatio = 0.03
	cfg.DupValueRatio = 0.1
	if i%2 == 0 {
		cfg.Latency = 8000 // a burst: every transaction overlaps the next ones
	}
	types := gen.InjectTypes()
	for range i % 3 {
		cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
	}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialUnknown
	opts.InDoubt = 5_000_000
	return prepare(h, opts), cfg.Inject
}

func TestLastStartKeepsTheEncoding(t *testing.T) {
	unwalked := 0
	for i := range tinyCount(60) {
		p, injected := burstCase(t, i)
		encode := func(off bool) (vars, edges int, verdict string, spared int) {
			noStartBound = off
			defer func() { noStartBound = false }()
			e := newEncoder(p, encodeConfig{})
			e.encode()
			st := e.solve(context.Background())
			return e.s.NumVars(), e.s.NumEdges(), st.String(), e.unwalked
		}
		v1, e1, s1, spared := encode(false)
		v0, e0, s0, _ := encode(true)
		if v1 != v0 || e1 != e0 || s1 != s0 {
			t.Fatalf("history %d (%v): bounded %d vars %d edges %s, unbounded %d vars %d edges %s", i, injected, v1, e1, s1, v0, e0, s0)
		}
		unwalked += spared
	}
	if unwalked == 0 {
		t.Fatal("the bound spared no walk")
	}
	t.Logf("%d initial prefixes not walked", unwalked)
}
