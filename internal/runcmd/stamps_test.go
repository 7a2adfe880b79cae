package runcmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/ingest"
)

// stampedLine is a committed native event with commit_ts and start_ts
// both cts.
func stampedLine(id string, s, e, cts int64, ops string) string {
	return `{"id":"` + id + `","start":` + itoa(s) + `,"end":` + itoa(e) + `,"commit_ts":` + itoa(cts) + `,"start_ts":` + itoa(cts) + `,"status":"committed","ops":[` + ops + `]}` + "\n"
}

// TestRunStamps: run --stamps takes each event's commit_ts and start_ts
// to stamponline (docs/SEMANTICS.md §10 "Online with facts"): a valid
// stamped stream passes on the stamps alone; OF1 (valid, its stamps
// contradicting a read) exits 1 with the inconsistency alert, never an
// isolation one; a lost update exits 1 with an isolation alert; and a
// state directory is refused until the engine has a checkpoint.
func TestRunStamps(t *testing.T) {
	line := stampedLine
	for _, c := range []struct {
		name, level, in string
		code            int
		out, err        string
	}{
		{"valid", "serializable", line("A", 0, 3, 1, `["w","x",1]`) + line("B", 5, 8, 2, `["r","x",1],["w","x",2]`), ExitOK, "", "never: the stamps' witness held"},
		{"valid-si", "snapshot-isolation", line("A", 0, 3, 1, `["w","x",1]`) + line("B", 5, 8, 2, `["r","x",1],["w","x",2]`), ExitOK, "", "never: the stamps' witness held"},
		{"OF1", "serializable", line("A", 0, 3, 1, `["w","x",1]`) + line("B", 1, 30, 3, `["w","x",2]`) + line("C", 10, 12, 2, `["r","x",2]`), ExitAnomaly, "stamps-inconsistent-with-reads", "fell back to the black-box engine: txn C reads"},
		{"lost-update", "serializable", line("A", 0, 10, 1, `["r","x",null],["w","x",1]`) + line("B", 1, 11, 2, `["r","x",null],["w","x",2]`), ExitAnomaly, "G2", "fell back"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Main(context.Background(), []string{"--stamps", "--level", c.level, "--http=", "--status", "0", "--initial-state", "empty", "--lateness", "1", "--tick", "5"}, strings.NewReader(c.in), &out, &errb)
			if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
				t.Fatalf("exit %d (want %d)\nout %q (want %q)\nerr %q (want %q)", code, c.code, out.String(), c.out, errb.String(), c.err)
			}
			if c.name == "OF1" && strings.Contains(out.String(), `"G`) {
				t.Errorf("an isolation alert on a valid history: %s", out.String())
			}
		})
	}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"--stamps", "--state-dir", t.TempDir(), "--source", "x.jsonl", "--http="}, strings.NewReader(""), &out, &errb); code != ExitError {
		t.Errorf("--stamps with a state directory: exit %d, stderr %q", code, errb.String())
	}
}

// TestKafkaStamps: Kafka messages carry the facts to run --stamps as
// stdin does (ingest.KafkaMessage.Facts): a valid stamped topic passes on
// the stamps alone, and OF1 over Kafka gives the inconsistency alert,
// which needs the facts. Before the facts travelled, the first committed
// event fell back ("has no commit_ts").
func TestKafkaStamps(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []string
		code  int
		out   string
		err   string
	}{
		{"valid", []string{stampedLine("A", 0, 3, 1, `["w","x",1]`), stampedLine("B", 5, 8, 2, `["r","x",1],["w","x",2]`)}, ExitOK, "", "never: the stamps' witness held"},
		{"OF1", []string{stampedLine("A", 0, 3, 1, `["w","x",1]`), stampedLine("B", 1, 30, 3, `["w","x",2]`), stampedLine("C", 10, 12, 2, `["r","x",2]`)}, ExitAnomaly, "stamps-inconsistent-with-reads", "fell back to the black-box engine: txn C reads"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := broker(t, 1, "txns")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			w := ingest.NewKafkaWriter(&ingest.KafkaConfig{Brokers: []string{addr}}, "txns")
			ps := make([]int, len(c.lines))
			vals := make([][]byte, len(c.lines))
			for i, l := range c.lines {
				vals[i] = []byte(strings.TrimSpace(l))
			}
			if err := w.WritePartitioned(ctx, ps, vals); err != nil {
				t.Fatal(err)
			}
			w.Close()
			args := append(kafkaArgs(addr, "txns"), "--stamps", "--level", "serializable", "--http=", "--status", "0", "--initial-state", "empty", "--lateness", "1", "--tick", "5")
			code, out, errb := runMain(t, ctx, args, "")
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errb, c.err) {
				t.Fatalf("exit %d (want %d)\nout %q (want %q)\nerr %q (want %q)", code, c.code, out, c.out, errb, c.err)
			}
		})
	}
}
