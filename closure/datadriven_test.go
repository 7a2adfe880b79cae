package closure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs the scripts in testdata/. Commands:
//
//	init realtime|plain       a new, empty closure
//	append                    one "start end" per line (end "inf" = never)
//	edges                     one "u v" per line: AddEdge, prints newly or cycle
//	evict                     IDs, space separated
//	reaches / path            one "u v" per line
//	dump                      String()
//	build realtime|plain      "start end" lines, a "--" line, "u v" lines
//
// Every script also runs against the oracle of oracle_test.go, which checks
// reachability and witnesses after each command; the expected text is the
// readable specification. Regenerate with -rewrite.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var c *Closure
		var o *oracle
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out := run(t, d, &c, &o)
			if c != nil {
				compare(t, c, o, true, nil)
			}
			return out
		})
	})
}

func parseTime(t *testing.T, s string) int64 {
	if s == "inf" {
		return math.MaxInt64
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func pairsOf(t *testing.T, lines []string) []Pair {
	var ps []Pair
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			t.Fatalf("want two IDs: %q", l)
		}
		ps = append(ps, Pair{ID(parseTime(t, f[0])), ID(parseTime(t, f[1]))})
	}
	return ps
}

func fmtHops(hs []Hop) string {
	if hs == nil {
		return "none"
	}
	var parts []string
	for i, h := range hs {
		if i == 0 {
			parts = append(parts, fmt.Sprintf("t%d", h.From))
		}
		if h.Kind == HopEvicted {
			parts = append(parts, fmt.Sprintf("-evicted%v->", h.Via), fmt.Sprintf("t%d", h.To))
		} else {
			parts = append(parts, fmt.Sprintf("-%s->", h.Kind), fmt.Sprintf("t%d", h.To))
		}
	}
	return strings.Join(parts, " ")
}

func run(t *testing.T, d *datadriven.TestData, cp **Closure, op **oracle) string {
	lines := strings.Split(strings.TrimSpace(d.Input), "\n")
	if d.Input == "" {
		lines = nil
	}
	rt := len(d.CmdArgs) > 0 && d.CmdArgs[0].Key == "realtime"
	var b strings.Builder
	switch d.Cmd {
	case "init":
		*cp, *op = New(Options{RealTime: rt}), newOracle(rt)
		return ""
	case "build":
		var ivs []Interval
		i := 0
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != "--"; i++ {
			f := strings.Fields(lines[i])
			ivs = append(ivs, Interval{parseTime(t, f[0]), parseTime(t, f[1])})
		}
		var edges []Pair
		if i < len(lines) {
			edges = pairsOf(t, lines[i+1:])
		}
		o := newOracle(rt)
		for _, iv := range ivs {
			o.append(iv.AdjStart, iv.AdjEnd)
		}
		c, cyc := Build(Options{RealTime: rt}, ivs, edges)
		if cyc != nil {
			last := cyc[len(cyc)-1]
			for _, e := range edges {
				o.addEdge(e.From, e.To)
			}
			if err := o.checkCycle(last.From, last.To, cyc); err != nil {
				t.Fatal(err)
			}
			*cp, *op = nil, nil
			return "cycle: " + fmtHops(cyc)
		}
		for _, e := range edges {
			o.addEdge(e.From, e.To)
		}
		*cp, *op = c, o
		return c.String()
	}
	c, o := *cp, *op
	switch d.Cmd {
	case "append":
		for _, l := range lines {
			f := strings.Fields(l)
			s, e := parseTime(t, f[0]), parseTime(t, f[1])
			fmt.Fprintf(&b, "t%d ", c.Append(s, e))
			o.append(s, e)
		}
	case "edges":
		for _, p := range pairsOf(t, lines) {
			newly, cyc := c.AddEdge(p.From, p.To)
			fmt.Fprintf(&b, "t%d->t%d: ", p.From, p.To)
			if cyc != nil {
				if err := o.checkCycle(p.From, p.To, cyc); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "cycle %s\n", fmtHops(cyc))
				continue
			}
			o.addEdge(p.From, p.To)
			ks := map[Pair]bool{}
			for _, q := range newly {
				ks[q] = true
			}
			b.WriteString("newly")
			for _, q := range keys(ks) {
				fmt.Fprintf(&b, " t%d->t%d", q.From, q.To)
			}
			b.WriteByte('\n')
		}
	case "evict":
		for _, f := range strings.Fields(strings.Join(lines, " ")) {
			id := ID(parseTime(t, f))
			c.Evict(id)
			o.live[id] = false
		}
	case "reaches":
		for _, p := range pairsOf(t, lines) {
			fmt.Fprintf(&b, "t%d ~> t%d: %v\n", p.From, p.To, c.Reaches(p.From, p.To))
		}
	case "path":
		for _, p := range pairsOf(t, lines) {
			fmt.Fprintf(&b, "%s\n", fmtHops(c.Path(p.From, p.To)))
		}
	case "dump":
		return c.String()
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
	return strings.TrimSpace(b.String())
}
