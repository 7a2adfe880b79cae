package online

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestWritersLeftIsTheNaiveScan holds writersLeft (r4_writers.go) to the
// scan it replaces: on generated streams (bursts stepped as run steps
// them, and streams stepped every few releases, with lists, unknown
// outcomes, duplicate values and injected anomalies), the engine whose
// scans read the index and the engine whose scans read p.WritersOf()[k]
// whole leave the same state (members, ghosts and their keys, kept
// orders, decisions, live versions, list prefixes) and raise the same
// alerts after every step. It also counts the writers the index dropped,
// so that it cannot pass on streams where it drops none. Six streams by
// default; the sweep:
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestWritersLeftIsTheNaiveScan
func TestWritersLeftIsTheNaiveScan(t *testing.T) {
	n := 6
	if v, err := strconv.Atoi(os.Getenv("STREAMCHECK_WRITERS_N")); err == nil && v > 0 {
		n = v
	}
	types := gen.InjectTypes()
	var dropped, kept int
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
		every := 5 + rng.IntN(40)
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts := burstOptions()
		run := func() []string {
			var states []string
			o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
			step := func() {
				alerts, err := o.Step(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				hs := sha256.New()
				hashEv(hs, &o.ev)
				for _, a := range alerts {
					fmt.Fprintf(hs, "alert %s %v\n", a.ID, a.Core)
				}
				states = append(states, fmt.Sprintf("%x", hs.Sum(nil)))
			}
			if burst {
				o.Release(byStart(h)...)
				for _, x := range h.Txns {
					if x.Status != history.Unknown {
						o.Close(x.ID)
					}
				}
				step()
			} else {
				feedInStartOrder(o, opts, byStart(h), func(j int) {
					if j%every == every-1 {
						step()
					}
				})
			}
			o.CloseAll()
			step()
			return states
		}
		writersLeftCount = func(d, k int) { dropped += d; kept += k }
		fast := run()
		writersLeftCount = nil
		writersLeftNaive = true
		naive := run()
		writersLeftNaive = false
		if !slices.Equal(fast, naive) {
			for j := range min(len(fast), len(naive)) {
				if fast[j] != naive[j] {
					t.Fatalf("stream %d (burst %v, %v): the engine with the index differs from the naive scan after step %d of %d", i, burst, cfg.Inject, j+1, len(naive))
				}
			}
			t.Fatalf("stream %d: %d steps with the index, %d with the naive scan", i, len(fast), len(naive))
		}
	}
	if dropped == 0 {
		t.Fatalf("the index dropped no writer (%d kept): the streams do not exercise it", kept)
	}
	t.Logf("writers passed over once and dropped: %d; left in the lists at the scans: %d", dropped, kept)
}
