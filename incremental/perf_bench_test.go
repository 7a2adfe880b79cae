package incremental

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// BenchmarkCheck measures Check on generated histories of issue #4's
// shape (32 sessions, 8 operations, 5K keys), the CLI's offline check
// without ingest. Besides time it reports peak-heap-MB, the largest live
// heap sampled every millisecond during the iterations (the RSS of
// `streamcheck check` is roughly this plus the decoded history and the
// runtime's slack), and conflicts per check.
//
//	go test ./incremental -run '^$' -bench Check -benchtime 3x
//	go test ./incremental -run '^$' -bench 'Check/txns=100000/' -benchtime 1x
//
// Serializable without time edges pairs every two writers of a key; it
// runs (10K transactions only) with STREAMCHECK_BENCH_SERIALIZABLE=1 and
// takes minutes.
func BenchmarkCheck(b *testing.B) {
	type run struct {
		txns     int
		level    history.Level
		workload string
	}
	var runs []run
	for _, n := range []int{10000, 100000} {
		for _, wl := range []string{"blindw-rw", "mixed"} {
			runs = append(runs, run{n, history.StrictSerializable, wl})
			if n <= 10000 && os.Getenv("STREAMCHECK_BENCH_SERIALIZABLE") != "" {
				runs = append(runs, run{n, history.Serializable, wl})
			}
		}
	}
	for _, r := range runs {
		b.Run(fmt.Sprintf("txns=%d/level=%s/workload=%s", r.txns, r.level, r.workload), func(b *testing.B) {
			cfg, err := gen.Preset(r.workload)
			if err != nil {
				b.Fatal(err)
			}
			cfg.Txns, cfg.Seed = r.txns, 1
			h, _, err := gen.Generate(cfg)
			if err != nil {
				b.Fatal(err)
			}
			opts := history.DefaultOptions()
			opts.Level = r.level
			peak := newHeapPeak()
			var conflicts int64
			for b.Loop() {
				res, err := Check(context.Background(), h, opts, Config{})
				if err != nil {
					b.Fatal(err)
				}
				if res.Verdict != Valid {
					b.Fatalf("verdict %s on a generated history without anomalies", res.Verdict)
				}
				conflicts += res.Stats.Conflicts
			}
			b.StopTimer()
			b.ReportMetric(float64(peak.stop())/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(conflicts)/float64(b.N), "conflicts/op")
		})
	}
}

// heapPeak samples the live heap objects on a ticker. GC runs first so
// that the generator's garbage does not count.
type heapPeak struct {
	done chan struct{}
	wg   sync.WaitGroup
	max  uint64
}

func newHeapPeak() *heapPeak {
	runtime.GC()
	p := &heapPeak{done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > p.max {
			p.max = v
		}
	}
	read()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.done:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return p
}

func (p *heapPeak) stop() uint64 {
	close(p.done)
	p.wg.Wait()
	return p.max
}
