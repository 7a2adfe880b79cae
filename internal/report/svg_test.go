package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// drawnGroup is a node or edge group of SVG's output, read back with
// encoding/xml: its data attributes, rectangles, path and texts.
type drawnGroup struct {
	class string
	attrs map[string]string
	texts []string
	rects [][4]float64 // x, y, w, h
	path  string
}

type drawnSVG struct {
	w, h   float64
	titles []string
	nodes  []drawnGroup
	edges  []drawnGroup
	ids    int // id attributes anywhere (G2: none)
}

// parseSVG reads the document strictly (a structure error fails the test)
// and collects what the tests compare with the Graph.
func parseSVG(t testing.TB, doc []byte) drawnSVG {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var out drawnSVG
	var cur *drawnGroup
	inText, inTitle := false, false
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range el.Attr {
				attrs[a.Name.Local] = a.Value
				if a.Name.Local == "id" {
					out.ids++
				}
			}
			num := func(k string) float64 {
				f, err := strconv.ParseFloat(attrs[k], 64)
				if err != nil {
					t.Fatalf("<%s %s=%q>: %v", el.Name.Local, k, attrs[k], err)
				}
				return f
			}
			switch el.Name.Local {
			case "svg":
				out.w, out.h = num("width"), num("height")
			case "g":
				cur = &drawnGroup{class: attrs["class"], attrs: attrs}
			case "rect":
				if cur != nil {
					cur.rects = append(cur.rects, [4]float64{num("x"), num("y"), num("width"), num("height")})
				}
			case "path":
				if cur != nil {
					cur.path = attrs["d"]
				}
			case "text":
				inText = true
				text.Reset()
			case "title":
				inTitle = true
				text.Reset()
			}
		case xml.CharData:
			if inText || inTitle {
				text.Write(el)
			}
		case xml.EndElement:
			switch el.Name.Local {
			case "text":
				inText = false
				if cur != nil {
					cur.texts = append(cur.texts, text.String())
				} else {
					out.titles = append(out.titles, text.String())
				}
			case "title":
				inTitle = false
			case "g":
				switch cur.class {
				case "node":
					out.nodes = append(out.nodes, *cur)
				case "edge":
					out.edges = append(out.edges, *cur)
				}
				cur = nil
			}
		}
	}
	return out
}

// hostileAnomaly is a cycle through 2-4 transactions with hostile ids,
// keys and types (hostile from dot_test.go), a forced order between two of
// them and one forced fact that is not an order.
func hostileAnomaly(rng *rand.Rand) Anomaly {
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
	for i, id := range ids {
		s, e := int64(i*10), int64(i*10+5)
		a.Txns = append(a.Txns, Txn{ID: id, Status: []string{"committed", "unknown"}[rng.IntN(2)], Session: hostile(rng),
			Start: &s, End: &e, Ops: []string{"r " + hostile(rng) + " 1", "w " + hostile(rng) + " 2"}})
	}
	for i := range ids {
		a.Cycle = append(a.Cycle, Step{From: ids[i], To: ids[(i+1)%n], Kind: []string{"ww", "wr", "rw", "realtime"}[rng.IntN(4)], Key: hostile(rng)})
	}
	if rng.IntN(2) == 0 {
		a.Forced = append(a.Forced, Forced{Order: ids[1] + " must precede " + ids[0]})
	} else {
		a.Forced = append(a.Forced, Forced{Order: "x", Before: ids[0], After: ids[n-1]})
	}
	a.Forced = append(a.Forced, Forced{Order: ids[0] + " must not read from " + ids[1]})
	return a
}

func testAnomalies(t *testing.T, rounds int) []Anomaly {
	res, h := goldenResult(t)
	out := []Anomaly{New(res, h).Anomalies[0]}
	rng := rand.New(rand.NewPCG(8, 13))
	for i := 0; i < rounds; i++ {
		out = append(out, hostileAnomaly(rng))
	}
	return out
}

var (
	dotNodeRE = regexp.MustCompile(`^  t(\d+) \[label=(` + quoted + `)\];$`)
	dotEdgeRE = regexp.MustCompile(`^  t(\d+)(?::[ew])? -> t(\d+)(?::[ew])? \[label=(` + quoted + `)(, style=dashed)?`)
	dotGraphR = regexp.MustCompile(`^  graph \[label=(` + quoted + `),`)
)

