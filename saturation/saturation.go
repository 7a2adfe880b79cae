package saturation

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Model is the level decided.
type Model uint8

const (
	// ReadCommitted is Adya's PL-2: wr acyclic.
	ReadCommitted Model = iota
	// ReadAtomic is Biswas & Enea's Read Atomic axiom.
	ReadAtomic
	// Causal is Biswas & Enea's Causal axiom.
	Causal
)

func (m Model) String() string {
	return [...]string{"read-committed", "read-atomic", "causal"}[m]
}

// Initial is the source of a read of the initial state.
const Initial int32 = -1

// MaxClockBytes bounds the memory of Causal's vector clocks (n·k
// entries, each one, two or four bytes by the longest session: see
// clockWidth): beyond it Check returns ErrTooManySessions rather than
// exhaust memory. It is the bound the clocks had when every entry was an
// int32 and at most 1<<26 of them were allowed.
const MaxClockBytes = 1 << 28

// ErrTooManySessions is returned for Causal when the clocks would take
// more than MaxClockBytes.
var ErrTooManySessions = errors.New("saturation: too many sessions for causal's vector clocks")

// Read is an external read: the key and the transaction read from.
type Read struct {
	Key  int32
	From int32 // a transaction, or Initial
}

// History is a resolved history of N committed transactions 0..N-1.
type History struct {
	// Session and Pos place each transaction in its session (session
	// order); Sessions lists each session's transactions in order. A
	// transaction without a session has a session of its own.
	Session  []int32
	Pos      []int32
	Sessions [][]int32
	// Reads are each transaction's external reads (a read after the
	// transaction's own write of the key is internal and not listed).
	Reads [][]Read
	// Writes are the keys each transaction writes, sorted, without
	// repeats.
	Writes [][]int32
	Keys   int
	// Orders are version orders a list read shows (Kind VO, with the
	// key and the reader): the appenders it shows, in order, and its
	// last before every other appender of the key. They order writers
	// (ww at ReadCommitted, co at ReadAtomic and Causal) and are not
	// visibility: no axiom premise rests on them.
	Orders []Edge
}

// N is the number of transactions.
func (h *History) N() int { return len(h.Reads) }

// EdgeKind is why an edge of the graph holds.
type EdgeKind uint8

const (
	// SO: From precedes To in their session.
	SO EdgeKind = iota
	// WR: To read Key from From.
	WR
	// Forced: the axiom orders From (a writer of Key in Reader's past)
	// before To (the transaction Reader read Key from; Initial for the
	// initial state).
	Forced
	// InitialFirst closes a cycle through the initial state: it precedes
	// every transaction.
	InitialFirst
	// VO: Reader's list read of Key shows From's version before To's
	// (History.Orders).
	VO
)

func (k EdgeKind) String() string {
	return [...]string{"so", "wr", "forced", "initial", "vo"}[k]
}

// Edge is one edge of a cycle.
type Edge struct {
	From, To int32
	Kind     EdgeKind
	Key      int32 // WR, Forced
	Reader   int32 // Forced: the reader whose read forces the edge
}

// Result is Check's answer.
type Result struct {
	// Valid reports whether the level holds.
	Valid bool
	// Order is a commit order satisfying the axiom (Valid only).
	Order []int32
	// Cycle is a cycle of the model's graph (not Valid only).
	Cycle []Edge
	// ForcedEdges counts the forced edges saturation added.
	ForcedEdges int
}

// graph is an edge list turned into adjacency (CSR) for Kahn's algorithm.
//
// The edges live in chunks of edgeChunk, every chunk full but the last,
// so that adding never copies them: one slice grown by append doubled and
// copied its backing array, and at a million transactions (five million
// forced edges) that was 1.2 GB of allocation, 5 s of CPU, and a peak that
// held the old and the new array together. Only the first chunk grows by
// append (up to edgeChunk), so that tiny histories, decided thousands of
// times when sources are enumerated, stay small.
type graph struct {
	n      int
	chunks [][]Edge
	m      int     // edges
	start  []int32 // per node, into adj
	adj    []int32 // edge indices, grouped by From
}

