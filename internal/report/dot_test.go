package report

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// needDot returns the path of Graphviz's dot, skipping the test when it is
// missing, except under CI=true where .ci/run installs it.
func needDot(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("dot")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("graphviz (dot) is required under CI=true")
		}
		t.Skip("graphviz (dot) not installed")
	}
	return p
}

// svgGroup is a <g> of Graphviz's SVG output: a node or an edge with its
// title and text lines.
type svgGroup struct {
	Class string     `xml:"class,attr"`
	Title string     `xml:"title"`
	Texts []string   `xml:"text"`
	Inner []svgGroup `xml:"g"`
}

type svgDoc struct {
	Groups []svgGroup `xml:"g"`
}

// renderSVG runs dot -Tsvg and collects the node and edge groups.
func renderSVG(t *testing.T, dot string, src []byte) (nodes, edges []svgGroup) {
	t.Helper()
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = bytes.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v %s\n%s", err, stderr.Bytes(), src)
	}
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(out))
	dec.Strict = false
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("parse SVG: %v", err)
	}
	var walk func(gs []svgGroup)
	walk = func(gs []svgGroup) {
		for _, g := range gs {
			switch g.Class {
			case "node":
				nodes = append(nodes, g)
			case "edge":
				edges = append(edges, g)
			}
			walk(g.Inner)
		}
	}
	walk(doc.Groups)
	return nodes, edges
}

// hostile returns a string made to break a naive DOT writer: quotes,
// backslashes, braces, semicolons, DOT escapes (\N, \l) and non-ASCII.
// No newline (a label line break) and no leading, trailing or doubled
// spaces (SVG text may not keep them), so the SVG must give it back
// verbatim.
func hostile(rng *rand.Rand) string {
	parts := []string{`"`, `\`, `\"`, `\\`, `{`, `}`, `;`, `->`, `[`, `]`, `=`, `\N`, `\l`, `<`, `>`, `&`, `é`, `Δ`, `x`, `7`, `id`, `a b`}
	var b strings.Builder
	for n := 1 + rng.IntN(6); n > 0; n-- {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

// TestDOTThroughGraphviz renders anomalies with hostile ids and keys and
// uses Graphviz as the oracle (D2): the SVG has one node per transaction
// whose first text line is its id verbatim, one edge per step and forced
// order, and the edge labels give back kind and key.
func TestDOTThroughGraphviz(t *testing.T) {
	dot := needDot(t)
	rng := rand.New(rand.NewPCG(3, 5))
	rounds := 25
	if testing.Short() {
		rounds = 5
	}
	for round := 0; round < rounds; round++ {
		n := 2 + rng.IntN(3)
		seen := map[string]bool{}
		var ids []string
		for len(ids) < n {
			id := hostile(rng)
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		a := Anomaly{Type: hostile(rng), Class: "G-single", Core: ids}
		for _, id := range ids {
			a.Txns = append(a.Txns, Txn{ID: id, Status: "committed", Ops: []string{"w " + hostile(rng) + " 1"}})
		}
		wantEdges := map[string]bool{}
		for i := range ids {
			s := Step{From: ids[i], To: ids[(i+1)%n], Kind: []string{"ww", "wr", "rw"}[rng.IntN(3)], Key: hostile(rng)}
			a.Cycle = append(a.Cycle, s)
			wantEdges[s.Kind+" "+s.Key] = true
		}
		a.Forced = []Forced{{Order: ids[1] + " must precede " + ids[0]}, {Order: ids[0] + " must not read from " + ids[1]}}
		wantEdges["forced"] = true

		nodes, edges := renderSVG(t, dot, DOT(a))
		if len(nodes) != n {
			t.Fatalf("round %d: %d nodes, want %d\n%s", round, len(nodes), n, DOT(a))
		}
		got := map[string]bool{}
		for _, g := range nodes {
			if len(g.Texts) < 2 {
				t.Fatalf("node %s: texts %q", g.Title, g.Texts)
			}
			got[g.Texts[0]] = true
		}
		for _, id := range ids {
			if !got[id] {
				t.Fatalf("round %d: id %q not shown verbatim; nodes show %v\n%s", round, id, got, DOT(a))
			}
		}
		if len(edges) != n+1 {
			t.Fatalf("round %d: %d edges, want %d (cycle and one forced order)", round, len(edges), n+1)
		}
		for _, g := range edges {
			label := strings.Join(g.Texts, "")
			if !wantEdges[label] {
				t.Fatalf("round %d: edge label %q not among %v", round, label, wantEdges)
			}
		}
	}
}

// TestGoldenDOTParses checks the golden DOT file with Graphviz, so that
// the golden itself is a valid graph.
func TestGoldenDOTParses(t *testing.T) {
	dot := needDot(t)
	res, h := goldenResult(t)
	r := New(res, h)
	nodes, edges := renderSVG(t, dot, DOT(r.Anomalies[0]))
	if len(nodes) != len(r.Anomalies[0].Core) || len(edges) != 4 {
		t.Fatalf("%d nodes, %d edges", len(nodes), len(edges))
	}
}

// dotLine is the grammar of every line DOT writes (D2): statements whose
// only free text is inside quoted strings with \" and \\ escapes.
var dotLine = regexp.MustCompile(`^(digraph anomaly \{|\}|  (graph|node|edge) \[.*\];|  t\d+ \[label=` + quoted + `\];|  t\d+(:[ew])? -> t\d+(:[ew])? \[label=` + quoted + `(, [a-z]+=("[a-z0-9]+"|dashed))*\];)$`)

const quoted = `"(?:[^"\\\n]|\\.)*"`

// FuzzDOTSyntax feeds arbitrary ids, keys and types through DOT and checks
// every line against dotLine, without Graphviz: no input may end a quoted
// string early or start a new line inside one.
func FuzzDOTSyntax(f *testing.F) {
	f.Add("A", "B", "x", "G-single", "A must precede B")
	f.Add(`"`, `\`, "\n", `\"`, `\ must precede "`)
	f.Add("a\r\nb", "{}", "->", ";", "")
	f.Fuzz(func(t *testing.T, a, b, key, typ, order string) {
		if a == b {
			return
		}
		an := Anomaly{Type: typ, Class: typ + "x", Core: []string{a, b},
			Txns:   []Txn{{ID: a, Ops: []string{"w " + key + " 1"}, Session: key, Status: order}},
			Forced: []Forced{{Order: order}, {Order: b + " must precede " + a}},
			Cycle:  []Step{{From: a, To: b, Kind: "rw", Key: key}, {From: b, To: a, Kind: key, Key: ""}},
		}
		d := string(DOT(an))
		lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
		for _, l := range lines {
			if !dotLine.MatchString(l) {
				t.Fatalf("line %q breaks the grammar in\n%s", l, d)
			}
		}
		wantDashed := 1
		for _, o := range []string{a + " must precede " + b, b + " must precede " + a} {
			if order == o {
				wantDashed++
			}
		}
		if n, e, dashed := countDOT(d); n != 2 || e != 2+wantDashed || dashed != wantDashed {
			t.Fatalf("%d nodes, %d edges, %d dashed:\n%s", n, e, dashed, d)
		}
	})
}
