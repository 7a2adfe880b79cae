package runcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
)

// TestBenchKafkaVsStdin is the harness for issue #7 acceptance 5, run on
// request only:
//
//	STREAMCHECK_BENCH_KAFKA=20000 go test -run TestBenchKafkaVsStdin -v -timeout 1h ./internal/runcmd/
//
// STREAMCHECK_BENCH_WORKLOAD=<gen preset> picks the stream [mixed];
// blindw-rw is issue #5's stream, whose transactions the engine evicts
// (the mixed workload's list keys stay pinned).
//
// On one generated stream (8 partitions) it measures, in one process:
// the Kafka ingest path alone (fetch + decode, no checking) against
// decoding the same events from memory; a whole `run` on stdin against
// the same `run` on Kafka with checkpoints; the checkpoint time and size;
// and restart-to-caught-up: a run resumed from a checkpoint at half the
// topic, timed until it has read the other half.
// STREAMCHECK_BENCH_CPUPROFILE=PREFIX writes a CPU profile of each run
// to PREFIX-<phase>.pprof; STREAMCHECK_BENCH_STATUS=10s shows the status
// lines of each run; STREAMCHECK_BENCH_PROC=1 runs the checkpointed Kafka
// run as the streamcheck binary in its own process and reports its RSS
// (the broker and the harness, which hold the whole stream, stay out of
// it).
func TestBenchKafkaVsStdin(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STREAMCHECK_BENCH_KAFKA"))
	if n == 0 {
		t.Skip("set STREAMCHECK_BENCH_KAFKA=N (transactions) to run the Kafka benchmark")
	}
	const parts = 8
	workload := os.Getenv("STREAMCHECK_BENCH_WORKLOAD")
	if workload == "" {
		workload = "mixed"
	}
	s := makeStreamOf(t, workload, 31, n, parts)
	addr := broker(t, parts, "txns", "half")
	t0 := time.Now()
	msgs := s.produce(t, addr, "txns")
	t.Logf("produced %d messages in %s", msgs, time.Since(t0).Round(time.Millisecond))
	var stdin bytes.Buffer
	for i := range s.merged {
		stdin.Write(ingest.AppendNative(nil, &s.merged[i]))
		stdin.WriteByte('\n')
	}
	t.Logf("stream: %d %s transactions, %d bytes of native JSON, %d partitions", msgs, workload, stdin.Len(), parts)

	// Ingest alone.
	t0 = time.Now()
	var dec ingest.NativeDecoder
	for _, l := range bytes.Split(bytes.TrimSpace(stdin.Bytes()), []byte{'\n'}) {
		if _, err := dec.Decode(l, history.Pos{Source: "bench"}); err != nil {
			t.Fatal(err)
		}
	}
	memDecode := time.Since(t0)
	ctx := context.Background()
	t0 = time.Now()
	src := ingest.NewKafkaSource(ctx, ingest.KafkaConfig{Brokers: []string{addr}, Topic: "txns", MaxWait: 50 * time.Millisecond,
		MaxBytes: 10 << 20, BackoffMin: 10 * time.Millisecond, BackoffMax: time.Second}, make([]int64, parts))
	for range msgs {
		if m := <-src.Messages(); m.Err != nil {
			t.Fatal(m.Err)
		}
	}
	kafkaIngest := time.Since(t0)
	src.Close()
	t.Logf("ingest only: memory decode %s (%.0f txn/s), kafka fetch+decode %s (%.0f txn/s, %.0f%% of memory)",
		memDecode.Round(time.Millisecond), float64(msgs)/memDecode.Seconds(),
		kafkaIngest.Round(time.Millisecond), float64(msgs)/kafkaIngest.Seconds(), 100*memDecode.Seconds()/kafkaIngest.Seconds())

	// Whole runs.
	t0 = time.Now()
	stop := benchProfile(t, "stdin")
	code, _, errb := benchMain(t, ctx, s.args("--tick", "100ms"), stdin.String())
	stdinRun := time.Since(t0)
	stop()
	if code == ExitError {
		t.Fatal(errb)
	}
	if testing.Verbose() {
		t.Log(errb)
	}
	t0 = time.Now()
	stop = benchProfile(t, "kafka")
	code, _, errb = benchMain(t, ctx, s.args(append(kafkaArgs(addr, "txns"), "--tick", "100ms")...), "")
	kafkaPlain := time.Since(t0)
	stop()
	if code == ExitError {
		t.Fatal(errb)
	}
	t.Logf("run: kafka without checkpoints %s (%.0f txn/s)", kafkaPlain.Round(time.Millisecond), float64(msgs)/kafkaPlain.Seconds())
	if testing.Verbose() {
		t.Log(errb)
	}
	dir := t.TempDir()
	t0 = time.Now()
	stop = benchProfile(t, "ckpt")
	ckptArgs := s.args(append(append(kafkaArgs(addr, "txns"), "--tick", "100ms", "--state-dir", filepath.Join(dir, "full"), "--checkpoint-every", "10000"), benchKafkaArgs()...)...)
	if os.Getenv("STREAMCHECK_BENCH_PROC") != "" {
		code, errb = benchProcess(t, ckptArgs)
	} else {
		code, _, errb = benchMain(t, ctx, ckptArgs, "")
	}
	kafkaRun := time.Since(t0)
	stop()
	if code == ExitError {
		t.Fatal(errb)
	}
	t.Logf("run: stdin %s (%.0f txn/s), kafka with checkpoints %s (%.0f txn/s, %.0f%% of stdin)",
		stdinRun.Round(time.Millisecond), float64(msgs)/stdinRun.Seconds(),
		kafkaRun.Round(time.Millisecond), float64(msgs)/kafkaRun.Seconds(), 100*stdinRun.Seconds()/kafkaRun.Seconds())
	if m := regexp.MustCompile(`checkpoint \d+ took [^,]+, \d+ snapshot bytes, state directory \d+ bytes`).FindString(errb); m != "" {
		t.Logf("kafka run's last %s", m)
	}

	// Restart to caught up: a run reads the first half of each
	// partition and checkpoints; the second half is produced; a resumed
	// run is timed until it has read everything.
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, "half")
	defer w.Close()
	// The halves split the producers' timeline, not each partition: the
	// first run then ends on a prefix of the stream (a partition's own
	// half would hold reads whose writers sit in another partition's
	// second half, and end of input would alert on them).
	firstHalf := map[string]bool{}
	for _, tx := range s.merged[:len(s.merged)/2] {
		firstHalf[tx.ID] = true
	}
	produce := func(first bool) {
		var ps []int
		var vals [][]byte
		for p, txns := range s.parts {
			h := 0
			for h < len(txns) && firstHalf[txns[h].ID] {
				h++
			}
			lo, hi := 0, h
			if !first {
				lo, hi = h, len(txns)
			}
			for i := lo; i < hi; i++ {
				ps, vals = append(ps, p), append(vals, ingest.AppendNative(nil, &txns[i]))
			}
		}
		if err := w.WritePartitioned(ctx, ps, vals); err != nil {
			t.Fatal(err)
		}
	}
	t0 = time.Now()
	produce(true)
	t.Logf("produced the first half in %s", time.Since(t0).Round(time.Millisecond))
	st := filepath.Join(dir, "half")
	halfArgs := s.args(append(kafkaArgs(addr, "half"), "--tick", "100ms", "--state-dir", st, "--checkpoint-every", "10000")...)
	t0 = time.Now()
	stop = benchProfile(t, "first-half")
	code, _, errb = benchMain(t, ctx, halfArgs, "")
	stop()
	if code == ExitError {
		t.Fatal(errb)
	}
	t.Logf("first half read and checkpointed in %s", time.Since(t0).Round(time.Millisecond))
	if testing.Verbose() {
		t.Log(errb)
	}
	t0 = time.Now()
	produce(false)
	t.Logf("produced the second half in %s", time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	stop = benchProfile(t, "resume")
	code, _, errb = benchMain(t, ctx, halfArgs, "")
	resumed := time.Since(t0)
	stop()
	if code == ExitError {
		t.Fatal(errb)
	}
	t.Logf("restart to caught up: resumed from a checkpoint at %d of %d messages, read the rest and ended in %s",
		msgs/2, msgs, resumed.Round(time.Millisecond))
}