const (
	edgeShift = 16
	edgeChunk = 1 << edgeShift
)

func (g *graph) add(e Edge) {
	if len(g.chunks) == 0 {
		g.chunks = append(g.chunks, make([]Edge, 0, 64))
	}
	c := &g.chunks[len(g.chunks)-1]
	if len(*c) == edgeChunk {
		g.chunks = append(g.chunks, make([]Edge, 0, edgeChunk))
		c = &g.chunks[len(g.chunks)-1]
	}
	*c = append(*c, e)
	g.m++
}

// edge is edge i (in the order added).
func (g *graph) edge(i int32) *Edge { return &g.chunks[i>>edgeShift][i&(edgeChunk-1)] }

func (g *graph) build() {
	g.start = make([]int32, g.n+1)
	for _, c := range g.chunks {
		for i := range c {
			g.start[c[i].From+1]++
		}
	}
	for i := 1; i <= g.n; i++ {
		g.start[i] += g.start[i-1]
	}
	g.adj = make([]int32, g.m)
	fill := slices.Clone(g.start[:g.n])
	for ci, c := range g.chunks {
		for i := range c {
			f := c[i].From
			g.adj[fill[f]] = int32(ci<<edgeShift + i)
			fill[f]++
		}
	}
}

// topo returns a topological order, or ok=false and a shortest cycle
// through some node left over by Kahn's algorithm.
func (g *graph) topo() (order []int32, cycle []Edge, ok bool) {
	g.build()
	indeg := make([]int32, g.n)
	for _, c := range g.chunks {
		for i := range c {
			indeg[c[i].To]++
		}
	}
	order = make([]int32, 0, g.n)
	for v := range g.n {
		if indeg[v] == 0 {
			order = append(order, int32(v))
		}
	}
	for i := 0; i < len(order); i++ {
		v := order[i]
		for _, ei := range g.adj[g.start[v]:g.start[v+1]] {
			w := g.edge(ei).To
			indeg[w]--
			if indeg[w] == 0 {
				order = append(order, w)
			}
		}
	}
	if len(order) == g.n {
		return order, nil, true
	}
	// Every node left has an in-edge from another node left; a DFS from
	// one of them along left nodes reaches a node on a cycle. Then the
	// shortest cycle through that node (BFS) is what is reported: short
	// cycles make short explanations and small cores.
	left := indeg // > 0 exactly for the nodes left
	v := g.cycleNode(left)
	return nil, g.shortestCycle(v, left), false
}

// cycleNode finds a node on a cycle among the nodes with left[v] > 0.
func (g *graph) cycleNode(left []int32) int32 {
	const (
		white = 0
		grey  = 1
		black = 2
	)
	color := make([]uint8, g.n)
	type frame struct{ v, i int32 }
	for s := range g.n {
		if left[s] <= 0 || color[s] != white {
			continue
		}
		stack := []frame{{int32(s), g.start[s]}}
		color[s] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.i == g.start[f.v+1] {
				color[f.v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			w := g.edge(g.adj[f.i]).To
			f.i++
			if left[w] <= 0 {
				continue
			}
			switch color[w] {
			case grey:
				return w
			case white:
				color[w] = grey
				stack = append(stack, frame{w, g.start[w]})
			}
		}
	}
	panic("saturation: Kahn left nodes but no cycle was found")
}

// shortestCycle is a shortest cycle through v among the nodes left.
func (g *graph) shortestCycle(v int32, left []int32) []Edge {
	via := map[int32]int32{} // node -> edge index it was reached by
	queue := []int32{v}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, ei := range g.adj[g.start[u]:g.start[u+1]] {
			w := g.edge(ei).To
			if left[w] <= 0 {
				continue
			}
			if w == v {
				cyc := []Edge{*g.edge(ei)}
				for x := u; x != v; {
					e := *g.edge(via[x])
					cyc = append(cyc, e)
					x = e.From
				}
				slices.Reverse(cyc)
				return cyc
			}
			if _, seen := via[w]; !seen {
				via[w] = ei
				queue = append(queue, w)
			}
		}
	}
	panic("saturation: no cycle through a node on a cycle")
}

