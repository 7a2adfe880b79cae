package solver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseDIMACS(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     CNF
	}{
		{"plain", "c hello\np cnf 3 2\n1 -2 0\n-3 2 1 0\n",
			CNF{NumVars: 3, Clauses: [][]int{{1, -2}, {-3, 2, 1}}}},
		{"spanning lines and spaces", "p  cnf\t3 3 \r\n1\n-2 0 3\n 0 0\n\n",
			CNF{NumVars: 3, Clauses: [][]int{{1, -2}, {3}, {}}}},
		{"no final newline", "p cnf 1 1\n-1 0",
			CNF{NumVars: 1, Clauses: [][]int{{-1}}}},
		{"satlib trailer", "p cnf 2 1\n1 2 0\n%\n0\n\n",
			CNF{NumVars: 2, Clauses: [][]int{{1, 2}}}},
		{"empty formula", "p cnf 0 0\n", CNF{Clauses: [][]int{}}},
		{"edges", "p cnf 2 1\nn 3\nb 0 1\ne -1 1 2\ne2 1 2 2 0\n1 2 0\nb 2 2\n",
			CNF{NumVars: 2, Clauses: [][]int{{1, 2}}, NumNodes: 3, Edges: []CNFEdge{
				{From: 0, To: 1}, {A: -1, From: 1, To: 2}, {A: 1, B: 2, From: 2, To: 0}, {From: 2, To: 2}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDIMACS(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}

func TestParseDIMACSErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
		msg  string
	}{
		{"", 1, "missing header"},
		{"c only\n", 1, "missing header"},
		{"1 2 0\n", 1, "before the header"},
		{"p cnf 2\n", 1, "malformed header"},
		{"p dnf 2 1\n", 1, "malformed header"},
		{"p cnf -2 1\n", 1, "malformed header"},
		{"p cnf 2 1\np cnf 2 1\n", 2, "second header"},
		{"p cnf 2 1\n1 3 0\n", 2, "outside the 2 variables"},
		{"p cnf 2 1\n1 -3 0\n", 2, "outside the 2 variables"},
		{"p cnf 2 1\n1 x 0\n", 2, "not an integer"},
		{"p cnf 2 1\n1 +2 0\n", 2, "not an integer"},
		{"p cnf 2 1\n1 99999999999999999999 0\n", 2, "not an integer"},
		{"p cnf 2 1\n1 0 2 0\n", 2, "more clauses"},
		{"c\np cnf 2 2\n1 0\n", 2, "declares 2 clauses, the file has 1"},
		{"p cnf 2 1\n\n1\n2\n", 3, "not terminated"},
		{"p cnf 2 1\n1\nn 2\n2 0\n", 3, "inside the clause begun on line 2"},
		{"p cnf 2 0\nb 0 1\n", 2, "before the `n <count>`"},
		{"p cnf 2 0\nn 2\nn 2\n", 3, "second `n`"},
		{"p cnf 2 0\nn 2\nb 0 2\n", 3, "outside 0..1"},
		{"p cnf 2 0\nn 2\nb 0\n", 3, "want `b <from> <to>`"},
		{"p cnf 2 0\nn 2\ne 3 0 1\n", 3, "outside the 2 variables"},
		{"p cnf 2 0\nn 2\ne 0 0 1\n", 3, "literal 0"},
		{"p cnf 2 0\nn 2\ne2 1 0 1\n", 3, "want `e2"},
		{"p cnf 2 0\nn -1\n", 2, "node count"},
		{"p cnf 300000000 0\n", 1, "limit"},
	} {
		_, err := ParseDIMACS(strings.NewReader(tc.in))
		var de *DIMACSError
		if !errors.As(err, &de) {
			t.Errorf("%q: got %v, want a *DIMACSError", tc.in, err)
			continue
		}
		if de.Line != tc.line || !strings.Contains(de.Msg, tc.msg) {
			t.Errorf("%q: got %q, want line %d and %q", tc.in, err, tc.line, tc.msg)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("line %d:", tc.line)) {
			t.Errorf("%q: message %q does not name the line", tc.in, err)
		}
	}
}

// A line longer than the reader's buffer must be read whole.
func TestParseDIMACSLongLine(t *testing.T) {
	const n = 100000
	var b strings.Builder
	fmt.Fprintf(&b, "p cnf %d 1\n", n)
	for v := 1; v <= n; v++ {
		fmt.Fprintf(&b, "%d ", -v)
	}
	b.WriteString("0\n")
	c, err := ParseDIMACS(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Clauses) != 1 || len(c.Clauses[0]) != n || c.Clauses[0][n-1] != -n {
		t.Fatalf("long clause read wrong: %d clauses", len(c.Clauses))
	}
}

// dimacsRandomCNF builds a small formula with every kind of line, including empty
// clauses, duplicates, tautologies and self-loops.
func dimacsRandomCNF(r *rand.Rand, maxVars, maxNodes int) *CNF {
	c := &CNF{NumVars: r.IntN(maxVars + 1), Clauses: [][]int{}}
	lit := func() int {
		l := 1 + r.IntN(c.NumVars)
		if r.IntN(2) == 0 {
			l = -l
		}
		return l
	}
	for range r.IntN(3 * (c.NumVars + 1)) {
		cl := []int{}
		if c.NumVars > 0 {
			for range r.IntN(4) + min(1, r.IntN(20)) {
				cl = append(cl, lit())
			}
		}
		c.Clauses = append(c.Clauses, cl)
	}
	if maxNodes > 0 && r.IntN(4) != 0 {
		c.NumNodes = 1 + r.IntN(maxNodes)
		for range r.IntN(3 * c.NumNodes) {
			e := CNFEdge{From: r.IntN(c.NumNodes), To: r.IntN(c.NumNodes)}
			if e.From == e.To && r.IntN(4) != 0 {
				continue // keep self-loops rare
			}
			if c.NumVars > 0 {
				switch r.IntN(4) {
				case 0:
				case 1, 2:
					e.A = lit()
				default:
					e.A, e.B = lit(), lit()
				}
			}
			c.Edges = append(c.Edges, e)
		}
	}
	return c
}

func TestWriteParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		c := dimacsRandomCNF(r, 20, 10)
		var buf bytes.Buffer
		if err := WriteDIMACS(&buf, c); err != nil {
			t.Fatal(err)
		}
		got, err := ParseDIMACS(&buf)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, buf.String())
		}
		if len(c.Edges) == 0 && len(got.Edges) == 0 {
			got.Edges = c.Edges // nil and empty are the same formula
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("case %d: round trip changed the formula\n got %+v\nwant %+v", i, got, c)
		}
	}
}