// benchProfile logs the CPU time the process spent in one phase (broker
// included: on a loaded machine it says more than the wall time), and
// writes a CPU profile of it when STREAMCHECK_BENCH_CPUPROFILE is set;
// the returned func ends the phase.
func benchProfile(t *testing.T, phase string) func() {
	cpu0 := processCPU()
	stop := func() {}
	if prefix := os.Getenv("STREAMCHECK_BENCH_CPUPROFILE"); prefix != "" {
		f, err := os.Create(prefix + "-" + phase + ".pprof")
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		stop = func() {
			pprof.StopCPUProfile()
			f.Close()
		}
	}
	return func() {
		stop()
		t.Logf("phase %s: %s of CPU (user+sys, whole process)", phase, (processCPU() - cpu0).Round(time.Millisecond))
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchMain is runMain with STREAMCHECK_BENCH_STATUS (a --status
// interval) appended, to watch the window and engine during a phase.
func benchMain(t *testing.T, ctx context.Context, args []string, stdin string) (int, string, string) {
	if v := os.Getenv("STREAMCHECK_BENCH_STATUS"); v != "" {
		args = append(args, "--status", v)
	}
	return runMain(t, ctx, args, stdin)
}

// benchProcess runs `streamcheck run args` as its own process and logs
// its peak resident set and a series at 10 s.
func benchProcess(t *testing.T, args []string) (int, string) {
	r := runProcess(t, args, nil)
	t.Logf("checker process: peak RSS %d MB (sampled every second); RSS every 10 s (MB): %s", r.peakKB>>10, strings.Join(r.series, ", "))
	return r.code, r.stderr
}

// procRun is how a `streamcheck run` process went.
type procRun struct {
	code   int
	stderr string
	wall   time.Duration
	cpu    time.Duration // user + system
	peakKB int64         // resident set, sampled every second
	series []string      // resident set every 10 s, MB
}

func (r procRun) summary(txns int) string {
	s := fmt.Sprintf("%s wall, %s CPU", r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond))
	if txns > 0 {
		s += fmt.Sprintf(", %.0f txn/s", float64(txns)/r.wall.Seconds())
	}
	return s + fmt.Sprintf(", peak RSS %d MB; RSS every 10 s (MB): %s", r.peakKB>>10, strings.Join(r.series, " "))
}

// runProcess runs `streamcheck run args` as its own process, stdin from
// in (nil: none), and samples its resident set every second.
// STREAMCHECK_BENCH_HTTP=ADDR has it serve /metrics and /debug/pprof on
// ADDR, to profile it while it runs.
func runProcess(t *testing.T, args []string, in *os.File) procRun {
	bin, err := buildBinary()
	if err != nil {
		t.Fatal(err)
	}
	if v := os.Getenv("STREAMCHECK_BENCH_STATUS"); v != "" {
		args = append(args, "--status", v)
	}
	cmd := exec.Command(bin, append([]string{"run", "--http=" + os.Getenv("STREAMCHECK_BENCH_HTTP")}, args...)...)
	if in != nil {
		cmd.Stdin = in
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	sampled := make(chan struct{})
	var r procRun
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		rss := regexp.MustCompile(`VmRSS:\s+(\d+) kB`)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
			if err != nil {
				continue
			}
			if m := rss.FindSubmatch(b); m != nil {
				kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
				r.peakKB = max(r.peakKB, kb)
				if i%10 == 9 {
					r.series = append(r.series, strconv.FormatInt(kb>>10, 10))
				}
			}
		}
	}()
	err = cmd.Wait()
	r.wall = time.Since(t0)
	close(done)
	<-sampled
	r.code, r.stderr = cmd.ProcessState.ExitCode(), errb.String()
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err != nil && r.code < 0 {
		t.Fatalf("streamcheck run: %v\n%s", err, r.stderr)
	}
	return r
}

// lastLine is s's last non-empty line.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
