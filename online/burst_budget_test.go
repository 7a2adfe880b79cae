package online

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// TestCheapProbesBounded asks a prober, as one step, about literals whose
// probes the solver answers from its saved model (free variables: every
// probe is satisfiable and close to the model) and literals forced by
// two clauses through a second variable (the probe's propagation meets a
// conflict, and a search answers unsatisfiable). The probes answered
// from the saved model go back to the budget (docs/SEMANTICS.md §5,
// "Probes answered from the saved model do not spend the budget"), so
// the step makes more than probeBudget probes, but never more than
// probeBudget + cheapBudget, never more than probeBudget that searched,
// and never a wrong answer.
func TestCheapProbesBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		// forced(i): question i is about a forced literal.
		forced func(i int) bool
		n      int
		// the probes the step makes, and of them the searched ones
		probes, searched int64
	}{
		{"free", func(int) bool { return false }, 2000, probeBudget + cheapBudget, 0},
		{"forced", func(int) bool { return true }, 600, probeBudget, probeBudget},
		{"mixed", func(i int) bool { return i%5 == 4 }, 3000, -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := solver.New(solver.Options{})
			type q struct {
				l      solver.Lit
				forced bool
			}
			var qs []q
			for i := range tc.n {
				x := solver.PosLit(s.NewVar())
				if !tc.forced(i) {
					qs = append(qs, q{l: x})
					continue
				}
				// The first solve must not learn x as a unit: it
				// decides x true.
				s.SetPhase(x.Var(), true)
				y := solver.PosLit(s.NewVar())
				s.AddClause(x, y)
				s.AddClause(x, y.Not())
				qs = append(qs, q{l: x, forced: true})
			}
			s.SetProbeFromModel(true)
			pr := &prober{ctx: context.Background(), s: s, budget: probeBudget, cheap: cheapBudget, stats: &ClosureStats{}}
			if !pr.ensureModel() {
				t.Fatal("instance unsatisfiable")
			}
			st0 := s.Stats()
			for _, c := range qs {
				v, ok := pr.decide(incremental.Lit(c.l))
				if ok && (!c.forced || !v) {
					t.Fatalf("literal %v (forced %v) decided %v", c.l, c.forced, v)
				}
			}
			st := s.Stats()
			probes := st.Solves - st0.Solves
			kept := st.KeptModelSolves - st0.KeptModelSolves
			searched := probes - kept
			t.Logf("%d probes, %d answered from the saved model, %d searched", probes, kept, searched)
			if probes > probeBudget+cheapBudget {
				t.Errorf("%d probes in one step: more than probeBudget + cheapBudget = %d", probes, probeBudget+cheapBudget)
			}
			if searched > probeBudget {
				t.Errorf("%d searched probes: more than probeBudget = %d", searched, probeBudget)
			}
			if probes <= probeBudget && kept > 0 {
				t.Errorf("%d probes: the probes answered from the saved model were not given back", probes)
			}
			if tc.probes >= 0 && (probes != tc.probes || searched != tc.searched) {
				t.Errorf("%d probes, %d searched; want %d, %d", probes, searched, tc.probes, tc.searched)
			}
			if pr.budget != 0 {
				t.Errorf("budget left %d: the step stopped before spending it", pr.budget)
			}
		})
	}
}

// TestCheapRefundSameAlerts: giving back the probes answered from the
// saved model changes how many questions a step may ask, never an alert:
// bursts with injected anomalies, stepped as run steps them, give the
// same alert ids with the refund on and off, and the refund happens on
// them.
func TestCheapRefundSameAlerts(t *testing.T) {
	defer func() { noCheapRefund = false }()
	refunds, alerts := int64(0), 0
	for i := range 6 {
		rng := rand.New(rand.NewPCG(uint64(i), 0x63686561))
		h, cfg := injectedBurst(t, rng, uint64(200+i), 1000+rng.IntN(2000), 20+rng.IntN(200), i, 1)
		ids := func(off bool) []string {
			noCheapRefund = off
			return burstAlertIDs(t, h)
		}
		before := cheapRefunds.Load()
		on := ids(false)
		refunds += cheapRefunds.Load() - before
		alerts += len(on)
		if off := ids(true); !slices.Equal(on, off) {
			t.Fatalf("burst %d (%v): alerts %v with the refund, %v without", i, cfg.Inject, on, off)
		}
	}
	if refunds == 0 || alerts == 0 {
		t.Fatalf("%d probes refunded, %d alerts: the comparison does not exercise the refund", refunds, alerts)
	}
	t.Logf("%d probes refunded; %d alerts, the same both ways", refunds, alerts)
}
