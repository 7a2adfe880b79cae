package history

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLevelRegistry: the listing is weakest first (no level implies one
// listed after it), names and aliases are unique, and every checked level
// is a node of the lattice.
func TestLevelRegistry(t *testing.T) {
	nodes, _ := Lattice()
	seen := map[string]bool{}
	all := Levels()
	for i, d := range all {
		for _, later := range all[i+1:] {
			if d.Level.Implies(later.Level) {
				t.Errorf("%s is listed before %s, which it implies (the listing is weakest first)", d.Name, later.Name)
			}
		}
		for _, n := range append([]string{d.Name}, d.Aliases...) {
			if seen[n] {
				t.Errorf("name %q used twice", n)
			}
			seen[n] = true
		}
		if d.Definition == "" || d.Reference == "" || len(d.Forbids) == 0 {
			t.Errorf("%s: definition, reference and forbidden anomalies must be written down", d.Name)
		}
		if !slices.ContainsFunc(nodes, func(n LatticeNode) bool { return n.Name == d.Name && n.Checked }) {
			t.Errorf("%s is not a checked node of the lattice", d.Name)
		}
		// A level forbids everything the levels it implies forbid.
		for _, w := range d.Level.Implied() {
			for _, a := range w.Def().Forbids {
				if !slices.Contains(d.Forbids, a) {
					t.Errorf("%s implies %s but does not forbid %s", d.Name, w, a)
				}
			}
		}
		// The orders it draws include those of the levels it implies.
		// Begin and commit nodes, and which of them real time reaches,
		// are how a level is drawn, not an order: a serial order is a
		// begin-commit order with each begin next to its commit.
		for _, w := range d.Level.Implied() {
			if w.Def().Orders&^d.Orders&^(OrderBeginCommit|OrderSnapshotRealTime) != 0 {
				t.Errorf("%s implies %s but draws fewer orders", d.Name, w)
			}
		}
	}
	if top, ok := Strongest(); !ok || top != StrictSerializable {
		t.Errorf("Strongest() = %v, %v", top, ok)
	}
}

// TestLatticeShape: the table is a DAG over its nodes and not a chain
// (snapshot isolation and repeatable read are incomparable).
func TestLatticeShape(t *testing.T) {
	nodes, edges := Lattice()
	names := map[string]bool{}
	for _, n := range nodes {
		names[n.Name] = true
	}
	for _, e := range edges {
		if !names[e[0]] || !names[e[1]] {
			t.Errorf("edge %v names a level that is not a node", e)
		}
		if ImpliesName(e[1], e[0]) {
			t.Errorf("edge %v closes a cycle", e)
		}
	}
	if ImpliesName("snapshot-isolation", "repeatable-read") || ImpliesName("repeatable-read", "snapshot-isolation") {
		t.Error("snapshot isolation and repeatable read must be incomparable")
	}
	if ImpliesName("serializable", "causal") {
		t.Error("serializable has no session order and cannot imply causal (Cerone)")
	}
	if !StrictSerializable.Implies(Serializable) || Serializable.Implies(StrongSessionSerializable) {
		t.Error("the serializable family is out of order")
	}
}

// TestLatticeDrawing: the DOT source in docs/LEVELS.md has exactly the
// table's edges, every node of the ASCII drawing is a lattice node, and the
// bold (checked) nodes are the registry.
func TestLatticeDrawing(t *testing.T) {
	b, err := os.ReadFile("../docs/LEVELS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "```dot\n")
	if i < 0 {
		t.Fatal("docs/LEVELS.md has no ```dot block")
	}
	dot := doc[i+len("```dot\n"):]
	dot = dot[:strings.Index(dot, "```")]
	var drawn [][2]string
	for _, m := range regexp.MustCompile(`"([^"]+)"\s*->\s*"([^"]+)"`).FindAllStringSubmatch(dot, -1) {
		drawn = append(drawn, [2]string{m[1], m[2]})
	}
	var bold []string
	for _, m := range regexp.MustCompile(`"([^"]+)"\s*\[style=bold\]`).FindAllStringSubmatch(dot, -1) {
		bold = append(bold, m[1])
	}
	_, edges := Lattice()
	key := func(e [2]string) string { return e[0] + " -> " + e[1] }
	var want, got []string
	for _, e := range edges {
		want = append(want, key(e))
	}
	for _, e := range drawn {
		got = append(got, key(e))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("docs/LEVELS.md draws\n%s\nhistory/lattice.go says\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	names := LevelNames()
	slices.Sort(names)
	slices.Sort(bold)
	if !slices.Equal(names, bold) {
		t.Errorf("bold (checked) nodes %v, registry %v", bold, names)
	}
	nodes, _ := Lattice()
	for _, n := range nodes {
		if !strings.Contains(doc, n.Name) && !strings.Contains(doc, strings.TrimSuffix(n.Name, "ation")) {
			t.Errorf("the drawing lacks %s", n.Name)
		}
	}
}
