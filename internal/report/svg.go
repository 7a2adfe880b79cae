package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Graph is the drawing of one anomaly, independent of any output format:
// one node per core transaction (and per cycle member outside the core,
// which a correct checker never produces), one solid edge per step of the
// final cycle, one dashed edge per forced order between two of its
// transactions, and title lines for the rest. NewGraph builds it with the
// same rules as DOT, so that `check --dot` and the status page's SVG show
// the same graph (G1 below); SVG draws it without Graphviz.
//
// Invariants (doc.go's D1 and D2 carry over):
//
//	G1 DOT(a) draws NewGraph(a): node i is DOT's t<i>, edges in order with
//	   their labels, Title as the graph label (svg_test.go keeps checking
//	   the correspondence on parsed DOT output).
//	G2 SVG output is a deterministic function of the Anomaly; every user
//	   string is XML-escaped text or attribute content, so no id, key or
//	   value can change the document's structure, and the document has no
//	   id attributes, so that several drawings can share one HTML page.
type Graph struct {
	Title []string
	Nodes []GraphNode
	Edges []GraphEdge
}

// GraphNode is one transaction: Lines[0] is its id, then its operations,
// then a note with its status (when not committed), session and times.
type GraphNode struct {
	ID    string
	Lines []string
}

// GraphEdge goes from node From to node To (indices into Nodes). Kind is
// the step's kind (ww, wr, rw, process, realtime) and empty for a forced
// order; Label is what the drawing writes on it.
type GraphEdge struct {
	From, To int
	Kind     string
	Label    string
	Forced   bool
}

// NewGraph builds the drawing model of a (G1).
func NewGraph(a Anomaly) Graph {
	var g Graph
	index := map[string]int{}
	txns := map[string]Txn{}
	for _, t := range a.Txns {
		txns[t.ID] = t
	}
	node := func(id string) int {
		if i, ok := index[id]; ok {
			return i
		}
		index[id] = len(g.Nodes)
		lines := []string{id}
		if t, ok := txns[id]; ok {
			lines = append(lines, t.Ops...)
			if n := txnNote(t); n != "" {
				lines = append(lines, n)
			}
		}
		g.Nodes = append(g.Nodes, GraphNode{ID: id, Lines: lines})
		return index[id]
	}
	for _, id := range a.Core {
		node(id)
	}
	for _, s := range a.Cycle {
		node(s.From)
		node(s.To)
	}
	title := a.Type
	if a.Class != "" && a.Class != a.Type {
		title += " (" + a.Class + ")"
	}
	g.Title = []string{title, "core: " + strings.Join(a.Core, ", ")}
	for _, s := range a.Cycle {
		label := s.Kind
		if s.Key != "" {
			label += " " + s.Key
		}
		g.Edges = append(g.Edges, GraphEdge{From: index[s.From], To: index[s.To], Kind: s.Kind, Label: label})
	}
	for _, f := range a.Forced {
		from, to, ok := f.Before, f.After, f.Before != "" && f.After != ""
		if !ok {
			// precedes only looks names up; DOT's names and ours share
			// their keys.
			from, to, ok = precedes(f.Order, toSet(index))
		}
		fi, okF := index[from]
		ti, okT := index[to]
		if ok && okF && okT {
			g.Edges = append(g.Edges, GraphEdge{From: fi, To: ti, Label: "forced", Forced: true})
		} else {
			g.Title = append(g.Title, "forced: "+f.Order)
		}
	}
	return g
}

// txnNote is the last line of a node: status when not committed, session,
// client times.
func txnNote(t Txn) string {
	var notes []string
	if t.Status != "" && t.Status != "committed" {
		notes = append(notes, t.Status)
	}
	if t.Session != "" {
		notes = append(notes, "session "+t.Session)
	}
	if t.Start != nil && t.End != nil {
		notes = append(notes, history.FormatInterval(*t.Start, *t.End))
	}
	if len(notes) == 0 {
		return ""
	}
	return "(" + strings.Join(notes, ", ") + ")"
}

