package online

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

// TestStepGrowth streams $STREAMCHECK_GROWTH_TXNS transactions of the
// issue #5 stream (blindw-rw, 32 sessions, 8 ops, 5K keys) through the
// evicting engine, a step every 800, and logs every 100 steps the step
// time and the sizes of what a step walks: the instance, the window, the
// ghosts and the engine's maps. It answers "what grows with the stream"
// for the per-step cost; skipped without the variable.
//
//	STREAMCHECK_GROWTH_TXNS=1000000 go test ./online -run TestStepGrowth -v -timeout 1h
func TestStepGrowth(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("STREAMCHECK_GROWTH_TXNS"))
	if err != nil || n <= 0 {
		t.Skip("STREAMCHECK_GROWTH_TXNS not set")
	}
	h := probeHistory(t, "blindw-rw", n, 5000)
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.InitialState = history.InitialUnknown
	txns := byStart(h)
	h = nil
	o := NewOnlineConfig(opts, OnlineConfig{Evict: true})
	ctx := context.Background()
	var stepTime, cpuAll, cpuSteps time.Duration
	var alloc, mallocs uint64
	cpu := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var inst, steps int
	start := time.Now()
	feedInStartOrder(o, opts, txns, func(i int) {
		if (i+1)%800 != 0 {
			return
		}
		st := &o.ev
		inst += len(st.memberList())
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		a0, m0 := ms.TotalAlloc, ms.Mallocs
		t0, c0 := time.Now(), cpu()
		if _, err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		stepTime += time.Since(t0)
		cpuAll += cpu() - c0
		cpuSteps += cpu() - c0
		runtime.ReadMemStats(&ms)
		alloc += ms.TotalAlloc - a0
		mallocs += ms.Mallocs - m0
		steps++
		if steps%100 == 0 {
			s := o.Stats()
			t.Logf("released %d: %.2f ms/step (CPU %.2f), members %d, window %d, ghosts %d, kept %d, liveOf %d, initVal %d, replaced %d, ghostOps %d (%.0f s)",
				i+1, float64(stepTime.Microseconds())/1000/float64(steps), float64(cpuSteps.Microseconds())/1000/float64(steps), inst/steps, s.Window, s.Ghosts,
				len(st.Kept), len(st.LiveOf), len(st.InitVal), len(st.Replaced), len(st.ghostOps), time.Since(start).Seconds())
			stepTime, cpuSteps, inst, steps = 0, 0, 0, 0
		}
	})
	t.Logf("steps' CPU (user+sys, GC included) %.2f s, allocated %d MB in %d allocations", cpuAll.Seconds(), alloc>>20, mallocs)
}
