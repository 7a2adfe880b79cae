package runcmd

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestInterruptStopsAtStepBoundary: a message that lets the watermark
// cross many ticks (a backlog held back by a long lateness, then one
// event far ahead) is stepped tick by tick; an interrupt there stops at
// the next step boundary and checkpoints, instead of stepping every tick
// first (SIGTERM on such a stream took minutes to exit, issue 20 item 9).
// The restart steps the rest at the same ticks: the same alert ids and
// totals as an uninterrupted run.
func TestInterruptStopsAtStepBoundary(t *testing.T) {
	s := makeStream(t, 31, 400, 1, "lost-update", "write-skew")
	last := s.parts[0][len(s.parts[0])-1]
	far := history.Txn{ID: "far", Start: last.End + 7_200_000_000_000, End: last.End + 7_200_000_001_000,
		HasTime: true, Status: history.Committed}
	s.parts[0] = append(s.parts[0], far)
	s.merged = append(s.merged, far)
	addr := broker(t, 1, "txns")
	s.produce(t, addr, "txns")
	dir := t.TempDir()
	args := func(st string) []string {
		// --max-ahead 0: the far event must move the watermark, not be set
		// aside as a clock two hours ahead (window.Config.MaxAhead).
		return s.args(append(kafkaArgs(addr, "txns"), "--lateness", "1h", "--max-ahead", "0", "--state-dir", filepath.Join(dir, st))...)
	}
	code, out, errb := runMain(t, context.Background(), args("a"), "")
	if code == ExitError {
		t.Fatal(errb)
	}
	want, _ := alertIDs(t, out)
	wantTotals := totals(t, filepath.Join(dir, "a"))
	if wantTotals["steps"] < 10 {
		t.Fatalf("the stream steps %d times; the test needs many ticks crossed by one message", wantTotals["steps"])
	}

	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	testAfterStep = func() {
		if steps++; steps == 3 {
			cancel()
		}
	}
	code, out1, errb := runMain(t, ctx, args("b"), "")
	testAfterStep = nil
	cancel()
	if code != ExitOK {
		t.Fatalf("interrupted run: exit %d: %s", code, errb)
	}
	if got := totals(t, filepath.Join(dir, "b"))["steps"]; got != 3 {
		t.Errorf("interrupted at step 3, the checkpoint has %d steps (the uninterrupted run %d): the interrupt did not stop at the step boundary",
			got, wantTotals["steps"])
	}
	code, out2, errb := runMain(t, context.Background(), args("b"), "")
	if code == ExitError {
		t.Fatal(errb)
	}
	got, _ := alertIDs(t, out1+out2)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("interrupted and resumed: alert ids %v, uninterrupted %v", got, want)
	}
	if gt := totals(t, filepath.Join(dir, "b")); !sameTotals(gt, wantTotals) || gt["steps"] != wantTotals["steps"] {
		t.Errorf("interrupted and resumed: totals %v, uninterrupted %v", gt, wantTotals)
	}
}
