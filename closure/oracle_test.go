package closure

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
)

// longFactor multiplies the random tests' iterations:
// CLOSURE_LONG=50 go test ./closure/ runs fifty times more seeds.
func longFactor() int {
	if n, err := strconv.Atoi(os.Getenv("CLOSURE_LONG")); err == nil && n > 0 {
		return n
	}
	return 1
}

// oracle is the dumb reference: the full, never-evicted graph with inserted
// edges and time edges, answered by breadth-first search.
type oracle struct {
	rt      bool
	iv      []Interval
	live    []bool
	edges   map[Pair]bool
	succ    [][]ID
	memo    map[ID][]bool // reachability from a source; reset on every change
	evicted int
}

func newOracle(rt bool) *oracle {
	return &oracle{rt: rt, edges: map[Pair]bool{}, memo: map[ID][]bool{}}
}

func (o *oracle) append(s, e int64) ID {
	o.iv = append(o.iv, Interval{s, e})
	o.live = append(o.live, true)
	o.succ = append(o.succ, nil)
	clear(o.memo)
	return ID(len(o.iv) - 1)
}

func (o *oracle) time(a, b ID) bool {
	if !o.rt || a == b {
		return false
	}
	x, y := o.iv[a], o.iv[b]
	return timeBefore(x.AdjStart, x.AdjEnd, y.AdjStart, y.AdjEnd)
}

func (o *oracle) edge(a, b ID) bool { return o.edges[Pair{a, b}] }

func (o *oracle) addEdge(a, b ID) {
	if !o.edges[Pair{a, b}] {
		o.edges[Pair{a, b}] = true
		o.succ[a] = append(o.succ[a], b)
	}
	clear(o.memo)
}

// from returns the set reachable from u by a path of length >= 1.
func (o *oracle) from(u ID) []bool {
	if r, ok := o.memo[u]; ok {
		return r
	}
	n := len(o.iv)
	seen := make([]bool, n)
	queue := []ID{u}
	// Under real time starts are sorted (append order), so the time
	// successors of x are the IDs starting after e_x plus, among those
	// starting exactly at e_x, the ones time(x, y) accepts. IDs from
	// suffix on have all been visited already.
	suffix := n
	firstStart := func(pred func(int64) bool) int {
		return sort.Search(n, func(i int) bool { return pred(o.iv[i].AdjStart) })
	}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		visit := func(y ID) {
			if !seen[y] {
				seen[y] = true
				queue = append(queue, y)
			}
		}
		for _, y := range o.succ[x] {
			visit(y)
		}
		if e := o.iv[x].AdjEnd; o.rt && e != math.MaxInt64 {
			f := firstStart(func(s int64) bool { return s >= e })
			g := firstStart(func(s int64) bool { return s > e })
			for y := f; y < g; y++ {
				if o.time(x, ID(y)) {
					visit(ID(y))
				}
			}
			for y := g; y < suffix; y++ {
				visit(ID(y))
			}
			suffix = min(suffix, g)
		}
	}
	o.memo[u] = seen
	return seen
}

func (o *oracle) reaches(u, v ID) bool { return o.from(u)[v] }

// livePairs lists every reachable pair of live transactions.
func (o *oracle) livePairs() map[Pair]bool {
	m := map[Pair]bool{}
	for u := range o.iv {
		if !o.live[u] {
			continue
		}
		r := o.from(ID(u))
		for v := range o.iv {
			if o.live[v] && r[v] && u != v {
				m[Pair{ID(u), ID(v)}] = true
			}
		}
	}
	return m
}

// checkPath validates a witness path u ~> v: hops chain, every hop is an
// inserted edge, a time edge, or a chain of edges through evicted
// transactions only.
func (o *oracle) checkPath(u, v ID, hops []Hop) error {
	if len(hops) == 0 {
		return fmt.Errorf("empty path t%d ~> t%d", u, v)
	}
	if hops[0].From != u || hops[len(hops)-1].To != v {
		return fmt.Errorf("path %v does not run from t%d to t%d", hops, u, v)
	}
	for i, h := range hops {
		if i > 0 && hops[i-1].To != h.From {
			return fmt.Errorf("path %v breaks at hop %d", hops, i)
		}
		if !o.live[h.From] || !o.live[h.To] {
			return fmt.Errorf("hop %v has an evicted endpoint", h)
		}
		switch h.Kind {
		case HopEdge:
			if !o.edge(h.From, h.To) {
				return fmt.Errorf("hop %v is not an inserted edge", h)
			}
		case HopTime:
			if !o.time(h.From, h.To) {
				return fmt.Errorf("hop %v is not a time edge", h)
			}
		case HopEvicted:
			if len(h.Via) == 0 {
				return fmt.Errorf("hop %v passes through nothing", h)
			}
			chain := append(append([]ID{h.From}, h.Via...), h.To)
			for k := 1; k < len(chain); k++ {
				if k < len(chain)-1 && o.live[chain[k]] {
					return fmt.Errorf("hop %v passes through live t%d", h, chain[k])
				}
				if !o.edge(chain[k-1], chain[k]) && !o.time(chain[k-1], chain[k]) {
					return fmt.Errorf("hop %v: no edge t%d->t%d", h, chain[k-1], chain[k])
				}
			}
		default:
			return fmt.Errorf("hop %v has kind %d", h, h.Kind)
		}
	}
	return nil
}

