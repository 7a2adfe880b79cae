package report

import (
	"bytes"
	"fmt"
	"strings"
)

// DOT renders one anomaly as a Graphviz digraph: one box per core
// transaction (its id, then its operations), one solid edge per step of
// the final cycle labelled with its kind and key, and one dashed edge per
// forced order "A must precede B". Forced decisions that are not an order
// between two core transactions (a read's source, a commit) are listed in
// the graph's label with the anomaly's name.
//
// It draws NewGraph's model, as the status page's SVG does, so that the
// two show the same graph. The output is deterministic (D1 in doc.go) and
// every user-supplied string is escaped (D2): node names are synthetic
// (t0, t1, ...), ids and operations appear only in labels.
func DOT(a Anomaly) []byte {
	g := NewGraph(a)
	var b bytes.Buffer
	b.WriteString("digraph anomaly {\n")
	// nodesep 0.6 (Graphviz's default is 0.25 inch) also spaces edge
	// labels, which dot lays out as nodes: two labels side by side (the
	// two edges of a two-transaction cycle) stay apart by more than a
	// space even when they are wider than the boxes.
	fmt.Fprintf(&b, "  graph [label=%s, labelloc=t, labeljust=l, nodesep=0.6, fontname=\"Helvetica\"];\n", quote(g.Title, `\n`))
	b.WriteString("  node [shape=box, fontname=\"Helvetica\"];\n")
	b.WriteString("  edge [fontname=\"Helvetica\"];\n")
	for i, n := range g.Nodes {
		// \l after every line left-justifies each, the last included.
		fmt.Fprintf(&b, "  t%d [label=%s];\n", i, quote(append(append([]string(nil), n.Lines...), ""), `\l`))
	}
	ports := sidePorts(g.Edges)
	for i, e := range g.Edges {
		if e.Forced {
			fmt.Fprintf(&b, "  t%d%s -> t%d%s [label=\"forced\", style=dashed];\n", e.From, ports[i], e.To, ports[i])
			continue
		}
		fmt.Fprintf(&b, "  t%d%s -> t%d%s [label=%s, color=%q, fontcolor=%q];\n", e.From, ports[i], e.To, ports[i], quote([]string{e.Label}, ""), edgeColor(e.Kind), edgeColor(e.Kind))
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// sidePorts gives the edges between two nodes that have edges both ways
// (a two-transaction cycle: the lost update, the write skew) their own
// sides of the boxes: the first direction leaves and enters by the west
// side, the other by the east. Left to Graphviz, both run down the middle
// and their labels touch ("rw xrw x"); on opposite sides they and their
// labels stay apart, whichever node Graphviz ranks above. Other edges get
// no port ("").
func sidePorts(edges []GraphEdge) []string {
	type pair struct{ from, to int }
	dirs := map[pair]bool{}
	for _, e := range edges {
		dirs[pair{e.From, e.To}] = true
	}
	side := map[pair]string{}
	ports := make([]string, len(edges))
	for i, e := range edges {
		p := pair{e.From, e.To}
		if e.From == e.To || !dirs[pair{e.To, e.From}] {
			continue
		}
		if _, ok := side[p]; !ok {
			side[p], side[pair{e.To, e.From}] = ":w", ":e"
		}
		ports[i] = side[p]
	}
	return ports
}

// precedes recognises the forced order "A must precede B" between two
// known transactions. Matching whole known ids, not splitting on spaces,
// keeps ids with spaces in them working.
func precedes(order string, names map[string]string) (from, to string, ok bool) {
	const mid = " must precede "
	for i := strings.Index(order, mid); i >= 0; {
		a, b := order[:i], order[i+len(mid):]
		if _, okA := names[a]; okA && a != b {
			if _, okB := names[b]; okB {
				return a, b, true
			}
		}
		j := strings.Index(order[i+1:], mid)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "", "", false
}

func edgeColor(kind string) string {
	switch kind {
	case "rw":
		return "red3"
	case "ww":
		return "blue3"
	case "wr":
		return "green4"
	}
	return "gray40"
}

// quote renders lines as one DOT double-quoted escString, joined by sep
// (`\n` centred, `\l` left-justified). Backslashes and quotes are escaped
// so that Graphviz shows the text as given, and raw newlines become line
// breaks so that a label never spans DOT source lines.
func quote(lines []string, sep string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, l := range lines {
		if i > 0 {
			b.WriteString(sep)
		}
		for _, r := range l {
			switch r {
			case '\\':
				b.WriteString(`\\`)
			case '"':
				b.WriteString(`\"`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
