package closure

import (
	"fmt"
	"math"
)

// Build is the batch constructor (Purdom+, Vbox §3.4.2 Algorithm 2): from
// intervals (in adjStart order under RealTime; transaction i gets ID i) and
// edges, it returns the closure, or nil and a cycle if the graph (edges plus
// time edges) has one. The result answers every query exactly as the same
// intervals appended and the same edges added one by one would.
func Build(opts Options, intervals []Interval, edges []Pair) (*Closure, []Hop) {
	c := New(opts)
	for _, iv := range intervals {
		c.Append(iv.AdjStart, iv.AdjEnd)
	}
	n := len(intervals)
	// Carve every adjacency list out of two slabs (one allocation each
	// instead of a few per transaction).
	deg := make([]int32, 2*n)
	for _, e := range edges {
		if e.From < 0 || int(e.From) >= n || e.To < 0 || int(e.To) >= n {
			panic(fmt.Sprintf("closure: edge t%d->t%d out of range", e.From, e.To))
		}
		if e.From == e.To {
			return nil, []Hop{{From: e.From, To: e.To, Kind: HopEdge}}
		}
		deg[e.From]++
		deg[n+int(e.To)]++
	}
	slab := make([]arc, 2*len(edges))
	ids := make([]ID, len(edges))
	succ := make([][]ID, n)
	off, idOff := 0, 0
	for i := range n {
		d := int(deg[i])
		c.get(ID(i)).out = slab[off : off : off+d]
		succ[i] = ids[idOff : idOff : idOff+d]
		off += d
		idOff += d
	}
	for i := range n {
		d := int(deg[n+i])
		c.get(ID(i)).in = slab[off : off : off+d]
		off += d
	}
	for _, e := range edges {
		before := len(c.get(e.From).out)
		c.addArc(e.From, e.To, nil)
		if len(c.get(e.From).out) > before {
			succ[e.From] = append(succ[e.From], e.To)
		}
	}
	order := c.topoOrder(succ)
	if order == nil {
		// Cyclic: replay incrementally, which stops at the first edge that
		// closes a cycle and explains it.
		r := New(opts)
		for _, iv := range intervals {
			r.Append(iv.AdjStart, iv.AdjEnd)
		}
		for _, e := range edges {
			if _, cyc := r.AddEdge(e.From, e.To); cyc != nil {
				return nil, cyc
			}
		}
		panic("closure: topological order failed on an acyclic graph")
	}
	c.purdom(order, succ)
	return c, nil
}

// topoOrder returns a topological order of edges plus time edges, or nil if
// there is a cycle. Phase 1 of Algorithm 2: a depth-first search that visits
// time successors through a "next unvisited ID" skip list (Vbox's o_g plays
// that role), so time edges cost O(|V|) in all, then a check of the reverse
// postorder against every edge, which a cycle cannot pass.
func (c *Closure) topoOrder(succ [][]ID) []ID {
	n := c.count
	visited := make([]bool, n)
	skip := make([]int32, n+1) // union-find: next unvisited index >= i
	for i := range skip {
		skip[i] = int32(i)
	}
	var find func(i int) int
	find = func(i int) int {
		r := i
		for int(skip[r]) != r {
			r = int(skip[r])
		}
		for int(skip[i]) != r {
			nx := int(skip[i])
			skip[i] = int32(r)
			i = nx
		}
		return r
	}
	mark := func(i int) {
		visited[i] = true
		skip[i] = int32(i + 1)
	}
	type frame struct {
		v    int
		edge int
		tcur int // next candidate index for time successors; -1 when done
	}
	post := make([]ID, 0, n)
	var stack []frame
	start := func(i int) frame {
		f := frame{v: i, tcur: -1}
		if c.rt && c.get(ID(i)).e != never {
			f.tcur = int(c.firstStartGE(c.get(ID(i)).e))
		}
		return f
	}
	for root := 0; root < n; root++ {
		if visited[root] {
			continue
		}
		mark(root)
		stack = append(stack[:0], start(root))
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.edge < len(succ[f.v]) {
				w := int(succ[f.v][f.edge])
				f.edge++
				if !visited[w] {
					mark(w)
					stack = append(stack, start(w))
				}
				continue
			}
			pushed := false
			for f.tcur >= 0 && f.tcur < n {
				w := find(f.tcur)
				if w >= n {
					f.tcur = -1
					break
				}
				f.tcur = w + 1
				if c.time(c.get(ID(f.v)), c.get(ID(w))) {
					mark(w)
					stack = append(stack, start(w))
					pushed = true
					break
				}
			}
			if pushed {
				continue
			}
			post = append(post, ID(f.v))
			stack = stack[:len(stack)-1]
		}
	}
	order := make([]ID, n)
	pos := make([]int, n)
	for i := range post {
		order[i] = post[n-1-i]
		pos[order[i]] = i
	}
	for u := range succ {
		for _, v := range succ[u] {
			if pos[u] >= pos[v] {
				return nil
			}
		}
	}
	if c.rt {
		// No transaction may come after one it precedes in time: sweep
		// from the end keeping the earliest end seen and the earliest end
		// of a non-point seen.
		minEnd, minEndNP := int64(math.MaxInt64), int64(math.MaxInt64)
		for i := n - 1; i >= 0; i-- {
			x := c.get(order[i])
			if minEnd < x.s || minEnd == x.s && !x.point() || minEndNP == x.s {
				return nil
			}
			if x.e < minEnd {
				minEnd = x.e
			}
			if !x.point() && x.e < minEndNP {
				minEndNP = x.e
			}
		}
	}
	return order
}