// unquoteDOT undoes quote: \\ and \" are characters, \l and \n separate
// lines.
func unquoteDOT(q string) []string {
	q = q[1 : len(q)-1]
	var lines []string
	var cur strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] != '\\' {
			cur.WriteByte(q[i])
			continue
		}
		i++
		switch q[i] {
		case 'l', 'n':
			lines = append(lines, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(q[i])
		}
	}
	if cur.Len() > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// TestGraphMatchesDOT holds G1: the drawing model and the DOT renderer
// agree on nodes (order and lines), edges (order, ends, labels, dashes)
// and the title, on the golden anomaly and on hostile ones.
func TestGraphMatchesDOT(t *testing.T) {
	for i, a := range testAnomalies(t, 60) {
		g := NewGraph(a)
		dot := string(DOT(a))
		var nodes [][]string
		type edge struct {
			from, to int
			label    string
			forced   bool
		}
		var edges []edge
		var title []string
		for _, l := range strings.Split(dot, "\n") {
			if m := dotNodeRE.FindStringSubmatch(l); m != nil {
				if k, _ := strconv.Atoi(m[1]); k != len(nodes) {
					t.Fatalf("anomaly %d: DOT node t%s out of order", i, m[1])
				}
				nodes = append(nodes, unquoteDOT(m[2]))
			} else if m := dotEdgeRE.FindStringSubmatch(l); m != nil {
				f, _ := strconv.Atoi(m[1])
				to, _ := strconv.Atoi(m[2])
				edges = append(edges, edge{f, to, unquoteDOT(m[3])[0], m[4] != ""})
			} else if m := dotGraphR.FindStringSubmatch(l); m != nil {
				title = unquoteDOT(m[1])
			}
		}
		if len(nodes) != len(g.Nodes) || len(edges) != len(g.Edges) {
			t.Fatalf("anomaly %d: DOT has %d nodes %d edges, Graph %d and %d\n%s", i, len(nodes), len(edges), len(g.Nodes), len(g.Edges), dot)
		}
		for k, n := range g.Nodes {
			if strings.Join(n.Lines, "\x00") != strings.Join(nodes[k], "\x00") || n.ID != n.Lines[0] {
				t.Errorf("anomaly %d node %d: Graph %q, DOT %q", i, k, n.Lines, nodes[k])
			}
		}
		for k, e := range g.Edges {
			if d := edges[k]; d.from != e.From || d.to != e.To || d.label != e.Label || d.forced != e.Forced {
				t.Errorf("anomaly %d edge %d: Graph %+v, DOT %+v", i, k, e, d)
			}
		}
		if strings.Join(title, "\x00") != strings.Join(g.Title, "\x00") {
			t.Errorf("anomaly %d: title Graph %q, DOT %q", i, g.Title, title)
		}
	}
}