// checkCycle validates a cycle witness for edge u->v: a path v ~> u (or
// nothing when u == v) followed by the edge.
func (o *oracle) checkCycle(u, v ID, cyc []Hop) error {
	last := cyc[len(cyc)-1]
	if last.From != u || last.To != v || last.Kind != HopEdge {
		return fmt.Errorf("cycle %v does not end with the edge t%d->t%d", cyc, u, v)
	}
	if u == v {
		if len(cyc) != 1 {
			return fmt.Errorf("self loop cycle %v", cyc)
		}
		return nil
	}
	return o.checkPath(v, u, cyc[:len(cyc)-1])
}

// compare checks every live pair's reachability and a witness path for
// each reachable one.
func compare(t *testing.T, c *Closure, o *oracle, paths bool, stats *[3]int) {
	t.Helper()
	var liveIDs []ID
	for i, l := range o.live {
		if l {
			liveIDs = append(liveIDs, ID(i))
		}
	}
	if got := c.LiveIDs(); !slices.Equal(got, liveIDs) {
		t.Fatalf("live %v, want %v", got, liveIDs)
	}
	if c.Len() != len(liveIDs) {
		t.Fatalf("Len %d, want %d", c.Len(), len(liveIDs))
	}
	for _, u := range liveIDs {
		for _, v := range liveIDs {
			want := u != v && o.reaches(u, v)
			if got := c.Reaches(u, v); got != want {
				t.Fatalf("Reaches(t%d,t%d) = %v, want %v\nintervals %v\nedges %v\nlive %v\n%s",
					u, v, got, want, o.iv, o.edgeList(), liveIDs, c)
			}
			if !paths {
				continue
			}
			p := c.Path(u, v)
			for _, h := range p {
				if stats != nil {
					stats[h.Kind]++
				}
			}
			if !want {
				if p != nil {
					t.Fatalf("Path(t%d,t%d) = %v for an unreachable pair", u, v, p)
				}
				continue
			}
			if err := o.checkPath(u, v, p); err != nil {
				t.Fatalf("Path(t%d,t%d): %v\nintervals %v\nedges %v", u, v, err, o.iv, o.edgeList())
			}
		}
	}
}

func (o *oracle) edgeList() []Pair {
	var es []Pair
	for u, vs := range o.succ {
		for _, v := range vs {
			es = append(es, Pair{ID(u), v})
		}
	}
	return es
}

// gen draws histories with many ties: small integer times, zero-length
// transactions, equal starts and never-ending ones.
type gen struct {
	r     *rand.Rand
	rt    bool
	start int64
}

func (g *gen) interval() Interval {
	if g.rt {
		g.start += int64(g.r.IntN(3)) // equal starts are common
	} else {
		g.start = int64(g.r.IntN(20))
	}
	s := g.start
	switch k := g.r.IntN(10); {
	case k == 0:
		return Interval{s, math.MaxInt64}
	case k <= 2:
		return Interval{s, s}
	default:
		return Interval{s, s + int64(g.r.IntN(8))}
	}
}

// edge picks mostly forward edges among live transactions, sometimes
// backward ones (which may close cycles).
func (g *gen) edge(live []ID) (ID, ID) {
	i, j := g.r.IntN(len(live)), g.r.IntN(len(live))
	if i > j && g.r.IntN(4) != 0 {
		i, j = j, i
	}
	return live[i], live[j]
}

func liveOf(o *oracle) []ID {
	var ids []ID
	for i, l := range o.live {
		if l {
			ids = append(ids, ID(i))
		}
	}
	return ids
}

