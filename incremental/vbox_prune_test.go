package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// randomVboxText is a tiny history without timestamps shaped for V1
// (vbox_prune.go): a random serial execution over two or three registers
// (blind writers, readers, read-modify-writes, transactions that read one
// key and write another, so that forced reads build known paths across
// keys), listed in a shuffled order, with about one read in five replaced by
// another value of its key (most such histories are invalid), values
// mostly distinct per key with an occasional repeat (D1 must keep such
// pairs out of V1), and a few unknown outcomes and sessions.
func randomVboxText(rng *rand.Rand) string {
	n := 4 + rng.IntN(4)
	keys := []string{"x", "y", "z"}[:2+rng.IntN(2)]
	state := map[string]int{}
	next := map[string]int{}
	txns := make([][]string, n)
	for i := range txns {
		k := keys[rng.IntN(len(keys))]
		k2 := keys[rng.IntN(len(keys))]
		r := func(k string) string {
			v := state[k]
			if rng.IntN(5) == 0 {
				v = rng.IntN(next[k] + 2)
			}
			if v == 0 {
				return "r " + k + " null"
			}
			return fmt.Sprintf("r %s %d", k, v)
		}
		w := func(k string) string {
			v := next[k] + 1
			if next[k] > 0 && rng.IntN(8) == 0 {
				v = 1 + rng.IntN(next[k]) // a repeated value
			} else {
				next[k] = v
			}
			state[k] = v
			return fmt.Sprintf("w %s %d", k, v)
		}
		var ops []string
		switch rng.IntN(5) {
		case 0:
			ops = append(ops, w(k))
		case 1:
			ops = append(ops, r(k))
			if k2 != k {
				ops = append(ops, r(k2))
			}
		case 2:
			ops = append(ops, r(k))
			if k2 != k {
				ops = append(ops, w(k2))
			}
		default:
			ops = append(ops, r(k), w(k))
			if rng.IntN(2) == 0 && k2 != k {
				ops = append(ops, w(k2))
			}
		}
		txns[i] = ops
	}
	var b strings.Builder
	for j, i := range rng.Perm(n) {
		if j > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "T%d %s", i, strings.Join(txns[i], ", "))
		switch rng.IntN(10) {
		case 0:
			b.WriteString(" (unknown)")
		case 1, 2:
			fmt.Fprintf(&b, " (session s%d)", rng.IntN(2))
		}
	}
	return b.String()
}

// TestVboxPruneAgainstBruteForce holds V1 (reachability pruning without
// timestamps) to the brute-force oracle with pruning on and off: same
// verdict, every witness replays, every first core is a core. It fails if
// the sweep does not exercise V1's three outcomes (pairs decided by a
// known path, pairs decided through a forced reader, rw edges left to a
// nearer writer, lemmas of V1c's settling) or lacks valid or invalid
// histories.
func TestVboxPruneAgainstBruteForce(t *testing.T) {
	for ci, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable} {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 2729))
			opts := history.DefaultOptions()
			opts.Level = lv
			var valid, invalid, decided, forced, covered, settled int
			for i := 0; i < 2*tinyCount(400); i++ {
				text := randomVboxText(rng)
				h, err := history.ParseCompact(text)
				if err != nil || h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				prunedAndPlainAgree(t, h, opts, want, i, text, true)
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
			t.Logf("%d valid, %d invalid; V1 decided %d pairs by known paths, %d through forced readers, left %d rw edges to nearer writers; V1c added %d lemmas", valid, invalid, decided, forced, covered, settled)
			if valid < 20 || invalid < 20 || decided == 0 || forced == 0 || covered == 0 || settled == 0 {
				t.Fatalf("the sweep does not exercise V1: %d valid, %d invalid, decided %d, forced %d, covered %d, V1c lemmas %d", valid, invalid, decided, forced, covered, settled)
			}
		})
	}
}

// BenchmarkNoTimestamps is issue 27's acceptance 1 workload in process:
// generated mixed histories (gen's preset, seed 1) with every timestamp
// removed, checked at serializable with pruning on and, for the smaller
// ones, off. Sizes beyond 20K run with STREAMCHECK_BENCH_LARGE=1.
//
//	go test ./incremental -run '^$' -bench NoTimestamps -benchtime 1x
func BenchmarkNoTimestamps(b *testing.B) {
	sizes := []int{10000, 20000}
	if os.Getenv("STREAMCHECK_BENCH_LARGE") != "" {
		sizes = append(sizes, 50000, 100000)
	}
	for _, n := range sizes {
		cfg, err := gen.Preset("mixed")
		if err != nil {
			b.Fatal(err)
		}
		cfg.Txns, cfg.Seed = n, 1
		h, _, err := gen.Generate(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for i := range h.Txns {
			h.Txns[i].HasTime, h.Txns[i].Start, h.Txns[i].End = false, 0, 0
		}
		opts := history.DefaultOptions()
		for _, off := range []bool{false, true} {
			if off && n > 10000 {
				continue
			}
			b.Run(fmt.Sprintf("txns=%d/noprune=%v", n, off), func(b *testing.B) {
				for b.Loop() {
					res, err := Check(context.Background(), h, opts, Config{NoPrune: off})
					if err != nil {
						b.Fatal(err)
					}
					if res.Verdict != Valid {
						b.Fatalf("verdict %s", res.Verdict)
					}
					b.ReportMetric(float64(res.Stats.Pairs), "pairs")
					b.ReportMetric(float64(res.Stats.Vars), "vars")
					b.ReportMetric(float64(res.Stats.Conflicts), "conflicts")
				}
			})
		}
	}
}

// prunedAndPlainAgree checks history i (text) with pruning on and off
// against the oracle's verdict want: the same verdict, a witness that
// replays when valid, a core the oracle confirms when not.
func prunedAndPlainAgree(t *testing.T, h *history.History, opts history.Options, want bool, i int, text string, noStricter bool) {
	t.Helper()
	for _, noPrune := range []bool{false, true} {
		res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 2, NoPrune: noPrune, noStricter: noStricter})
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
}
