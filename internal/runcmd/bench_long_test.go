package runcmd

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestBenchKafkaLong is issue #7 acceptance 5's long run, on request
// only:
//
//	STREAMCHECK_BENCH_KAFKA_LONG=10000000 go test -run TestBenchKafkaLong -v -timeout 2h ./internal/runcmd/
//
// It generates issue #5's blindw-rw stream (seed 11, as
// scripts/run-stream-bench.sh) without holding it: each transaction goes
// to a random one of 8 partitions of the in-process broker, in batches,
// and to a file of native JSON lines. Then, each as the streamcheck
// binary in its own process with its resident set sampled every second:
// `run` on stdin from that file; `run` on the topic with a checkpoint
// every 10,000 transactions; and a restart of that run on its state
// directory with nothing new to read (restart to caught up with the
// whole stream's state). The broker and the producer live in the test
// process, outside the measured ones, but share the machine's cores
// with them.
func TestBenchKafkaLong(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("STREAMCHECK_BENCH_KAFKA_LONG"))
	if n == 0 {
		t.Skip("set STREAMCHECK_BENCH_KAFKA_LONG=N (transactions) to run the long Kafka benchmark")
	}
	const parts = 8
	addr := broker(t, parts, "txns")
	dir := t.TempDir()
	file := filepath.Join(dir, "stream.jsonl")
	t0 := time.Now()
	bytes := produceGenerated(t, addr, "txns", file, n, parts)
	t.Logf("produced %d blindw-rw transactions (%d bytes of native JSON) to %d partitions and a file in %s",
		n, bytes, parts, time.Since(t0).Round(time.Millisecond))

	args := []string{"--lateness", "20ms", "--status", "0"}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stdin := runProcess(t, append([]string{"--source", "-"}, args...), f)
	t.Logf("stdin: %s", stdin.summary(n))
	if stdin.code == ExitError {
		t.Fatal(stdin.stderr)
	}

	st := filepath.Join(dir, "state")
	kafkaRun := append(append(kafkaArgs(addr, "txns"), args...), "--state-dir", st, "--checkpoint-every", "10000")
	kafkaRun = append(kafkaRun, benchKafkaArgs()...)
	kafka := runProcess(t, kafkaRun, nil)
	t.Logf("kafka with checkpoints: %s, %.0f%% of stdin", kafka.summary(n), 100*stdin.wall.Seconds()/kafka.wall.Seconds())
	if kafka.code == ExitError {
		t.Fatal(kafka.stderr)
	}
	t.Logf("kafka run's end: %s", lastLine(kafka.stderr))
	size, err := dirSize(st)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(st, "streamcheck-bodies")); err == nil {
		t.Logf("state directory %d MB on disk; body file %d MB long", size>>20, fi.Size()>>20)
	}
	restart := runProcess(t, kafkaRun, nil)
	if restart.code == ExitError {
		t.Fatal(restart.stderr)
	}
	t.Logf("restart to caught up on the state of %d transactions (%d MB on disk), nothing new to read: %s",
		n, size>>20, restart.summary(0))
}

// produceGenerated streams a generated blindw-rw history to random
// partitions of topic and to file, and returns the bytes written.
func produceGenerated(t *testing.T, addr, topic, file string, n, parts int) int64 {
	cfg, err := gen.Preset("blindw-rw")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Seed = n, 11
	out, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	ctx := context.Background()
	w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, topic)
	defer w.Close()
	rng := rand.New(rand.NewPCG(11, 7))
	const batch = 20000
	var ps []int
	var vals [][]byte
	var written int64
	flush := func() error {
		if err := w.WritePartitioned(ctx, ps, vals); err != nil {
			return err
		}
		ps, vals = ps[:0], vals[:0]
		return nil
	}
	if _, err := gen.GenerateStream(cfg, func(tx history.Txn) error {
		v := ingest.AppendNative(nil, &tx)
		written += int64(len(v)) + 1
		bw.Write(v)
		bw.WriteByte('\n')
		ps, vals = append(ps, rng.IntN(parts)), append(vals, v)
		if len(vals) == batch {
			return flush()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return written
}

// dirSize is what dir's files take on disk: the body file, whose old
// records retention punches out, by its blocks rather than its length.
func dirSize(dir string) (int64, error) {
	var size int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				size += min(fi.Size(), st.Blocks*512)
			} else {
				size += fi.Size()
			}
		}
		return err
	})
	return size, err
}
