package cnfgen

import (
	"fmt"
	"math/bits"

	"github.com/streamcheck/streamcheck/solver"
)

// rng is SplitMix64; see the package comment for why it is not math/rand.
type rng struct{ s uint64 }

func newRNG(seed uint64) *rng { return &rng{s: seed} }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n) by Lemire's multiply-shift; the bias of at
// most n/2^64 does not matter for test instances.
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int(hi)
}

func (r *rng) coin() bool { return r.next()>>63 == 1 }

// signed returns v or -v with equal probability.
func (r *rng) signed(v int) int {
	if r.coin() {
		return -v
	}
	return v
}

// RandomKSAT returns a uniform random k-SAT formula over n variables with
// round(ratio*n) clauses, each of k distinct variables with random signs.
// At k=3 the satisfiability threshold is near ratio 4.26. It panics when
// k > n or k < 1, which are caller bugs.
func RandomKSAT(k, n int, ratio float64, seed uint64) *solver.CNF {
	if k < 1 || k > n {
		panic(fmt.Sprintf("cnfgen: RandomKSAT needs 1 <= k <= n, got k=%d n=%d", k, n))
	}
	m := int(ratio*float64(n) + 0.5)
	r := newRNG(seed)
	c := &solver.CNF{NumVars: n, Clauses: make([][]int, 0, m)}
	flat := make([]int, 0, m*k)
	for range m {
		beg := len(flat)
	pick:
		for len(flat)-beg < k {
			v := 1 + r.intn(n)
			for _, l := range flat[beg:] {
				if l == v || l == -v {
					continue pick
				}
			}
			flat = append(flat, r.signed(v))
		}
		c.Clauses = append(c.Clauses, flat[beg:len(flat):len(flat)])
	}
	return c
}

// Pigeonhole returns PHP(holes+1, holes): holes+1 pigeons, each in some
// hole, no two in one hole. It is unsatisfiable and needs resolution proofs
// exponential in holes (Haken 1985), so it measures raw CDCL search speed.
// Variable p*holes+h+1 means pigeon p sits in hole h.
func Pigeonhole(holes int) *solver.CNF {
	pigeons := holes + 1
	v := func(p, h int) int { return p*holes + h + 1 }
	c := &solver.CNF{NumVars: pigeons * holes}
	for p := range pigeons {
		cl := make([]int, holes)
		for h := range holes {
			cl[h] = v(p, h)
		}
		c.Clauses = append(c.Clauses, cl)
	}
	for h := range holes {
		for p := range pigeons {
			for q := p + 1; q < pigeons; q++ {
				c.Clauses = append(c.Clauses, []int{-v(p, h), -v(q, h)})
			}
		}
	}
	return c
}

// Parity returns two Tseitin-encoded XOR chains over the same n variables,
// taken in two independent random orders. The first chain says the XOR of
// all n is 1; the second says it is 1 when sat is true and 0 otherwise, so
// the formula is satisfiable iff sat. Unit propagation cannot see that the
// chains agree; CDCL must learn it (Urquhart 1987 for why it is hard).
// Variables: 1..n are the inputs, then 2(n-1) chain outputs.
func Parity(n int, sat bool, seed uint64) *solver.CNF {
	if n < 2 {
		panic(fmt.Sprintf("cnfgen: Parity needs n >= 2, got %d", n))
	}
	r := newRNG(seed)
	c := &solver.CNF{NumVars: n}
	chain := func(parity bool) {
		perm := permutation(r, n)
		acc := perm[0] + 1
		for _, x := range perm[1:] {
			c.NumVars++
			t := c.NumVars
			xorClauses(c, t, acc, x+1)
			acc = t
		}
		if parity {
			c.Clauses = append(c.Clauses, []int{acc})
		} else {
			c.Clauses = append(c.Clauses, []int{-acc})
		}
	}
	chain(true)
	chain(sat)
	return c
}

// xorClauses adds t <-> a XOR b.
func xorClauses(c *solver.CNF, t, a, b int) {
	c.Clauses = append(c.Clauses,
		[]int{-t, a, b}, []int{-t, -a, -b}, []int{t, -a, b}, []int{t, a, -b})
}

