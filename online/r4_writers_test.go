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
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestWritersLeftIsTheNaiveScan holds writersLeft (r4_writers.go) to the
// scan it replaces: the engine whose scans read the index and the engine
// whose scans read p.WritersOf()[k] whole leave the same state and raise
// the same alerts after every step (sameStatesAsNaive). It also counts the writers the index dropped,
// so that it cannot pass on streams where it drops none. Six streams by
// default; the sweep:
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestWritersLeftIsTheNaiveScan
func TestWritersLeftIsTheNaiveScan(t *testing.T) {
	var dropped, kept int
	writersLeftCount = func(d, k int) { dropped += d; kept += k }
	defer func() { writersLeftCount = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_WRITERS_N", &writersLeftNaive)
	if dropped == 0 {
		t.Fatalf("the index dropped no writer (%d kept): the streams do not exercise it", kept)
	}
	t.Logf("writers passed over once and dropped: %d; left in the lists at the scans: %d", dropped, kept)
}

// sameStatesAsNaive runs generated streams (bursts stepped as run steps
// them, and streams stepped every few releases, with lists, unknown
// outcomes, duplicate values and injected anomalies) twice, once with
// *naive false and once with it true, and fails unless the engine leaves
// the same state (members, ghosts and their keys, kept orders,
// decisions, live versions, list prefixes: hashEv) and raises the same
// alerts after every step. Eight streams by default, $env more.
func sameStatesAsNaive(t *testing.T, env string, naive *bool) {
	n := 8
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		n = v
	}
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
		if sameStatesShape != nil {
			sameStatesShape(&cfg, rng)
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
		if sameStatesHist != nil {
			sameStatesHist(h, rng)
		}
		opts := burstOptions()
		if !burst {
			// Unknowns whose horizon passes within the stream: they
			// precede later transactions by real time.
			opts.InDoubt = int64(rng.IntN(3)) * int64(time.Millisecond)
		}
		if sameStatesOpts != nil {
			sameStatesOpts(&opts, rng)
		}
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
		fast := run()
		*naive = true
		ref := run()
		*naive = false
		if !slices.Equal(fast, ref) {
			for j := range min(len(fast), len(ref)) {
				if fast[j] != ref[j] {
					t.Fatalf("stream %d (burst %v, %v): the engine with the index differs from the naive scan after step %d of %d", i, burst, cfg.Inject, j+1, len(ref))
				}
			}
			t.Fatalf("stream %d: %d steps with the index, %d with the naive scan", i, len(fast), len(ref))
		}
	}
}

// sameStatesShape, when set, changes sameStatesAsNaive's generator
// config for each stream (after its defaults).
var sameStatesShape func(*gen.Config, *rand.Rand)

// sameStatesHist, when set, changes each generated history in place
// before it is run.
var sameStatesHist func(*history.History, *rand.Rand)

// sameStatesOpts, when set, changes sameStatesAsNaive's options for each
// stream (after its defaults; it may draw from the stream's rng, which
// changes the streams that follow).
var sameStatesOpts func(*history.Options, *rand.Rand)

// TestUnknownBeforeIsTheScan holds undecidedUnknownBefore's index
// (burst_unknowns.go) to the scan of every unknown it replaces: the
// same engine state and alerts after every step (sameStatesAsNaive).
//
//	STREAMCHECK_WRITERS_N=200 go test ./online -run TestUnknownBeforeIsTheScan
//
// At every question it also compares the unknowns the index lets through
// its test with those the scan's test selects from every unknown (a pure
// comparison, no probe), and counts the questions that had one, so that
// the test cannot pass on streams where no unknown precedes a removal.
func TestUnknownBeforeIsTheScan(t *testing.T) {
	var asked, nonEmpty int
	var bad string
	unknownBeforeCheck = func(want, got []int32) {
		asked++
		if len(want) > 0 {
			nonEmpty++
		}
		if bad == "" && !slices.Equal(want, got) {
			bad = fmt.Sprintf("the scan asks about %v, the index about %v", want, got)
		}
	}
	defer func() { unknownBeforeCheck = nil }()
	sameStatesAsNaive(t, "STREAMCHECK_WRITERS_N", &unknownBeforeNaive)
	if bad != "" {
		t.Fatal(bad)
	}
	if nonEmpty == 0 {
		t.Fatalf("%d questions, none with an unknown before the removed transaction: the streams do not exercise the index", asked)
	}
	t.Logf("%d questions, %d with an unknown before", asked, nonEmpty)
}