// runRandom drives a closure and the oracle with random appends, edges and
// evictions and compares them after every step.
func runRandom(t *testing.T, seed uint64, rt, fromBuild bool, steps int, stats *[3]int) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	g := &gen{r: r, rt: rt}
	o := newOracle(rt)
	var c *Closure
	if fromBuild {
		n := 2 + r.IntN(12)
		var ivs []Interval
		for range n {
			iv := g.interval()
			ivs = append(ivs, iv)
			o.append(iv.AdjStart, iv.AdjEnd)
		}
		// Mostly acyclic batches (a cycle is tried one time in five), so
		// that Build's rows are compared, not only its cycle detection.
		var edges []Pair
		allowCycle := r.IntN(5) == 0
		for range r.IntN(3 * n) {
			u, v := g.edge(liveOf(o))
			if !allowCycle && (u == v || o.reaches(v, u)) {
				continue
			}
			edges = append(edges, Pair{u, v})
			o.addEdge(u, v)
		}
		cyclic := false
		for u := range o.iv {
			if o.reaches(ID(u), ID(u)) {
				cyclic = true
			}
		}
		bc, cyc := Build(Options{RealTime: rt}, ivs, edges)
		if cyclic != (cyc != nil) {
			t.Fatalf("Build cycle %v, oracle cyclic %v\nintervals %v\nedges %v", cyc, cyclic, ivs, edges)
		}
		if cyclic {
			if err := o.checkCycle(cyc[len(cyc)-1].From, cyc[len(cyc)-1].To, cyc); err != nil {
				t.Fatalf("Build cycle: %v", err)
			}
			// Start over without edges.
			o = newOracle(rt)
			for _, iv := range ivs {
				o.append(iv.AdjStart, iv.AdjEnd)
			}
			bc, _ = Build(Options{RealTime: rt}, ivs, nil)
		} else {
			// Batch equals incremental.
			ic := New(Options{RealTime: rt})
			for _, iv := range ivs {
				ic.Append(iv.AdjStart, iv.AdjEnd)
			}
			for _, e := range edges {
				if _, cyc := ic.AddEdge(e.From, e.To); cyc != nil {
					t.Fatalf("incremental found cycle %v in an acyclic batch", cyc)
				}
			}
			if bc.String() != ic.String() {
				t.Fatalf("Build and incremental differ\nbuild:\n%s\nincremental:\n%s", bc, ic)
			}
			// The closure does not depend on the order of insertion.
			sc := New(Options{RealTime: rt})
			for _, iv := range ivs {
				sc.Append(iv.AdjStart, iv.AdjEnd)
			}
			shuffled := slices.Clone(edges)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for _, e := range shuffled {
				if _, cyc := sc.AddEdge(e.From, e.To); cyc != nil {
					t.Fatalf("incremental found cycle %v in an acyclic batch", cyc)
				}
			}
			if sc.String() != ic.String() {
				t.Fatalf("edge order changes the closure\nin order:\n%s\nshuffled:\n%s", ic, sc)
			}
			compare(t, ic, o, true, stats)
		}
		c = bc
		compare(t, c, o, true, stats)
	} else {
		c = New(Options{RealTime: rt})
	}
	for step := 0; step < steps; step++ {
		live := liveOf(o)
		switch k := r.IntN(10); {
		case k < 3 || len(live) < 2:
			iv := g.interval()
			id := c.Append(iv.AdjStart, iv.AdjEnd)
			if want := o.append(iv.AdjStart, iv.AdjEnd); id != want {
				t.Fatalf("Append = t%d, want t%d", id, want)
			}
		case k < 8:
			u, v := g.edge(live)
			before := o.livePairs()
			cyclic := u == v || o.reaches(v, u)
			newly, cyc := c.AddEdge(u, v)
			if cyclic {
				if cyc == nil {
					t.Fatalf("AddEdge(t%d,t%d) missed a cycle\nintervals %v\nedges %v\n%s", u, v, o.iv, o.edgeList(), c)
				}
				if err := o.checkCycle(u, v, cyc); err != nil {
					t.Fatalf("AddEdge(t%d,t%d): %v", u, v, err)
				}
				continue
			}
			if cyc != nil {
				t.Fatalf("AddEdge(t%d,t%d) false cycle %v\nintervals %v\nedges %v", u, v, cyc, o.iv, o.edgeList())
			}
			o.addEdge(u, v)
			after := o.livePairs()
			want := map[Pair]bool{}
			for p := range after {
				if !before[p] {
					want[p] = true
				}
			}
			got := map[Pair]bool{}
			for _, p := range newly {
				if got[p] {
					t.Fatalf("AddEdge(t%d,t%d) reports %v twice", u, v, p)
				}
				got[p] = true
			}
			if len(got) != len(want) {
				t.Fatalf("AddEdge(t%d,t%d) newly %v, want %v\nintervals %v\nedges %v", u, v, newly, keys(want), o.iv, o.edgeList())
			}
			for p := range want {
				if !got[p] {
					t.Fatalf("AddEdge(t%d,t%d) newly %v, want %v\nintervals %v\nedges %v", u, v, newly, keys(want), o.iv, o.edgeList())
				}
			}
		default:
			x := live[r.IntN(len(live))]
			c.Evict(x)
			o.live[x] = false
		}
		compare(t, c, o, step%3 == 0 || step == steps-1, stats)
	}
}