// baseEdges adds so (unless m is ReadCommitted), wr and the list reads'
// version orders. A read of the initial state adds no edge: the initial
// state precedes everything.
func baseEdges(h *History, m Model, g *graph) {
	for _, e := range h.Orders {
		g.add(e)
	}
	if m != ReadCommitted {
		for _, s := range h.Sessions {
			for i := 1; i < len(s); i++ {
				g.add(Edge{From: s[i-1], To: s[i], Kind: SO, Key: -1, Reader: -1})
			}
		}
	}
	for t, rs := range h.Reads {
		for _, r := range rs {
			if r.From != Initial && r.From != int32(t) {
				g.add(Edge{From: r.From, To: int32(t), Kind: WR, Key: r.Key, Reader: -1})
			}
		}
	}
}

// Check decides h at m.
func Check(h *History, m Model) (*Result, error) { return check(h, m, 0) }

// check is Check with Causal's clock width forced (0: clockWidth's).
func check(h *History, m Model, width int) (*Result, error) {
	n := h.N()
	g := &graph{n: n}
	baseEdges(h, m, g)
	order, cycle, ok := g.topo()
	if !ok || m == ReadCommitted {
		return &Result{Valid: ok, Order: order, Cycle: cycle}, nil
	}
	base := g.m
	var initCycle []Edge
	switch m {
	case ReadAtomic:
		initCycle = saturateRA(h, g)
	case Causal:
		var err error
		initCycle, err = saturateCausal(h, g, order, width)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("saturation: unknown model %d", m)
	}
	forced := g.m - base
	if initCycle != nil {
		return &Result{Cycle: initCycle, ForcedEdges: forced}, nil
	}
	order, cycle, ok = g.topo()
	return &Result{Valid: ok, Order: order, Cycle: cycle, ForcedEdges: forced}, nil
}

// intoInitial is the cycle of a forced edge t1 -> Initial.
func intoInitial(t1, reader, key int32) []Edge {
	return []Edge{
		{From: t1, To: Initial, Kind: Forced, Key: key, Reader: reader},
		{From: Initial, To: t1, Kind: InitialFirst, Key: -1, Reader: -1},
	}
}

// saturateRA adds the edges Read Atomic forces: for each reader t3, each
// predecessor t1 (an earlier transaction of t3's session or a transaction
// t3 read from) and each key x that t1 writes and t3 reads from t2 != t1,
// the edge t1 -> t2. It returns a cycle at once when t2 is the initial state.
func saturateRA(h *History, g *graph) []Edge {
	// Session order is transitive: every earlier transaction of t3's
	// session precedes it. Per key only the session's last writer before
	// t3 needs an edge (the earlier ones precede that writer in so ⊆ co),
	// so each session is walked once with the last writer of every key;
	// stamp marks the entries of the current session.
	last := make([]int32, h.Keys)
	stamp := make([]int32, h.Keys)
	for s, txns := range h.Sessions {
		for _, t3 := range txns {
			for _, r := range h.Reads[t3] {
				if stamp[r.Key] != int32(s)+1 {
					continue
				}
				t1 := last[r.Key]
				if t1 == r.From {
					continue
				}
				if r.From == Initial {
					return intoInitial(t1, t3, r.Key)
				}
				g.add(Edge{From: t1, To: r.From, Kind: Forced, Key: r.Key, Reader: t3})
			}
			for _, x := range h.Writes[t3] {
				last[x], stamp[x] = t3, int32(s)+1
			}
		}
	}
	var preds []int32
	// wrote[x] == t1+1 while t1's writes are marked: one pass over t1's
	// writes instead of a search of them per read.
	wrote := stamp
	clear(wrote)
	for t3 := range int32(h.N()) {
		rs := h.Reads[t3]
		if len(rs) == 0 {
			continue
		}
		preds = preds[:0]
		for _, r := range rs {
			if r.From != Initial {
				preds = append(preds, r.From)
			}
		}
		slices.Sort(preds)
		preds = slices.Compact(preds)
		for _, t1 := range preds {
			if t1 == t3 {
				continue
			}
			for _, x := range h.Writes[t1] {
				wrote[x] = t1 + 1
			}
			for _, r := range rs {
				if r.From == t1 || wrote[r.Key] != t1+1 {
					continue
				}
				if r.From == Initial {
					return intoInitial(t1, t3, r.Key)
				}
				g.add(Edge{From: t1, To: r.From, Kind: Forced, Key: r.Key, Reader: t3})
			}
		}
	}
	return nil
}