// TestSVGFaithful reads the SVG back as XML (G2): every id, operation and
// label verbatim, one group per node and edge with the right ends, no id
// attributes, boxes that do not overlap and lie inside the canvas, edges
// that start and end outside their boxes, and the same bytes every time.
func TestSVGFaithful(t *testing.T) {
	for i, a := range testAnomalies(t, 60) {
		g := NewGraph(a)
		doc := SVG(a)
		if !bytes.Equal(doc, SVG(a)) {
			t.Fatalf("anomaly %d: SVG not deterministic", i)
		}
		d := parseSVG(t, doc)
		if d.ids != 0 {
			t.Errorf("anomaly %d: %d id attributes", i, d.ids)
		}
		if strings.Join(d.titles, "\x00") != strings.Join(g.Title, "\x00") {
			t.Errorf("anomaly %d: title texts %q, want %q", i, d.titles, g.Title)
		}
		if len(d.nodes) != len(g.Nodes) || len(d.edges) != len(g.Edges) {
			t.Fatalf("anomaly %d: %d node and %d edge groups, want %d and %d", i, len(d.nodes), len(d.edges), len(g.Nodes), len(g.Edges))
		}
		for k, n := range d.nodes {
			want := g.Nodes[k]
			if n.attrs["data-id"] != want.ID || strings.Join(n.texts, "\x00") != strings.Join(want.Lines, "\x00") {
				t.Errorf("anomaly %d node %d: data-id %q texts %q, want %q", i, k, n.attrs["data-id"], n.texts, want.Lines)
			}
			if len(n.rects) != 1 {
				t.Fatalf("anomaly %d node %d: %d rects", i, k, len(n.rects))
			}
			r := n.rects[0]
			if r[0] < 0 || r[1] < 0 || r[0]+r[2] > d.w+0.05 || r[1]+r[3] > d.h+0.05 {
				t.Errorf("anomaly %d node %d: box %v outside the %vx%v canvas", i, k, r, d.w, d.h)
			}
			for l, m := range d.nodes[:k] {
				q := m.rects[0]
				if r[0] < q[0]+q[2] && q[0] < r[0]+r[2] && r[1] < q[1]+q[3] && q[1] < r[1]+r[3] {
					t.Errorf("anomaly %d: boxes of nodes %d and %d overlap: %v %v", i, l, k, r, q)
				}
			}
		}
		for k, e := range d.edges {
			want := g.Edges[k]
			if e.attrs["data-from"] != g.Nodes[want.From].ID || e.attrs["data-to"] != g.Nodes[want.To].ID || e.attrs["data-kind"] != want.Kind {
				t.Errorf("anomaly %d edge %d: %v, want %+v", i, k, e.attrs, want)
			}
			if len(e.texts) != 1 || e.texts[0] != want.Label {
				t.Errorf("anomaly %d edge %d: label %q, want %q", i, k, e.texts, want.Label)
			}
			var sx, sy, cx, cy, ex, ey float64
			if _, err := fmt.Sscanf(e.path, "M%f,%f Q%f,%f %f,%f", &sx, &sy, &cx, &cy, &ex, &ey); err != nil {
				t.Fatalf("anomaly %d edge %d: path %q: %v", i, k, e.path, err)
			}
			inside := func(x, y float64, r [4]float64) bool {
				return x > r[0]+0.5 && x < r[0]+r[2]-0.5 && y > r[1]+0.5 && y < r[1]+r[3]-0.5
			}
			if inside(sx, sy, d.nodes[want.From].rects[0]) || inside(ex, ey, d.nodes[want.To].rects[0]) {
				t.Errorf("anomaly %d edge %d: path %q starts or ends inside a box", i, k, e.path)
			}
		}
	}
}

// TestSVGTwoCycleBends: a 2-cycle's two steps (the usual lost update)
// must not be drawn on top of each other.
func TestSVGTwoCycleBends(t *testing.T) {
	a := Anomaly{Type: "lost-update", Core: []string{"A", "B"}, Cycle: []Step{
		{From: "A", To: "B", Kind: "rw", Key: "x"}, {From: "B", To: "A", Kind: "ww", Key: "x"}}}
	d := parseSVG(t, SVG(a))
	if len(d.edges) != 2 {
		t.Fatalf("%d edges", len(d.edges))
	}
	ctrl := func(p string) (x, y float64) {
		var a, b, e, f float64
		fmt.Sscanf(p, "M%f,%f Q%f,%f %f,%f", &a, &b, &x, &y, &e, &f)
		return
	}
	x1, y1 := ctrl(d.edges[0].path)
	x2, y2 := ctrl(d.edges[1].path)
	if x1 == x2 && y1 == y2 {
		t.Errorf("both steps share the control point %v,%v", x1, y1)
	}
}

// FuzzSVG: any strings as ids, keys and types give well-formed XML whose
// node ids come back verbatim (when XML can carry them at all).
func FuzzSVG(f *testing.F) {
	f.Add("A", "B", "x", "G-single")
	f.Add("<a>", "&amp;", "]]>", "\"'")
	f.Add("\x00", "\xff", "\n", "-->")
	f.Fuzz(func(t *testing.T, a, b, key, typ string) {
		if a == b {
			return
		}
		an := Anomaly{Type: typ, Core: []string{a, b},
			Txns:  []Txn{{ID: a, Ops: []string{"w " + key + " 1"}}},
			Cycle: []Step{{From: a, To: b, Kind: "rw", Key: key}, {From: b, To: a, Kind: "ww", Key: key}}}
		d := parseSVG(t, SVG(an))
		if len(d.nodes) != 2 || len(d.edges) != 2 {
			t.Fatalf("%d nodes, %d edges", len(d.nodes), len(d.edges))
		}
		for k, id := range []string{a, b} {
			if xmlSafe(id) && d.nodes[k].attrs["data-id"] != id {
				t.Errorf("id %q came back as %q", id, d.nodes[k].attrs["data-id"])
			}
		}
	})
}

// xmlSafe: valid UTF-8 with only characters XML 1.0 allows, and no \r
// (which XML parsers normalise to \n).
func xmlSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r <= 0xDFFF) {
			return false
		}
	}
	return true
}
