package closure

// AddEdge inserts u->v (Italiano+, Vbox §3.4.3). If it closes a cycle it
// changes nothing and returns the cycle as a witness path v ~> u plus the
// edge (cycle != nil). Otherwise it returns the pairs (a,b) of live
// transactions that became reachable and were not before; all of them are
// concurrent pairs (a time-ordered pair is reachable from the start or
// never), so this is exactly what constraint pruning consumes (Vbox Alg. 1).
// Pairs with a transaction appended later are never "newly": a later
// transaction is born with its reachability (query it after Append).
func (c *Closure) AddEdge(u, v ID) (newly []Pair, cycle []Hop) {
	nu, nv := c.mustLive(u), c.mustLive(v)
	if u == v {
		return nil, []Hop{{From: u, To: v, Kind: HopEdge}}
	}
	if c.reaches(v, nv, u, nu) {
		return nil, append(c.Path(v, u), Hop{From: u, To: v, Kind: HopEdge})
	}
	c.addArc(u, v, nil)
	if c.reaches(u, nu, v, nv) {
		return nil, nil
	}
	srcs := c.sources(u, nu, v, nv)
	for _, a := range srcs {
		newly = c.merge(a, v, a == u, newly)
	}
	c.scratch = srcs[:0] // reused by the next call; merge does not touch it
	return newly, nil
}

// addArc records u->v in the live graph unless an arc u->v exists; an
// inserted edge replaces a derived one (it is the better witness).
func (c *Closure) addArc(u, v ID, via *[]ID) {
	nu, nv := c.get(u), c.get(v)
	for i := range nu.out {
		if nu.out[i].peer == v {
			if via == nil && nu.out[i].via != nil {
				nu.out[i].via = nil
				for j := range nv.in {
					if nv.in[j].peer == u {
						nv.in[j].via = nil
					}
				}
			}
			return
		}
	}
	nu.out = append(nu.out, arc{peer: v, via: via})
	nv.in = append(nv.in, arc{peer: u, via: via})
}

// sources lists the transactions a with a == u or a reaching u, and not
// reaching v: the first components of Italiano's affected pairs (Eq. 8).
// Reference: Vbox §3.4.3 Lemma 3.6, restated for this band (doc.go).
func (c *Closure) sources(u ID, nu *node, v ID, nv *node) []ID {
	out := c.scratch[:0]
	out = append(out, u)
	lo, hi := c.base, c.next()-1
	if c.rt {
		// Below lo_v every bounded transaction precedes v in time, so it
		// reaches v already.
		if nv.lo > lo {
			lo = nv.lo
		}
		if nu.unbounded() {
			// A bounded ancestor of an unbounded u reaches it through a
			// descendant ending before s_u (so it starts before s_u) or
			// holds it in its uset (the col index below).
			if h := c.lastStartLE(nu.s); h < hi {
				hi = h
			}
		} else if h := c.lastStartLE(nu.d); h < hi {
			// Above this, u reaches a: a cannot reach u.
			hi = h
		}
	}
	for a := lo; a <= hi; a++ {
		if a == u {
			continue
		}
		na := c.get(a)
		if na == nil {
			a = c.chunkLast(a)
			continue
		}
		if na.live() && c.reaches(a, na, u, nu) && !c.reaches(a, na, v, nv) {
			out = append(out, a)
		}
	}
	if c.rt {
		consider := func(a ID) {
			if a == u || a >= lo && a <= hi {
				return
			}
			na := c.liveNode(a)
			if na != nil && c.reaches(a, na, u, nu) && !c.reaches(a, na, v, nv) {
				for _, x := range out {
					if x == a {
						return
					}
				}
				out = append(out, a)
			}
		}
		for _, a := range c.unb {
			consider(a)
		}
		if nu.unbounded() {
			for a := range nu.ext().col {
				consider(a)
			}
		}
	}
	return out
}

// merge makes a reach v and everything v reaches, appending the pairs that
// were not reachable before. fromU marks a == u, whose new descendants
// inherit u's ancestors' latest start (I4).
func (c *Closure) merge(a, v ID, fromU bool, newly []Pair) []Pair {
	na, nv := c.get(a), c.get(v)
	aA, aANP := na.a, na.flags&fANP != 0
	fresh := func(b ID, nb *node) {
		newly = append(newly, Pair{From: a, To: b})
		if fromU && c.rt {
			if aA > nb.a {
				nb.a = aA
				nb.flags &^= fANP
			}
			if aA == nb.a && aANP {
				nb.flags |= fANP
			}
		}
	}
	// v itself.
	if nv.unbounded() {
		c.addUset(a, na, v)
	} else {
		na.row.set(v)
	}
	fresh(v, nv)
	// v's row: bits above hi are implied by a's own d (I3).
	hi := c.next() - 1
	if c.rt {
		hi = c.lastStartLE(na.d)
	}
	na.row.orFrom(&nv.row, hi, func(b ID) {
		nb := c.liveNode(b)
		if nb != nil && b != a && !c.dReaches(na, nb) {
			fresh(b, nb)
		}
	})
	// v's unbounded descendants held explicitly.
	for _, y := range nv.uset() {
		ny := c.liveNode(y)
		if ny == nil || y == a || c.inUset(na, y) || c.dReaches(na, ny) {
			continue
		}
		c.addUset(a, na, y)
		fresh(y, ny)
	}
	// Transactions after v's earliest-ending descendant that a did not
	// reach through its own (I3): at most those starting in [d_v, d_a].
	if c.rt && nv.d != never && (nv.d < na.d || nv.d == na.d && nv.flags&fDNP != 0 && na.flags&fDNP == 0) {
		lo := c.firstStartGE(nv.d)
		up := c.lastStartLE(na.d)
		for b := lo; b <= up; b++ {
			nb := c.get(b)
			if nb == nil {
				b = c.chunkLast(b)
				continue
			}
			if b == a || !nb.live() || !c.dReaches(nv, nb) || c.dReaches(na, nb) {
				continue
			}
			if nb.unbounded() {
				if c.inUset(na, b) {
					continue
				}
			} else if na.row.test(b) {
				continue
			}
			fresh(b, nb)
		}
		// Unbounded ones below lo cannot be after d_v; above up they are
		// after d_a already. Nothing else to visit.
	}
	if nv.d < na.d {
		na.d = nv.d
		na.flags &^= fDNP
	}
	if nv.d == na.d && nv.flags&fDNP != 0 {
		na.flags |= fDNP
	}
	return newly
}
