package closure

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The benchmark workload: n transactions with distinct starts 10 apart and
// durations uniform in [1, 10*overlap], so a transaction overlaps about
// `overlap` others on average; 2n edges, each from a random transaction to
// one of the next `overlap` by start (forward in time or between
// overlapping transactions, like the checker's), so the graph is acyclic.
func workload(n, overlap int) ([]Interval, []Pair) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(overlap)))
	ivs := make([]Interval, n)
	for i := range ivs {
		s := int64(i) * 10
		ivs[i] = Interval{s, s + 1 + r.Int64N(int64(10*overlap))}
	}
	edges := make([]Pair, 0, 2*n)
	for len(edges) < 2*n {
		u := r.IntN(n - 1)
		v := u + 1 + r.IntN(overlap)
		if v >= n {
			continue
		}
		edges = append(edges, Pair{ID(u), ID(v)})
	}
	return ivs, edges
}

var benchSizes = []struct{ n, overlap int }{
	{10_000, 16}, {10_000, 64}, {10_000, 256},
	{100_000, 16}, {100_000, 64}, {100_000, 256},
}

// fullTooBig: a full n x n matrix at 100K is 1.25 GB and its Purdom build
// about n*overlap*n/64 word operations (minutes); the baseline runs at 10K.
func fullTooBig(n int) bool { return n > 20_000 }

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkBuild: Purdom+ (Build) on the compact closure against Purdom on
// a full matrix with the same time-edge reduction.
func BenchmarkBuild(b *testing.B) {
	for _, sz := range benchSizes {
		ivs, edges := workload(sz.n, sz.overlap)
		name := fmt.Sprintf("txns=%d/overlap=%d", sz.n, sz.overlap)
		b.Run(name+"/compact", func(b *testing.B) {
			before := heapInUse()
			c, cyc := Build(Options{RealTime: true}, ivs, edges)
			if cyc != nil {
				b.Fatal("cycle")
			}
			heap := heapInUse() - before
			resident := c.residentBytes()
			runtime.KeepAlive(c)
			b.ResetTimer()
			cpu := cpuNanos()
			for b.Loop() {
				Build(Options{RealTime: true}, ivs, edges)
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(resident), "resident-B")
			b.ReportMetric(float64(heap), "heap-B")
		})
		if fullTooBig(sz.n) {
			continue
		}
		b.Run(name+"/full", func(b *testing.B) {
			resident := newFull(ivs).bytes()
			b.ResetTimer()
			cpu := cpuNanos()
			for b.Loop() {
				f := newFull(ivs)
				f.purdom(edges)
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(resident), "resident-B")
		})
	}
}

// BenchmarkAddEdge: Italiano+ (AddEdge) per inserted edge, on a closure
// holding every transaction, against Italiano on a full matrix. One op
// inserts all 2n edges; ns/edge is the figure to read.
func BenchmarkAddEdge(b *testing.B) {
	for _, sz := range benchSizes {
		ivs, edges := workload(sz.n, sz.overlap)
		name := fmt.Sprintf("txns=%d/overlap=%d", sz.n, sz.overlap)
		b.Run(name+"/compact", func(b *testing.B) {
			var c *Closure
			newly := 0
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				c = New(Options{RealTime: true})
				for _, iv := range ivs {
					c.Append(iv.AdjStart, iv.AdjEnd)
				}
				newly = 0
				b.StartTimer()
				t0 := cpuNanos()
				for _, e := range edges {
					p, cyc := c.AddEdge(e.From, e.To)
					if cyc != nil {
						b.Fatal("cycle")
					}
					newly += len(p)
				}
				cpu += cpuNanos() - t0
			}
			b.ReportMetric(float64(cpu)/float64(b.N*len(edges)), "cpu-ns/edge")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(edges)), "ns/edge")
			b.ReportMetric(float64(newly)/float64(len(edges)), "newly/edge")
			b.ReportMetric(float64(c.residentBytes()), "resident-B")
		})
		if fullTooBig(sz.n) {
			continue
		}
		b.Run(name+"/full", func(b *testing.B) {
			var f *full
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				f = newFull(ivs)
				f.timeRows()
				b.StartTimer()
				t0 := cpuNanos()
				for _, e := range edges {
					if f.addEdge(int(e.From), int(e.To)) {
						b.Fatal("cycle")
					}
				}
				cpu += cpuNanos() - t0
			}
			b.ReportMetric(float64(cpu)/float64(b.N*len(edges)), "cpu-ns/edge")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(edges)), "ns/edge")
			b.ReportMetric(float64(f.bytes()), "resident-B")
		})
	}
}