// purdom is phase 2 of Algorithm 2: descendant rows in reverse topological
// order. A row is the union of its inserted successors' rows and of the rows
// of its minimal time successors, those starting no later than M_i, the
// earliest end among all its time successors (Vbox's r_{m_i}): any later
// one follows that earliest-ending one in time, whose row holds its row.
func (c *Closure) purdom(order []ID, succ [][]ID) {
	n := c.count
	// Suffix minimum of ends by ID, for M_i.
	var sufMin []int64
	if c.rt {
		sufMin = make([]int64, n+1)
		sufMin[n] = never
		for i := n - 1; i >= 0; i-- {
			sufMin[i] = min(sufMin[i+1], c.get(ID(i)).e)
		}
	}
	for k := n - 1; k >= 0; k-- {
		i := order[k]
		ni := c.get(i)
		for _, j := range succ[i] {
			c.absorb(i, j, true)
		}
		if c.rt && ni.e != never {
			f := c.firstStartGE(ni.e)
			g := c.firstStartGE(ni.e + 1)
			m := int64(never)
			if int(g) < n {
				m = sufMin[g]
			}
			for j := f; j < g; j++ {
				if c.time(ni, c.get(j)) {
					m = min(m, c.get(j).e)
				}
			}
			if m != never || f < ID(n) {
				hi := c.lastStartLE(m)
				for j := f; j <= hi; j++ {
					if c.time(ni, c.get(j)) {
						c.absorb(i, j, false)
					}
				}
			}
		}
	}
	// Latest start among ancestors (I4), in topological order.
	if c.rt {
		for _, u := range order {
			nu := c.get(u)
			for _, v := range succ[u] {
				nv := c.get(v)
				if nu.a > nv.a {
					nv.a = nu.a
					nv.flags &^= fANP
				}
				if nu.a == nv.a && nu.flags&fANP != 0 {
					nv.flags |= fANP
				}
			}
		}
	}
}

// absorb merges j's descendants into i's during Build: j itself when it is
// an inserted successor (a time successor is implied by i's d), j's row, its
// unbounded set and its earliest descendant end.
func (c *Closure) absorb(i, j ID, inserted bool) {
	ni, nj := c.get(i), c.get(j)
	if nj.d < ni.d {
		ni.d = nj.d
		ni.flags &^= fDNP
	}
	if nj.d == ni.d && nj.flags&fDNP != 0 {
		ni.flags |= fDNP
	}
	if inserted && !c.dReaches(ni, nj) {
		if nj.unbounded() {
			if !c.inUset(ni, j) {
				c.addUset(i, ni, j)
			}
		} else {
			ni.row.set(j)
		}
	}
	hi := c.next() - 1
	if c.rt {
		hi = c.lastStartLE(ni.d)
	}
	ni.row.orFrom(&nj.row, hi, func(ID) {})
	for _, y := range nj.uset() {
		if y != i && !c.inUset(ni, y) && !c.dReaches(ni, c.get(y)) {
			c.addUset(i, ni, y)
		}
	}
}
