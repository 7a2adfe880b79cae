package oracle

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// checkedPairs are the lattice's inclusions between checked levels, taken
// from the one table (history.Lattice) and closed transitively: {a, b}
// with a stronger than b.
func checkedPairs(t *testing.T) [][2]history.Level {
	var out [][2]history.Level
	for _, a := range history.Levels() {
		for _, b := range history.Levels() {
			if a.Level != b.Level && history.ImpliesName(a.Name, b.Name) {
				out = append(out, [2]history.Level{a.Level, b.Level})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("the lattice relates no checked levels")
	}
	return out
}

// TestLatticeInclusion: every history valid at a level is valid at every
// checked level the lattice puts below it, and strictly so where the
// lattice says the levels differ: some history is valid below and not
// above. Histories: the oracle's random tiny ones (valid and invalid) and
// gen's tiny ones with --valid-at each level.
func TestLatticeInclusion(t *testing.T) {
	pairs := checkedPairs(t)
	type hist struct {
		name string
		h    *history.History
	}
	var hs []hist
	rng := rand.New(rand.NewPCG(23, 23))
	for i := range tinyCount(t, 3000) {
		hs = append(hs, hist{"tiny#" + strconv.Itoa(i), RandomTiny(rng, DefaultTinyConfig())})
	}
	// Registers only as well: lists fix version orders, registers leave
	// them free.
	regs := DefaultTinyConfig()
	regs.Lists = false
	for i := range tinyCount(t, 3000) {
		hs = append(hs, hist{"tiny-registers#" + strconv.Itoa(i), RandomTiny(rng, regs)})
	}
	for _, lv := range history.Levels() {
		for seed := uint64(0); seed < 20; seed++ {
			// Two base transactions: the shapes of a level's ValidAt
			// set (up to six transactions, gen's si.go) stay within
			// the oracle's MaxTxns.
			h, _, err := gen.Generate(gen.Config{
				Txns: 2, Sessions: 3, Keys: 3, OpsPerTxn: 3, Concurrency: 2,
				ReadRatio: 0.5, ListRatio: 0.34, AbortRatio: 0.1, UnknownRatio: 0.1,
				Seed: seed, ValidAt: lv.Name,
			})
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, hist{"gen --valid-at " + lv.Name + " #" + strconv.Itoa(int(seed)), h})
		}
	}
	apart := map[[2]history.Level]bool{}
	for _, x := range hs {
		for _, skew := range []int64{0, 3} {
			valid := map[history.Level]bool{}
			for _, l := range history.Levels() {
				opts := history.DefaultOptions()
				opts.Level, opts.Skew = l.Level, skew
				ok, _, err := Check(x.h, opts)
				if err != nil {
					t.Fatalf("%s at %s: %v", x.name, l.Name, err)
				}
				valid[l.Level] = ok
			}
			for _, p := range pairs {
				if _, ok := valid[p[0]]; !ok {
					continue
				}
				if _, ok := valid[p[1]]; !ok {
					continue
				}
				if valid[p[0]] && !valid[p[1]] {
					for _, tx := range x.h.Txns {
						t.Log(tx.Compact())
					}
					t.Fatalf("%s (skew %d): valid at %s but not at %s, which the lattice puts below", x.name, skew, p[0], p[1])
				}
				if valid[p[1]] && !valid[p[0]] {
					apart[p] = true
				}
			}
		}
	}
	for _, p := range pairs {
		if !apart[p] && !testing.Short() && !history.SameOnItems(p[0], p[1]) { // same on items: TestRepeatableReadIsSerializableOnItems
			// -short draws too few histories to meet every pair apart;
			// the full run (go test ./..., CI) asserts it.
			t.Errorf("no history valid at %s and not at %s: the lattice's strict inclusion is untested", p[1], p[0])
		}
	}
}
