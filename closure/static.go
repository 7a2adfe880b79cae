package closure

import "container/heap"

// Static is a reachability index of a fixed DAG for the offline pruning
// loop (Vbox §4-5: decide a constraint when one of its sides closes a
// cycle with the known edges). Unlike Closure it needs no timestamps: the
// band is taken over a topological order instead of over time, so a
// history without client clocks still gets rows of bounded width.
//
// Reaches is SOUND BUT NOT COMPLETE: true means a path exists; false means
// no path was found, which is certain only within the band. That is all a
// pruning rule may use: a constraint is decided only on a proven path, and
// an undecided one is left to the solver, which is exact on its own.
//
//   - pos is a topological order (Kahn's algorithm, smallest node first, so
//     nodes created in history order keep their order and rows stay local).
//     u reaches v only if pos(u) < pos(v): false at once otherwise, and this
//     part is exact.
//   - Band: row u holds, exactly, the nodes u reaches whose position is
//     within [word(pos u), word(pos u) + bandWords) in 64-position words.
//     Rows are aligned to words, so a successor's row ORs into its
//     predecessor's word by word (the closure package's row layout).
//     Every inner node of a path from u to v with v in u's band lies
//     between them in pos, so v is in its band too: exact by induction in
//     reverse topological order.
//   - Landmarks: every stride-th node in pos. out(u) is the set of
//     landmarks u reaches (u itself included), in(v) the set reaching v (v
//     included); a shared landmark is a proven path u ->* l ->* v. Both are
//     one dynamic program over pos, O(|E|·L/64) words.
//
// Memory: n·(bandWords + 2·L/64) words. Build: O(|V| log |V| + |E|·(bandWords
// + L/64)). Query: O(1) in the band, O(L/64) beyond it.
type Static struct {
	pos       []int32
	rows      []uint64 // n*bandWords, by position
	out, in   []uint64 // n*lw, by position
	lw        int      // landmark words
	bandWords int
}

// staticBandWords is the band width in 64-position words (4,096
// positions: on generated histories without timestamps most pairs a
// known path orders are 512-4,096 positions apart, and landmarks prove
// few of them; a band of 1,024 left 2.7 times the pairs undecided at 10K).
// Above staticWideLimit nodes the band narrows to staticNarrowWords, so
// that the rows stay at 128 bytes a node (the landmarks add up to 128).
const (
	staticBandWords   = 64
	staticNarrowWords = 16
	staticWideLimit   = 250000
)

// NewStatic builds the index of the graph on nodes 0..n-1 with the given
// edges. It returns nil if the graph has a cycle (then no constraint can be
// decided by it: the instance is unsatisfiable and the solver proves it).
func NewStatic(n int, edges [][2]int32) *Static {
	w := staticBandWords
	if n > staticWideLimit {
		w = staticNarrowWords
	}
	return newStatic(n, edges, w, 0)
}