// dimacsBruteForce decides c by trying every assignment with Verify.
func dimacsBruteForce(c *CNF) (sat bool) {
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

// Loading into the solver and solving agrees with brute force, and every
// model the solver gives satisfies the formula (clauses and acyclicity).
func TestLoadSolveBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[Status]int{}
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		c := dimacsRandomCNF(r, 10, 8)
		s := New(Options{Seed: uint64(i)})
		_, ok, err := c.Load(s)
		if err != nil {
			t.Fatal(err)
		}
		st := Unsat
		if ok {
			st = s.Solve(context.Background())
		}
		counts[st]++
		want := Unsat
		if dimacsBruteForce(c) {
			want = Sat
		}
		if st != want {
			var buf bytes.Buffer
			WriteDIMACS(&buf, c)
			t.Fatalf("case %d: solver says %d, brute force %d, load ok=%v\n%s", i, st, want, ok, buf.String())
		}
		if st == Sat {
			if err := c.Verify(func(l int) bool { return s.Value(LitFromDIMACS(l)) }); err != nil {
				var buf bytes.Buffer
				WriteDIMACS(&buf, c)
				t.Fatalf("case %d: model fails: %v\n%s", i, err, buf.String())
			}
		}
	}
	t.Logf("sat %d, unsat %d", counts[Sat], counts[Unsat])
	if counts[Sat] < n/10 || counts[Unsat] < n/10 {
		t.Fatalf("generator is lopsided: %v", counts)
	}
}

func TestLoadNeedsFreshSolver(t *testing.T) {
	s := New(Options{})
	s.NewVar()
	if _, _, err := (&CNF{NumVars: 1}).Load(s); !errors.Is(err, ErrLoadVars) {
		t.Fatalf("got %v, want ErrLoadVars", err)
	}
	s = New(Options{})
	s.NewNode()
	if _, _, err := (&CNF{NumNodes: 1}).Load(s); !errors.Is(err, ErrLoadVars) {
		t.Fatalf("a solver with a node: got %v, want ErrLoadVars", err)
	}
}