// clock is the type of one vector clock entry: a prefix length of a
// session, at most the session's length.
type clock interface{ uint8 | uint16 | int32 }

// clockWidth is the bytes a clock entry needs for h: an entry holds a
// session's prefix length, 0 to its length, so the longest session
// decides (docs/SEMANTICS.md §3 "Causal's clocks as narrow as the
// sessions are short"). At a thousand sessions the n·k entries are the
// check's memory, and AWDIT's generator writes about two hundred
// transactions a session: one byte an entry where four made the clocks
// exceed their bound.
func clockWidth(h *History) int {
	longest := 0
	for _, s := range h.Sessions {
		longest = max(longest, len(s))
	}
	switch {
	case longest <= math.MaxUint8:
		return 1
	case longest <= math.MaxUint16:
		return 2
	}
	return 4
}

// saturateCausal adds the edges Causal forces, with vector clocks over
// the sessions computed along order (a topological order of so ∪ wr):
// vc[t][s] is the length of session s's prefix in t's causal past, t
// included. Its entries are as narrow as the longest session allows
// (clockWidth); width, when not 0, forces one (tests: 4 is the int32
// clocks the narrow ones are held to).
func saturateCausal(h *History, g *graph, order []int32, width int) ([]Edge, error) {
	n, k := h.N(), len(h.Sessions)
	if width == 0 {
		width = clockWidth(h)
	}
	if int64(n)*int64(k)*int64(width) > MaxClockBytes {
		return nil, fmt.Errorf("%w: %d transactions × %d sessions × %d bytes", ErrTooManySessions, n, k, width)
	}
	switch width {
	case 1:
		return saturateCausalW[uint8](h, g, order)
	case 2:
		return saturateCausalW[uint16](h, g, order)
	}
	return saturateCausalW[int32](h, g, order)
}

// clocks are the vector clocks of h's transactions, computed along
// order (a topological order of so ∪ wr): row t (k entries from t·k) is,
// per session, the length of its prefix in t's causal past, t included.
func clocks[C clock](h *History, order []int32) []C {
	k := len(h.Sessions)
	vc := make([]C, h.N()*k)
	row := func(t int32) []C { return vc[int(t)*k : int(t)*k+k] }
	for _, t := range order {
		r := row(t)
		if p := h.Pos[t]; p > 0 {
			copy(r, row(h.Sessions[h.Session[t]][p-1]))
		}
		for _, rd := range h.Reads[t] {
			if rd.From == Initial || rd.From == t {
				continue
			}
			if int32(r[h.Session[rd.From]]) > h.Pos[rd.From] {
				// The source is in the past joined so far (a repeated
				// source, or one an earlier source or the session
				// predecessor saw): its clock is below r already, and
				// the join, k entries, would change nothing
				// (docs/SEMANTICS.md §3 "Causal's clocks as narrow as
				// the sessions are short").
				continue
			}
			join(r, row(rd.From))
		}
		r[h.Session[t]] = C(h.Pos[t] + 1)
	}
	return vc
}

