package incremental

import "fmt"

// The explainer asks, for every undecided choice and both its values,
// "does this close a cycle, and which is the simplest" (explainer.run).
// Most choices close none, and answering that by a breadth-first search
// from each edge the choice conditions made one step of a large core
// cost choices x edges: on a core of 158 list transactions (8,391
// choices, 22,289 edges, recorded from PostgreSQL READ COMMITTED checked
// at snapshot isolation) one explanation ran for more than 17 minutes
// and blocked `run` the whole time, since an alert is always explained.
//
// reachCache is the transitive closure of the edges that hold under the
// current assignment alone (G0), rebuilt only when the assignment has
// changed. With it, "can choice l close a cycle" is exact without a
// search (docs/SEMANTICS.md §3 "Explaining a large core"): let E_l be the
// edges l conditions that hold once l is assumed. A cycle of G0 ∪ E_l
// through an E_l edge is a sequence of E_l edges u_i->v_i joined by G0
// paths v_i ~> u_{i+1} (possibly empty), so it exists iff the small
// graph on E_l with an arc i->j whenever v_i = u_j or v_i reaches u_j in
// G0 has a cycle; and any closed walk through an E_l edge holds a simple
// cycle through it, which is what the search looks for. A choice that
// can close one still goes to the search, so the cycle chosen and every
// word of the explanation are those of the search alone (explainer.plain
// turns the filter off, and TestExplainFilterIsSearch holds the two
// equal).
type reachCache struct {
	ver   uint64
	built bool
	// ok: G0 is acyclic and small enough for rows; otherwise every
	// question goes to the search, as before.
	ok    bool
	words int
	rows  []uint64 // rows[n*words:(n+1)*words]: the nodes n reaches

	// Scratch of build and cannotClose.
	out    [][]int32
	indeg  []int32
	order  []int32
	el     []int32
	colour []uint8
	stack  []int32
}

// maxReachNodes bounds the closure at 8K nodes (8 MB of rows): a larger
// core is explained by the search alone.
const maxReachNodes = 8192

// cannotClose reports whether assuming extra provably closes no cycle
// (through an edge it conditions, or at all when extra is litTrue), so
// that the search may be skipped. False means "search".
func (x *explainer) cannotClose(extra lit) bool {
	r := &x.reach
	if !r.built || r.ver != x.ver {
		x.buildReach()
	}
	if !r.ok {
		return false
	}
	if extra == litTrue || extra == litFalse {
		// G0 is acyclic (ok), and litFalse adds no edge.
		return true
	}
	return !x.closes(extra)
}

// reaches reports whether v = u or v reaches u in G0.
func (r *reachCache) reaches(v, u int32) bool {
	if v == u {
		return true
	}
	return r.rows[int(v)*r.words+int(u)>>6]&(1<<(uint(u)&63)) != 0
}

// smallCycle looks for a cycle in the graph on el (edge i -> edge j when
// i's head reaches j's tail in G0) by depth-first search.
func (r *reachCache) smallCycle(edges []edgeRec, el []int32) bool {
	k := len(el)
	colour := r.colour[:0]
	for range k {
		colour = append(colour, 0)
	}
	r.colour = colour
	for s := range k {
		if colour[s] != 0 {
			continue
		}
		// Iterative DFS: stack holds node indices; a node is grey (1)
		// while on the stack and black (2) once all successors are done.
		stack := append(r.stack[:0], int32(s))
		next := make([]int, 0, 8) // successor cursor per stack entry
		next = append(next, 0)
		colour[s] = 1
		for len(stack) > 0 {
			top := len(stack) - 1
			i := stack[top]
			if next[top] == k {
				colour[i] = 2
				stack, next = stack[:top], next[:top]
				continue
			}
			j := next[top]
			next[top]++
			if !r.reaches(edges[el[i]].to, edges[el[j]].from) {
				continue
			}
			switch colour[j] {
			case 1:
				r.stack = stack
				return true
			case 0:
				colour[j] = 1
				stack = append(stack, int32(j))
				next = append(next, 0)
			}
		}
		r.stack = stack
	}
	return false
}

// buildReach computes the closure of G0 in reverse topological order,
// or marks it unusable (a cycle in G0, or too many nodes).
func (x *explainer) buildReach() {
	r := &x.reach
	r.built, r.ver, r.ok = true, x.ver, false
	n := len(x.adj)
	if n == 0 || n > maxReachNodes {
		return
	}
	if len(r.out) < n {
		r.out = make([][]int32, n)
		r.indeg = make([]int32, n)
	}
	for i := range n {
		r.out[i] = r.out[i][:0]
		r.indeg[i] = 0
	}
	for i := range x.e.edges {
		e := &x.e.edges[i]
		if x.holds(e, litTrue) {
			r.out[e.from] = append(r.out[e.from], e.to)
			r.indeg[e.to]++
		}
	}
	order := r.order[:0]
	for i := range n {
		if r.indeg[i] == 0 {
			order = append(order, int32(i))
		}
	}
	for qi := 0; qi < len(order); qi++ {
		for _, w := range r.out[order[qi]] {
			if r.indeg[w]--; r.indeg[w] == 0 {
				order = append(order, w)
			}
		}
	}
	r.order = order
	if len(order) < n {
		return // G0 has a cycle: the search finds and draws it
	}
	r.words = (n + 63) / 64
	if cap(r.rows) < n*r.words {
		r.rows = make([]uint64, n*r.words)
	}
	r.rows = r.rows[:n*r.words]
	clear(r.rows)
	for i := len(order) - 1; i >= 0; i-- {
		v := int(order[i])
		row := r.rows[v*r.words : (v+1)*r.words]
		for _, w := range r.out[v] {
			row[int(w)>>6] |= 1 << (uint(w) & 63)
			wr := r.rows[int(w)*r.words : (int(w)+1)*r.words]
			for k := range row {
				row[k] |= wr[k]
			}
		}
	}
	r.ok = true
}