// permutation returns a uniform permutation of 0..n-1 (Fisher-Yates).
func permutation(r *rng, n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Coloring returns "color a random graph of n vertices and m edges with k
// colors". With planted, every vertex first gets a hidden color and edges
// join only differently colored vertices, so the formula is satisfiable;
// without, the answer depends on the graph (near m = 2.35n for k=3 about half
// are colorable). Variable v*k+col+1 means vertex v has color col. Duplicate
// edges may occur; they only repeat clauses.
func Coloring(n, m, k int, planted bool, seed uint64) *solver.CNF {
	if n < 2 || k < 1 {
		panic(fmt.Sprintf("cnfgen: Coloring needs n >= 2 and k >= 1, got n=%d k=%d", n, k))
	}
	r := newRNG(seed)
	x := func(v, col int) int { return v*k + col + 1 }
	hidden := make([]int, n)
	for v := range hidden {
		hidden[v] = r.intn(k)
	}
	c := &solver.CNF{NumVars: n * k}
	for v := range n {
		cl := make([]int, k)
		for col := range k {
			cl[col] = x(v, col)
			for d := col + 1; d < k; d++ {
				c.Clauses = append(c.Clauses, []int{-x(v, col), -x(v, d)})
			}
		}
		c.Clauses = append(c.Clauses, cl)
	}
	for added := 0; added < m; {
		u, v := r.intn(n), r.intn(n)
		if u == v || (planted && hidden[u] == hidden[v]) {
			if planted && k == 1 {
				break // no edge can be planted between equal colors
			}
			continue
		}
		for col := range k {
			c.Clauses = append(c.Clauses, []int{-x(u, col), -x(v, col)})
		}
		added++
	}
	return c
}

// PolygraphParams shapes a Polygraph instance.
type PolygraphParams struct {
	// Nodes are transactions; Sessions split them round robin into chains
	// of base edges (session order). Few sessions give long chains.
	Nodes, Sessions int
	// Constraints is the number of choice variables; each picks one of two
	// edge sets of 1..SetSize edges (a write-write order and what follows
	// from it).
	Constraints, SetSize int
	// AntiDeps is the number of `e2` edges, each present iff two random
	// choice literals both hold (read-from choice AND version order imply
	// an anti-dependency).
	AntiDeps int
	// Clauses is the number of random 3-clauses over the choice variables,
	// standing for the other constraints a checker would add.
	Clauses int
	// Planted makes the instance satisfiable: a hidden serial order and a
	// hidden assignment are drawn first and every edge that is present
	// under that assignment points forward in that order.
	Planted bool
	Seed    uint64
	_       struct{}
}

// Polygraph returns an acyclicity-theory instance shaped like the
// polygraphs of VeriStrong §4 and Vbox §3: session chains as base edges, one
// variable per pair of alternative edge sets (`e` lines with x and -x), and
// anti-dependency edges guarded by two literals (`e2`).
func Polygraph(p PolygraphParams) *solver.CNF {
	if p.Nodes < 2 || p.Sessions < 1 || p.SetSize < 1 {
		panic(fmt.Sprintf("cnfgen: Polygraph needs Nodes >= 2, Sessions >= 1, SetSize >= 1, got %+v", p))
	}
	r := newRNG(p.Seed)
	c := &solver.CNF{NumVars: p.Constraints, NumNodes: p.Nodes}
	// pos is the hidden serial order: a random interleaving of the sessions,
	// so that it extends every session chain.
	pos := make([]int, p.Nodes)
	{
		next := make([]int, p.Sessions) // next unplaced node of each session
		for s := range next {
			next[s] = s
		}
		for i := range p.Nodes {
			s := r.intn(p.Sessions)
			for next[s] >= p.Nodes {
				s = (s + 1) % p.Sessions
			}
			pos[next[s]] = i
			next[s] += p.Sessions
		}
	}
	for n := p.Sessions; n < p.Nodes; n++ {
		c.Edges = append(c.Edges, solver.CNFEdge{From: n - p.Sessions, To: n})
	}
	hidden := make([]bool, p.Constraints+1)
	for v := 1; v <= p.Constraints; v++ {
		hidden[v] = r.coin()
	}
	holds := func(l int) bool {
		if l < 0 {
			return !hidden[-l]
		}
		return hidden[l]
	}
	// pair draws two distinct nodes, oriented along pos when forward.
	pair := func(forward bool) (int, int) {
		u := r.intn(p.Nodes)
		v := r.intn(p.Nodes - 1)
		if v >= u {
			v++
		}
		if forward && pos[u] > pos[v] {
			u, v = v, u
		}
		return u, v
	}
	for x := 1; x <= p.Constraints; x++ {
		for _, lit := range []int{x, -x} {
			for range 1 + r.intn(p.SetSize) {
				u, v := pair(p.Planted && holds(lit))
				c.Edges = append(c.Edges, solver.CNFEdge{A: lit, From: u, To: v})
			}
		}
	}
	if p.Constraints > 0 {
		for range p.AntiDeps {
			a, b := r.signed(1+r.intn(p.Constraints)), r.signed(1+r.intn(p.Constraints))
			u, v := pair(p.Planted && holds(a) && holds(b))
			c.Edges = append(c.Edges, solver.CNFEdge{A: a, B: b, From: u, To: v})
		}
	}
	if p.Constraints >= 3 {
		for range p.Clauses {
			cl := make([]int, 0, 3)
		pick:
			for len(cl) < 3 {
				v := 1 + r.intn(p.Constraints)
				for _, l := range cl {
					if l == v || l == -v {
						continue pick
					}
				}
				cl = append(cl, r.signed(v))
			}
			if p.Planted && !holds(cl[0]) && !holds(cl[1]) && !holds(cl[2]) {
				cl[r.intn(3)] *= -1 // make the hidden assignment a witness
			}
			c.Clauses = append(c.Clauses, cl)
		}
	}
	return c
}

// ExpandAcyclicity returns a plain formula (no nodes, no edges) that is
// satisfiable iff c is, for solvers without the theory. It adds one variable
// per pair of nodes that occur in edges, o(i,j) for i < j meaning "i before
// j" in a strict total order, forbids the two cyclic orientations of every
// triple (which makes the order transitive), and adds, for each edge u->v
// guarded by literals L, the clause (not L or before(u,v)). Variables 1..
// c.NumVars keep their meaning, so a model of the result restricted to them
// is a model of c.
func ExpandAcyclicity(c *solver.CNF) *solver.CNF {
	out := &solver.CNF{NumVars: c.NumVars, Clauses: make([][]int, 0, len(c.Clauses)+len(c.Edges))}
	out.Clauses = append(out.Clauses, c.Clauses...)
	// Only nodes that appear on edges need an order position; idx renumbers
	// them densely.
	idx := make(map[int]int)
	for _, e := range c.Edges {
		if e.From == e.To {
			continue
		}
		for _, n := range []int{e.From, e.To} {
			if _, ok := idx[n]; !ok {
				idx[n] = len(idx)
			}
		}
	}
	n := len(idx)
	base := out.NumVars
	out.NumVars += n * (n - 1) / 2
	// o returns the variable of the pair i < j in row-major upper-triangle
	// order.
	o := func(i, j int) int { return base + i*(2*n-i-1)/2 + (j - i - 1) + 1 }
	before := func(i, j int) int {
		if i < j {
			return o(i, j)
		}
		return -o(j, i)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			for k := j + 1; k < n; k++ {
				// not (i<j<k<i) and not (i<k<j<i)
				out.Clauses = append(out.Clauses,
					[]int{-before(i, j), -before(j, k), -before(k, i)},
					[]int{-before(i, k), -before(k, j), -before(j, i)})
			}
		}
	}
	for _, e := range c.Edges {
		cl := make([]int, 0, 3)
		for _, l := range []int{e.A, e.B} {
			if l != 0 {
				cl = append(cl, -l)
			}
		}
		if e.From != e.To {
			cl = append(cl, before(idx[e.From], idx[e.To]))
		}
		out.Clauses = append(out.Clauses, cl)
	}
	return out
}
