package driver

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// TestDriveFile runs a recorded or generated file through the driver, the
// window and the evicting engine as `run` steps them (ticks of 100 ms,
// the file's lines as one partition in file order), with the compact
// closure on or off (OnlineConfig.NoClosure), and logs the steps, the
// largest window and the closure's counters. It is the closure on/off
// comparison of BENCHMARKS.md ("live22"), one mode per process so that
// /usr/bin/time measures it:
//
//	go test -c -o drive.test ./driver
//	STREAMCHECK_DRIVE_FILE=pg-100k.jsonl STREAMCHECK_DRIVE_CLOSURE=off \
//	  /usr/bin/time -f '%e %U %S %M' ./drive.test -test.run TestDriveFile -test.v
//
// STREAMCHECK_DRIVE_LATENESS and STREAMCHECK_DRIVE_SKEW (durations;
// 700ms and 1ms, the recording's `run` flags) and STREAMCHECK_DRIVE_TXNS
// (a prefix) tune it. Events the window refuses (late ones) are counted
// and dropped: `run` dead-letters them. Without the file it is skipped.
func TestDriveFile(t *testing.T) {
	f := os.Getenv("STREAMCHECK_DRIVE_FILE")
	if f == "" {
		t.Skip("STREAMCHECK_DRIVE_FILE not set")
	}
	h, _, err := ingest.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_DRIVE_TXNS")); err == nil && n > 0 && n < len(h.Txns) {
		h.Txns = h.Txns[:n]
	}
	dur := func(env string, def time.Duration) int64 {
		if d, err := time.ParseDuration(os.Getenv(env)); err == nil {
			return d.Nanoseconds()
		}
		return def.Nanoseconds()
	}
	opts := history.DefaultOptions()
	opts.Level = history.StrictSerializable
	opts.Skew = dur("STREAMCHECK_DRIVE_SKEW", time.Millisecond)
	cfg := Config{Tick: (100 * time.Millisecond).Nanoseconds(), Skew: opts.Skew, Lateness: dur("STREAMCHECK_DRIVE_LATENESS", 700*time.Millisecond)}
	win, err := window.New(window.Config{Partitions: 1, Lateness: cfg.Lateness, Skew: opts.Skew, InDoubt: opts.InDoubt})
	if err != nil {
		t.Fatal(err)
	}
	off := os.Getenv("STREAMCHECK_DRIVE_CLOSURE") == "off"
	eng := online.NewOnlineConfig(opts, online.OnlineConfig{Evict: true, NoClosure: off})
	d := New(cfg, win, eng, NewState(1))
	ctx := context.Background()
	maxWindow, alerts, refused := 0, 0, 0
	drain := func() {
		for d.HasReady() {
			rd, err := d.Ready(ctx)
			if err != nil {
				t.Fatal(err)
			}
			alerts += len(rd.Alerts)
			maxWindow = max(maxWindow, eng.Stats().Window)
		}
	}
	t0 := time.Now()
	for i, x := range h.Txns {
		if d.Accept(0, int64(i), x, 0) != nil {
			refused++
		}
		drain()
	}
	d.EndInput()
	drain()
	rd, err := d.Final(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alerts += len(rd.Alerts)
	st := eng.Stats()
	t.Logf("closure off=%v: %d txns (%d refused), %d steps, %v wall, max window %d, %d alerts, %d disagreements; order questions: %d proved by the closure, %d around an unknown, %d probes; %d closure builds",
		off, len(h.Txns), refused, st.Steps, time.Since(t0).Round(time.Millisecond), maxWindow, alerts, st.Disagreements, st.Closure.Hits, st.Closure.Around, st.Closure.Probes, st.Closure.Builds)
	if st.Disagreements != 0 {
		t.Errorf("%d disagreements", st.Disagreements)
	}
}
