package incremental

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/oracle"
)

// plLevels are Adya's two levels between read committed and serializable.
var plLevels = []history.Level{history.RepeatableRead, history.PL2Plus}

// TestPLAgainstBruteForce is issue 26's acceptance 1 for repeatable-read
// and pl-2+: on random tiny histories, registers and lists (repeated values, unknown
// and aborted outcomes, both initial states, with and without the
// serializable pre-check) the checker agrees with the oracle, which
// enumerates version orders and read-from over Adya's direct
// serialization graph (internal/oracle/weak_pl.go); every core passes the
// oracle's core check (it violates, and dropping any one member passes);
// every anomaly has a name and a text; at pl-2+ a cycle shown with one
// anti-dependency is named G-single. STREAMCHECK_TINY=10000 is the
// acceptance sweep.
func TestPLAgainstBruteForce(t *testing.T) {
	n := tinyCount(300)
	for li, lv := range plLevels {
		for _, initial := range []history.InitialState{history.InitialEmpty, history.InitialUnknown} {
			for _, lists := range []bool{false, true} {
				// With lists, both levels are held to the oracle's DSG over
				// list version orders (internal/oracle/weak_lists.go), which
				// never parses a list: repeatable-read through serializable's
				// encoding, pl-2+ through it plus orderListAppenders.
				t.Run(fmt.Sprintf("%s/init=%s/lists=%v", lv, initial, lists), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(li)+299+100*uint64(b2i(lists)), uint64(initial)+26))
					cfg := oracle.DefaultTinyConfig()
					cfg.Lists = lists
					cfg.InitialValues = initial == history.InitialUnknown
					opts := history.DefaultOptions()
					opts.Level, opts.InitialState = lv, initial
					var valid, invalid, gsingle, unknown int
					for i := 0; i < n; i++ {
						h := oracle.RandomTiny(rng, cfg)
						if h.Validate() != nil {
							continue
						}
						res := checkAgainstOracle(t, i, h, opts, Config{MaxAnomalies: 3, noStricter: i%2 == 1})
						switch res.Verdict {
						case Unknown:
							unknown++
							continue
						case Valid:
							valid++
							continue
						}
						invalid++
						if len(res.Anomalies) == 0 {
							t.Fatalf("history %d: invalid with no anomaly\n%s", i, dump(h))
						}
						for _, a := range res.Anomalies {
							if err := oracle.CheckCore(h, opts, a.Core); err != nil {
								t.Fatalf("history %d: core %v (%s): %v\n%s", i, a.Core, a.Type, err, dump(h))
							}
							if a.Type == "" || len(a.Text) == 0 {
								t.Fatalf("history %d: anomaly without a name or text: %+v", i, a)
							}
							if lv == history.PL2Plus && a.Class == history.GSingle {
								gsingle++
								rw := 0
								for _, s := range a.Cycle {
									if s.Kind == "rw" {
										rw++
									}
								}
								if rw != 1 {
									t.Fatalf("history %d: G-single cycle with %d rw edges: %+v", i, rw, a.Cycle)
								}
							}
						}
					}
					if unknown > 0 {
						t.Errorf("%d of %d tiny histories unknown", unknown, n)
					}
					if valid == 0 || invalid == 0 {
						t.Errorf("uninformative sample: %d valid, %d invalid", valid, invalid)
					}
					t.Logf("%d histories: %d valid (%.0f%%), %d invalid, %d G-single", valid+invalid, valid, pct(valid, valid+invalid), invalid, gsingle)
				})
			}
		}
	}
}

// TestPLNamedHistories: the textbook shapes at both levels, with the
// anomaly each is named by.
func TestPLNamedHistories(t *testing.T) {
	for _, c := range []struct {
		name, text string
		lv         history.Level
		valid      bool
		typ        string
	}{
		{"lost update", "A r x0, w x1 · B r x0, w x2 · I w x0", history.PL2Plus, false, history.LostUpdate},
		{"lost update", "A r x0, w x1 · B r x0, w x2 · I w x0", history.RepeatableRead, false, history.LostUpdate},
		{"write skew", "A r x null, r y null, w x1 · B r x null, r y null, w y1", history.PL2Plus, true, ""},
		{"write skew", "A r x null, r y null, w x1 · B r x null, r y null, w y1", history.RepeatableRead, false, history.WriteSkew},
		{"long fork", "A w x1 · B w y1 · C r x1, r y null · D r x null, r y1", history.PL2Plus, true, ""},
		{"read skew", "W w x1, w y1 · R r x1, r y null", history.PL2Plus, false, ""},
		{"G-single via a path", "A w x1, w y1 · B r x1, w z1 · C r z1, r y null", history.PL2Plus, false, ""},
		// Lists: a lost update whose two appenders no read shows (the
		// encoding once drew no ww edge between them), and the two
		// anomalies pl-2+ allows, in Elle's form.
		{"list lost update", "A r x [], append x 1 · B r x [], append x 2", history.PL2Plus, false, history.LostUpdate},
		{"list lost update", "A r x [], append x 1 · B r x [], append x 2", history.RepeatableRead, false, ""},
		{"list write skew", "A r x [], r y [], append x 1 · B r x [], r y [], append y 1", history.PL2Plus, true, ""},
		{"list long fork", "A append x 1 · B append y 1 · C r x [1], r y [] · D r x [], r y [1]", history.PL2Plus, true, ""},
		{"list read skew", "W append x 1, append y 1 · R r x [1], r y []", history.PL2Plus, false, ""},
	} {
		h, err := history.ParseCompact(c.text)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = c.lv
		res, err := Check(context.Background(), h, opts, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if (res.Verdict == Valid) != c.valid {
			t.Fatalf("%s at %s: %v", c.name, c.lv, res.Verdict)
		}
		if c.valid {
			continue
		}
		a := res.Anomalies[0]
		if c.typ != "" && a.Type != c.typ {
			t.Errorf("%s at %s: type %s, want %s (%v)", c.name, c.lv, a.Type, c.typ, a.Text)
		}
		if c.lv == history.PL2Plus && a.Class != history.GSingle {
			t.Errorf("%s at pl-2+: class %s, want G-single (%v)", c.name, a.Class, a.Text)
		}
		t.Logf("%s at %s: %s %s %v", c.name, c.lv, a.Type, a.Class, a.Text)
	}
}
