package solver

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// random3SAT adds a uniform random 3-SAT instance with n variables and
// round(ratio*n) clauses of three distinct variables.
func random3SAT(s *Solver, rng *rand.Rand, n int, ratio float64) {
	for range n {
		s.NewVar()
	}
	for range int(ratio * float64(n)) {
		var vs [3]Var
		for i := range vs {
		again:
			v := Var(rng.IntN(n))
			for _, w := range vs[:i] {
				if w == v {
					goto again
				}
			}
			vs[i] = v
		}
		c := make([]Lit, 3)
		for i, v := range vs {
			c[i] = PosLit(v)
			if rng.IntN(2) == 0 {
				c[i] = c[i].Not()
			}
		}
		s.AddClause(c...)
	}
}

func BenchmarkRandom3SAT(b *testing.B) {
	for _, n := range []int{100, 200} {
		b.Run(fmt.Sprintf("n=%d/ratio=4.26", n), func(b *testing.B) {
			seed := uint64(0)
			for b.Loop() {
				seed++
				s := New(Options{})
				random3SAT(s, rand.New(rand.NewPCG(seed, 1)), n, 4.26)
				s.Solve(context.Background())
			}
		})
	}
}

// chainInstance builds a theory-heavy instance shaped like a checker's:
// k chains (sessions) of length n as base edges, and for random pairs of
// nodes on different chains a variable choosing a direction, each
// polarity carrying an edge set of one or two edges, plus conjunction
// edges on two variables. With sat, every edge set that a hidden serial
// order (random timestamps increasing along chains) selects points
// forward in it, so the instance is satisfiable; without, conjunction
// edges point anywhere, which usually makes it unsatisfiable.
func chainInstance(s *Solver, rng *rand.Rand, k, n, pairs int, sat bool, order string) {
	// Nodes are created in hidden-timestamp order, as a checker creates
	// transactions roughly as they arrive.
	type slot struct {
		c, i int
		t    float64
	}
	var slots []slot
	for c := range k {
		t := 0.0
		for i := range n {
			t += rng.Float64()
			slots = append(slots, slot{c, i, t})
		}
	}
	slices.SortFunc(slots, func(a, b slot) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	switch order {
	case "shuffled":
		// The initial order says nothing about the hidden one.
		rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
	case "chains":
		// Chain by chain: the initial order contradicts the hidden one
		// on most cross-chain pairs, the worst case for the phase.
		slices.SortStableFunc(slots, func(a, b slot) int { return a.c - b.c })
	}
	nodes := make([][]Node, k)
	for c := range nodes {
		nodes[c] = make([]Node, n)
	}
	ts := map[Node]float64{}
	for _, sl := range slots {
		u := s.NewNode()
		nodes[sl.c][sl.i] = u
		ts[u] = sl.t
	}
	for c := range nodes {
		for i := 1; i < n; i++ {
			s.AddBaseEdge(nodes[c][i-1], nodes[c][i])
		}
	}
	type choice struct {
		v    Var
		good Lit // the polarity the hidden order picks
	}
	var cs []choice
	for range pairs {
		c1, c2 := rng.IntN(k), rng.IntN(k)
		if c1 == c2 {
			continue
		}
		i, j := rng.IntN(n), rng.IntN(n)
		a, b := nodes[c1][i], nodes[c2][j]
		if ts[a] > ts[b] {
			c1, c2, i, j, a, b = c2, c1, j, i, b, a
		}
		// a before b in the hidden order.
		v := s.NewVar()
		fwd, bwd := PosLit(v), NegLit(v)
		if rng.IntN(2) == 0 {
			fwd, bwd = bwd, fwd
		}
		cs = append(cs, choice{v, fwd})
		s.AddEdge(fwd, a, b)
		s.AddEdge(bwd, b, a)
		if j+1 < n && rng.IntN(2) == 0 {
			s.AddEdge(fwd, a, nodes[c2][j+1])
		}
		if i+1 < n && rng.IntN(2) == 0 {
			s.AddEdge(bwd, b, nodes[c1][i+1])
		}
		if len(cs) > 1 && rng.IntN(3) == 0 {
			w := cs[rng.IntN(len(cs)-1)]
			x, y := b, nodes[c1][rng.IntN(n)]
			p, q := fwd, w.good.Not()
			if rng.IntN(2) == 0 {
				q = w.good
			}
			if sat && q == w.good && ts[x] > ts[y] {
				x, y = y, x // both literals hold in the hidden model
			}
			if x != y {
				s.AddEdge2(p, q, x, y)
			}
		}
	}
}

func BenchmarkTheory(b *testing.B) {
	type tc struct {
		k, n, pairs int
		sat         bool
		order       string
	}
	var cases []tc
	for _, c := range []tc{
		{k: 4, n: 250, pairs: 1000, sat: true, order: "time"},
		{k: 16, n: 100, pairs: 4000, sat: true, order: "time"},
		{k: 64, n: 50, pairs: 8000, sat: true, order: "time"},
		{k: 16, n: 50, pairs: 2000, sat: false, order: "time"},
		{k: 16, n: 50, pairs: 1500, sat: true, order: "shuffled"},
		{k: 16, n: 50, pairs: 1500, sat: true, order: "chains"},
	} {
		cases = append(cases, c)
	}
	for _, c := range cases {
		for _, limit := range []int{-1, 16, 0} {
			name := fmt.Sprintf("chains=%d/len=%d/vars=%d/sat=%v/order=%s/plimit=%d", c.k, c.n, c.pairs, c.sat, c.order, limit)
			b.Run(name, func(b *testing.B) {
				seed := uint64(0)
				var st Stats
				for b.Loop() {
					seed++
					s := New(Options{TheoryPropagationLimit: limit})
					chainInstance(s, rand.New(rand.NewPCG(seed, 2)), c.k, c.n, c.pairs, c.sat, c.order)
					if got := s.Solve(context.Background()); c.sat && got != Sat {
						b.Fatalf("satisfiable chain instance: %v", got)
					}
					st = s.Stats()
				}
				b.ReportMetric(float64(st.Conflicts), "conflicts")
				b.ReportMetric(float64(st.TheoryPropagations), "tprops")
			})
		}
	}
}

// TestDIMACSDir solves every *.cnf file under $SOLVER_CNF_DIR and prints
// the CPU time per file (for comparisons with minisat, whose "CPU time"
// line is comparable; skipped by default).
func TestDIMACSDir(t *testing.T) {
	dir := os.Getenv("SOLVER_CNF_DIR")
	if dir == "" {
		t.Skip("SOLVER_CNF_DIR not set")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cnf"))
	slices.Sort(files)
	var times []time.Duration
	for _, f := range files {
		s := New(Options{})
		readCNF(t, s, f)
		start := cpuTime()
		st := s.Solve(context.Background())
		d := cpuTime() - start
		times = append(times, d)
		t.Logf("%s %v %v conflicts=%d", filepath.Base(f), st, d, s.Stats().Conflicts)
	}
	slices.Sort(times)
	if len(times) > 0 {
		t.Logf("median %v max %v", times[len(times)/2], times[len(times)-1])
	}
}

func readCNF(t *testing.T, s *Solver, name string) {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var c []Lit
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == 'c' || line[0] == 'p' {
			continue
		}
		for _, w := range strings.Fields(line) {
			d, err := strconv.Atoi(w)
			if err != nil {
				t.Fatal(err)
			}
			if d == 0 {
				s.AddClause(c...)
				c = c[:0]
				continue
			}
			p := LitFromDIMACS(d)
			for s.NumVars() <= int(p.Var()) {
				s.NewVar()
			}
			c = append(c, p)
		}
	}
}

// window is the steady-state workload of a streaming checker: one node per
// step (a transaction, with a base edge from its session predecessor),
// a group of variables under a selector ordering it against random live
// nodes, one Solve under the live selectors, and the oldest node leaving
// the window (RemoveNode, RemoveSelector, Retire of its group).
type window struct {
	s        *Solver
	rng      *rand.Rand
	size     int
	sessions int
	live     []windowTxn
	lastOf   []Node
	hasLast  []bool
	steps    int
	sat      int
}

type windowTxn struct {
	node Node
	sel  Lit
	vars []Var
	sess int
}

func newWindow(size, sessions int, seed uint64, limit int) *window {
	return &window{
		s:        New(Options{Seed: seed, TheoryPropagationLimit: limit}),
		rng:      rand.New(rand.NewPCG(seed, 3)),
		size:     size,
		sessions: sessions,
		lastOf:   make([]Node, sessions),
		hasLast:  make([]bool, sessions),
	}
}

func (w *window) step() Status {
	s := w.s
	x := s.NewNode()
	sess := w.rng.IntN(w.sessions)
	if w.hasLast[sess] {
		s.AddBaseEdge(w.lastOf[sess], x)
	}
	w.lastOf[sess], w.hasLast[sess] = x, true
	tx := windowTxn{node: x, sel: s.NewSelector(), sess: sess}
	// Two choices against random live (older) transactions: the forward
	// polarity orders the older one first, as real time would suggest.
	for range 2 {
		if len(w.live) == 0 {
			break
		}
		y := w.live[w.rng.IntN(len(w.live))].node
		v := s.NewVar()
		tx.vars = append(tx.vars, v)
		s.AddEdge(PosLit(v), y, x)
		s.AddEdge(NegLit(v), x, y)
	}
	if len(tx.vars) == 2 {
		a, b := PosLit(tx.vars[0]), PosLit(tx.vars[1])
		// A derived edge on both choices, and a clause tying them.
		y := w.live[w.rng.IntN(len(w.live))].node
		s.AddEdge2(a, b.Not(), x, y)
		s.AddClause(tx.sel.Not(), a, b)
	}
	w.live = append(w.live, tx)
	as := make([]Lit, 0, len(w.live))
	for _, t := range w.live {
		as = append(as, t.sel)
	}
	st := s.Solve(context.Background(), as...)
	if st == Sat {
		w.sat++
	}
	if len(w.live) > w.size {
		old := w.live[0]
		w.live = w.live[1:]
		s.RemoveNode(old.node)
		if w.lastOf[old.sess] == old.node {
			w.hasLast[old.sess] = false
		}
		s.RemoveSelector(old.sel)
		for _, v := range old.vars {
			if err := s.Retire(v); err != nil {
				panic(err)
			}
		}
		if err := s.Retire(old.sel.Var()); err != nil {
			panic(err)
		}
	}
	w.steps++
	return st
}

// BenchmarkSteadyState is one window step per iteration: per-call latency
// of add/solve/retire at a constant window size.
func BenchmarkSteadyState(b *testing.B) {
	for _, size := range []int{50, 500} {
		b.Run(fmt.Sprintf("window=%d", size), func(b *testing.B) {
			w := newWindow(size, 8, 1, 0)
			for range 2 * size {
				w.step() // fill the window first
			}
			b.ReportAllocs()
			for b.Loop() {
				w.step()
			}
			b.ReportMetric(float64(w.s.NumVars()), "vars")
			b.ReportMetric(float64(w.s.NumNodes()), "nodes")
			b.ReportMetric(float64(len(w.s.arena)), "arena-words")
		})
	}
}

// TestSteadyStateLong runs $SOLVER_STEADY_STEPS window steps (e.g.
// 1000000; window $SOLVER_STEADY_WINDOW, default 100 transactions;
// propagation limit $SOLVER_STEADY_PLIMIT) and fails if latency or memory
// grow: the last tenth must be within 2x of the second tenth in mean CPU
// time per step, and the heap must stay bounded. Skipped unless
// SOLVER_STEADY_STEPS is set.
func TestSteadyStateLong(t *testing.T) {
	env := os.Getenv("SOLVER_STEADY_STEPS")
	if env == "" {
		t.Skip("SOLVER_STEADY_STEPS not set")
	}
	steps, err := strconv.Atoi(env)
	if err != nil {
		t.Fatal(err)
	}
	limit, _ := strconv.Atoi(os.Getenv("SOLVER_STEADY_PLIMIT"))
	size := 100
	if e := os.Getenv("SOLVER_STEADY_WINDOW"); e != "" {
		size, _ = strconv.Atoi(e)
	}
	w := newWindow(size, 8, 1, limit)
	block := steps / 10
	var means []time.Duration
	var heaps []uint64
	var ms runtime.MemStats
	for blk := range 10 {
		// CPU time, not wall time: the machine is shared.
		start := cpuTime()
		for range block {
			w.step()
		}
		means = append(means, (cpuTime()-start)/time.Duration(block))
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heaps = append(heaps, ms.HeapInuse)
		t.Logf("block %d: %v CPU/step heap %.1f MB vars %d nodes %d arena %d learnts %d sat %d/%d",
			blk, means[blk], float64(ms.HeapInuse)/1e6, w.s.NumVars(), w.s.NumNodes(),
			len(w.s.arena), len(w.s.learnts), w.sat, w.steps)
	}
	if means[9] > 2*means[1] {
		t.Errorf("latency grew: %v -> %v per step", means[1], means[9])
	}
	if heaps[9] > 2*heaps[1]+1<<20 {
		t.Errorf("heap grew: %d -> %d", heaps[1], heaps[9])
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkProbes is the online prober's pattern (issue 20, item 7): one
// satisfiable instance, then a solve under one assumption per variable
// asked, each from level 0, most variables implied. heap=pop is the
// allAssigned that popped the heap (allAssignedByHeap), heap=count the
// count of unassigned live variables; flip: the probes the flip test
// (F1) answers are not solved.
//
//	go test ./solver -run '^$' -bench Probes -benchtime 3x
func BenchmarkProbes(b *testing.B) {
	for _, mode := range []string{"pop", "count", "count+flip"} {
		b.Run("heap="+mode, func(b *testing.B) {
			allAssignedByHeap = mode == "pop"
			defer func() { allAssignedByHeap = false }()
			var solves, flips int
			for b.Loop() {
				s := New(Options{})
				chainInstance(s, rand.New(rand.NewPCG(7, 2)), 16, 100, 2000, true, "time")
				if s.Solve(context.Background()) != Sat {
					b.Fatal("satisfiable chain instance")
				}
				rank := make([]int32, s.NumNodes())
				for i, n := range s.Order() {
					rank[n] = int32(i)
				}
				for v := range min(s.NumVars(), 100) {
					p := PosLit(Var(v))
					if s.Value(p) {
						p = p.Not()
					}
					if mode == "count+flip" && s.FlipKeepsModel(Var(v), rank) {
						flips++
						continue
					}
					solves++
					if s.Solve(context.Background(), p) == Sat {
						for i, n := range s.Order() {
							rank[n] = int32(i)
						}
					} else {
						s.AddClause(p.Not())
					}
				}
			}
			b.ReportMetric(float64(solves)/float64(b.N), "solves/op")
			b.ReportMetric(float64(flips)/float64(b.N), "flips/op")
		})
	}
}
