package sionline

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/window"
)

// TestSI30Counters streams a native file (STREAMCHECK_SI30_FILE) as
// `run --lateness 10ms --initial-state empty` does (tick 100ms) and logs
// the engine's counters: where a run's steps go (failed screens, named
// segments, re-admissions, resets). Skipped without the variable.
func TestSI30Counters(t *testing.T) {
	path := os.Getenv("STREAMCHECK_SI30_FILE")
	if path == "" {
		t.Skip("STREAMCHECK_SI30_FILE not set")
	}
	h, _, err := ingest.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := history.Options{Level: history.StrongSnapshotIsolation, InDoubt: 60e9, InitialState: history.InitialEmpty}
	wcfg := window.Config{Partitions: 1, Lateness: 10e6, InDoubt: opts.InDoubt}
	order := make([]int, len(h.Txns))
	for i := range order {
		order[i] = i
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SI30_WAIT")); err == nil && n >= 0 {
		defer func(w int) { WaitWindow = w }(WaitWindow)
		WaitWindow = n
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_SI30_SEG")); err == nil && n > 0 {
		defer func(s int) { segTxns = s }(segTxns)
		segTxns = n
	}
	t0 := time.Now()
	al, eng := feed(t, h, opts, wcfg, arrival{order: order, batch: 1, tick: 100e6, restart: -1})
	st := eng.Stats()
	t.Logf("%d txns, %d alerts, %v: checks %d resets %d readmits %d diagnosed %d failed %d serial %d gaveup %d companions %d evicted %d segs %d readmitted %d",
		len(h.Txns), len(al), time.Since(t0), st.Checks, eng.resets, eng.readmits, eng.diagnosed, eng.failedScreens, eng.serialScreens, eng.sweepGaveUp, eng.companions, st.Evicted, len(eng.arch.segs), eng.readmitted)
}
