package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
	"github.com/streamcheck/streamcheck/solver"
)

// randomDupText is a tiny history shaped like the duplicate-value cliffs
// of issue 27: blind writers and readers of a one- or two-value domain, a
// few read-modify-writes, some unknown and aborted outcomes and sessions,
// so that uniform keys (D1 for whole keys, D2's free sources) and mixed
// ones both occur. With timestamps, transactions get random intervals.
func randomDupText(rng *rand.Rand, timestamps bool) string {
	n := 3 + rng.IntN(4)
	keys := []string{"x", "y"}[:1+rng.IntN(2)]
	vals := 1 + rng.IntN(2)
	val := func() string {
		if rng.IntN(5) == 0 {
			return "1" // bias toward the first value: more duplicates
		}
		return fmt.Sprint(1 + rng.IntN(vals))
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "T%d", i)
		if timestamps {
			s := rng.IntN(20)
			fmt.Fprintf(&b, "[%d,%d]", s, s+rng.IntN(10))
		}
		var ops []string
		switch rng.IntN(4) {
		case 0, 1: // blind writer
			for _, k := range keys {
				if len(ops) == 0 || rng.IntN(2) == 0 {
					ops = append(ops, "w "+k+" "+val())
				}
			}
		case 2: // reader
			for _, k := range keys {
				if len(ops) == 0 || rng.IntN(2) == 0 {
					v := val()
					if rng.IntN(6) == 0 {
						v = "null"
					}
					ops = append(ops, "r "+k+" "+v)
				}
			}
		default: // read-modify-write
			k := keys[rng.IntN(len(keys))]
			ops = append(ops, "r "+k+" "+val(), "w "+keys[rng.IntN(len(keys))]+" "+val())
		}
		b.WriteString(" " + strings.Join(ops, ", "))
		var notes []string
		switch rng.IntN(10) {
		case 0:
			notes = append(notes, "unknown")
		case 1:
			notes = append(notes, "aborted")
		}
		if rng.IntN(3) == 0 {
			notes = append(notes, fmt.Sprintf("session s%d", rng.IntN(2)))
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, ", ") + ")")
		}
	}
	return b.String()
}

// TestDupPruneAgainstBruteForce is the differential test of issue 27
// acceptance 4 for the duplicate-value rules (prune_dup.go) and the
// read-modify-write chains (prune_chain.go): on tiny
// histories of repeated values, Check with pruning on and with it off
// (Config.NoPrune) both agree with the brute-force oracle, every witness
// replays and every first core is a core. It also asserts that D1, D2
// and C1 fired, so that the rules are held to the oracle and not bypassed.
func TestDupPruneAgainstBruteForce(t *testing.T) {
	for ci, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 27))
			opts := history.DefaultOptions()
			opts.Level = lv
			var valid, invalid, d1, d2, c1 int
			for i := 0; i < tinyCount(400); i++ {
				text := randomDupText(rng, lv.RealTime())
				h, err := history.ParseCompact(text)
				if err != nil || h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				prunedAndPlainAgree(t, h, opts, want, i, text, i%2 == 1)
				if want {
					valid++
				} else {
					invalid++
				}
				// The fast-path instance with the rules, for the counts.
				e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
				e.encode()
				if e.dup != nil {
					d1 += e.dup.d1
					d2 += e.dup.d2
				}
				c1 += e.chained
			}
			t.Logf("%d valid, %d invalid; D1 dropped %d pair orders, D2 fixed %d reads, C1 chained %d pairs", valid, invalid, d1, d2, c1)
			if valid == 0 || invalid == 0 || d1 == 0 || (!lv.RealTime() && d2 == 0) || c1 == 0 {
				t.Fatalf("the sweep does not exercise the rules: %d valid, %d invalid, D1 %d, D2 %d, C1 %d", valid, invalid, d1, d2, c1)
			}
		})
	}
}