// explain is run(depth) that always ends: when the step-by-step replay
// ran out of work (exhausted) before a cycle closed, the rest is forced
// in batches (batch), and note says how many orders that took. The
// forced steps listed are those of the replay; the final cycle holds
// under them and the batch's orders, each of which is forced (its
// alternative closes a cycle), so the cycle and its class are as proven
// as the replay's (docs/SEMANTICS.md §3 "Explaining a large core").
func (x *explainer) explain(depth int) (forced []forcedStep, cycle []edgeRec, note string) {
	forced, cycle = x.run(depth)
	if cycle != nil || x.stopped || !x.exhausted {
		return forced, cycle, ""
	}
	n, c := x.batch()
	if c == nil {
		return forced, nil, ""
	}
	return forced, c, fmt.Sprintf("%d more orders are forced the same way, each because its other choice would close a cycle (not listed: the core is large).", n)
}

// batch forces, pass after pass, every undecided choice one of whose
// values the closure shows closes a cycle, until the orders that hold
// close one (returned, with the number of orders forced) or nothing more
// is forced (nil). A pass uses the closure built at its start: the
// assignment only grows within it, so a cycle that closure shows is
// still there, and what it misses the next pass sees.
func (x *explainer) batch() (int, []edgeRec) {
	choices := x.choices()
	n := 0
	for pass := 0; pass < 1000 && !x.done(); pass++ {
		x.unitPropagate()
		x.batchLog = append(x.batchLog, litTrue)
		if c := x.anyCycle(); c != nil || x.stopped {
			return n, c
		}
		x.buildReach()
		if !x.reach.ok {
			return n, nil // too many nodes (G0 is acyclic: anyCycle found none)
		}
		changed := false
		for _, l := range choices {
			if _, ok := x.value(l); ok {
				continue
			}
			for _, pol := range []lit{l, l.not()} {
				if x.closes(pol) {
					x.batchLog = append(x.batchLog, pol)
					x.set(pol, false)
					n++
					changed = true
					break
				}
			}
		}
		if !changed {
			return n, nil
		}
	}
	return n, nil
}

// closes reports, from the closure as last built, whether assuming extra
// closes a cycle through an edge it conditions (cannotClose's test
// without the rebuild).
func (x *explainer) closes(extra lit) bool {
	if extra < 0 || int(extra) >= len(x.byLit) {
		return false
	}
	r := &x.reach
	el := r.el[:0]
	for _, ei := range x.byLit[extra] {
		if x.holds(&x.e.edges[ei], extra) {
			el = append(el, ei)
		}
	}
	r.el = el
	return len(el) > 0 && r.smallCycle(x.e.edges, el)
}

// anyCycle finds a short cycle among the edges that hold, or nil. Only
// edges between nodes left after peeling sources and sinks can lie on a
// cycle, and of those the first 64 that do are searched from; the
// lightest cycle among them is drawn.
func (x *explainer) anyCycle() []edgeRec {
	n := len(x.adj)
	indeg, outdeg := make([]int32, n), make([]int32, n)
	in := make([][]int32, n)
	for i := range x.e.edges {
		e := &x.e.edges[i]
		if x.holds(e, litTrue) {
			outdeg[e.from]++
			indeg[e.to]++
			in[e.to] = append(in[e.to], e.from)
		}
	}
	gone := make([]bool, n)
	var q []int32
	for v := range n {
		if indeg[v] == 0 || outdeg[v] == 0 {
			gone[v] = true
			q = append(q, int32(v))
		}
	}
	for len(q) > 0 {
		v := q[len(q)-1]
		q = q[:len(q)-1]
		for _, ei := range x.adj[v] {
			e := &x.e.edges[ei]
			if x.holds(e, litTrue) && !gone[e.to] {
				if indeg[e.to]--; indeg[e.to] == 0 {
					gone[e.to] = true
					q = append(q, e.to)
				}
			}
		}
		for _, u := range in[v] {
			if !gone[u] {
				if outdeg[u]--; outdeg[u] == 0 {
					gone[u] = true
					q = append(q, u)
				}
			}
		}
	}
	var best []edgeRec
	found := 0
	for i := range x.e.edges {
		r := &x.e.edges[i]
		if gone[r.from] || gone[r.to] || !x.holds(r, litTrue) {
			continue
		}
		if x.done() {
			return nil
		}
		path := x.path(r.to, r.from, litTrue)
		if path == nil {
			continue
		}
		c := append([]edgeRec{*r}, path...)
		if best == nil || weight(c) < weight(best) {
			best = c
		}
		if found++; found == 64 {
			break
		}
	}
	return best
}
