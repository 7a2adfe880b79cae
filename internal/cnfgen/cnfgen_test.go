package cnfgen

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/streamcheck/streamcheck/solver"
)

// bruteForce decides c by trying every assignment; only for <= ~16 vars.
func bruteForce(t *testing.T, c *solver.CNF) bool {
	t.Helper()
	if c.NumVars > 20 {
		t.Fatalf("bruteForce over %d variables", c.NumVars)
	}
	for m := 0; m < 1<<c.NumVars; m++ {
		value := func(l int) bool {
			if l < 0 {
				return m&(1<<(-l-1)) == 0
			}
			return m&(1<<(l-1)) != 0
		}
		if c.Verify(value) == nil {
			return true
		}
	}
	return false
}

func solve(t *testing.T, c *solver.CNF) bool {
	t.Helper()
	s := solver.New(solver.Options{})
	_, ok, err := c.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return false
	}
	switch st := s.Solve(context.Background()); st {
	case solver.Sat:
		if err := c.Verify(func(l int) bool { return s.Value(solver.LitFromDIMACS(l)) }); err != nil {
			t.Fatalf("solver model is wrong: %v", err)
		}
		return true
	case solver.Unsat:
		return false
	default:
		t.Fatalf("solver returned %d without a budget", st)
		return false
	}
}

func text(t *testing.T, c *solver.CNF) string {
	t.Helper()
	var b bytes.Buffer
	if err := solver.WriteDIMACS(&b, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type family struct {
	name string
	gen  func(seed uint64) *solver.CNF
	want int // 1 sat, -1 unsat, 0 unknown in advance
}

func families() []family {
	return []family{
		{"3sat-n12", func(s uint64) *solver.CNF { return RandomKSAT(3, 12, 4.26, s) }, 0},
		{"2sat-n10", func(s uint64) *solver.CNF { return RandomKSAT(2, 10, 2, s) }, 0},
		{"php3", func(uint64) *solver.CNF { return Pigeonhole(3) }, -1},
		{"parity4-sat", func(s uint64) *solver.CNF { return Parity(4, true, s) }, 1},
		{"parity4-unsat", func(s uint64) *solver.CNF { return Parity(4, false, s) }, -1},
		{"color-planted", func(s uint64) *solver.CNF { return Coloring(5, 8, 3, true, s) }, 1},
		{"color-random", func(s uint64) *solver.CNF { return Coloring(5, 7, 2, false, s) }, 0},
		{"polygraph-planted", func(s uint64) *solver.CNF {
			return Polygraph(PolygraphParams{Nodes: 12, Sessions: 3, Constraints: 10, SetSize: 3, AntiDeps: 10, Clauses: 10, Planted: true, Seed: s})
		}, 1},
		{"polygraph-random", func(s uint64) *solver.CNF {
			return Polygraph(PolygraphParams{Nodes: 12, Sessions: 4, Constraints: 10, SetSize: 1, AntiDeps: 6, Clauses: 8, Seed: s})
		}, 0},
	}
}

// G1, G2, G3 (against brute force, not the solver).
func TestFamilies(t *testing.T) {
	for _, f := range families() {
		t.Run(f.name, func(t *testing.T) {
			sat, unsat := 0, 0
			for seed := range uint64(20) {
				c := f.gen(seed)
				if err := c.Validate(); err != nil {
					t.Fatalf("G2: seed %d: %v", seed, err)
				}
				if a, b := text(t, c), text(t, f.gen(seed)); a != b {
					t.Fatalf("G1: seed %d gives two formulas", seed)
				}
				got := bruteForce(t, c)
				if got {
					sat++
				} else {
					unsat++
				}
				if (f.want == 1 && !got) || (f.want == -1 && got) {
					t.Fatalf("G3: seed %d: brute force says sat=%v\n%s", seed, got, text(t, c))
				}
			}
			t.Logf("sat %d unsat %d", sat, unsat)
			if f.want == 0 && (sat == 0 || unsat == 0) {
				t.Errorf("family %s is lopsided at these sizes (sat %d, unsat %d): a weak test mix", f.name, sat, unsat)
			}
		})
	}
}

func TestSeedsDiffer(t *testing.T) {
	if text(t, RandomKSAT(3, 20, 4.26, 1)) == text(t, RandomKSAT(3, 20, 4.26, 2)) {
		t.Fatal("seeds 1 and 2 give the same formula")
	}
}

// G4: expansion agrees with brute force on the original, and the models of
// the expansion are models of the original.
func TestExpandAcyclicity(t *testing.T) {
	n := 0
	for seed := range uint64(300) {
		var c *solver.CNF
		if seed%2 == 0 {
			c = Polygraph(PolygraphParams{Nodes: 2 + int(seed%9), Sessions: 1 + int(seed%3), Constraints: 8,
				SetSize: 2, AntiDeps: int(seed % 5), Clauses: 6, Seed: seed})
		} else {
			c = Polygraph(PolygraphParams{Nodes: 8, Sessions: 2, Constraints: 9, SetSize: 3, AntiDeps: 8,
				Clauses: 5, Planted: seed%4 == 1, Seed: seed})
		}
		// A self-loop now and then exercises that path of the expansion.
		if seed%7 == 0 {
			c.Edges = append(c.Edges, solver.CNFEdge{A: 1, B: -2, From: 3 % c.NumNodes, To: 3 % c.NumNodes})
		}
		x := ExpandAcyclicity(c)
		if err := x.Validate(); err != nil {
			t.Fatal(err)
		}
		if x.NumNodes != 0 || len(x.Edges) != 0 {
			t.Fatal("expansion kept graph parts")
		}
		want := bruteForce(t, c)
		s := solver.New(solver.Options{})
		_, ok, err := x.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		got := ok && s.Solve(context.Background()) == solver.Sat
		if got != want {
			t.Fatalf("seed %d: expansion sat=%v, original sat=%v\n%s", seed, got, want, text(t, c))
		}
		if got {
			n++
			if err := c.Verify(func(l int) bool { return s.Value(solver.LitFromDIMACS(l)) }); err != nil {
				t.Fatalf("seed %d: model of expansion fails the original: %v", seed, err)
			}
		}
	}
	t.Logf("%d of 300 satisfiable", n)
}

// Larger instances than brute force reaches: the known answers hold with the
// solver, which TestLoadSolveBruteForce in package solver checks separately.
func TestKnownAnswersLarger(t *testing.T) {
	for _, tc := range []struct {
		c    *solver.CNF
		want bool
	}{
		{Pigeonhole(5), false},
		{Parity(30, true, 1), true},
		{Parity(12, false, 1), false},
		{Coloring(60, 130, 3, true, 1), true},
		{Polygraph(PolygraphParams{Nodes: 200, Sessions: 4, Constraints: 300, SetSize: 3, AntiDeps: 300, Clauses: 200, Planted: true, Seed: 1}), true},
	} {
		if got := solve(t, tc.c); got != tc.want {
			t.Errorf("got sat=%v, want %v\n%s", got, tc.want, text(t, tc.c)[:200])
		}
	}
}

func ExamplePigeonhole() {
	var b bytes.Buffer
	solver.WriteDIMACS(&b, Pigeonhole(2))
	fmt.Print(b.String())
	// Output:
	// p cnf 6 9
	// 1 2 0
	// 3 4 0
	// 5 6 0
	// -1 -3 0
	// -1 -5 0
	// -3 -5 0
	// -2 -4 0
	// -2 -6 0
	// -4 -6 0
}
