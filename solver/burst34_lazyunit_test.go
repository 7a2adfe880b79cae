package solver

import (
	"context"
	"testing"
	"time"
)

// withEveryUnitLazy runs f with every learnt unit above the assumptions
// lazy (burst34_lazyunit.go), and reports how many were.
func withEveryUnitLazy(t *testing.T, f func(t *testing.T)) int64 {
	old := lazyMinLevels
	lazyMinLevels = 1
	defer func() { lazyMinLevels = old }()
	n := lazyPushed.Load()
	f(t)
	return lazyPushed.Load() - n
}

// TestLazyUnitsAgree runs the brute-force differentials (plain CNF, the
// acyclicity theory, incremental use under assumptions, polygraphs) with
// every learnt unit lazy: each answer, model and failed-assumption set
// is checked against brute force by the suites themselves.
func TestLazyUnitsAgree(t *testing.T) {
	suites := []struct {
		name string
		f    func(*testing.T)
	}{
		{"cnf", TestRandomCNF},
		{"theory", TestRandomTheory},
		{"incremental", TestIncremental},
		{"polygraph", TestRandomPolygraph},
	}
	var total int64
	for _, sc := range suites {
		t.Run(sc.name, func(t *testing.T) {
			n := withEveryUnitLazy(t, sc.f)
			t.Logf("%d lazy units", n)
			total += n
		})
	}
	if total == 0 {
		t.Fatal("no learnt unit was lazy: the suites did not exercise the rule")
	}
}

// TestLazyUnitsRefuteEachOther is the instance that made a naive lazy
// unit loop for ever: deciding ¬x forces y and then w and ¬w, so y's
// negation is a learnt unit; made lazy it forces x, then z and ¬z, so
// x's negation is learnt at a level whose decision is the first lazy
// unit. Only level 0, where both are facts, sees the contradiction.
// Without the guard in lazyUnit the search alternates between the two
// units with no restart, for ever (the mutation ran into go test's
// timeout).
func TestLazyUnitsRefuteEachOther(t *testing.T) {
	withEveryUnitLazy(t, func(t *testing.T) {
		s := New(Options{})
		x, y, z, w := PosLit(s.NewVar()), PosLit(s.NewVar()), PosLit(s.NewVar()), PosLit(s.NewVar())
		s.AddClause(x, y)
		s.AddClause(x.Not(), z)
		s.AddClause(x.Not(), z.Not())
		s.AddClause(y.Not(), w)
		s.AddClause(y.Not(), w.Not())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if st := s.Solve(ctx); st != Unsat {
			t.Fatalf("Solve = %v, want UNSAT", st)
		}
		if s.Stats().LazyUnits == 0 {
			t.Fatal("the instance made no lazy unit")
		}
	})
}

// TestLazyUnitsBecomeFacts: after a Solve, every lazy unit is a level-0
// fact, as the backjump to level 0 would have left it (the online
// prober reads level-0 facts as decided literals). Deciding ¬a first
// (index order, phase false) forces b, whose edge closes a cycle with
// the base edges: ¬b is a learnt unit, lazy since the conflict is at
// level 2 above the filler decision.
func TestLazyUnitsBecomeFacts(t *testing.T) {
	withEveryUnitLazy(t, func(t *testing.T) {
		s := New(Options{TheoryPropagationLimit: -1, PruneLimit: -1})
		f := PosLit(s.NewVar())
		a, b := PosLit(s.NewVar()), PosLit(s.NewVar())
		n0, n1 := s.NewNode(), s.NewNode()
		s.AddBaseEdge(n0, n1)
		s.AddEdge(b, n1, n0)
		s.AddClause(a, b)
		s.AddClause(f, f.Not(), a) // keeps f a free variable
		if st := s.Solve(context.Background()); st != Sat {
			t.Fatalf("Solve = %v, want SAT", st)
		}
		if s.Stats().LazyUnits == 0 {
			t.Fatal("the instance made no lazy unit")
		}
		if v, ok := s.Fixed(b); !ok || v {
			t.Fatalf("b fixed %v %v after Solve, want a level-0 false", v, ok)
		}
	})
}