func keys(m map[Pair]bool) []Pair {
	var ps []Pair
	for p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Pair) int {
		if a.From != b.From {
			return int(a.From - b.From)
		}
		return int(a.To - b.To)
	})
	return ps
}

// Reference: Vbox §3.4 (compact closure, Purdom+, Italiano+ Lemmas
// 3.6-3.7, paths), docs/SEMANTICS.md §1 (time order) and §5 R5 (eviction).
func TestRandomAgainstOracle(t *testing.T) {
	iters := 300 * longFactor()
	if testing.Short() {
		iters = 60
	}
	for _, rt := range []bool{true, false} {
		for _, fromBuild := range []bool{false, true} {
			t.Run(fmt.Sprintf("realtime=%v/build=%v", rt, fromBuild), func(t *testing.T) {
				// Hop kinds seen in checked paths show the runs reach
				// every kind (-v).
				var stats [3]int
				for seed := range uint64(iters) {
					runRandom(t, seed, rt, fromBuild, 60, &stats)
				}
				t.Logf("hops checked: edge %d, time %d, evicted %d", stats[0], stats[1], stats[2])
			})
		}
	}
}

// TestSlidingWindow streams a few hundred transactions through a small
// window (the oldest ones leave first, sometimes a random one), so that the
// evicted prefix is dropped and IDs far from zero are used, and compares
// with the oracle along the way. Edges mostly join recent transactions.
func TestSlidingWindow(t *testing.T) {
	iters := 30 * longFactor()
	if testing.Short() {
		iters = 8
	}
	for _, rt := range []bool{true, false} {
		t.Run(fmt.Sprintf("realtime=%v", rt), func(t *testing.T) {
			for seed := range uint64(iters) {
				r := rand.New(rand.NewPCG(seed, 77))
				g := &gen{r: r, rt: rt}
				o := newOracle(rt)
				c := New(Options{RealTime: rt})
				window := 8 + r.IntN(16)
				// Odd seeds pin t0 (it never leaves), so that chunks
				// after it are freed while it holds the first.
				pinned := seed%2 == 1
				var stats [3]int
				for step := range 3000 {
					live := liveOf(o)
					switch {
					case len(live) < window:
						iv := g.interval()
						if step == 0 && seed%4 == 1 {
							// A pinned transaction that never ends.
							iv.AdjEnd = math.MaxInt64
						}
						c.Append(iv.AdjStart, iv.AdjEnd)
						o.append(iv.AdjStart, iv.AdjEnd)
					case r.IntN(3) == 0:
						cands := live
						if pinned && live[0] == 0 {
							cands = live[1:]
						}
						x := cands[0]
						if r.IntN(4) == 0 {
							x = cands[r.IntN(len(cands))]
						}
						c.Evict(x)
						o.live[x] = false
					default:
						u, v := g.edge(live)
						cyclic := u == v || o.reaches(v, u)
						_, cyc := c.AddEdge(u, v)
						if cyclic != (cyc != nil) {
							t.Fatalf("seed %d step %d: AddEdge(t%d,t%d) cycle %v, oracle cyclic %v", seed, step, u, v, cyc, cyclic)
						}
						if cyc != nil {
							if err := o.checkCycle(u, v, cyc); err != nil {
								t.Fatal(err)
							}
						} else {
							o.addEdge(u, v)
						}
					}
					if step%300 == 299 {
						compare(t, c, o, true, &stats)
					}
				}
				freed := 0
				for _, ch := range c.chunks {
					if ch == nil {
						freed++
					}
				}
				if pinned && freed == 0 {
					t.Fatalf("seed %d: no chunk was freed behind the pinned t0", seed)
				}
				if !pinned && c.base == 0 {
					t.Fatalf("seed %d: the evicted prefix was never dropped", seed)
				}
			}
		})
	}
}

