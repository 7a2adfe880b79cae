package weakonline

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestCausalClocksCurrent: after a causal stream, with the fast path
// untroubled, every node's clock is what clockInto computes from its
// inputs now (propagate stops at a node whose clock did not change: this
// is the invariant that makes the stop exact), and every edge the axiom
// forces under those clocks is in the graph: per closed node n, read of
// x from t2 and session s, the session's last writer of x in n's past,
// when it is not in t2's past, has an edge to t2. The obligations are
// found here from the final clocks alone, not as forcedCausal found them
// step by step (old clocks, sessions skipped).
func TestCausalClocksCurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2027))
	validAt := []string{"", "causal", "read-atomic"}
	checked, obligations := 0, 0
	for i := range count(60) {
		h, err := generated(rng, 4*i, validAt[i%len(validAt)], nil) // no lists: 4*i%4 == 0
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.Causal
		_, e := runFeed(t, h, opts, randomFeed(rng, h, []int64{1_000_000, 5_000_000, 50_000_000}))
		f := e.fast
		if f == nil || f.trouble {
			continue
		}
		checked++
		for d := range int32(len(f.node)) {
			if !f.node[d] || f.nl(int(d)).clock == nil || f.isRetired(d) {
				continue // a retired node's inputs are gone, its clock final
			}
			if want := f.clockInto(d, make([]int32, len(f.sessLast))); !sameClock(want, f.nl(int(d)).clock) {
				t.Fatalf("stream %d: node %d's clock %v, its inputs give %v", i, d, f.nl(int(d)).clock, want)
			}
		}
		for n := range int32(len(f.node)) {
			if !f.node[n] || !f.closed[n] || f.isRetired(n) {
				continue
			}
			clk := f.nl(int(n)).clock
			for k, r := range f.nl(int(n)).reads {
				t2 := f.nl(int(n)).froms[k]
				kw := f.keyWriters(r.k)
				if kw == nil {
					continue
				}
				for j, s := range kw.sessions {
					p := int32(-1)
					if int(s) < len(clk) {
						p = clk[s]
					}
					if s == f.sessOf[n] {
						p = f.pos[n] - 1
					}
					w := lastEntry(kw.lists[j], p)
					if w == nil || w.t == n || w.t == t2 || f.isRetired(w.t) {
						continue // an edge out of R is not kept (weak29_causal.go)
					}
					if t2 >= 0 {
						if c2 := f.nl(int(t2)).clock; int(s) < len(c2) && c2[s] >= w.pos {
							continue // in t2's past: so ∪ wr orders it
						}
					} else {
						t.Fatalf("stream %d: %d reads the initial %d after writer %d, and the fast path saw no trouble", i, n, r.k, w.t)
					}
					obligations++
					found := false
					for _, v := range f.nl(int(w.t)).out {
						found = found || v == t2
					}
					if !found {
						t.Fatalf("stream %d: %d reads key %d from %d; %d (session %d) is in its past and not in %d's, and has no edge to it", i, n, r.k, t2, w.t, s, t2)
					}
				}
			}
		}
	}
	if checked < count(60)/2 || obligations == 0 {
		t.Fatalf("%d streams with an untroubled fast path, %d forced edges: too few to test", checked, obligations)
	}
	t.Logf("%d streams, %d forced edges found in the graph", checked, obligations)
}

// TestCloseClockAsNaive: a close that visits its reads once, under its
// past with its sources (closeClock), against the visit under its past
// at release followed by one per session its sources added
// (naiveCloseClock): on generated causal streams with injected
// violations, the same alerts at the same events and the same steps
// checked (the two graphs differ by edges session order implies, so
// their cycles are the same at every step).
func TestCloseClockAsNaive(t *testing.T) {
	causalAsNaive(t, 3003, &naiveCloseClock, "once vs twice", "visiting twice")
}

// causalAsNaive runs 24 generated causal streams (injected violations in
// three of four, an unknown initial state in one of five) through the
// engine with the switch *naive off and on, each fed in the same random
// batches, and requires the same alerts and the same steps checked, and
// some stream to alert (or the comparison tests nothing). what and
// naiveSteps name the two runs in failures.
func causalAsNaive(t *testing.T, seed uint64, naive *bool, what, naiveSteps string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(26, seed))
	injects := [][]string{nil, {history.G1c}, {history.ReadSkew}, {history.LostUpdate}}
	alerted := 0
	for i := range count(24) {
		h, err := generated(rng, 4*i, []string{"", "causal", "read-atomic"}[i%3], injects[i%len(injects)])
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.Causal
		if i%5 == 3 {
			opts.InitialState = history.InitialUnknown
		}
		fd := randomFeed(rng, h, []int64{1_000_000, 5_000_000, 50_000_000})
		got, e := runFeed(t, h, opts, fd)
		*naive = true
		want, ne := runFeed(t, h, opts, fd)
		*naive = false
		sameAlerts(t, fmt.Sprintf("stream %d %s", i, what), got, want)
		if e.checks != ne.checks {
			t.Fatalf("stream %d: %d steps checked, %d %s", i, e.checks, ne.checks, naiveSteps)
		}
		if len(got) > 0 {
			alerted++
		}
	}
	if alerted == 0 {
		t.Fatal("no stream alerted: the comparison tests nothing")
	}
	t.Logf("%d streams alerted", alerted)
}
