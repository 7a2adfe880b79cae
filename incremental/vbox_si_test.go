package incremental

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// siVboxLevels are the levels of the family without real time: V1 runs
// there (vbox_si.go). GSI and strong SI need timestamps (Validate), and
// with them order writers by time (orderByTimeSI); their tiny-history
// sweeps (TestSIAgainstBruteForce, TestSIPruneDifferential) check that V1
// stays off there.
var siVboxLevels = []history.Level{history.SnapshotIsolation, history.StrongSessionSnapshotIsolation}

// TestVboxSIAgainstBruteForce holds V1 on begin and commit nodes
// (vbox_si.go; docs/SEMANTICS.md §3 "V1 on begin and commit nodes") to
// the brute-force oracle's begin/commit enumeration at the levels of the
// family without real time, with pruning on and off: same verdict, every witness replays,
// every first core passes the core check. The histories are
// randomVboxText's (no timestamps, forced reads building known paths
// across keys, repeated values, unknown outcomes, sessions). It fails if
// the sweep does not exercise V1's outcomes at a level (pairs decided by
// a known path, through a forced reader, edges left to a nearer writer,
// V1c lemmas) or lacks valid or invalid histories.
// STREAMCHECK_TINY=10000 is the long run.
func TestVboxSIAgainstBruteForce(t *testing.T) {
	for ci, lv := range siVboxLevels {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 2427))
			opts := history.DefaultOptions()
			opts.Level = lv
			var valid, invalid, decided, forced, covered, settled int
			for i := 0; i < 2*tinyCount(300); i++ {
				text := randomVboxText(rng)
				h, err := history.ParseCompact(text)
				if err != nil || h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, noPrune := range []bool{false, true} {
					res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 2, NoPrune: noPrune, noStricter: true})
					if err != nil {
						t.Fatalf("%v\n%s", err, text)
					}
					if got := res.Verdict == Valid; got != want {
						t.Fatalf("history %d (NoPrune %v): checker valid=%v, oracle %v\n%s", i, noPrune, got, want, text)
					}
					if want {
						if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
							t.Fatalf("history %d (NoPrune %v): witness %v: %v\n%s", i, noPrune, res.Witness, err, text)
						}
					} else if err := oracle.CheckCore(h, opts, res.Anomalies[0].Core); err != nil {
						t.Fatalf("history %d (NoPrune %v): core %v: %v\n%s", i, noPrune, res.Anomalies[0].Core, err, text)
					}
				}
				if want {
					valid++
				} else {
					invalid++
				}
				e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
				e.encode()
				if e.vbox != nil {
					decided += e.vbox.decided
					forced += e.vbox.forced
					covered += e.vbox.covered
					settled += e.vbox.settled
				}
			}
			t.Logf("%d valid, %d invalid; V1 decided %d pairs by known paths, %d through forced readers, left %d edges to nearer writers; V1c added %d lemmas", valid, invalid, decided, forced, covered, settled)
			if valid < 20 || invalid < 20 || decided == 0 || forced == 0 || covered == 0 || settled == 0 {
				t.Fatalf("the sweep does not exercise V1: %d valid, %d invalid, decided %d, forced %d, covered %d, V1c lemmas %d", valid, invalid, decided, forced, covered, settled)
			}
		})
	}
}

// TestVboxSIGenerated is V1's differential on generated histories without
// timestamps: gen's histories valid
// at strong session SI (write skews included) and the same with injected
// anomalies that SI forbids, checked with pruning on and off. Both must
// give the expected verdict, every core must pass the oracle's core
// check, and V1 must decide most pairs (it fails if V1 decided nothing).
// STREAMCHECK_SIVBOX_COUNT and STREAMCHECK_SIVBOX_TXNS scale it up.
func TestVboxSIGenerated(t *testing.T) {
	count := envInt("STREAMCHECK_SIVBOX_COUNT", 4)
	txns := envInt("STREAMCHECK_SIVBOX_TXNS", 600)
	if testing.Short() {
		count = 2
	}
	for i := 0; i < count; i++ {
		cfg, err := gen.Preset("mixed")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Seed = uint64(i + 1)
		cfg.Txns = txns
		cfg.Keys = 100 + 50*i
		cfg.ValidAt = history.StrongSessionSnapshotIsolation.String()
		injected := i%2 == 1
		if injected {
			cfg.Inject = []string{"lost-update", "G-single", "read-skew"}
		}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for j := range h.Txns {
			h.Txns[j].HasTime, h.Txns[j].Start, h.Txns[j].End = false, 0, 0
		}
		for _, lv := range siVboxLevels {
			opts := history.DefaultOptions()
			opts.Level = lv
			var verdicts [2]Verdict
			var pairs [2]int
			for j, noPrune := range []bool{false, true} {
				res, err := Check(context.Background(), h, opts, Config{NoPrune: noPrune, noStricter: true})
				if err != nil {
					t.Fatal(err)
				}
				verdicts[j], pairs[j] = res.Verdict, res.Stats.Pairs
				for _, a := range res.Anomalies {
					if err := oracle.CheckCore(h, opts, a.Core); err != nil {
						t.Errorf("history %d at %s, NoPrune=%v: core %v: %v", i, lv, noPrune, a.Core, err)
					}
				}
			}
			want := Valid
			if injected {
				want = Invalid
			}
			if verdicts[0] != want || verdicts[1] != want {
				t.Fatalf("history %d at %s (injected=%v): pruned %s, plain %s, want %s", i, lv, injected, verdicts[0], verdicts[1], want)
			}
			e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
			e.encode()
			if e.vbox == nil || e.vbox.decided == 0 {
				t.Fatalf("history %d at %s: V1 decided nothing", i, lv)
			}
			t.Logf("history %d at %s: %s; V1 decided %d pairs, %d through forced readers; %d pairs drawn pruned, %d plain", i, lv, verdicts[0], e.vbox.decided, e.vbox.forced, pairs[0], pairs[1])
		}
	}
}