// newStatic takes the band width and the landmark count (0: about one per
// 256 nodes, 64 to 512) as parameters, so that tests reach the landmark
// path on small graphs.
func newStatic(n int, edges [][2]int32, bandWords, landmarks int) *Static {
	order, deg, adj := TopoOrder(n, edges)
	if order == nil {
		return nil
	}
	s := &Static{pos: make([]int32, n), bandWords: bandWords}
	for i, v := range order {
		s.pos[v] = int32(i)
	}
	// Landmarks: about one per 256 positions, between 64 and 512.
	lm := landmarks
	if lm <= 0 {
		lm = min(max(n/256, 64), 512)
	}
	lm = (lm + 63) / 64 * 64
	s.lw = lm / 64
	stride := max(1, (n+lm-1)/lm)
	W := s.bandWords
	s.rows = make([]uint64, n*W)
	s.out = make([]uint64, n*s.lw)
	s.in = make([]uint64, n*s.lw)
	// Reverse topological order: rows and out.
	for i := n - 1; i >= 0; i-- {
		u := order[i]
		row := s.rows[i*W : (i+1)*W]
		base := i / 64
		out := s.out[i*s.lw : (i+1)*s.lw]
		if i%stride == 0 {
			l := i / stride
			out[l/64] |= 1 << (l % 64)
		}
		for _, w := range adj[deg[u]:deg[u+1]] {
			j := int(s.pos[w])
			d := j/64 - base
			if d >= W {
				// Beyond the band; its landmarks still count.
			} else {
				row[d] |= 1 << (j % 64)
				wrow := s.rows[j*W : (j+1)*W]
				for k := 0; d+k < W; k++ {
					row[d+k] |= wrow[k]
				}
			}
			wout := s.out[j*s.lw : (j+1)*s.lw]
			for k := range out {
				out[k] |= wout[k]
			}
		}
	}
	// Topological order: in.
	for i := 0; i < n; i++ {
		u := order[i]
		in := s.in[i*s.lw : (i+1)*s.lw]
		if i%stride == 0 {
			l := i / stride
			in[l/64] |= 1 << (l % 64)
		}
		for _, w := range adj[deg[u]:deg[u+1]] {
			j := int(s.pos[w])
			win := s.in[j*s.lw : (j+1)*s.lw]
			for k := range win {
				win[k] |= in[k]
			}
		}
	}
	return s
}

// Pos is v's position in the index's topological order.
func (s *Static) Pos(v int32) int32 { return s.pos[v] }

// Reaches reports a proven path from u to v (u != v). False may be a miss
// beyond the band; see the type's comment.
func (s *Static) Reaches(u, v int32) bool {
	i, j := int(s.pos[u]), int(s.pos[v])
	if j <= i {
		return false
	}
	W := s.bandWords
	if d := j/64 - i/64; d < W {
		return s.rows[i*W+d]&(1<<(j%64)) != 0
	}
	out, in := s.out[i*s.lw:(i+1)*s.lw], s.in[j*s.lw:(j+1)*s.lw]
	for k := range out {
		if out[k]&in[k] != 0 {
			return true
		}
	}
	return false
}

type int32Heap struct{ s []int32 }

func (h *int32Heap) Len() int           { return len(h.s) }
func (h *int32Heap) Less(i, j int) bool { return h.s[i] < h.s[j] }
func (h *int32Heap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *int32Heap) Push(x any)         { h.s = append(h.s, x.(int32)) }
func (h *int32Heap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}

// TopoOrder returns the nodes 0..n-1 of the graph in a topological
// order, the smallest ready node first (Kahn's algorithm with a heap), so
// that nodes numbered in a meaningful order keep it wherever the edges
// allow; nil if the graph has a cycle. It also returns the adjacency in
// CSR form (adj[deg[v]:deg[v+1]] are v's successors).
func TopoOrder(n int, edges [][2]int32) (order, deg, adj []int32) {
	// CSR adjacency.
	deg = make([]int32, n+1)
	indeg := make([]int32, n)
	for _, e := range edges {
		deg[e[0]+1]++
		indeg[e[1]]++
	}
	for i := 1; i <= n; i++ {
		deg[i] += deg[i-1]
	}
	adj = make([]int32, len(edges))
	next := append([]int32(nil), deg[:n]...)
	for _, e := range edges {
		adj[next[e[0]]] = e[1]
		next[e[0]]++
	}
	next = nil
	// Kahn, smallest ready node first.
	order = make([]int32, 0, n)
	h := &int32Heap{}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			h.s = append(h.s, int32(v))
		}
	}
	heap.Init(h)
	for h.Len() > 0 {
		v := heap.Pop(h).(int32)
		order = append(order, v)
		for _, w := range adj[deg[v]:deg[v+1]] {
			indeg[w]--
			if indeg[w] == 0 {
				heap.Push(h, w)
			}
		}
	}
	if len(order) != n {
		return nil, nil, nil
	}
	return order, deg, adj
}
