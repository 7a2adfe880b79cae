package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// tinyCount is the number of random tiny histories per configuration;
// STREAMCHECK_TINY raises it (the acceptance run uses 10000).
func tinyCount(def int) int {
	if s := os.Getenv("STREAMCHECK_TINY"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return def
}

type tinyCase struct {
	level   history.Level
	skew    int64
	indoubt int64
	initial history.InitialState
}

// setup gives the tiny-history generator every feature and the checkers
// the case's options.
func (c tinyCase) setup() (oracle.TinyConfig, history.Options) {
	cfg := oracle.DefaultTinyConfig()
	cfg.Timestamps, cfg.Sessions, cfg.Lists, cfg.Unknowns, cfg.Aborts = true, true, true, true, true
	cfg.InitialValues = c.initial == history.InitialUnknown
	opts := history.DefaultOptions()
	opts.Level, opts.Skew, opts.InDoubt, opts.InitialState = c.level, c.skew, c.indoubt, c.initial
	return cfg, opts
}

func (c tinyCase) String() string {
	return fmt.Sprintf("%s/skew=%d/indoubt=%d/init=%s", c.level, c.skew, c.indoubt, c.initial)
}

// TestAgainstBruteForce is the differential test of issue #4 acceptance 1:
// the SAT checker and the serial-replay oracle agree on random tiny
// histories; every core passes the oracle's core check and every witness
// replays.
func TestAgainstBruteForce(t *testing.T) {
	var cases []tinyCase
	for _, lv := range []history.Level{history.Serializable, history.StrongSessionSerializable, history.StrictSerializable} {
		for _, skew := range []int64{0, 3} {
			cases = append(cases, tinyCase{level: lv, skew: skew, indoubt: history.NoInDoubt})
		}
	}
	cases = append(cases,
		tinyCase{level: history.StrictSerializable, skew: 2, indoubt: 5},
		tinyCase{level: history.StrictSerializable, skew: 0, indoubt: history.NoInDoubt, initial: history.InitialUnknown},
		tinyCase{level: history.Serializable, skew: 0, indoubt: history.NoInDoubt, initial: history.InitialUnknown},
	)
	n := tinyCount(300)
	for ci, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 7))
			cfg, opts := c.setup()
			var valid, invalid, search int
			for i := 0; i < n; i++ {
				h := oracle.RandomTiny(rng, cfg)
				if h.Validate() != nil {
					continue
				}
				want, _, err := oracle.Check(h, opts)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 3})
				if err != nil {
					t.Fatalf("%v\n%s", err, dump(h))
				}
				if !opts.Level.RealTime() && i%2 == 1 {
					// Half the weaker-level histories skip the strict
					// pre-check, so the level's own search meets the
					// oracle on valid histories too.
					res, err = Check(context.Background(), h, opts, Config{MaxAnomalies: 3, noStricter: true})
					if err != nil {
						t.Fatalf("%v\n%s", err, dump(h))
					}
				}
				got := res.Verdict == Valid
				if got != want {
					t.Fatalf("history %d: checker says valid=%v, oracle says %v\n%s", i, got, want, dump(h))
				}
				if got {
					valid++
					if err := oracle.ReplayWitness(h, opts, res.Witness); err != nil {
						t.Fatalf("history %d: witness %v does not replay: %v\n%s", i, res.Witness, err, dump(h))
					}
					continue
				}
				invalid++
				if _, ns := oracle.Classify(h, opts); ns {
					search++
				}
				if len(res.Anomalies) == 0 {
					t.Fatalf("history %d: invalid with no anomaly\n%s", i, dump(h))
				}
				// The first core is a core of H itself.
				if err := oracle.CheckCore(h, opts, res.Anomalies[0].Core); err != nil {
					t.Fatalf("history %d: core %v: %v\n%s", i, res.Anomalies[0].Core, err, dump(h))
				}
			}
			t.Logf("%d histories: %d valid (%.0f%%), %d invalid, %d needing search (%.0f%%)", valid+invalid, valid, pct(valid, valid+invalid), invalid, search, pct(search, valid+invalid))
		})
	}
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// checkAgainstOracle checks tiny history i with cfg and holds a decided
// verdict to the oracle's (a mismatch fails the test); a valid one's
// witness must order every committed transaction. The caller counts the
// verdict and checks an invalid one's anomalies.
func checkAgainstOracle(t *testing.T, i int, h *history.History, opts history.Options, cfg Config) *Result {
	t.Helper()
	want, _, err := oracle.Check(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(context.Background(), h, opts, cfg)
	if err != nil {
		t.Fatalf("%v\n%s", err, dump(h))
	}
	if res.Verdict == Unknown {
		return res
	}
	if got := res.Verdict == Valid; got != want {
		t.Fatalf("history %d: checker says valid=%v, oracle says %v\n%s", i, got, want, dump(h))
	}
	if res.Verdict == Valid {
		for _, tx := range h.Txns {
			if tx.Status == history.Committed && !slices.Contains(res.Witness, tx.ID) {
				t.Fatalf("history %d: witness %v misses committed %s\n%s", i, res.Witness, tx.ID, dump(h))
			}
		}
	}
	return res
}

func dump(h *history.History) string {
	s := ""
	for i := range h.Txns {
		s += "  " + h.Txns[i].Compact() + "\n"
	}
	return s
}

// TestWindowedCoresAgainstBruteForce repeats the differential test with
// windows of two transactions, so that the localizer's windowing (not just
// its fallback to the whole history) is held to the oracle.
func TestWindowedCoresAgainstBruteForce(t *testing.T) {
	saved := firstWindow
	firstWindow = 2
	defer func() { firstWindow = saved }()
	rng := rand.New(rand.NewPCG(99, 7))
	cfg := oracle.DefaultTinyConfig()
	cfg.Timestamps, cfg.Sessions, cfg.Lists, cfg.Unknowns, cfg.Aborts = true, true, true, true, true
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	for i := 0; i < tinyCount(300); i++ {
		h := oracle.RandomTiny(rng, cfg)
		if h.Validate() != nil {
			continue
		}
		res, err := Check(context.Background(), h, opts, Config{MaxAnomalies: 3})
		if err != nil {
			t.Fatal(err)
		}
		want, _, _ := oracle.Check(h, opts)
		if (res.Verdict == Valid) != want {
			t.Fatalf("history %d: %s, oracle valid=%v\n%s", i, res.Verdict, want, dump(h))
		}
		if res.Verdict == Invalid {
			if err := oracle.CheckCore(h, opts, res.Anomalies[0].Core); err != nil {
				t.Fatalf("history %d: core %v: %v\n%s", i, res.Anomalies[0].Core, err, dump(h))
			}
		}
	}
}

// TestGuardedCoreRegression: history 9522 of the 10,000-history run. The
// guarded encoding drew rw edges only to a writer's minimal time
// successors, reached through the writers between; a deselected writer
// has no outgoing edge, so the core {T1,T2,T4,T5} looked minimal although
// H|{T1,T4,T5} still violates.
func TestGuardedCoreRegression(t *testing.T) {
	h, err := history.ParseCompact(`T1[24,45] r y null, w y 1 (session c1)
T2[57,60] r x null, w x 3, w y 3 (session c1)
T3[67,90] w x 1, w y 2, r x 1, w x 3, r y 2 (session c1)
T4[97,101] w y 1, r y 1, r y 1, r y 1, w y 3 (session c1)
T5[103,118] r y 1, w x 2, r y 1 (session c1)`)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	res, err := Check(context.Background(), h, opts, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Invalid {
		t.Fatalf("verdict %s", res.Verdict)
	}
	if err := oracle.CheckCore(h, opts, res.Anomalies[0].Core); err != nil {
		t.Fatalf("core %v: %v", res.Anomalies[0].Core, err)
	}
}
