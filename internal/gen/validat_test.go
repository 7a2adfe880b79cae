package gen

import (
	"context"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// TestValidAtEveryLevel: every checked level below the top has a shape,
// and on tiny histories the brute-force oracle finds a ValidAt history
// valid at exactly the checked levels the lattice puts at or below the
// level asked for: valid there, invalid at every stronger one.
func TestValidAtEveryLevel(t *testing.T) {
	top, ok := history.Strongest()
	if !ok {
		t.Fatal("the registry has no strongest level")
	}
	for _, at := range history.Levels() {
		if _, has := allowedShapes[at.Level]; !has && at.Level != top {
			t.Errorf("%s has no ValidAt shape in allowedShapes", at.Name)
		}
		for seed := uint64(0); seed < 50; seed++ {
			// Base and shapes stay within the oracle's reach (MaxTxns);
			// the weak levels' shapes take four transactions.
			txns := 6
			if n := len(shapeSets[allowedShapes[at.Level]]); n > 0 {
				txns = 8 - 2*n
			}
			if at.Backend == history.BackendPolynomial {
				txns = min(txns, 4)
			}
			if n := setTxns(allowedShapes[at.Level]); n > 0 { // pl.go: sets with a long fork
				txns = min(txns, 8-n)
			}
			// Odd seeds without lists.
			cfg := Config{
				Txns: txns, Sessions: 3, Keys: 3, OpsPerTxn: 3, Concurrency: 2,
				ReadRatio: 0.5, BlindWriteRatio: 0.5, DupValueRatio: 0.3,
				UnknownRatio: 0.1, AbortRatio: 0.1, ListRatio: 0.34 * float64(1-seed%2), Seed: seed,
				ValidAt: at.Name,
			}
			h, inj, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// One shape or a set of them (si.go, shapeSets), each
			// marked with the level.
			if at.Level != top && (len(inj) == 0 || slices.ContainsFunc(inj, func(in Injected) bool { return in.ValidAt != at.Name })) {
				t.Fatalf("%s seed %d: shapes %+v", at.Name, seed, inj)
			}
			for _, m := range history.Levels() {
				opts := history.DefaultOptions()
				opts.Level = m.Level
				// The stale read's gap must exceed 2Δ to be seen (StaleGap).
				opts.Skew = 0
				valid, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatalf("%s seed %d, oracle at %s: %v", at.Name, seed, m.Name, err)
				}
				if want := history.ImpliesOnItems(at.Level, m.Level); valid != want {
					for _, tx := range h.Txns {
						t.Log(tx.Compact())
					}
					t.Fatalf("--valid-at %s seed %d: oracle says valid=%v at %s, the lattice says %v", at.Name, seed, valid, m.Name, want)
				}
			}
		}
	}
}

func TestValidAtRejectsUnknownLevel(t *testing.T) {
	if err := (Config{ValidAt: "linearizable"}).Validate(); err == nil {
		t.Fatal("ValidAt accepted a level outside the registry")
	}
}

// TestValidAtDifferentialCheck: on a realistic history (the mixed preset,
// 3000 base transactions) the SAT engine agrees with the lattice at every
// checked level, and where it proves a violation its cores are exactly the
// ValidAt shapes.
func TestValidAtDifferentialCheck(t *testing.T) {
	for i, at := range slices.Concat(history.Levels(), history.Levels()) {
		name := at.Name + "/lists"
		if i >= len(history.Levels()) {
			name = at.Name + "/registers"
		}
		// Each base is independent. Run one after another they were
		// most of the package's ten-minute budget on a loaded machine;
		// in parallel they use every core go test is given.
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			validAtDifferential(t, at, i >= len(history.Levels()))
		})
	}
}

func validAtDifferential(t *testing.T, at history.LevelInfo, registersOnly bool) {
	cfg := preset(t, "mixed")
	cfg.Txns = 3000
	cfg.ValidAt = at.Name
	if registersOnly {
		cfg.ListRatio = 0 // registers as well
	}
	h, inj, err := Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range history.Levels() {
		opts := history.DefaultOptions()
		opts.Level = m.Level
		res, err := incremental.Check(context.Background(), h, opts, incremental.Config{MaxAnomalies: 10})
		if err != nil {
			t.Fatal(err)
		}
		want := history.ImpliesOnItems(at.Level, m.Level)
		if got := res.Verdict == incremental.Valid; got != want || res.Verdict == incremental.Unknown {
			t.Fatalf("--valid-at %s, check at %s: valid=%v, the lattice says %v", at.Name, m.Name, got, want)
		}
		if want {
			continue
		}
		// Each shape of a level's set (si.go, shapeSets) violates
		// some of the levels not implied, together all of them.
		if len(res.Anomalies) == 0 || len(res.Anomalies) > len(inj) {
			t.Errorf("--valid-at %s at %s: %d anomalies, %d shapes", at.Name, m.Name, len(res.Anomalies), len(inj))
		}
		for _, a := range res.Anomalies {
			if !slices.ContainsFunc(inj, func(in Injected) bool { return slices.Equal(in.Txns, a.Core) }) {
				t.Errorf("--valid-at %s at %s: core %v is no shape of %+v", at.Name, m.Name, a.Core, inj)
			}
		}
	}
}
