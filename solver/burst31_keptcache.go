package solver

// F2's test, what it reads of the saved model made once per model
// (docs/SEMANTICS.md §5, "F2's test reads each model's level 0 and order
// once"; issue 20, item 7).
//
// keptTest (flip_prop.go) scanned, at every call, the whole trail for the
// variables whose value is not the saved model's, and rebuilt the inverse
// of the saved order (a node-sized array) to look up the edges it checks.
// On a one-tick burst the level-0 trail holds most of the instance's
// variables and the prober asks the test hundreds of times a step against
// the same saved model: both were linear in the window per call (a tenth
// of a 1M burst's end-of-input step in a profile of main). Both are
// functions of what does not change while one model stays saved:
//
//   - the level-0 trail only grows between two saves of a model, except
//     through Compact, garbage collection or RemoveNode, after which the
//     test answers "cannot tell" until the next model is saved (condition
//     1 of flip_prop.go); so the part of the scan over a level-0 prefix
//     already scanned for this model (which entries it skips, whether one
//     has no value in M, which are flipped, in trail order) is the same at
//     every call, and is kept (z0);
//   - the saved order changes only when a model is saved (saveModel,
//     saveKept), so its inverse is made once per model (base) and copied
//     into the working order only when an edge goes backward and
//     reorderKept must move nodes.
//
// The test so reads the same values and builds the same flipped list, in
// the same order, with the same backward edges: it answers the same, and
// a saved M' is the same model and order. The cache is keyed by modelGen,
// which every save increments (a recycled solver's scratch starts empty:
// Recycle builds a New solver).

// keptCache is keptScratch's part kept from call to call for one model.
type keptCache struct {
	// z0Gen is the modelGen the level-0 prefix scan is for (0: none);
	// z0Len the level-0 trail entries scanned; z0Bad that one of them
	// has no value in M; z0Flipped the flipped ones among them, in trail
	// order.
	z0Gen     int64
	z0Len     int
	z0Bad     bool
	z0Flipped []Lit
	// baseGen is the modelGen base is the inverse of the saved order for
	// (0: none). reordered says that this test's rank is a reordered
	// copy (else base stands for it).
	baseGen   int64
	base      []int32
	reordered bool
}

// noKeptCache (tests) makes keptTest scan and rebuild at every call, as it
// did: the reference of the lockstep test.
var noKeptCache bool

// keptCacheReuse (tests) counts the tests that found a level-0 scan of
// their model already made.
var keptCacheReuse int

// keptScanTrail is keptTest's scan of the trail: it fills k.flipped with
// the trail's literals whose value is not M's (skipping variables made
// since M), in trail order, and returns false if a trail variable has no
// value in M.
func (s *Solver) keptScanTrail() bool {
	k := &s.kept
	k.flipped = k.flipped[:0]
	start := 0
	if !noKeptCache {
		c := &k.cache
		end := len(s.trail)
		if len(s.trailLim) > 0 {
			end = int(s.trailLim[0])
		}
		if c.z0Gen != s.modelGen || c.z0Len > end {
			c.z0Gen, c.z0Len, c.z0Bad, c.z0Flipped = s.modelGen, 0, false, c.z0Flipped[:0]
		}
		if c.z0Len > 0 {
			keptCacheReuse++
		}
		if !c.z0Bad {
			for _, q := range s.trail[c.z0Len:end] {
				w := q.Var()
				if int(w) >= len(s.model) {
					continue
				}
				if s.model[w] == 0 {
					c.z0Bad = true
					break
				}
				if !s.Value(q) {
					c.z0Flipped = append(c.z0Flipped, q)
				}
			}
			c.z0Len = end
		}
		if c.z0Bad {
			return false
		}
		k.flipped = append(k.flipped, c.z0Flipped...)
		start = end
	}
	for _, q := range s.trail[start:] {
		w := q.Var()
		if int(w) >= len(s.model) {
			continue // made since M: the trail's value is M''s
		}
		if s.model[w] == 0 {
			return false // no value in M
		}
		if !s.Value(q) {
			k.flipped = append(k.flipped, q)
		}
	}
	return true
}

// keptBase returns the inverse of the saved order (n nodes), made once per
// saved model.
func (s *Solver) keptBase(n int) []int32 {
	c := &s.kept.cache
	if noKeptCache || c.baseGen != s.modelGen || len(c.base) != n {
		c.base = append(c.base[:0], make([]int32, n)...)
		for i, u := range s.order {
			c.base[u] = int32(i)
		}
		c.baseGen = s.modelGen
	}
	return c.base
}

// keptReorderFrom makes the working order (k.rank, k.pos) a copy of the
// saved one, for reorderKept.
func (s *Solver) keptReorderFrom(base []int32) {
	k := &s.kept
	k.rank = append(k.rank[:0], base...)
	k.pos = append(k.pos[:0], s.order...)
	k.cache.reordered = true
}

// keptSavedOrder is saveKept's new order: the working one if reorderKept
// moved nodes, else the saved order unchanged. It keeps base valid for
// the model saveKept is about to number gen.
func (s *Solver) keptSavedOrder(gen int64) {
	k, c := &s.kept, &s.kept.cache
	if !c.reordered {
		// M' has M's order: s.order stays, and so does its inverse.
		if c.baseGen == gen-1 && !noKeptCache {
			c.baseGen = gen
		}
		return
	}
	for u, r := range k.rank {
		k.pos[r] = Node(u)
	}
	s.order = append(s.order[:0], k.pos...)
	if !noKeptCache {
		// The working rank is the new order's inverse.
		c.base, k.rank = k.rank, c.base
		c.baseGen = gen
	}
}
