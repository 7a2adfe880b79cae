package window

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

func compact(t *testing.T, text string) []history.Txn {
	t.Helper()
	h, err := history.ParseCompact(text)
	if err != nil {
		t.Fatal(err)
	}
	return h.Txns
}

// endTimeRelease is the rule docs/SEMANTICS.md §5 warns against: a watermark on
// end times (max end seen - lateness) that releases a transaction once it
// ended before the watermark. It returns the IDs released after each
// arrival.
func endTimeRelease(txns []history.Txn, lateness int64) [][]string {
	var out [][]string
	maxEnd := int64(math.MinInt64)
	done := map[string]bool{}
	var seen []history.Txn
	for _, x := range txns {
		seen = append(seen, x)
		maxEnd = max(maxEnd, x.End)
		var rel []string
		for _, y := range seen {
			if !done[y.ID] && y.End < maxEnd-lateness {
				done[y.ID] = true
				rel = append(rel, y.ID)
			}
		}
		out = append(out, rel)
	}
	return out
}

// TestHistoryG: T[10,20] w x1, U[5,200] w x2, R2[210,220] r x1 arriving T,
// R2, U is valid only with U before T. Reference: docs/SEMANTICS.md §5
// "Watermark on start time", history G.
func TestHistoryG(t *testing.T) {
	txns := compact(t, "T[10,20] w x1 · R2[210,220] r x1 · U[5,200] w x2")

	// The naive rule hands T out before U has arrived (and would evict
	// it, making R2's read look stale).
	naive := endTimeRelease(txns, 150)
	if !slices.Equal(naive[1], []string{"T"}) {
		t.Fatalf("end-time watermark: %v; the test lost its point", naive)
	}

	// Lateness covering U: R2, which arrives before U, starts 205 after
	// it (U's length 195 plus the 10 by which R2 started after U ended,
	// which the producer's delay must cover), so L >= 205 keeps U on time.
	for _, lateness := range []int64{205, 250, 1000} {
		w, err := New(Config{Partitions: 1, Lateness: lateness, InDoubt: history.NoInDoubt})
		if err != nil {
			t.Fatal(err)
		}
		var rel []history.Txn
		for _, x := range txns {
			if w.TimeClosed(&txns[0]) {
				t.Fatalf("L=%d: T time-closed before U arrived", lateness)
			}
			if d := w.Add(0, x); d != nil {
				t.Fatalf("L=%d: %v", lateness, d)
			}
			rel = w.Release(rel)
			if x.ID != "U" && len(rel) > 0 {
				t.Fatalf("L=%d: released %v before U arrived", lateness, ids(rel))
			}
			if x.ID != "U" && len(w.PopClosed(nil)) > 0 {
				t.Fatalf("L=%d: closing before U arrived", lateness)
			}
		}
		w.Close()
		rel = w.Release(rel)
		if got := ids(rel); !slices.Equal(got, []string{"U", "T", "R2"}) {
			t.Fatalf("L=%d: release order %v, want U T R2", lateness, got)
		}
		if got := w.PopClosed(nil); len(got) != 3 || got[0].ID != "T" {
			t.Fatalf("L=%d: closings %v", lateness, got)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{Partitions: 0},
		{Partitions: 1, Lateness: -1},
		{Partitions: 1, Skew: -1},
		{Partitions: 1, InDoubt: -2},
		{Partitions: 1, IdleTimeout: -1},
	}
	for _, c := range bad {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", c, err)
		}
	}
	if _, err := New(Config{Partitions: 1, InDoubt: history.NoInDoubt}); err != nil {
		t.Fatal(err)
	}
}

func TestPartitionRange(t *testing.T) {
	w, _ := New(Config{Partitions: 2})
	for _, f := range []func(){
		func() { w.Add(2, history.Txn{ID: "a", HasTime: true}) },
		func() { w.Add(-1, history.Txn{ID: "b", HasTime: true}) },
		func() { w.MarkIdle(2) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic for a partition out of range")
				}
			}()
			f()
		}()
	}
}

// TestExtremeTimes: starts and ends at the ends of int64 saturate instead
// of wrapping around (a wrap would make W jump or a transaction close at
// once).
func TestExtremeTimes(t *testing.T) {
	w, _ := New(Config{Partitions: 1, Lateness: 100, Skew: 10, InDoubt: 50, IdleTimeout: 1})
	lo := history.Txn{ID: "lo", HasTime: true, Start: math.MinInt64, End: math.MinInt64 + 1}
	if d := w.Add(0, lo); d != nil {
		t.Fatal(d)
	}
	if w.Watermark() != math.MinInt64 {
		t.Fatalf("W = %d, want -inf (saturated)", w.Watermark())
	}
	hi := history.Txn{ID: "hi", HasTime: true, Start: math.MaxInt64 - 5, End: math.MaxInt64, Status: history.Unknown}
	if d := w.Add(0, hi); d != nil {
		t.Fatal(d)
	}
	if got := w.Watermark(); got != math.MaxInt64-105 {
		t.Fatalf("W = %d", got)
	}
	if !w.TimeClosed(&lo) || w.TimeClosed(&hi) {
		t.Fatal("lo should be closed, hi (effEnd saturated to +inf) open")
	}
	if n := len(w.Release(nil)); n != 1 {
		t.Fatalf("released %d", n)
	}
	if e, ok := w.NextClosing(); !ok || e != lo.End {
		t.Fatalf("NextClosing = %d %v", e, ok)
	}
	if c := w.PopClosed(nil); len(c) != 1 || c[0].ID != "lo" {
		t.Fatalf("closed %v", c)
	}
	if _, ok := w.NextClosing(); ok {
		t.Fatal("nothing should be open")
	}
	w.Close()
	if !w.Ended() || len(w.Release(nil)) != 1 || len(w.PopClosed(nil)) != 1 {
		t.Fatal("Close must release and close everything")
	}
}

