package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// box is an axis-aligned rectangle in Graphviz points.
type box struct{ x0, y0, x1, y1 float64 }

// apart reports whether a and b are separated by at least gap points.
func (a box) apart(b box, gap float64) bool {
	return a.x1+gap <= b.x0 || b.x1+gap <= a.x0 || a.y1+gap <= b.y0 || b.y1+gap <= a.y0
}

// layout runs dot -Tjson on src and returns the edge labels' boxes (from
// the text drawing operations: centre, width, font size) and the nodes'.
func layout(t *testing.T, dot string, src []byte) (labels map[string]box, nodes []box) {
	t.Helper()
	cmd := exec.Command(dot, "-Tjson")
	cmd.Stdin = bytes.NewReader(src)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dot -Tjson: %v\n%s", err, src)
	}
	var g struct {
		Objects []struct {
			Pos    string `json:"pos"`
			Width  string `json:"width"`
			Height string `json:"height"`
		} `json:"objects"`
		Edges []struct {
			Head, Tail int
			Ldraw      []struct {
				Op    string    `json:"op"`
				Pt    []float64 `json:"pt"`
				Width float64   `json:"width"`
				Text  string    `json:"text"`
				Size  float64   `json:"size"`
			} `json:"_ldraw_"`
		} `json:"edges"`
	}
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatal(err)
	}
	for _, o := range g.Objects {
		var x, y float64
		if _, err := fmt.Sscanf(o.Pos, "%f,%f", &x, &y); err != nil {
			continue // a subgraph
		}
		w, _ := strconv.ParseFloat(o.Width, 64)
		h, _ := strconv.ParseFloat(o.Height, 64)
		nodes = append(nodes, box{x - w*36, y - h*36, x + w*36, y + h*36})
	}
	labels = map[string]box{}
	for i, e := range g.Edges {
		size := 14.0
		for _, op := range e.Ldraw {
			switch op.Op {
			case "F":
				size = op.Size
			case "T":
				// pt is the centre of the baseline; descenders go below it.
				x, y := op.Pt[0], op.Pt[1]
				labels[fmt.Sprintf("%d:%s", i, op.Text)] = box{x - op.Width/2, y - 0.25*size, x + op.Width/2, y + 0.8*size}
			}
		}
	}
	return labels, nodes
}

// TestDOTLabelsApart: the labels of a two-transaction cycle's edges (one
// each way between the same pair) are laid out apart from each other and
// from the boxes, as Graphviz draws them; before, both edges ran down the
// middle and their labels touched ("rw xrw x").
func TestDOTLabelsApart(t *testing.T) {
	dot := needDot(t)
	two := func(k1, k2 string) Anomaly {
		return Anomaly{Type: "lost-update", Class: "G2-item", Core: []string{"deposit-alice", "deposit-bob"},
			Txns: []Txn{
				{ID: "deposit-alice", Status: "committed", Ops: []string{"r balance null", "w balance 50"}},
				{ID: "deposit-bob", Status: "committed", Ops: []string{"r balance null", "w balance 20"}},
			},
			Cycle: []Step{{From: "deposit-alice", To: "deposit-bob", Kind: k1, Key: "balance"}, {From: "deposit-bob", To: "deposit-alice", Kind: k2, Key: "balance"}}}
	}
	res, h := goldenResult(t)
	cases := map[string]Anomaly{
		"rw rw":  two("rw", "rw"),
		"rw ww":  two("rw", "ww"),
		"wr rw":  two("wr", "rw"),
		"golden": New(res, h).Anomalies[0],
	}
	narrow := two("rw", "rw") // narrow boxes: the labels are wider than they
	narrow.Txns = []Txn{{ID: "a", Ops: []string{"w x 1"}}, {ID: "b", Ops: []string{"w x 2"}}}
	narrow.Core = []string{"a", "b"}
	narrow.Cycle = []Step{{From: "a", To: "b", Kind: "rw", Key: "a-long-key-name"}, {From: "b", To: "a", Kind: "rw", Key: "a-long-key-name"}}
	cases["narrow"] = narrow
	for name, a := range cases {
		labels, nodes := layout(t, dot, DOT(a))
		if len(labels) < 2 {
			t.Fatalf("%s: %d edge labels", name, len(labels))
		}
		for n1, b1 := range labels {
			for n2, b2 := range labels {
				if n1 < n2 && !b1.apart(b2, 4) {
					t.Errorf("%s: labels %q %v and %q %v overlap or touch\n%s", name, n1, b1, n2, b2, DOT(a))
				}
			}
			for _, nb := range nodes {
				if !b1.apart(nb, 0) && !strings.HasSuffix(n1, "forced") {
					t.Errorf("%s: label %q %v overlaps a box %v\n%s", name, n1, b1, nb, DOT(a))
				}
			}
		}
	}
}