func TestVerifyFindsCycle(t *testing.T) {
	c := &CNF{NumVars: 1, NumNodes: 3, Edges: []CNFEdge{{From: 0, To: 1}, {From: 1, To: 2}, {A: 1, From: 2, To: 0}}}
	if err := c.Verify(func(l int) bool { return l < 0 }); err != nil {
		t.Fatalf("x1 false leaves no cycle, got %v", err)
	}
	if err := c.Verify(func(l int) bool { return l > 0 }); err == nil {
		t.Fatal("x1 true closes the cycle 0->1->2->0, Verify missed it")
	}
}

// TestDIMACSCorpus runs every file in testdata/dimacs. Each says what it
// expects in a comment: "c expect: SAT" or "c expect: UNSAT" (checked with
// the solver and with brute force) or "c expect-error: line N: message".
func TestDIMACSCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/dimacs/*.cnf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var expect, expectErr string
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "c expect: "); ok {
					expect = v
				}
				if v, ok := strings.CutPrefix(line, "c expect-error: "); ok {
					expectErr = v
				}
			}
			c, err := ParseDIMACS(bytes.NewReader(data))
			if expectErr != "" {
				if err == nil || !strings.HasSuffix(err.Error(), expectErr) {
					t.Fatalf("got error %v, want one ending in %q", err, expectErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]Status{"SAT": Sat, "UNSAT": Unsat}[expect]
			if want == Unknown {
				t.Fatalf("file says neither `c expect: SAT|UNSAT` nor `c expect-error: ...`")
			}
			if brute := dimacsBruteForce(c); brute != (want == Sat) {
				t.Fatalf("brute force says sat=%v, the file expects %s", brute, expect)
			}
			s := New(Options{})
			_, ok, err := c.Load(s)
			if err != nil {
				t.Fatal(err)
			}
			st := Unsat
			if ok {
				st = s.Solve(context.Background())
			}
			if st != want {
				t.Fatalf("solver says %v, the file expects %s", st, expect)
			}
		})
	}
}

func FuzzParseDIMACS(f *testing.F) {
	f.Add([]byte("p cnf 3 2\n1 -2 0\n3 0\n"))
	f.Add([]byte("c x\np cnf 2 1\nn 3\nb 0 1\ne -1 1 2\ne2 1 2 2 0\n1 2 0\n%\n0\n"))
	f.Add([]byte("p cnf 1 1\n1"))
	f.Add([]byte("p cnf 0 1\n0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseDIMACS(bytes.NewReader(data))
		if err != nil {
			var de *DIMACSError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), fmt.Sprintf("line %d: ", de.Line)) {
				t.Fatalf("error %q does not name a line", err)
			}
			if lines := bytes.Count(data, []byte("\n")) + 1; de.Line < 0 || de.Line > lines {
				t.Fatalf("error names line %d of a %d-line input", de.Line, lines)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed formula is invalid: %v", err)
		}
		// What was parsed must survive a write and a second parse.
		var buf bytes.Buffer
		if err := WriteDIMACS(&buf, c); err != nil {
			t.Fatal(err)
		}
		c2, err := ParseDIMACS(&buf)
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, buf.String())
		}
		if c.NumVars != c2.NumVars || c.NumNodes != c2.NumNodes ||
			!reflect.DeepEqual(c.Clauses, c2.Clauses) || len(c.Edges) != len(c2.Edges) ||
			(len(c.Edges) > 0 && !reflect.DeepEqual(c.Edges, c2.Edges)) {
			t.Fatalf("round trip changed the formula")
		}
	})
}

// BenchmarkParseDIMACS reads random 3-SAT with 100k variables and 426k
// clauses (about 5 MB of text).
func BenchmarkParseDIMACS(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	c := &CNF{NumVars: 100000}
	for range 426000 {
		c.Clauses = append(c.Clauses, []int{
			1 + r.IntN(c.NumVars), -1 - r.IntN(c.NumVars), 1 + r.IntN(c.NumVars)})
	}
	var buf bytes.Buffer
	if err := WriteDIMACS(&buf, c); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := ParseDIMACS(bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}
