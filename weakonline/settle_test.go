package weakonline

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestSettleClocksAsNaive: a rebuild that computes the clocks once
// (settleClocks) gives what closing node by node gives (naiveRebuild):
// the same trouble, every clock the same, and graphs with the same
// reachability (each one's edges are paths in the other), on generated
// causal streams, valid and not, under both initial states.
func TestSettleClocksAsNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2226))
	validAt := []string{"", "causal", "read-atomic"}
	compared, troubled, edges := 0, 0, 0
	for i := range count(80) {
		h, err := generated(rng, 4*i, validAt[i%len(validAt)], nil)
		if err != nil {
			t.Fatal(err)
		}
		opts := history.DefaultOptions()
		opts.Level = history.Causal
		if i%2 == 1 {
			opts.InitialState = history.InitialUnknown
		}
		_, e := runFeed(t, h, opts, randomFeed(rng, h, []int64{1_000_000, 5_000_000, 50_000_000}))
		if e.fastLost != "" || e.noFast {
			continue
		}
		e.rebuild()
		batch := e.fast
		naiveRebuild = true
		e.rebuild()
		naiveRebuild = false
		naive := e.fast
		compared++
		if batch.trouble != naive.trouble {
			t.Fatalf("stream %d: trouble batch %v (%s), naive %v (%s)", i, batch.trouble, batch.why, naive.trouble, naive.why)
		}
		if batch.trouble {
			troubled++
			continue
		}
		for d := range len(naive.node) {
			if !sameClock(batch.nl(int(d)).clock, naive.nl(int(d)).clock) {
				t.Fatalf("stream %d: node %d's clock batch %v, naive %v", i, d, batch.nl(int(d)).clock, naive.nl(int(d)).clock)
			}
		}
		edges += pathsFor(t, i, "naive", naive, batch) + pathsFor(t, i, "batch", batch, naive)
	}
	if compared < count(80)/2 || edges == 0 || troubled == compared {
		t.Fatalf("%d streams compared (%d troubled), %d edges: too few to test", compared, troubled, edges)
	}
	t.Logf("%d streams (%d troubled), %d edges found as paths", compared, troubled, edges)
}

// pathsFor checks that each edge of a is a path in b; it returns the
// number of edges.
func pathsFor(t *testing.T, i int, name string, a, b *fast) int {
	t.Helper()
	n := 0
	for u := range a.nls.n {
		for _, v := range a.nl(int(u)).out {
			n++
			if !reaches(b, int32(u), v) {
				t.Fatalf("stream %d: %s's edge %d -> %d is no path in the other graph", i, name, u, v)
			}
		}
	}
	return n
}

func reaches(f *fast, u, v int32) bool {
	seen := map[int32]bool{u: true}
	stack := []int32{u}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == v {
			return true
		}
		for _, w := range f.nl(int(x)).out {
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return false
}