func toSet(index map[string]int) map[string]string {
	out := make(map[string]string, len(index))
	for k := range index {
		out[k] = k
	}
	return out
}

// SVG draws a as a standalone SVG document (no XML prolog, so that it can
// also be inlined into HTML).
func SVG(a Anomaly) []byte { return NewGraph(a).SVG() }

// Drawing constants, in SVG user units (px at 100%). Text is monospace so
// that a box's width follows from its longest line without font metrics.
const (
	svgFont      = 12.0
	svgCharW     = 7.3 // advance of one monospace character at svgFont
	svgLineH     = 16.0
	svgPad       = 8.0
	svgMargin    = 16.0
	svgGap       = 90.0 // free space between neighbouring boxes, for labels
	svgCurve     = 28.0 // bend of each of several edges between one pair
	svgArrowLen  = 10.0
	svgArrowHalf = 4.5
)

// svgColors maps DOT's edge colours (edgeColor) to SVG, so that both
// renderers colour a kind alike.
var svgColors = map[string]string{"red3": "#cd0000", "blue3": "#0000cd", "green4": "#008b00", "gray40": "#666666"}

type point struct{ x, y float64 }

func (p point) add(q point) point          { return point{p.x + q.x, p.y + q.y} }
func (p point) sub(q point) point          { return point{p.x - q.x, p.y - q.y} }
func (p point) scale(f float64) point      { return point{p.x * f, p.y * f} }
func (p point) norm() float64              { return math.Hypot(p.x, p.y) }
func (p point) String() string             { return fmt.Sprintf("%.1f,%.1f", p.x, p.y) }
func (p point) unit() point                { n := p.norm(); return point{p.x / n, p.y / n} }
func (p point) perp() point                { return point{-p.y, p.x} }
func mid(p, q point) point                 { return p.add(q).scale(0.5) }
func textWidth(s string) float64           { return float64(len([]rune(s))) * svgCharW }
func fmtF(f float64) string                { return fmt.Sprintf("%.1f", f) }
func attr(b *bytes.Buffer, name, v string) { fmt.Fprintf(b, ` %s="%s"`, name, escape(v)) }