// BenchmarkAppendEvict: the sliding window in steady state: append one
// transaction, add its two edges, evict the oldest, keeping 4*overlap live.
func BenchmarkAppendEvict(b *testing.B) {
	for _, overlap := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("overlap=%d", overlap), func(b *testing.B) {
			n := 200_000
			ivs, edges := workload(n, overlap)
			out := make([][]ID, n)
			for _, e := range edges {
				out[e.From] = append(out[e.From], e.To)
			}
			window := 4 * overlap
			c := New(Options{RealTime: true})
			next, oldest := 0, 0
			step := func() {
				if next == n {
					b.StopTimer()
					c, next, oldest = New(Options{RealTime: true}), 0, 0
					b.StartTimer()
				}
				c.Append(ivs[next].AdjStart, ivs[next].AdjEnd)
				// Edges into the new transaction from live ones.
				for u := max(oldest, next-overlap); u < next; u++ {
					for _, v := range out[u] {
						if int(v) == next {
							c.AddEdge(ID(u), v)
						}
					}
				}
				next++
				if next-oldest > window {
					c.Evict(ID(oldest))
					oldest++
				}
			}
			cpu := cpuNanos()
			for b.Loop() {
				step()
			}
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(c.residentBytes()), "resident-B")
		})
	}
}

// full is the baseline: one n-bit row per transaction.
type full struct {
	iv   []Interval
	w    int // words per row
	rows []uint64
}

func newFull(iv []Interval) *full {
	w := (len(iv) + 63) / 64
	return &full{iv: iv, w: w, rows: make([]uint64, len(iv)*w)}
}

func (f *full) row(i int) []uint64 { return f.rows[i*f.w : (i+1)*f.w] }
func (f *full) set(i, j int)       { f.row(i)[j/64] |= 1 << (j % 64) }
func (f *full) test(i, j int) bool { return f.row(i)[j/64]&(1<<(j%64)) != 0 }
func (f *full) bytes() int         { return len(f.rows) * 8 }

// firstAfter is the first index starting at or after t (distinct,
// increasing starts in the workload).
func (f *full) firstAfter(t int64) int {
	lo, hi := 0, len(f.iv)
	for lo < hi {
		m := (lo + hi) / 2
		if f.iv[m].AdjStart >= t {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

func (f *full) or(dst, src int) {
	d, s := f.row(dst), f.row(src)
	for k := range d {
		d[k] |= s[k]
	}
}

// purdom: reverse topological order (index order: every edge and time edge
// of the workload goes forward), each row the union of its successors'
// rows, time successors reduced to those starting before the earliest end
// among them, as in Build.
func (f *full) purdom(edges []Pair) {
	n := len(f.iv)
	succ := make([][]int, n)
	for _, e := range edges {
		succ[e.From] = append(succ[e.From], int(e.To))
	}
	sufMin := make([]int64, n+1)
	sufMin[n] = never
	for i := n - 1; i >= 0; i-- {
		sufMin[i] = min(sufMin[i+1], f.iv[i].AdjEnd)
	}
	for i := n - 1; i >= 0; i-- {
		for _, j := range succ[i] {
			f.set(i, j)
			f.or(i, j)
		}
		first := f.firstAfter(f.iv[i].AdjEnd)
		if first == n {
			continue
		}
		m := sufMin[first]
		last := f.firstAfter(m + 1)
		for j := first; j < last; j++ {
			f.set(i, j)
			f.or(i, j)
		}
		// Later ones follow the earliest-ending successor, whose row
		// holds them.
	}
}

// timeRows fills in the time edges (a suffix of each row).
func (f *full) timeRows() {
	n := len(f.iv)
	for i := range n {
		for j := f.firstAfter(f.iv[i].AdjEnd); j < n; j++ {
			f.set(i, j)
		}
	}
}

// addEdge is Italiano's update on the full matrix; it reports a cycle.
func (f *full) addEdge(u, v int) bool {
	if f.test(v, u) || u == v {
		return true
	}
	if f.test(u, v) {
		return false
	}
	for a := range len(f.iv) {
		if (a == u || f.test(a, u)) && !f.test(a, v) {
			f.set(a, v)
			f.or(a, v)
		}
	}
	return false
}