// TestDupPruneAgreesWithUnpruned holds the offline instance with the
// duplicate-value rules to the same instance without them, on the
// project's general tiny histories (every feature on) at every level,
// fast and guarded encodings alike.
func TestDupPruneAgreesWithUnpruned(t *testing.T) {
	for ci, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 2727))
			cfg, opts := tinyCase{level: lv, indoubt: history.NoInDoubt}.setup()
			cfg.Values = 1 + ci%2
			cfg.Timestamps = lv.RealTime() || ci%2 == 0
			for i := 0; i < 3*tinyCount(300); i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				p := prepare(h, opts)
				solve := func(cfg encodeConfig) solver.Status {
					e := newEncoder(p, cfg)
					e.encode()
					return e.solve(context.Background())
				}
				got, want := solve(encodeConfig{dropUnobserved: true}), solve(encodeConfig{dropUnobserved: true, noPrune: true})
				if got != want {
					t.Fatalf("history %d: pruned %v, unpruned %v\n%s", i, got, want, dump(h))
				}
				// Guarded, on the whole history and on a random
				// projection: the cores' instance keeps D1.
				on, off := newCoreFinderWith(p, false), newCoreFinderWith(p, true)
				members := make([]bool, len(h.Txns))
				for j := range members {
					members[j] = true
				}
				for round := 0; round < 2; round++ {
					a, b := on.check(context.Background(), members), off.check(context.Background(), members)
					if a != b || (round == 0 && a != want) {
						t.Fatalf("history %d, members %v: guarded with D1 %v, without %v, fast %v\n%s", i, members, a, b, want, dump(h))
					}
					for j := range members {
						members[j] = rng.IntN(3) > 0
					}
				}
			}
		})
	}
}

// randomChainText is a tiny history of read-modify-writes over one or two
// keys and a three-value domain, so that forced reads chain (C1) and the
// chain's neighbours often write the value a chain member read (the case
// C1 must leave alone).
func randomChainText(rng *rand.Rand) string {
	n := 3 + rng.IntN(4)
	keys := []string{"x", "y"}[:1+rng.IntN(2)]
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("\n")
		}
		k := keys[rng.IntN(len(keys))]
		read := fmt.Sprint(rng.IntN(4))
		if read == "0" {
			read = "null"
		}
		switch rng.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "T%d w %s %d", i, k, 1+rng.IntN(3))
		case 1:
			fmt.Fprintf(&b, "T%d r %s %s", i, k, read)
		default:
			fmt.Fprintf(&b, "T%d r %s %s, w %s %d", i, k, read, k, 1+rng.IntN(3))
		}
		switch rng.IntN(8) {
		case 0:
			b.WriteString(" (unknown)")
		case 1:
			fmt.Fprintf(&b, " (session s%d)", rng.IntN(2))
		}
	}
	return b.String()
}

// TestChainPruneAgainstBruteForce holds C1 (prune_chain.go) to the oracle
// on histories made of read-modify-writes, pruning on and off.
func TestChainPruneAgainstBruteForce(t *testing.T) {
	for ci, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable} {
		t.Run(lv.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 2728))
			opts := history.DefaultOptions()
			opts.Level = lv
			var valid, invalid, c1 int
			for i := 0; i < 2*tinyCount(400); i++ {
				text := randomChainText(rng)
				h, err := history.ParseCompact(text)
				if err != nil || h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				for _, noPrune := range []bool{false, true} {
					res, err := Check(context.Background(), h, opts, Config{NoPrune: noPrune, noStricter: true})
					if err != nil {
						t.Fatalf("%v\n%s", err, text)
					}
					if got := res.Verdict == Valid; got != want {
						t.Fatalf("history %d (NoPrune %v): checker valid=%v, oracle %v\n%s", i, noPrune, got, want, text)
					}
				}
				if want {
					valid++
				} else {
					invalid++
				}
				e := newEncoder(prepare(h, opts), encodeConfig{dropUnobserved: true})
				e.encode()
				c1 += e.chained
			}
			t.Logf("%d valid, %d invalid; C1 chained %d pairs", valid, invalid, c1)
			if valid == 0 || invalid == 0 || c1 == 0 {
				t.Fatalf("the sweep does not exercise C1: %d valid, %d invalid, C1 %d", valid, invalid, c1)
			}
		})
	}
}