// SVG lays the graph out and draws it. Layout: the nodes sit on a circle
// in cycle order (a cycle reads as a ring), spaced so that neighbouring
// boxes keep svgGap between them; edges are straight, or bent apart when
// several join one pair (a 2-cycle's two steps), and end at the box
// borders with an arrowhead drawn as a polygon (markers would need ids).
func (g Graph) SVG() []byte {
	type box struct {
		c    point
		w, h float64
	}
	boxes := make([]box, len(g.Nodes))
	for i, n := range g.Nodes {
		w := 0.0
		for _, l := range n.Lines {
			w = max(w, textWidth(l))
		}
		boxes[i] = box{w: w + 2*svgPad, h: float64(len(n.Lines))*svgLineH + svgPad}
	}
	// Ring order: the cycle's nodes as the cycle visits them, then the rest.
	var ring []int
	onRing := make([]bool, len(g.Nodes))
	for _, e := range g.Edges {
		for _, i := range []int{e.From, e.To} {
			if !e.Forced && !onRing[i] {
				onRing[i] = true
				ring = append(ring, i)
			}
		}
	}
	for i := range g.Nodes {
		if !onRing[i] {
			ring = append(ring, i)
		}
	}
	k := len(ring)
	if k > 1 {
		// Adjacent boxes on a circle of radius r are 2r·sin(π/k) apart;
		// half diagonals bound how far each box reaches towards the other.
		need := 0.0
		for j := range ring {
			a, b := boxes[ring[j]], boxes[ring[(j+1)%k]]
			need = max(need, math.Hypot(a.w, a.h)/2+math.Hypot(b.w, b.h)/2+svgGap)
		}
		r := need / (2 * math.Sin(math.Pi/float64(k)))
		if k == 2 {
			r = need / 2
		}
		start := -math.Pi / 2
		if k == 2 {
			start = math.Pi
		}
		for j, i := range ring {
			th := start + 2*math.Pi*float64(j)/float64(k)
			boxes[i].c = point{r * math.Cos(th), r * math.Sin(th)}
		}
	}

	// Edges: group by unordered pair so that parallel edges bend apart.
	type pair struct{ a, b int }
	groups := map[pair][]int{}
	for i, e := range g.Edges {
		p := pair{min(e.From, e.To), max(e.From, e.To)}
		groups[p] = append(groups[p], i)
	}
	type drawn struct {
		s, c, e point // start, control, end of a quadratic curve
		label   point
	}
	edges := make([]drawn, len(g.Edges))
	for i, e := range g.Edges {
		p := pair{min(e.From, e.To), max(e.From, e.To)}
		grp := groups[p]
		pos := 0
		for j, x := range grp {
			if x == i {
				pos = j
			}
		}
		from, to := boxes[e.From], boxes[e.To]
		if e.From == e.To {
			// A self loop never comes from a checker; draw a small hook
			// above the box so the input still shows.
			top := from.c.add(point{0, -from.h / 2})
			edges[i] = drawn{s: top.add(point{-10, 0}), c: top.add(point{0, -50}), e: top.add(point{10, 0}), label: top.add(point{0, -30})}
			continue
		}
		// The bend is measured along the normal of the pair's canonical
		// direction, so that A->B and B->A bend to opposite sides.
		lo, hi := boxes[p.a].c, boxes[p.b].c
		normal := hi.sub(lo).unit().perp()
		bend := (float64(pos) - float64(len(grp)-1)/2) * 2 * svgCurve
		c := mid(from.c, to.c).add(normal.scale(bend))
		s := clip(from.c, c, from.w/2+3, from.h/2+3)
		end := clip(to.c, c, to.w/2+3, to.h/2+3)
		// The midpoint of a quadratic Bézier curve.
		m := s.scale(0.25).add(c.scale(0.5)).add(end.scale(0.25))
		edges[i] = drawn{s: s, c: c, e: end, label: m}
	}

	// Bounding box of everything drawn, then a translation to the margin
	// below the title.
	minP, maxP := point{math.Inf(1), math.Inf(1)}, point{math.Inf(-1), math.Inf(-1)}
	grow := func(p point) {
		minP = point{math.Min(minP.x, p.x), math.Min(minP.y, p.y)}
		maxP = point{math.Max(maxP.x, p.x), math.Max(maxP.y, p.y)}
	}
	for _, b := range boxes {
		grow(b.c.sub(point{b.w / 2, b.h / 2}))
		grow(b.c.add(point{b.w / 2, b.h / 2}))
	}
	for i, d := range edges {
		hw := textWidth(g.Edges[i].Label)/2 + 4
		grow(d.c)
		grow(d.label.sub(point{hw, svgLineH}))
		grow(d.label.add(point{hw, svgLineH}))
	}
	titleW := 0.0
	for _, l := range g.Title {
		titleW = max(titleW, textWidth(l))
	}
	titleH := float64(len(g.Title))*svgLineH + svgPad
	if len(g.Nodes) == 0 {
		minP, maxP = point{}, point{}
	}
	shift := point{svgMargin - minP.x, svgMargin + titleH - minP.y}
	width := math.Max(maxP.x-minP.x, titleW) + 2*svgMargin
	height := maxP.y - minP.y + titleH + 2*svgMargin

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="anomaly-graph" width="%s" height="%s" viewBox="0 0 %s %s" role="img"`,
		fmtF(width), fmtF(height), fmtF(width), fmtF(height))
	attr(&b, "aria-label", strings.Join(g.Title, "; "))
	fmt.Fprintf(&b, " font-family=\"monospace\" font-size=\"%s\">\n", fmtF(svgFont))
	b.WriteString("<title>")
	b.WriteString(escape(strings.Join(g.Title, "\n")))
	b.WriteString("</title>\n")
	for i, l := range g.Title {
		weight := ""
		if i == 0 {
			weight = ` font-weight="bold"`
		}
		fmt.Fprintf(&b, `<text class="graph-title" x="%s" y="%s"%s>%s</text>`+"\n",
			fmtF(svgMargin), fmtF(svgMargin+float64(i+1)*svgLineH-4), weight, escape(l))
	}
	for i, n := range g.Nodes {
		bx := boxes[i]
		tl := bx.c.sub(point{bx.w / 2, bx.h / 2}).add(shift)
		b.WriteString(`<g class="node"`)
		attr(&b, "data-id", n.ID)
		b.WriteString(">\n")
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" rx="4" fill="#fdfdf6" stroke="#333333"/>`+"\n",
			fmtF(tl.x), fmtF(tl.y), fmtF(bx.w), fmtF(bx.h))
		for j, l := range n.Lines {
			weight := ""
			if j == 0 {
				weight = ` font-weight="bold"`
			}
			fmt.Fprintf(&b, `<text x="%s" y="%s"%s>%s</text>`+"\n",
				fmtF(tl.x+svgPad), fmtF(tl.y+svgPad/2+float64(j+1)*svgLineH-4), weight, escape(l))
		}
		b.WriteString("</g>\n")
	}
	for i, e := range g.Edges {
		d := edges[i]
		s, c, end, lp := d.s.add(shift), d.c.add(shift), d.e.add(shift), d.label.add(shift)
		color := svgColors[edgeColor(e.Kind)]
		dash := ""
		if e.Forced {
			color, dash = svgColors["gray40"], ` stroke-dasharray="6,4"`
		}
		b.WriteString(`<g class="edge"`)
		attr(&b, "data-from", g.Nodes[e.From].ID)
		attr(&b, "data-to", g.Nodes[e.To].ID)
		attr(&b, "data-kind", e.Kind)
		b.WriteString(">\n")
		fmt.Fprintf(&b, `<path d="M%s Q%s %s" fill="none" stroke="%s" stroke-width="1.5"%s/>`+"\n", s, c, end, color, dash)
		// The arrowhead points along the curve's tangent at its end.
		dir := end.sub(c)
		if dir.norm() < 1e-9 {
			dir = end.sub(s)
		}
		if dir.norm() > 1e-9 {
			u := dir.unit()
			base := end.sub(u.scale(svgArrowLen))
			w := u.perp().scale(svgArrowHalf)
			fmt.Fprintf(&b, `<polygon points="%s %s %s" fill="%s"/>`+"\n", end, base.add(w), base.sub(w), color)
		}
		hw := textWidth(e.Label)/2 + 3
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#ffffff" fill-opacity="0.85"/>`+"\n",
			fmtF(lp.x-hw), fmtF(lp.y-svgLineH/2-1), fmtF(2*hw), fmtF(svgLineH))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="%s">%s</text>`+"\n",
			fmtF(lp.x), fmtF(lp.y+4), color, escape(e.Label))
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// clip returns where the ray from a box's centre c towards p leaves the box
// of half sizes hw, hh (p itself when p is inside).
func clip(c, p point, hw, hh float64) point {
	d := p.sub(c)
	t := math.Inf(1)
	if d.x != 0 {
		t = math.Min(t, hw/math.Abs(d.x))
	}
	if d.y != 0 {
		t = math.Min(t, hh/math.Abs(d.y))
	}
	if t >= 1 || math.IsInf(t, 1) {
		return p
	}
	return c.add(d.scale(t))
}

// escape makes s safe as XML text and attribute content. Characters XML
// 1.0 cannot carry at all (most control characters, invalid UTF-8) become
// U+FFFD, as encoding/xml does.
func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
