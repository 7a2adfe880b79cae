package incremental

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
	"github.com/streamcheck/streamcheck/solver"
)

// explainCorpus is a set of invalid histories with their levels: random
// injections into small histories with lists, repeated values, aborted
// and unknown transactions, at a serializable and a snapshot level.
func explainCorpus(t *testing.T, n int) []struct {
	h    *history.History
	opts history.Options
} {
	t.Helper()
	var out []struct {
		h    *history.History
		opts history.Options
	}
	for seed := uint64(1); len(out) < n && seed < uint64(20*n); seed++ {
		g := gen.Config{Txns: 80, Keys: 6, Seed: seed, Sessions: 5, OpsPerTxn: 4, AbortRatio: 0.05, UnknownRatio: 0.05,
			ListRatio: 0.2 + 0.2*float64(seed%3), DupValueRatio: 0.2 * float64(seed%2), Concurrency: 3, InjectRate: 0.04}
		h, _, err := gen.Generate(g)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = []history.Level{history.Serializable, history.StrictSerializable, history.SnapshotIsolation, history.StrongSnapshotIsolation}[seed%4]
		out = append(out, struct {
			h    *history.History
			opts history.Options
		}{h, opts})
	}
	return out
}

// TestExplainFilterIsSearch: the closure filter only skips searches that
// find nothing (explain_reach.go), so every explanation, word for word,
// is the one the searches alone give.
func TestExplainFilterIsSearch(t *testing.T) {
	explained := 0
	for i, c := range explainCorpus(t, 60) {
		run := func(plain bool) []Anomaly {
			explainPlain = plain
			defer func() { explainPlain = false }()
			res, err := Check(context.Background(), c.h, c.opts, Config{MaxAnomalies: 8})
			if err != nil {
				t.Fatal(err)
			}
			return res.Anomalies
		}
		plain, filtered := run(true), run(false)
		if !reflect.DeepEqual(plain, filtered) {
			a, _ := json.MarshalIndent(plain, "", " ")
			b, _ := json.MarshalIndent(filtered, "", " ")
			t.Fatalf("history %d at %s: filtered explanation differs\nsearch:\n%s\nfiltered:\n%s", i, c.opts.Level, a, b)
		}
		explained += len(plain)
	}
	if explained < 60 {
		t.Fatalf("only %d anomalies explained: the corpus does not exercise the explainer", explained)
	}
}

