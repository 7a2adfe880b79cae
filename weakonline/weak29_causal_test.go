package weakonline

import (
	"context"
	"fmt"
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
	{
		// CR4: T0 and T1 wrote z and retired (L2, later in their
		// session, overwrote them); R reads m=1 from L, their live
		// session successor, so both are in R's past, and z as the
		// initial state: a causality violation found only through z's
		// writers of session a at or before L's position, a search of
		// the list after T1 was dropped from it (T0, its first entry,
		// stays). A list that dropped every retired entry would find
		// no writer there.
		c: weakRetireCase{
			name:  "CR4 a retired writer still counts as a writer in the past",
			level: history.Causal,
			head: []string{
				"T0[0,10] w z 1 (session a)",
				"T1[12,18] w z 2 (session a)",
				"L[20,30] w m 1 (session a)",
				"L2[40,50] w z 3 (session a)",
			},
			tail:    []string{"R[2000,2010] r m 1, r z null (session d)"},
			fillers: 40,
			class:   history.CausalityViolation,
			members: []string{"L", "R"},
		},
		retired: 2,
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

// TestCausalRetirementOpenAncestor (CR3): s read x=1 from n and y=1 from
// t, which is still open; when t closes, its read of u=1 from W puts W,
// a writer of x that read q=1 from n, in s's past: the forced edge
// W -> n closes a cycle with n -> W. While t is open, s's past can
// grow, so n (overwritten, its in-neighbours held or retired) must stay
// until s settles: a pass that retired it would meet W -> n as an edge
// into the retired set (trouble, the net), and without that net would
// drop it. The same alert as the keeping engine's, after passes at every
// step.
func TestCausalRetirementOpenAncestor(t *testing.T) {
	run := func(cfg Config) ([]string, *Engine) {
		opts := history.DefaultOptions()
		opts.Level = history.Causal
		e, err := New(opts, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		step := func() {
			as, err := e.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				for _, m := range []string{"n", "W", "t", "s"} {
					if !slices.Contains(a.Core, m) {
						t.Fatalf("core %v lacks %s", a.Core, m)
					}
				}
				ids = append(ids, a.ID)
			}
		}
		release := func(s string, close bool) {
			h, err := history.ParseCompact(s)
			if err != nil {
				t.Fatal(err)
			}
			h.Txns[0].Pos = history.Pos{}
			e.Release(h.Txns[0])
			if close {
				e.Close(h.Txns[0].ID)
			}
			step()
		}
		for _, s := range []string{
			"n[0,10] w x 1, w q 1 (session a)",
			"X2[12,14] w x 2 (session e)",
			"Q2[12,14] w q 2 (session f)",
			"W[20,30] r q 1, w x 3, w u 1 (session g)",
		} {
			release(s, true)
		}
		release("t[40,5000] r u 1, w y 1 (session h)", false)
		release("s[50,60] r x 1, r y 1 (session d)", true)
		for i := range 40 {
			release(fmt.Sprintf("F%d[%d,%d] w f%d 1 (session c)", i, 100+20*i, 110+20*i, i), true)
		}
		if len(ids) != 0 {
			t.Fatalf("alert %v before t closed", ids)
		}
		e.Close("t")
		step()
		return ids, e
	}
	keep, _ := run(Config{NoRetire: true, NoFast: true})
	if len(keep) != 1 {
		t.Fatalf("keeping engine: %d alerts, want 1", len(keep))
	}
	got, e := run(Config{retireMin: 1})
	if !slices.Equal(got, keep) {
		t.Fatalf("a causal pass at every step: alerts %v, keeping %v", got, keep)
	}
	if e.causalRetired == 0 {
		t.Fatal("nothing retired: the history tests no pass")
	}
}