// TestFullBaseline keeps the benchmarks' full-matrix baseline honest: on
// the benchmark workload (small), Purdom and Italiano on the full matrix
// agree with the compact closure.
func TestFullBaseline(t *testing.T) {
	ivs, edges := workload(600, 16)
	c, _ := Build(Options{RealTime: true}, ivs, edges)
	p := newFull(ivs)
	p.purdom(edges)
	it := newFull(ivs)
	it.timeRows()
	for _, e := range edges {
		it.addEdge(int(e.From), int(e.To))
	}
	for u := range ivs {
		for v := range ivs {
			want := c.Reaches(ID(u), ID(v))
			if p.test(u, v) != want || it.test(u, v) != want {
				t.Fatalf("t%d ~> t%d: compact %v, purdom %v, italiano %v", u, v, want, p.test(u, v), it.test(u, v))
			}
		}
	}
}

// FuzzAgainstOracle lets the fuzzer pick seeds and modes for runRandom:
// go test -fuzz FuzzAgainstOracle -fuzztime 20s ./closure/
func FuzzAgainstOracle(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s, uint8(s))
	}
	f.Fuzz(func(t *testing.T, seed uint64, mode uint8) {
		runRandom(t, seed, mode&1 == 0, mode&2 != 0, 40+int(mode>>2), nil)
	})
}

// TestOracleSelfCheck holds the oracle's BFS (which walks time successors
// as suffixes of the start order) to Warshall's algorithm over explicit
// edges and time edges.
func TestOracleSelfCheck(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 5))
		g := &gen{r: r, rt: true}
		o := newOracle(true)
		n := 2 + r.IntN(25)
		for range n {
			iv := g.interval()
			o.append(iv.AdjStart, iv.AdjEnd)
		}
		for range r.IntN(2 * n) {
			o.addEdge(ID(r.IntN(n)), ID(r.IntN(n)))
		}
		m := make([][]bool, n)
		for i := range m {
			m[i] = make([]bool, n)
			for j := range n {
				m[i][j] = o.edge(ID(i), ID(j)) || o.time(ID(i), ID(j))
			}
		}
		for k := range n {
			for i := range n {
				for j := range n {
					m[i][j] = m[i][j] || m[i][k] && m[k][j]
				}
			}
		}
		for i := range n {
			for j := range n {
				if o.reaches(ID(i), ID(j)) != m[i][j] {
					t.Fatalf("seed %d: oracle t%d ~> t%d = %v, Warshall %v", seed, i, j, !m[i][j], m[i][j])
				}
			}
		}
	}
}

// TestPinnedDoesNotHoldSlots: one transaction that never leaves (here an
// unbounded one, reached by everything through edges) must not keep the
// slots of the evicted transactions after it: memory follows the window,
// not the stream.
func TestPinnedDoesNotHoldSlots(t *testing.T) {
	c := New(Options{RealTime: true})
	pinned := c.Append(0, math.MaxInt64)
	const window = 50
	for i := int64(1); i <= 20_000; i++ {
		id := c.Append(i*10, i*10+25)
		c.AddEdge(id, pinned)
		if old := id - window; old > pinned {
			c.Evict(old)
		}
	}
	held := 0
	for _, ch := range c.chunks {
		if ch != nil {
			held++
		}
	}
	if held > 3 {
		t.Fatalf("%d chunks held for %d live transactions", held, c.Len())
	}
	if c.Len() != window+1 || !c.Reaches(c.next()-1, pinned) || c.Reaches(pinned, c.next()-1) {
		t.Fatalf("Len %d, reachability wrong:\n%s", c.Len(), c)
	}
}

// TestChunksCounted: Chunks equals the chunks actually held, through
// random appends and evictions (some transactions pinned for long), so a
// caller compacting on it sees what memory holds.
func TestChunksCounted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := New(Options{RealTime: true})
	var live []ID
	start := int64(0)
	for step := 0; step < 5000; step++ {
		start += int64(rng.IntN(3))
		live = append(live, c.Append(start, start+int64(1+rng.IntN(5))))
		for len(live) > 0 && rng.IntN(3) > 0 {
			k := rng.IntN(len(live))
			if rng.IntN(50) == 0 {
				continue // stays: holds its chunk
			}
			c.Evict(live[k])
			live = append(live[:k], live[k+1:]...)
		}
		held := 0
		for _, ch := range c.chunks {
			if ch != nil {
				held++
			}
		}
		if c.Chunks() != held {
			t.Fatalf("step %d: Chunks() = %d, %d held", step, c.Chunks(), held)
		}
	}
}