func TestDeadLetterString(t *testing.T) {
	w, _ := New(Config{Partitions: 1})
	d := w.Add(0, history.Txn{ID: "x"})
	if d == nil || !strings.Contains(d.String(), "x (partition 0): missing-time") {
		t.Fatalf("%v", d)
	}
	if Reason(9).String() != "Reason(9)" {
		t.Fatal(Reason(9).String())
	}
}

// TestAllIdle: when every partition is marked idle, the most advanced one's
// watermark stands, and with nothing seen W stays -inf.
func TestAllIdle(t *testing.T) {
	w, _ := New(Config{Partitions: 2, Lateness: 10})
	w.MarkIdle(0)
	w.MarkIdle(1)
	if w.Watermark() != math.MinInt64 {
		t.Fatalf("W = %d with nothing seen", w.Watermark())
	}
	w.Add(0, history.Txn{ID: "a", HasTime: true, Start: 100, End: 101})
	w.MarkIdle(0)
	if w.Watermark() != 90 {
		t.Fatalf("W = %d, want 90", w.Watermark())
	}
}

// TestNoRebuilds: with P partitions delivering in turn and starts growing,
// the partition that delivers next is the one furthest behind, the holder
// of the minimum watermark. The O(P) pass runs at New and at the first
// transaction only; everything else goes through the tree.
func TestNoRebuilds(t *testing.T) {
	const parts, n = 32, 32 * 1000
	for _, idle := range []int64{0, 5000} {
		w, _ := New(Config{Partitions: parts, Lateness: 100, IdleTimeout: idle})
		for i := range n {
			x := history.Txn{ID: fmt.Sprint(i), HasTime: true, Start: int64(i), End: int64(i) + 5}
			if d := w.Add(i%parts, x); d != nil {
				t.Fatal(d)
			}
		}
		if r := w.rebuilds; r != 2 {
			t.Errorf("idle=%d: %d O(P) passes for %d Adds over %d partitions", idle, r, n, parts)
		}
	}
}

// TestIDReusedPastHorizon: an ID is remembered while its start is within
// the lateness of W. A redelivery (same start) is a duplicate until W
// passes it and late after; an ID reused with a start further than the
// lateness away is a new transaction, released and closed on its own; and
// the set holds only what is within the horizon however long the stream.
func TestIDReusedPastHorizon(t *testing.T) {
	w, err := New(Config{Partitions: 1, Lateness: 10})
	if err != nil {
		t.Fatal(err)
	}
	x := history.Txn{ID: "x", HasTime: true, Start: 100, End: 101}
	if d := w.Add(0, x); d != nil {
		t.Fatal(d)
	}
	if d := w.Add(0, x); d == nil || d.Reason != DuplicateID {
		t.Fatalf("redelivery within the horizon: %v", d)
	}
	near := history.Txn{ID: "x", HasTime: true, Start: 108, End: 109}
	if d := w.Add(0, near); d == nil || d.Reason != DuplicateID {
		t.Fatalf("same ID 8 later: %v", d)
	}
	for i := range 1000 {
		s := int64(120 + 5*i)
		if d := w.Add(0, history.Txn{ID: fmt.Sprint("t", i), HasTime: true, Start: s, End: s + 1}); d != nil {
			t.Fatal(d)
		}
	}
	if d := w.Add(0, x); d == nil || d.Reason != Late {
		t.Fatalf("redelivery past the horizon: %v", d)
	}
	reused := history.Txn{ID: "x", HasTime: true, Start: 120 + 5*1000, End: 120 + 5*1000 + 1}
	if d := w.Add(0, reused); d != nil {
		t.Fatalf("ID reused 5,000 later: %v", d)
	}
	w.Close()
	var xs []uint64
	for _, c := range w.PopClosed(nil) {
		if c.ID == "x" {
			xs = append(xs, c.Seq)
		}
	}
	if len(w.Release(nil)) != 1002 {
		t.Fatal("not every accepted transaction was released")
	}
	for _, c := range w.PopClosed(nil) {
		if c.ID == "x" {
			xs = append(xs, c.Seq)
		}
	}
	if len(xs) != 2 || xs[0] == xs[1] {
		t.Fatalf("x closed as %v, want two transactions", xs)
	}
	if n := w.Stats().IDs; n > 5 { // starts 5100..5120
		t.Fatalf("%d IDs remembered, want those within the lateness of W", n)
	}
	if b := w.ids.bytes(); b > 4096 {
		t.Fatalf("ID set holds %d bytes after 1,002 IDs", b)
	}
}
