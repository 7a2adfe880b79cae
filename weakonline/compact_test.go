package weakonline

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// checkCompacted holds the fast path an engine keeps (compacted in place
// at every retirement pass, compactInPlace) to the graph's invariants and
// to the one a rebuild from the engine's transactions makes: the same
// writers of every value, in the same order; every edge between nodes,
// listed both ways and along the topological order; the order dense;
// every chosen source a node the reader has an edge from. Called after
// every step of the sweeps (runFeed).
func checkCompacted(t *testing.T, e *Engine) {
	t.Helper()
	f := e.fast
	if f == nil || f.trouble || e.opts.Level != history.ReadCommitted {
		return
	}
	if f.rank != nil {
		// Built from the exact check's witness (F3): an unknown the
		// witness left out is no node, which a rebuild without it makes
		// one. Nothing to compare (docs/SEMANTICS.md §5 "A graph built
		// from a witness is rebuilt at a pass").
		return
	}
	g := e.built()
	if g.trouble {
		return // the rebuild chose otherwise (F3): nothing to compare
	}
	n := len(f.ord)
	if len(g.ord) != len(e.txns) && n != len(g.ord) {
		// Unchecked writers past the last node: no node on either side.
		if max(n, len(g.ord)) > len(e.txns) {
			t.Fatalf("fast path of %d, rebuilt %d, engine %d", n, len(g.ord), len(e.txns))
		}
	}
	ords := map[int32]bool{}
	var one, two [1]int32
	for i := range min(n, len(e.txns)) {
		if f.node[i] != (i < len(g.node) && g.node[i]) {
			t.Fatalf("node %d: %v, rebuilt %v", i, f.node[i], !f.node[i])
		}
		if !f.node[i] {
			continue
		}
		if ords[f.ord[i]] || f.ord[i] < 0 || f.ord[i] >= f.nextOrd {
			t.Fatalf("node %d: order %d repeated or out of [0, %d)", i, f.ord[i], f.nextOrd)
		}
		ords[f.ord[i]] = true
		for _, v := range f.nl(int(i)).out {
			if !f.node[v] || f.ord[i] >= f.ord[v] || !slices.Contains(f.nl(int(v)).in, int32(i)) {
				t.Fatalf("edge %d -> %d: not between nodes in order, or not listed both ways", i, v)
			}
		}
		for _, u := range f.nl(int(i)).in {
			if !slices.Contains(f.nl(int(u)).out, int32(i)) {
				t.Fatalf("edge %d -> %d listed only into its head", u, i)
			}
		}
		for _, s := range f.nl(int(i)).srcs {
			if !slices.Contains(f.nl(int(i)).in, s) || !f.chosen[s] {
				t.Fatalf("node %d: source %d without its edge or not marked chosen", i, s)
			}
		}
		for _, w := range f.nl(int(i)).finals {
			a := slices.Clone(f.writers(w, &one))
			b := slices.Clone(g.writers(w, &two))
			if !slices.Equal(a, b) {
				t.Fatalf("writers of %v: %v, rebuilt %v", w, a, b)
			}
		}
	}
	if len(f.sessions) != len(g.sessions) || len(f.sessLast) != len(f.sessions) {
		t.Fatalf("%d sessions (%d last nodes), rebuilt %d", len(f.sessions), len(f.sessLast), len(g.sessions))
	}
	for i := range min(n, len(e.txns)) {
		if s := f.sessOf[i]; f.node[i] && e.txns[i].HasSession && (s < 0 || sessionName(f, s) != e.txns[i].Session) {
			t.Fatalf("node %d: session %d (%q), its transaction's %q", i, s, sessionName(f, s), e.txns[i].Session)
		}
	}
	for s, last := range f.sessLast {
		want := int32(-1) // no node of the session held
		if gs, ok := g.sessions[sessionName(f, int32(s))]; ok {
			want = g.sessLast[gs]
		}
		if last != want {
			t.Fatalf("session %d: last %d, rebuilt %d", s, last, want)
		}
	}
	if f.opts.InitialState == history.InitialUnknown && len(f.initVal) > len(g.initVal) {
		t.Fatalf("initial values %v, rebuilt %v", f.initVal, g.initVal)
	}
}

// sessionName is session s's name in f.
func sessionName(f *fast, s int32) string {
	for name, x := range f.sessions {
		if x == s {
			return name
		}
	}
	return ""
}

// TestCompactInPlaceAsRebuild runs generated streams at read committed
// retiring at every step, with the fast path compacted in place at each
// pass and with it rebuilt from the held transactions (naiveCompact):
// the same alerts at the same events, and after every step the
// compacted graph holds what checkCompacted asks (runFeed calls it).
func TestCompactInPlaceAsRebuild(t *testing.T) {
	injects := [][]string{nil, {history.G1a}, {history.G1b}, {history.G1c}, {history.GarbageRead}}
	rng := rand.New(rand.NewPCG(26, 3))
	inPlace, alerted := 0, 0
	for i := range count(40) {
		h, err := generated(rng, i, "", injects[i%len(injects)])
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.ReadCommitted
		if i%3 == 1 {
			opts.InitialState = history.InitialUnknown
		}
		fd := randomFeed(rng, h, []int64{1_000_000, 5_000_000, 50_000_000})
		got, e := runFeed(t, h, opts, fd)
		inPlace += e.compacted
		naiveCompact = true
		want, ne := runFeed(t, h, opts, fd)
		naiveCompact = false
		if ne.compacted != 0 {
			t.Fatalf("history %d: compacted in place with naiveCompact", i)
		}
		sameAlerts(t, fmt.Sprintf("history %d in place vs rebuilt", i), got, want)
		if len(got) > 0 {
			alerted++
		}
	}
	if inPlace == 0 || alerted == 0 {
		t.Fatalf("%d passes compacted in place, %d histories alerted: the comparison tests nothing", inPlace, alerted)
	}
	t.Logf("%d passes compacted in place, %d histories alerted", inPlace, alerted)
}
