package weakonline

import (
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// The histories of docs/SEMANTICS.md §5 "The causal graph lets its
// settled past go (issue 26)": each is fed one transaction at a time,
// closed and stepped (a causal pass at every step, margin 1), and must
// raise the keeping engine's alert, with and without the fast path,
// after the pass retired the named nodes from the graph.
var causalRetireCases = []struct {
	c       weakRetireCase
	retired int // nodes the passes retired before the late reader came
}{
	{
		// CR1: T read z=1 from T0; both are overwritten and retired,
		// and T's clock left with its session successor T2's
		// retirement. R reads y=1 from T, so T0 is in R's past, and z
		// as the initial state: a causality violation. A read that
		// took the retired T without trouble would join no clock for
		// it and miss T0 in R's past.
		c: weakRetireCase{
			name:  "CR1 a read from a retired writer whose clock is gone",
			level: history.Causal,
			head: []string{
				"T0[0,10] w z 1 (session a)",
				"T[20,30] r z 1, w y 1 (session b)",
				"T2[40,50] w q 1 (session b)",
				"Z2[60,70] w z 2 (session e)",
				"Y2[80,90] w y 2 (session f)",
				"Q2[92,98] w q 2 (session g)",
			},
			tail:    []string{"R[2000,2010] r y 1, r z null (session d)"},
			fillers: 40,
			class:   history.CausalityViolation,
			members: []string{"T0", "T", "R"},
		},
		retired: 3,
	},
	{
		// CR2: n read m=1 from p and overwrote k; K3 overwrote n's k,
		// but p's m is still the last, so p stays and n, its reader,
		// must too: R after n in its session reads k=1 from p, which
		// forces n -> p against p -> n (a fractured read: n is R's
		// direct predecessor). Retiring n with p held would
		// drop that edge (out of the retired set) and lose the cycle.
		c: weakRetireCase{
			name:  "CR2 a node whose in-neighbour is held stays",
			level: history.Causal,
			head: []string{
				"p[0,10] w k 1, w m 1 (session a)",
				"n[20,30] r m 1, w k 2 (session b)",
				"K3[40,50] w k 3 (session e)",
			},
			tail:    []string{"R[2000,2010] r k 1 (session b)"},
			fillers: 40,
			class:   history.FracturedRead,
			members: []string{"p", "n", "R"},
		},
	},
}

func TestCausalRetirement(t *testing.T) {
	for _, rc := range causalRetireCases {
		c := rc.c
		t.Run(c.name, func(t *testing.T) {
			keep := runWeakRetire(t, c, Config{NoRetire: true, NoFast: true})
			if len(keep) != 1 {
				t.Fatalf("keeping engine: %d alerts, want 1", len(keep))
			}
			got := runWeakRetire(t, c, Config{retireMin: 1})
			if !slices.Equal(got, keep) {
				t.Fatalf("a causal pass at every step: alerts %v, keeping %v", got, keep)
			}
			// The passes retired what the case names before the
			// late reader came.
			early := c
			early.tail = nil
			e := feedWeakRetire(t, early, Config{retireMin: 1}, func(a *online.Alert) { t.Fatalf("alert before the late reader: %s %v", a.Type, a.Core) })
			if e.causalRetired < rc.retired {
				t.Fatalf("%d nodes retired before the late reader, want at least %d", e.causalRetired, rc.retired)
			}
		})
	}
}
