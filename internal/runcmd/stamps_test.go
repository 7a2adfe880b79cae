package runcmd

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"

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
// isolation one; a lost update exits 1 with an isolation alert.
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
}

// TestCrashHarnessStamps is the crash harness (TestCrashHarness) with
// run --stamps: a generated stamped stream (every committed transaction
// with gen's commit_ts and start_ts) with injected anomalies, which have
// no stamps, so that the stream falls back to the black-box engine part
// way; the binary is killed with SIGKILL at random moments, before,
// during and after the fallback, and restarted from its state directory
// (the stamps' engine's snapshot and its call log, docs/SEMANTICS.md
// §10 "A checkpoint of the stamps' engine"). The alert ids are exactly
// an uninterrupted run's, and the totals count every message once. The
// same variables as TestCrashHarness scale it.
func TestCrashHarnessStamps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the binary; skipped with -short")
	}
	kills := crashEnvInt(t, "STREAMCHECK_CRASH_KILLS", 5)
	if raceEnabled && os.Getenv("STREAMCHECK_CRASH_KILLS") == "" {
		kills = 2
	}
	txns := crashEnvInt(t, "STREAMCHECK_CRASH_TXNS", 1000)
	if raceEnabled {
		txns = max(txns/3, 100)
	}
	cfg, err := gen.Preset("mixed")
	if err != nil {
		t.Fatal(err)
	}
	// A clean stamped history, then one with injected anomalies after it
	// (ids, sessions, times and stamps moved past the first's), so that
	// the stream falls back about half way.
	// No unknown outcomes in the first: a committed one has no commit_ts
	// and its readers would end the fast path there.
	cfg.Txns, cfg.Seed, cfg.UnknownRatio = txns/2, 24, 0
	h, _, err := gen.GenerateStamps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed, cfg.Inject = 25, []string{"lost-update", "write-skew", "G1c"}
	h2, inj, err := gen.GenerateStamps(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var end, cts int64
	for i := range h.Txns {
		end, cts = max(end, h.Txns[i].End), max(cts, h.Facts[i].CommitTS, h.Facts[i].StartTS)
	}
	lo, clo := h2.Txns[0].Start, h2.Facts[0].StartTS
	for i := range h2.Txns {
		lo, clo = min(lo, h2.Txns[i].Start), min(clo, h2.Facts[i].StartTS)
	}
	for i := range h2.Txns {
		tx, f := h2.Txns[i], h2.Facts[i]
		tx.ID, tx.Session = "b"+tx.ID, "b"+tx.Session
		tx.Start, tx.End = tx.Start-lo+end+1_000_000, tx.End-lo+end+1_000_000
		if f.Has != 0 {
			f.CommitTS, f.StartTS = f.CommitTS-clo+cts+1, f.StartTS-clo+cts+1
		}
		h.Txns, h.Facts = append(h.Txns, tx), append(h.Facts, f)
	}
	facts := map[string]*history.Facts{}
	for i := range h.Txns {
		facts[h.Txns[i].ID] = &h.Facts[i]
	}
	s := spreadStream(h, inj, 24, 4, nil)
	s.facts = func(tx *history.Txn) *history.Facts { return facts[tx.ID] }
	t.Setenv("STREAMCHECK_CRASH_ARGS", "--stamps --level serializable "+os.Getenv("STREAMCHECK_CRASH_ARGS"))
	crashHarness(t, s, kills)
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
