package closure

// Evict removes a transaction that left the window, keeping every
// reachability fact among the rest (docs/SEMANTICS.md §5 R5: p->T->s becomes
// p->s), including reachability to transactions appended later through T
// (d, I3) and from transactions appended later into T's descendants (a, I4).
// Rows already hold every live fact, so only the witness structure needs
// work: T's arcs are contracted into derived arcs and proxies (I7).
func (c *Closure) Evict(id ID) {
	t := c.mustLive(id)
	var exitT, entryT *proxy
	if c.rt {
		// Through T, its in-neighbours reach whatever follows T, or T's own
		// exit proxy, in time; T's out-neighbours are reached from whatever
		// precedes T or T's entry proxy.
		if !t.unbounded() {
			exitT = &proxy{s: t.s, e: t.e, via: []ID{id}}
		}
		if tx := t.exit(); tx != nil {
			p := &proxy{s: tx.s, e: tx.e, via: append([]ID{id}, tx.via...)}
			if exitT == nil || betterExit(p, exitT) {
				exitT = p
			}
		}
		entryT = &proxy{s: t.s, e: t.e, via: []ID{id}}
		if tn := t.entry(); tn != nil {
			p := &proxy{s: tn.s, e: tn.e, via: append(append([]ID(nil), tn.via...), id)}
			if betterEntry(p, entryT) {
				entryT = p
			}
		}
	}
	for _, in := range t.in {
		p := c.get(in.peer)
		p.out = removeArc(p.out, id)
		if exitT != nil {
			cand := &proxy{s: exitT.s, e: exitT.e, via: concat(in.path(), exitT.via)}
			if p.exit() == nil || betterExit(cand, p.exit()) {
				p.ext().exit = cand
			}
		}
		for _, out := range t.out {
			via := concat(in.path(), []ID{id}, out.path())
			c.addArc(in.peer, out.peer, &via)
		}
	}
	for _, out := range t.out {
		s := c.get(out.peer)
		s.in = removeArc(s.in, id)
		if entryT != nil {
			cand := &proxy{s: entryT.s, e: entryT.e, via: concat(entryT.via, out.path())}
			if s.entry() == nil {
				c.entries = append(c.entries, out.peer)
			}
			if s.entry() == nil || betterEntry(cand, s.entry()) {
				s.ext().entry = cand
			}
		}
	}
	// Unbounded bookkeeping (I5).
	for _, y := range t.uset() {
		if ny := c.get(y); ny != nil && ny.x != nil {
			delete(ny.x.col, id)
		}
	}
	if t.unbounded() {
		if t.x != nil {
			for x := range t.x.col {
				nx := c.get(x).x
				for i, y := range nx.uset {
					if y == id {
						nx.uset = append(nx.uset[:i], nx.uset[i+1:]...)
						break
					}
				}
			}
		}
		for i, y := range c.unb {
			if y == id {
				c.unb = append(c.unb[:i], c.unb[i+1:]...)
				break
			}
		}
	}
	// Keep the interval (binary searches over starts) and drop the rest.
	*t = node{s: t.s, e: t.e}
	c.nlive--
	// Free the chunk once it is empty and complete, then the freed prefix.
	off := int(id - c.base)
	k := off >> chunkShift
	c.chunks[k].live--
	if c.chunks[k].live == 0 && (k+1)<<chunkShift <= c.count {
		c.chunks[k] = nil
		c.nchunks--
	}
	drop := 0
	for drop < len(c.chunks)-1 && c.chunks[drop] == nil {
		drop++
	}
	if drop > 0 {
		c.chunks = c.chunks[drop:]
		c.meta = c.meta[drop:]
		c.base += ID(drop << chunkShift)
		c.count -= drop << chunkShift
		if c.front < c.base {
			c.front = c.base
		}
	}
	if len(c.entries) > 2*c.nlive+16 {
		live := c.entries[:0]
		for _, e := range c.entries {
			if n := c.liveNode(e); n != nil && n.entry() != nil {
				live = append(live, e)
			}
		}
		c.entries = live
	}
}

// betterExit: p's time successors include q's (earlier end; at equal ends a
// non-point reaches the points at that instant too).
func betterExit(p, q *proxy) bool {
	if p.e != q.e {
		return p.e < q.e
	}
	return p.s < p.e && q.s == q.e
}

// betterEntry: p's time predecessors include q's.
func betterEntry(p, q *proxy) bool {
	if p.s != q.s {
		return p.s > q.s
	}
	return p.s < p.e && q.s == q.e
}

func removeArc(as []arc, peer ID) []arc {
	for i := range as {
		if as[i].peer == peer {
			return append(as[:i], as[i+1:]...)
		}
	}
	return as
}

func concat(parts ...[]ID) []ID {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]ID, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
