package runcmd

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// buildBinary builds cmd/streamcheck once per test process: the crash
// harness kills the real binary, not a goroutine.
var buildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "streamcheck-crash")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "streamcheck")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/streamcheck/streamcheck/cmd/streamcheck").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// alertFileIDs reads the set of alert ids in an alerts file.
func alertFileIDs(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	ids, _ := alertIDs(t, string(b))
	slices.Sort(ids)
	return ids
}

// TestCrashHarness is issue #7 acceptance 3: the streamcheck binary reads
// a topic from the in-process broker with frequent checkpoints and is
// killed with SIGKILL at random moments (many inside a checkpoint write:
// one is due every few messages), then restarted, until it reaches the
// end of the topic. The alert ids delivered over all runs are exactly an
// uninterrupted run's (an alert may repeat, never vanish), and the
// checkpointed totals count every message exactly once.
//
// STREAMCHECK_CRASH_KILLS sets the number of kills (default 5; the
// acceptance run is 50), STREAMCHECK_CRASH_TXNS the stream's length
// (default 1000; at 20000 the state directory's memtables flush, so the
// kills also land among Pebble's blob files), STREAMCHECK_CRASH_ARGS
// flags for both runs (--retention-max-bytes 100000 has retention delete
// bodies, copy records forward and punch the file between kills, once
// the stream passes a few rewind points: 40,000 transactions of the
// blindw-rw preset, STREAMCHECK_CRASH_PRESET, whose list-free keys let
// the window stay small), STREAMCHECK_CRASH_PRESET the gen preset
// (default mixed):
//
//	STREAMCHECK_CRASH_KILLS=50 go test -run TestCrashHarness -v -timeout 30m ./internal/runcmd/
func TestCrashHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	kills := 5
	if raceEnabled {
		kills = 2
	}
	if s := os.Getenv("STREAMCHECK_CRASH_KILLS"); s != "" {
		var err error
		if kills, err = strconv.Atoi(s); err != nil {
			t.Fatalf("STREAMCHECK_CRASH_KILLS: %v", err)
		}
	}
	txns := 1000
	if s := os.Getenv("STREAMCHECK_CRASH_TXNS"); s != "" {
		var err error
		if txns, err = strconv.Atoi(s); err != nil {
			t.Fatalf("STREAMCHECK_CRASH_TXNS: %v", err)
		}
	}
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	preset := "mixed"
	if p := os.Getenv("STREAMCHECK_CRASH_PRESET"); p != "" {
		preset = p
	}
	s := makeStreamOf(t, preset, 21, txns, 4, "lost-update", "write-skew", "G1c")
	addr := broker(t, 4, "txns")
	n := s.produce(t, addr, "txns")
	dir := t.TempDir()
	args := func(name string) []string {
		return append(append([]string{"run"}, s.args(append(kafkaArgs(addr, "txns"),
			"--state-dir", filepath.Join(dir, name), "--alerts", filepath.Join(dir, name+".alerts"),
			"--checkpoint-every", "25", "--group", name)...)...), strings.Fields(os.Getenv("STREAMCHECK_CRASH_ARGS"))...)
	}
	t0 := time.Now()
	cmd := exec.Command(bin, args("clean")...)
	if out, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	clean := time.Since(t0)
	want := alertFileIDs(t, filepath.Join(dir, "clean.alerts"))
	wantTotals := totals(t, filepath.Join(dir, "clean"))
	if len(want) == 0 {
		t.Fatal("the uninterrupted run raised no alert; the comparison would prove nothing")
	}

	// Each run is killed after a random delay drawn so that, on average,
	// the kills spread over the whole run.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	maxDelay := 2*clean/time.Duration(kills) + 20*time.Millisecond
	killed, finished := 0, false
	for !finished {
		cmd := exec.Command(bin, args("crash")...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var timer <-chan time.Time
		if killed < kills {
			timer = time.After(time.Duration(rng.Int64N(int64(maxDelay))))
		}
		select {
		case <-exited:
			if code := cmd.ProcessState.ExitCode(); code > 1 {
				t.Fatalf("run after %d kills: exit %d\n%s", killed, code, stderr.String())
			}
			finished = true
		case <-timer:
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			killed++
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
			t.Fatalf("run after %d kills hangs\n%s", killed, stderr.String())
		}
	}
	got := alertFileIDs(t, filepath.Join(dir, "crash.alerts"))
	got = slices.Compact(got)
	if !slices.Equal(got, want) {
		t.Errorf("after %d kills: alert ids %v, uninterrupted %v", killed, got, want)
	}
	gotTotals := totals(t, filepath.Join(dir, "crash"))
	if gotTotals["messages"] != uint64(n) || !sameTotals(gotTotals, wantTotals) {
		t.Errorf("after %d kills: totals %v, uninterrupted %v (%d messages)", killed, gotTotals, wantTotals, n)
	}
	t.Logf("%d kills (uninterrupted run %s, kill delays up to %s), %d alerts, %d messages", killed, clean.Round(time.Millisecond), maxDelay.Round(time.Millisecond), len(want), n)
}

// TestSIGTERM: SIGTERM finishes the message in hand, checkpoints and
// exits 0; the next run resumes from that checkpoint.
func TestSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	s := makeStream(t, 22, 300, 2)
	addr := broker(t, 2, "txns")
	s.produce(t, addr, "txns")
	dir := t.TempDir()
	// No stop-at-end: a daemon, stopped by SIGTERM once it has read
	// everything and says so in its status line.
	cmd := exec.Command(bin, append([]string{"run"}, s.args("--source", "kafka", "--brokers", addr, "--topic", "txns",
		"--state-dir", filepath.Join(dir, "st"), "--status", "50ms")...)...)
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(pr)
	var log strings.Builder
	all := fmt.Sprintf("run: %d messages;", len(s.h.Txns))
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), all) {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "interrupted") {
		t.Errorf("no summary after SIGTERM:\n%s", log.String())
	}
	tot := totals(t, filepath.Join(dir, "st"))
	if tot["messages"] != uint64(len(s.h.Txns)) {
		t.Errorf("checkpoint after SIGTERM covers %d messages, want %d", tot["messages"], len(s.h.Txns))
	}
}
