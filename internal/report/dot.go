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
// It is the single DOT renderer: the CLI writes its output to files and
// the status page renders it to SVG. The output is deterministic (D1 in
// doc.go) and every user-supplied string is escaped (D2): node names are
// synthetic (t0, t1, ...), ids and operations appear only in labels.
func DOT(a Anomaly) []byte {
	var b bytes.Buffer
	names := map[string]string{}
	var order []string
	node := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		n := fmt.Sprintf("t%d", len(names))
		names[id] = n
		order = append(order, id)
		return n
	}
	txns := map[string]Txn{}
	for _, t := range a.Txns {
		txns[t.ID] = t
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
	graphLabel := []string{title, "core: " + strings.Join(a.Core, ", ")}
	type dashed struct{ from, to string }
	var forced []dashed
	for _, f := range a.Forced {
		if f.Before != "" && f.After != "" {
			forced = append(forced, dashed{f.Before, f.After})
		} else if from, to, ok := precedes(f.Order, names); ok {
			forced = append(forced, dashed{from, to})
		} else {
			graphLabel = append(graphLabel, "forced: "+f.Order)
		}
	}

	b.WriteString("digraph anomaly {\n")
	fmt.Fprintf(&b, "  graph [label=%s, labelloc=t, labeljust=l, fontname=\"Helvetica\"];\n", quote(graphLabel, `\n`))
	b.WriteString("  node [shape=box, fontname=\"Helvetica\"];\n")
	b.WriteString("  edge [fontname=\"Helvetica\"];\n")
	for _, id := range order {
		lines := []string{id}
		if t, ok := txns[id]; ok {
			lines = append(lines, t.Ops...)
			var notes []string
			if t.Status != "" && t.Status != "committed" {
				notes = append(notes, t.Status)
			}
			if t.Session != "" {
				notes = append(notes, "session "+t.Session)
			}
			if t.Start != nil && t.End != nil {
				notes = append(notes, fmt.Sprintf("[%d,%d]", *t.Start, *t.End))
			}
			if len(notes) > 0 {
				lines = append(lines, "("+strings.Join(notes, ", ")+")")
			}
		}
		// \l after every line left-justifies each, the last included.
		fmt.Fprintf(&b, "  %s [label=%s];\n", names[id], quote(append(lines, ""), `\l`))
	}
	for _, s := range a.Cycle {
		label := s.Kind
		if s.Key != "" {
			label += " " + s.Key
		}
		fmt.Fprintf(&b, "  %s -> %s [label=%s, color=%q, fontcolor=%q];\n", names[s.From], names[s.To], quote([]string{label}, ""), edgeColor(s.Kind), edgeColor(s.Kind))
	}
	for _, f := range forced {
		fmt.Fprintf(&b, "  %s -> %s [label=\"forced\", style=dashed];\n", names[f.from], names[f.to])
	}
	b.WriteString("}\n")
	return b.Bytes()
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