// join sets r to the entrywise maximum of r and c (of one length). One-
// and two-byte entries are compared eight or four at a time in a word
// (joinWords): at a thousand sessions the joins were the largest part of
// the check.
func join[C clock](r, c []C) {
	switch rb := any(r).(type) {
	case []uint8:
		joinWords(rb, any(c).([]uint8))
	case []uint16:
		cw := any(c).([]uint16)
		i := 0
		for ; i+4 <= len(rb); i += 4 {
			a := uint64(rb[i]) | uint64(rb[i+1])<<16 | uint64(rb[i+2])<<32 | uint64(rb[i+3])<<48
			b := uint64(cw[i]) | uint64(cw[i+1])<<16 | uint64(cw[i+2])<<32 | uint64(cw[i+3])<<48
			m := maxLanes(a, b, 0x8000800080008000, 15, 0xFFFF)
			rb[i], rb[i+1], rb[i+2], rb[i+3] = uint16(m), uint16(m>>16), uint16(m>>32), uint16(m>>48)
		}
		for ; i < len(rb); i++ {
			rb[i] = max(rb[i], cw[i])
		}
	default:
		for s, v := range c {
			r[s] = max(r[s], v)
		}
	}
}

// joinWords is join for one-byte entries, eight at a time.
func joinWords(r, c []uint8) {
	i := 0
	for ; i+8 <= len(r); i += 8 {
		m := maxLanes(binary.LittleEndian.Uint64(r[i:]), binary.LittleEndian.Uint64(c[i:]), 0x8080808080808080, 7, 0xFF)
		binary.LittleEndian.PutUint64(r[i:], m)
	}
	for ; i < len(r); i++ {
		r[i] = max(r[i], c[i])
	}
}

// maxLanes is the unsigned maximum of a's and b's lanes, each lane a run
// of bits whose top bit is set in high (shift: the lane width minus one;
// ones: a lane of ones). Per lane, a >= b when a's top bit is set and
// b's not, or the top bits agree and a's low bits are at least b's:
// (a | high) - (b &^ high) subtracts low bits from low bits plus the top
// bit, which never borrows from the next lane (every lane's difference
// is 1 to 2^w - 1), and leaves the top bit set exactly when a's low bits
// are at least b's.
func maxLanes(a, b, high uint64, shift uint, ones uint64) uint64 {
	lowGE := (a | high) - (b &^ high)
	ge := ((a &^ b) | (^(a ^ b) & lowGE)) & high
	mask := (ge >> shift) * ones
	return a&mask | b&^mask
}

