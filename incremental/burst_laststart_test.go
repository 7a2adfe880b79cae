package incremental

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestLastOccurrenceIsTheDefinition: lastOccurrence, lastStart's scan of
// a short list, is the largest q with list[q:q+len(app)] equal to app
// (-1: none, or app empty), on random lists over a small alphabet (so
// that values repeat and runs overlap).
func TestLastOccurrenceIsTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0x1a57))
	vals := func(n int) []history.Value {
		out := make([]history.Value, n)
		for i := range out {
			out[i] = history.Value(strconv.Itoa(rng.IntN(3)))
		}
		return out
	}
	for range 20000 {
		list, app := vals(rng.IntN(12)), vals(rng.IntN(4))
		want := -1
		for q := 0; len(app) > 0 && q+len(app) <= len(list); q++ {
			if slices.Equal(list[q:q+len(app)], app) {
				want = q
			}
		}
		if got := lastOccurrence(list, app); got != want {
			t.Fatalf("lastOccurrence(%v, %v) = %d, want %d", list, app, got, want)
		}
	}
}

// TestLastStartScanIsTheMap: lastStart with short lists scanned
// (lastStartScanMax) bounds every read's initial prefixes as with the
// map of every list: on TestLastStartKeepsTheEncoding's histories (list
// reads under an unknown initial state, bursts, duplicates, unknowns,
// injected anomalies) the same prefixes are left unwalked and the
// instance has the same variables, edges and verdict.
func TestLastStartScanIsTheMap(t *testing.T) {
	defer func(v int) { lastStartScanMax = v }(lastStartScanMax)
	unwalked := 0
	for i := range tinyCount(60) {
		p, injected := burstCase(t, i)
		encode := func(scanMax int) (vars, edges int, verdict string, spared int) {
			lastStartScanMax = scanMax
			e := newEncoder(p, encodeConfig{})
			e.encode()
			st := e.solve(context.Background())
			return e.s.NumVars(), e.s.NumEdges(), st.String(), e.unwalked
		}
		v1, e1, s1, u1 := encode(1 << 20)
		v0, e0, s0, u0 := encode(-1)
		if v1 != v0 || e1 != e0 || s1 != s0 || u1 != u0 {
			t.Fatalf("history %d (%v): scanned %d vars %d edges %s %d unwalked, map %d vars %d edges %s %d unwalked", i, injected, v1, e1, s1, u1, v0, e0, s0, u0)
		}
		unwalked += u1
	}
	if unwalked == 0 {
		t.Fatal("no prefix left unwalked: the bound was never exercised")
	}
}
