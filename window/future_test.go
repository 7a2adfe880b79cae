package window

import (
	"fmt"
	"math"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// base puts the tests' timestamps among wall-clock nanoseconds, where
// MaxAhead applies (WallClock).
const base = int64(1_700_000_000_000_000_000)

func timed(id string, start int64) history.Txn {
	return history.Txn{ID: id, Start: base + start, End: base + start + 5, HasTime: true, Status: history.Committed}
}

// TestFutureSetAside: one start far ahead of its partition is set aside
// as Future and moves nothing; the partition's next events are accepted.
// Without MaxAhead it moves W, and every later event is late (issue 20
// item 4).
func TestFutureSetAside(t *testing.T) {
	for _, maxAhead := range []int64{0, 1000} {
		w, err := New(Config{Partitions: 1, Lateness: 10, MaxAhead: maxAhead})
		if err != nil {
			t.Fatal(err)
		}
		var late, future int
		for i := range 50 {
			tx := timed(fmt.Sprint("t", i), int64(100+10*i))
			if i == 20 {
				tx = timed("ahead", 86_400_000)
			}
			if d := w.Add(0, tx); d != nil {
				switch d.Reason {
				case Late:
					late++
				case Future:
					future++
				default:
					t.Fatalf("max-ahead %d: %v", maxAhead, d)
				}
			}
		}
		st := w.Stats()
		switch {
		case maxAhead == 0 && late != 29:
			t.Errorf("without max-ahead: %d late, want the 29 after the event ahead", late)
		case maxAhead > 0 && (late != 0 || future != 1 || st.DeadLetters[Future] != 1 || st.Watermark != base+590-10):
			t.Errorf("max-ahead %d: %d late, %d future, W %d", maxAhead, late, future, st.Watermark)
		}
	}
}

// TestFutureReanchor: a partition whose every event lies beyond MaxAhead
// (its clock jumped, or it was quiet for longer) is accepted again after
// ReanchorAfter events in a row; an accepted event between them starts
// the count anew. The count survives a snapshot.
func TestFutureReanchor(t *testing.T) {
	cfg := Config{Partitions: 2, Lateness: 10, MaxAhead: 1000}
	w, _ := New(cfg)
	w.Add(0, timed("a", 100))
	w.Add(1, timed("b", 100))
	// Partition 1 alternates: ahead, on time. Never re-anchored.
	for i := range 3 * ReanchorAfter {
		start := int64(110 + i)
		if i%2 == 0 {
			start = 1_000_000 + int64(i)
		}
		d := w.Add(1, timed(fmt.Sprint("alt", i), start))
		if (d != nil) != (i%2 == 0) || d != nil && d.Reason != Future {
			t.Fatalf("alternating event %d: %v", i, d)
		}
	}
	// Partition 0 jumps for good: ReanchorAfter-1 set aside, the next
	// accepted, across a snapshot.
	for i := range ReanchorAfter {
		if i == ReanchorAfter/2 {
			var err error
			if w, err = Restore(cfg, w.Snapshot()); err != nil {
				t.Fatal(err)
			}
		}
		d := w.Add(0, timed(fmt.Sprint("jump", i), 2_000_000+int64(i)))
		if last := i == ReanchorAfter-1; (d == nil) != last || d != nil && d.Reason != Future {
			t.Fatalf("jumped event %d: %v", i, d)
		}
	}
	if got := w.Stats().DeadLetters[Future]; got != uint64(3*ReanchorAfter/2+ReanchorAfter-1) {
		t.Errorf("%d future dead letters", got)
	}
}

// TestFutureFirstOfPartition: a partition's first event is measured
// against the greatest start any partition accepted; the stream's very
// first has no reference in event time (run bounds it by the wall clock).
func TestFutureFirstOfPartition(t *testing.T) {
	w, _ := New(Config{Partitions: 2, Lateness: 10, MaxAhead: 1000})
	if d := w.Add(0, timed("first", 5_000_000)); d != nil {
		t.Fatalf("the stream's first event: %v", d)
	}
	if d := w.Add(1, timed("p1", 5_000_000+2000)); d == nil || d.Reason != Future {
		t.Fatalf("partition 1's first event, beyond partition 0's by 2000: %v", d)
	}
	if d := w.Add(1, timed("p1b", 5_000_000+500)); d != nil {
		t.Fatalf("partition 1's first event within bound: %v", d)
	}
	if err := (&Config{Partitions: 1, MaxAhead: -1}).Validate(); err == nil {
		t.Error("negative max-ahead accepted")
	}
}

// TestFutureNotWallClock: timestamps that do not look like wall-clock
// nanoseconds (relative, logical) may jump by any amount: MaxAhead does
// not apply to them.
func TestFutureNotWallClock(t *testing.T) {
	w, _ := New(Config{Partitions: 1, Lateness: 10, MaxAhead: 1000})
	for i, start := range []int64{math.MinInt64, -100, 0, 1e15, WallClockLow - 1} {
		if d := w.Add(0, history.Txn{ID: fmt.Sprint(i), Start: start, End: start + 1, HasTime: true, Status: history.Committed}); d != nil {
			t.Errorf("start %d: %v", start, d)
		}
	}
	// From a wall-clock reference on, it does.
	w.Add(0, timed("wall", 0))
	if d := w.Add(0, timed("ahead", 5000)); d == nil || d.Reason != Future {
		t.Errorf("5000 ahead of a wall-clock start: %v", d)
	}
}
