package saturation

import "testing"

// chain is one session of n transactions, each reading key 0 from the one
// before it and writing key 0; with back, transaction 0 also reads key 1
// from the last one, which writes it: a cycle through every transaction.
// Its 2(n-1) so and wr edges span several chunks of the edge store.
func chain(n int, back bool) *History {
	h := &History{Session: make([]int32, n), Pos: make([]int32, n), Reads: make([][]Read, n), Writes: make([][]int32, n), Keys: 2}
	s := make([]int32, n)
	for i := range n {
		s[i], h.Pos[i] = int32(i), int32(i)
		h.Writes[i] = []int32{0}
		if i > 0 {
			h.Reads[i] = []Read{{Key: 0, From: int32(i - 1)}}
		}
	}
	h.Sessions = [][]int32{s}
	if back {
		h.Writes[n-1] = []int32{0, 1}
		h.Reads[0] = []Read{{Key: 1, From: int32(n - 1)}}
	}
	return h
}

// TestChunkedEdges: a graph larger than one chunk of the edge store gives
// a topological order that respects every edge, and a cycle whose edges
// are the history's own and close up, from edges stored in different
// chunks.
func TestChunkedEdges(t *testing.T) {
	n := 3*edgeChunk/2 + 7
	for _, m := range []Model{ReadCommitted, ReadAtomic, Causal} {
		h := chain(n, false)
		res, err := Check(h, m)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Valid || len(res.Order) != n {
			t.Fatalf("%v: chain valid=%v order %d, want valid with %d", m, res.Valid, len(res.Order), n)
		}
		pos := make([]int, n)
		for i, v := range res.Order {
			pos[v] = i
		}
		for i := 1; i < n; i++ {
			if pos[i-1] > pos[i] {
				t.Fatalf("%v: order puts %d before %d against wr", m, i, i-1)
			}
		}
		res, err = Check(chain(n, true), m)
		if err != nil {
			t.Fatal(err)
		}
		if res.Valid {
			t.Fatalf("%v: a wr cycle through %d transactions passes", m, n)
		}
		cyc := res.Cycle
		if len(cyc) < n {
			t.Fatalf("%v: cycle of %d edges, the only cycles pass through all %d transactions", m, len(cyc), n)
		}
		for i, e := range cyc {
			if nx := cyc[(i+1)%len(cyc)]; e.To != nx.From {
				t.Fatalf("%v: edge %d ends at %d, edge %d starts at %d", m, i, e.To, i+1, nx.From)
			}
			ok := false
			switch e.Kind {
			case SO:
				ok = m != ReadCommitted && e.To == e.From+1
			case WR:
				ok = e.To == e.From+1 && e.Key == 0 || e.From == int32(n-1) && e.To == 0 && e.Key == 1
			}
			if !ok {
				t.Fatalf("%v: edge %d %+v is not an edge of the history", m, i, e)
			}
		}
	}
}
