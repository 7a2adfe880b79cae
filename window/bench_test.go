package window

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// BenchmarkSteady: Add, Release and PopClosed per transaction at steady
// state. P partitions deliver in turn (with an idle timeout that never
// fires, in one case: the idle check must not rescan every time); starts grow by 1µs per transaction
// with a jitter of up to half the lateness, durations up to 1/4 of it, so
// about lateness/1µs transactions are buffered and as many are open. The
// ID set remembers the IDs within the lateness of W (doc.go W5), so its
// size, idsetKB, does not grow with b.N. IDs are made in the loop, as a
// decoder would.
func BenchmarkSteady(b *testing.B) {
	for _, sz := range []struct {
		parts    int
		lateness int64
		idle     int64
	}{{1, 1e6, 0}, {32, 1e6, 0}, {32, 1e6, 1e6}, {32, 1e8, 0}} {
		b.Run(fmt.Sprintf("partitions=%d/buffered=%d/idle=%v", sz.parts, sz.lateness/1000, sz.idle > 0), func(b *testing.B) {
			w, err := New(Config{Partitions: sz.parts, Lateness: sz.lateness, Skew: 1000, InDoubt: 1e6, IdleTimeout: sz.idle})
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			ops := []history.Op{{Kind: history.Write, Key: "x", Value: "1"}}
			var rel []history.Txn
			var cl []Closing
			var idb []byte
			i := int64(0)
			mk := func() history.Txn {
				clock := i * 1000
				s := clock - r.Int64N(sz.lateness/2)
				idb = strconv.AppendInt(idb[:0], i, 36)
				x := history.Txn{ID: string(idb), HasTime: true, Start: s, End: s + r.Int64N(sz.lateness/4), Ops: ops}
				if i%50 == 0 {
					x.Status = history.Unknown
				}
				i++
				return x
			}
			// Warm up to steady state: the buffer and the open heap full.
			for range 4 * sz.lateness / 1000 {
				if d := w.Add(int(i)%sz.parts, mk()); d != nil {
					b.Fatal(d)
				}
				rel = w.Release(rel[:0])
				cl = w.PopClosed(cl[:0])
			}
			cpu0 := cpuNanos()
			for b.Loop() {
				if d := w.Add(int(i)%sz.parts, mk()); d != nil {
					b.Fatal(d)
				}
				rel = w.Release(rel[:0])
				cl = w.PopClosed(cl[:0])
			}
			if cpu := cpuNanos() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}
			s := w.Stats()
			b.ReportMetric(float64(s.Buffered), "buffered")
			b.ReportMetric(float64(s.Open), "open")
			b.ReportMetric(float64(w.ids.bytes())/1024, "idsetKB")
			if s.IdleTransitions > 0 {
				b.Fatalf("%d idle transitions in a steady stream", s.IdleTransitions)
			}
		})
	}
}