// saturateCausalW is saturateCausal with entries of type C, which must
// hold the longest session's length.
func saturateCausalW[C clock](h *History, g *graph, order []int32) ([]Edge, error) {
	n, k := h.N(), len(h.Sessions)
	vc := clocks[C](h, order)
	row := func(t int32) []C { return vc[int(t)*k : int(t)*k+k] }
	// Per key, its writers grouped by session in session order, all in
	// one array (a key's groups, then their positions, contiguous): a
	// read visits every group of its key, and separate slices per group
	// cost a cache miss each.
	type group struct{ session, lo, hi int32 } // pos[lo:hi]
	nw := make([]int32, h.Keys+1)              // writes per key, then offsets
	ng := make([]int32, h.Keys+1)              // groups per key, then offsets
	lastS := make([]int32, h.Keys)
	for i := range lastS {
		lastS[i] = -1
	}
	for s, txns := range h.Sessions {
		for _, t := range txns {
			for _, x := range h.Writes[t] {
				nw[x+1]++
				if lastS[x] != int32(s) {
					lastS[x] = int32(s)
					ng[x+1]++
				}
			}
		}
	}
	for x := range h.Keys {
		nw[x+1] += nw[x]
		ng[x+1] += ng[x]
	}
	groups := make([]group, ng[h.Keys])
	allPos := make([]int32, nw[h.Keys])
	gFill := slices.Clone(ng[:h.Keys])
	for i := range lastS {
		lastS[i] = -1
	}
	for s, txns := range h.Sessions {
		for _, t := range txns {
			for _, x := range h.Writes[t] {
				if lastS[x] != int32(s) {
					lastS[x] = int32(s)
					at := nw[x]
					if gFill[x] > ng[x] {
						at = groups[gFill[x]-1].hi
					}
					groups[gFill[x]] = group{session: int32(s), lo: at, hi: at}
					gFill[x]++
				}
				gr := &groups[gFill[x]-1]
				allPos[gr.hi] = h.Pos[t]
				gr.hi++
			}
		}
	}
	for t3 := range int32(n) {
		r := row(t3)
		for _, rd := range h.Reads[t3] {
			var w []C // t2's clock (nil: the initial state)
			if rd.From != Initial && rd.From != t3 {
				w = row(rd.From)
			}
			for _, gr := range groups[ng[rd.Key]:ng[rd.Key+1]] {
				limit := int32(r[gr.session])
				if gr.session == h.Session[t3] {
					limit = h.Pos[t3] // strictly before t3
				}
				if w != nil && limit <= int32(w[gr.session]) {
					// Every writer of the session in t3's past is in
					// t2's past too (t3 read from t2, so its prefix of
					// the session is at least t2's): the edge below
					// would be skipped. Most sessions end here, without
					// the search.
					continue
				}
				// The session's last writer of the key in t3's past.
				pos := allPos[gr.lo:gr.hi]
				i, _ := slices.BinarySearch(pos, limit)
				if i == 0 {
					continue
				}
				if w != nil && int32(w[gr.session]) > pos[i-1] {
					// In t2's past (t2 itself included): the test
					// below, made before the session's array is read
					// (a cache miss a read and session otherwise).
					continue
				}
				t1 := h.Sessions[gr.session][pos[i-1]]
				if t1 == rd.From || t1 == t3 {
					continue
				}
				if rd.From == Initial {
					return intoInitial(t1, t3, rd.Key), nil
				}
				if int32(row(rd.From)[gr.session]) > pos[i-1] {
					// t1 is already in t2's causal past: a path of so
					// and wr edges orders it, and the edge would only
					// repeat that (up to k edges a read otherwise: at a
					// million transactions and 32 sessions, gigabytes).
					continue
				}
				g.add(Edge{From: t1, To: rd.From, Kind: Forced, Key: rd.Key, Reader: t3})
			}
		}
	}
	return nil, nil
}

// Path returns a path of so (unless m is ReadCommitted) and wr edges from
// a to b, or nil if b is not reachable from a: the causal past that
// justifies a forced edge.
func Path(h *History, m Model, a, b int32) []Edge {
	if a == b {
		return []Edge{}
	}
	// Backwards BFS from b over its direct predecessors.
	via := map[int32]Edge{}
	queue := []int32{b}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		var in []Edge
		if m != ReadCommitted && h.Pos[v] > 0 {
			in = append(in, Edge{From: h.Sessions[h.Session[v]][h.Pos[v]-1], To: v, Kind: SO, Key: -1, Reader: -1})
		}
		for _, r := range h.Reads[v] {
			if r.From != Initial && r.From != v {
				in = append(in, Edge{From: r.From, To: v, Kind: WR, Key: r.Key, Reader: -1})
			}
		}
		for _, e := range in {
			if _, seen := via[e.From]; seen || e.From == b {
				continue
			}
			via[e.From] = e
			if e.From == a {
				var p []Edge
				for x := a; x != b; {
					e := via[x]
					p = append(p, e)
					x = e.To
				}
				return p
			}
			queue = append(queue, e.From)
		}
	}
	return nil
}
