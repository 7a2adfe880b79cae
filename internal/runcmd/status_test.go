package runcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStatusLineLagIsWallClock: events stamped 10 s in the past, read as
// they come: the checker is 10 s behind the wall clock, which the
// watermark-lag metric and /readyz say. The status line says the same
// (it said the lateness, 2.0 s, measured from the newest event), with
// the transactions in and checked per second.
func TestStatusLineLagIsWallClock(t *testing.T) {
	m := waitStatusLine(t, time.Microsecond, "2s", `run: 50 messages;.*; ([0-9.]+) txn/s in, ([0-9.]+) txn/s checked; lag ([0-9.]+) s behind the wall clock;`)
	if m == nil {
		t.Fatal("no status line with the wall-clock lag and rates")
	}
	if lag, _ := strconv.ParseFloat(m[3], 64); lag < 9.5 || lag > 60 {
		t.Errorf("status line lag %s s, want about 10 s (the wall clock minus the newest start):\n%s", m[3], m[0])
	}
}

// TestStatusLineCountsGhosts: writers of keys nobody writes again leave
// the window as ghosts (each the live version of its key) and stay in the
// reduced instance; the status line counts them beside the window, since
// a stream whose instance grows by its ghosts shows nothing in the
// window or the pinned count (BENCHMARKS.md, "rmw2m").
func TestStatusLineCountsGhosts(t *testing.T) {
	m := waitStatusLine(t, 20*time.Millisecond, "10ms", `engine ([0-9]+) in the instance and ([1-9][0-9]*) ghosts, [0-9]+ pinned`)
	if m == nil {
		t.Fatal("no status line counting the ghosts")
	}
	if g, _ := strconv.Atoi(m[2]); g > 50 {
		t.Errorf("status line counts %d ghosts of 50 transactions:\n%s", g, m[0])
	}
}

// waitStatusLine runs a followed file of 50 blind writes of distinct
// keys, stamped from 10 s in the past and spaced apart, with the given
// lateness and a status line every 20 ms, until a status line matches
// pattern (or 10 s pass); it returns the match, nil if none, and logs
// run's output when there is none.
func waitStatusLine(t *testing.T, spacing time.Duration, lateness, pattern string) []string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "events.jsonl")
	base := time.Now().Add(-10 * time.Second).UnixNano()
	var b strings.Builder
	for i := range 50 {
		s := base + int64(i)*int64(spacing)
		fmt.Fprintf(&b, `{"id":"t%d","start":%d,"end":%d,"status":"committed","ops":[["w","x%d",1]]}`+"\n", i, s, s+500, i)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"--http=", "--source", src, "--lateness", lateness, "--tick", "1ms", "--status", "20ms", "--poll", "5ms"}, nil, &syncBuffer{}, logs)
	}()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(10 * time.Second)
	var m []string
	for m == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		m = re.FindStringSubmatch(logs.String())
	}
	cancel()
	<-done
	if m == nil {
		t.Logf("run's output:\n%s", logs.String())
	}
	return m
}
