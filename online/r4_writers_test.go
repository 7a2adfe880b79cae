package online

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestWritersLeftIsTheNaiveScan holds writersLeft (r4_writers.go) to the
// scan it replaces: at every call, on generated streams (bursts stepped
// as run steps them, and streams stepped every few releases, with
// lists, unknown outcomes and duplicate values), the list it returns is
// p.WritersOf()[k] without the writers removed this step, in the same
// order. It also counts the calls at which the index passed over a
// removed writer, so that the test cannot pass on streams that never
// remove one. Six streams by default; the sweep:
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestWritersLeftIsTheNaiveScan
func TestWritersLeftIsTheNaiveScan(t *testing.T) {
	n := 6
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_WRITERS_N")); err == nil && v > 0 {
		n = v
	}
	var calls, compacted int
	var bad string
	writersLeftCheck = func(s *evictStep, k int32, ws []int32) {
		calls++
		var naive []int32
		for _, w := range s.p.WritersOf()[k] {
			if !s.removed[w] {
				naive = append(naive, w)
			}
		}
		if len(naive) < len(s.p.WritersOf()[k]) {
			compacted++
		}
		if bad == "" && !slices.Equal(ws, naive) {
			bad = fmt.Sprintf("key %d: index %v, naive scan %v", k, ws, naive)
		}
	}
	defer func() { writersLeftCheck = nil }()
	types := gen.InjectTypes()
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 0x3411))
		cfg, _ := gen.Preset("mixed")
		cfg.Seed = uint64(i + 1)
		cfg.Txns = 200 + rng.IntN(400)
		cfg.Keys = 10 + rng.IntN(60)
		cfg.UnknownRatio = 0.02
		cfg.DupValueRatio = 0.05 * float64(i%2)
		if i%3 == 0 {
			cfg.Inject = append(cfg.Inject, types[rng.IntN(len(types))])
		}
		burst := i%2 == 0
		if burst {
			cfg.Latency = 8000
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := burstOptions()
		if burst {
			burstRun(t, h, opts, false)
		} else {
			o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
			every := 5 + rng.IntN(40)
			feedInStartOrder(o, opts, byStart(h), func(j int) {
				if j%every == every-1 {
					if _, err := o.Step(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			})
			o.CloseAll()
			if _, err := o.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if bad != "" {
			t.Fatalf("stream %d (burst %v): %s", i, burst, bad)
		}
	}
	if calls == 0 || compacted == 0 {
		t.Fatalf("%d calls, %d with a removed writer passed over: the streams do not exercise the index", calls, compacted)
	}
	t.Logf("%d calls, %d with a removed writer passed over", calls, compacted)
}