// TestExplainBatchIsForced replays what batch did on an explainer
// without the closure: every order it forced has an alternative that the
// search shows closes a cycle at that point, and the final cycle is a
// closed walk of edges that hold. batch runs from the start here (as if
// the step-by-step replay had run out of work at once), on the random
// corpus and on the recorded large core (testdata), which forces
// thousands of orders over several passes.
func TestExplainBatchIsForced(t *testing.T) {
	ctx := context.Background()
	cycles, forced := 0, 0
	check := func(name string, h *history.History, opts history.Options, core []string) {
		e := coreEncoder(t, h, opts, core)
		if e == nil {
			return
		}
		x := newExplainer(e)
		x.exhausted = true
		_, cyc := x.batch()
		y := newExplainer(e)
		y.plain = true
		for k, l := range x.batchLog {
			if l == litTrue {
				y.unitPropagate()
				continue
			}
			forced++
			if y.cycle(l) == nil {
				t.Fatalf("%s: batch step %d forced %s, whose alternative closes no cycle", name, k, y.describeLit(l.not()))
			}
			y.set(l, false)
		}
		if cyc == nil {
			return
		}
		cycles++
		for k, r := range cyc {
			if !y.holds(&r, litTrue) {
				t.Fatalf("%s: edge %d of batch's cycle does not hold", name, k)
			}
			if next := cyc[(k+1)%len(cyc)]; r.to != next.from {
				t.Fatalf("%s: batch's cycle is not closed at edge %d", name, k)
			}
		}
	}
	for i, c := range explainCorpus(t, 60) {
		res, err := Check(ctx, c.h, c.opts, Config{MaxAnomalies: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, an := range res.Anomalies {
			check(fmt.Sprintf("history %d, core %v", i, an.Core), c.h, c.opts, an.Core)
		}
	}
	h, opts := largeListCore(t)
	var all []string
	for _, tx := range h.Txns {
		all = append(all, tx.ID)
	}
	large := forced
	check("the large core", h, opts, all)
	t.Logf("%d cores explained by batch, %d orders forced (%d in the large core)", cycles, forced, forced-large)
	if cycles < 30 || forced-large < 1000 {
		t.Fatalf("%d cores explained by batch, %d orders forced in the large core: the test does not exercise batch", cycles, forced-large)
	}
}

// coreEncoder is the encoder describe explains core with: the core's
// projection at the weakest level it violates (nil: none found).
func coreEncoder(t *testing.T, h *history.History, opts history.Options, core []string) *encoder {
	t.Helper()
	ctx := context.Background()
	p := prepare(h, opts)
	idx := map[string]int32{}
	for j := range h.Txns {
		idx[h.Txns[j].ID] = int32(j)
	}
	in := make([]bool, len(h.Txns))
	for _, id := range core {
		in[idx[id]] = true
	}
	pc := prepare(p.project(in), opts)
	lv, ok := weakestViolated(ctx, pc)
	if !ok {
		return nil
	}
	pe := prepare(pc.h, withLevel(opts, lv))
	e := newEncoder(pe, encodeConfig{record: true})
	e.encodeCtx(ctx)
	return e
}

// TestReachIsSearch holds the closure to breadth-first search on the
// edges that hold, pair by pair, and cannotClose to the search's own
// answer for every undecided choice, at random points of random
// assignments, on the corpus's cores and on the recorded large core.
func TestReachIsSearch(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	pairs, choices := 0, 0
	try := func(name string, e *encoder, maxChoices int) {
		x := newExplainer(e)
		y := newExplainer(e)
		y.plain = true
		for step := 0; step < 4; step++ {
			x.unitPropagate()
			x.buildReach()
			if !x.reach.ok {
				return // G0 closed a cycle: nothing more to hold
			}
			n := len(x.adj)
			for v := range n {
				seen := make([]bool, n)
				stack := []int32{int32(v)}
				for len(stack) > 0 {
					a := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					for _, ei := range x.adj[a] {
						r := &e.edges[ei]
						if x.holds(r, litTrue) && !seen[r.to] {
							seen[r.to] = true
							stack = append(stack, r.to)
						}
					}
				}
				for u := range n {
					if u != v && x.reach.reaches(int32(v), int32(u)) != seen[u] {
						t.Fatalf("%s: closure says %d reaches %d: %v, search: %v", name, v, u, !seen[u], seen[u])
					}
					pairs++
				}
			}
			y.assign = append(y.assign[:0], x.assign...)
			y.ver++
			var open []lit
			for _, l := range x.choices() {
				if _, ok := x.value(l); !ok {
					open = append(open, l)
				}
			}
			rng.Shuffle(len(open), func(i, j int) { open[i], open[j] = open[j], open[i] })
			for _, l := range open[:min(len(open), maxChoices)] {
				for _, pol := range []lit{l, l.not()} {
					if x.cannotClose(pol) != (y.cycle(pol) == nil) {
						t.Fatalf("%s: cannotClose(%s) = %v, the search disagrees", name, x.describeLit(pol), x.cannotClose(pol))
					}
					choices++
				}
			}
			if len(open) == 0 {
				return
			}
			x.set(open[0], rng.IntN(2) == 0)
		}
	}
	for i, c := range explainCorpus(t, 60) {
		res, err := Check(ctx, c.h, c.opts, Config{MaxAnomalies: 8})
		if err != nil {
			t.Fatal(err)
		}
		for _, an := range res.Anomalies {
			if e := coreEncoder(t, c.h, c.opts, an.Core); e != nil {
				try(fmt.Sprintf("history %d, core %v", i, an.Core), e, 1000)
			}
		}
	}
	h, opts := largeListCore(t)
	var all []string
	for _, tx := range h.Txns {
		all = append(all, tx.ID)
	}
	try("the large core", coreEncoder(t, h, opts, all), 300)
	t.Logf("%d pairs, %d choices held to the search", pairs, choices)
}

func largeListCore(t *testing.T) (*history.History, history.Options) {
	t.Helper()
	h, _, err := ingest.ReadFile("testdata/large-list-core.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrongSnapshotIsolation
	opts.Skew = 1_000_000 // the canary's Δ
	return h, opts
}

// TestLargeListCoreExplained: a minimal core of 158 list transactions
// recorded from PostgreSQL READ COMMITTED (testdata), violating strong
// snapshot isolation. Its step-by-step replay is quadratic in its 8,391
// choices (it ran for more than 17 minutes inside `run`, which explains
// every alert, and then named it only "cycle"); it must end with a cycle
// and a class.
func TestLargeListCoreExplained(t *testing.T) {
	h, opts := largeListCore(t)
	res, err := Check(context.Background(), h, opts, Explaining(Config{MaxAnomalies: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Invalid || len(res.Anomalies) != 1 {
		t.Fatalf("verdict %v with %d anomalies, want one", res.Verdict, len(res.Anomalies))
	}
	a := res.Anomalies[0]
	if len(a.Core) != len(h.Txns) {
		t.Fatalf("core of %d, want all %d (the file is a minimal core)", len(a.Core), len(h.Txns))
	}
	if a.Type == "cycle" || len(a.Cycle) == 0 {
		t.Fatalf("unexplained: %s %v", a.Type, a.Text)
	}
	t.Logf("%s: %d forced, cycle of %d", a.Type, len(a.Forced), len(a.Cycle))
}

// TestReachTwoConditionedEdges: a choice whose cycle needs two of the
// edges it conditions (a->b and c->d, joined by b->c and d->a that hold
// already) closes no cycle through either edge alone, and the filter
// must still send it to the search.
func TestReachTwoConditionedEdges(t *testing.T) {
	s := solver.New(solver.Options{})
	l := lit(solver.PosLit(s.NewVar()))
	e := &encoder{s: s, edges: []edgeRec{
		{from: 0, to: 1, a: l, b: litTrue, kind: kindWW},
		{from: 1, to: 2, a: litTrue, b: litTrue, kind: kindWR},
		{from: 2, to: 3, a: l, b: litTrue, kind: kindWW},
		{from: 3, to: 0, a: litTrue, b: litTrue, kind: kindWR},
	}}
	x := newExplainer(e)
	if x.cannotClose(l) {
		t.Fatal("the filter says l closes no cycle")
	}
	if c := x.cycle(l); len(c) != 4 {
		t.Fatalf("cycle through l: %v, want all four edges", c)
	}
	if !x.cannotClose(l.not()) {
		t.Fatal("the filter says not-l closes a cycle")
	}
}
