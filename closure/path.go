package closure

import "fmt"

// Path returns the chain of hops that makes u reach v (nil if not):
// inserted edges, time edges, and opaque hops through evicted transactions.
//
// Departure from Vbox §3.4.4: no path matrix. The walk is guided by the
// exact reachability rows instead: from x it takes any hop of the live graph
// (I7) to a transaction that still reaches v, which terminates because the
// graph is acyclic. A stored matrix would cost a word per band entry and
// would go stale at every eviction; alerts and conflict clauses ask for few
// paths.
func (c *Closure) Path(u, v ID) []Hop {
	nu, nv := c.mustLive(u), c.mustLive(v)
	if !c.reaches(u, nu, v, nv) {
		return nil
	}
	var hops []Hop
	x, nx := u, nu
	for steps := 0; ; steps++ {
		if steps > c.nlive {
			panic("closure: witness walk does not terminate (cycle in the live graph)")
		}
		if h, ok := c.direct(x, nx, v, nv); ok {
			return append(hops, h)
		}
		n, h := c.step(x, nx, v, nv)
		hops = append(hops, h)
		x, nx = n, c.get(n)
	}
}

// direct finds a single hop of the live graph from x to y.
func (c *Closure) direct(x ID, nx *node, y ID, ny *node) (Hop, bool) {
	for _, a := range nx.out {
		if a.peer == y {
			return arcHop(x, a), true
		}
	}
	return c.timeHop(x, nx, y, ny)
}

func arcHop(x ID, a arc) Hop {
	if a.via == nil {
		return Hop{From: x, To: a.peer, Kind: HopEdge}
	}
	return Hop{From: x, To: a.peer, Kind: HopEvicted, Via: a.path()}
}

// timeHop finds a hop from x to y that ends with a time edge: direct, or
// through x's exit proxy, y's entry proxy or both.
func (c *Closure) timeHop(x ID, nx *node, y ID, ny *node) (Hop, bool) {
	if !c.rt {
		return Hop{}, false
	}
	if c.time(nx, ny) {
		return Hop{From: x, To: y, Kind: HopTime}, true
	}
	if ex := nx.exit(); ex != nil && timeBefore(ex.s, ex.e, ny.s, ny.e) {
		return Hop{From: x, To: y, Kind: HopEvicted, Via: ex.via}, true
	}
	if en := ny.entry(); en != nil {
		if timeBefore(nx.s, nx.e, en.s, en.e) {
			return Hop{From: x, To: y, Kind: HopEvicted, Via: en.via}, true
		}
		if ex := nx.exit(); ex != nil && timeBefore(ex.s, ex.e, en.s, en.e) {
			return Hop{From: x, To: y, Kind: HopEvicted, Via: concat(ex.via, en.via)}, true
		}
	}
	return Hop{}, false
}

// step finds a hop from x to some n that reaches v. One exists whenever x
// reaches v, by I7.
func (c *Closure) step(x ID, nx *node, v ID, nv *node) (ID, Hop) {
	// Arcs were tried for every candidate first, so the scans below
	// only look for hops that end with a time edge.
	try := func(n ID) (Hop, bool) {
		nn := c.liveNode(n)
		if nn == nil || n == x || !c.reaches(n, nn, v, nv) {
			return Hop{}, false
		}
		return c.timeHop(x, nx, n, nn)
	}
	for _, a := range nx.out {
		if c.reaches(a.peer, c.get(a.peer), v, nv) {
			return a.peer, arcHop(x, a)
		}
	}
	if c.rt {
		// Time successors of x or of its exit proxy, up to the last
		// transaction that can still reach v.
		from := nx.e
		if ex := nx.exit(); ex != nil && ex.e < from {
			from = ex.e
		}
		if from != never {
			hi := c.lastStartLE(nv.d)
			for n := c.firstStartGE(from); n <= hi; n++ {
				if h, ok := try(n); ok {
					return n, h
				}
			}
		}
		for _, n := range c.entries {
			if h, ok := try(n); ok {
				return n, h
			}
		}
	}
	panic(fmt.Sprintf("closure: t%d reaches t%d but no hop leads on (broken I7)", x, v))
}
