package ingest

import (
	"context"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

func mergeMsg(p int, off, start, hwm int64) KafkaMessage {
	return KafkaMessage{Partition: p, Offset: off, HighWaterMark: hwm,
		Txn: history.Txn{ID: "t", Start: start, End: start + 1, HasTime: true}}
}

func recvMerged(t *testing.T, out <-chan KafkaMessage, within time.Duration) (KafkaMessage, bool) {
	t.Helper()
	select {
	case km := <-out:
		return km, true
	case <-time.After(within):
		return KafkaMessage{}, false
	}
}

// TestMergerEventTimeOrder: queued messages come out by start across
// partitions, each partition's offsets in order.
func TestMergerEventTimeOrder(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan KafkaMessage)
	m := newMerger(3, 8, out, time.Hour, time.Hour)
	// Every partition's messages are queued before the merger starts, the
	// last of each at its high watermark.
	starts := [][]int64{{10, 40, 70}, {20, 50, 80}, {30, 60, 90}}
	for p, ss := range starts {
		for i, s := range ss {
			m.put(ctx, p, mergeMsg(p, int64(i), s, int64(len(ss))))
		}
	}
	go m.run(ctx)
	for want := int64(10); want <= 90; want += 10 {
		km, ok := recvMerged(t, out, 5*time.Second)
		if !ok {
			t.Fatalf("nothing after start %d", want-10)
		}
		if km.Txn.Start != want {
			t.Fatalf("got start %d (partition %d offset %d), want %d", km.Txn.Start, km.Partition, km.Offset, want)
		}
	}
}

// TestMergerWaitsForPartitionBehind: a partition with unread messages and
// none queued holds the others back until it delivers, or for stallUnread
// at most (stall before it delivered anything); one at its high watermark
// holds nothing back.
func TestMergerWaitsForPartitionBehind(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan KafkaMessage)
	const stall, stallUnread = 300 * time.Millisecond, 600 * time.Millisecond
	m := newMerger(2, 8, out, stall, stallUnread)
	go m.run(ctx)
	m.put(ctx, 0, mergeMsg(0, 0, 100, 10))
	if km, ok := recvMerged(t, out, stall/3); ok {
		t.Fatalf("delivered partition %d's start %d while partition 1 had delivered nothing", km.Partition, km.Txn.Start)
	}
	m.put(ctx, 1, mergeMsg(1, 0, 50, 10))
	t0 := time.Now()
	if km, ok := recvMerged(t, out, 5*time.Second); !ok || km.Partition != 1 {
		t.Fatalf("got %+v (ok %v), want partition 1's start 50 first", km, ok)
	}
	// Partition 1 (not at its high watermark, behind at 50) stays silent:
	// partition 0 goes on after stall, then without waiting again.
	if km, ok := recvMerged(t, out, 5*time.Second); !ok || km.Partition != 0 {
		t.Fatalf("got %+v (ok %v), want partition 0's start 100", km, ok)
	}
	if d := time.Since(t0); d < stallUnread*9/10 {
		t.Fatalf("partition 0 went on after %s, before the stall bound %s", d, stallUnread)
	}
	m.put(ctx, 0, mergeMsg(0, 1, 110, 10))
	if _, ok := recvMerged(t, out, stall/3); !ok {
		t.Fatal("waited again for a partition already waited for in vain")
	}

	// Partition 1 delivers its last message (at its high watermark): it
	// is waited for no more.
	m.put(ctx, 1, mergeMsg(1, 1, 60, 2))
	if km, ok := recvMerged(t, out, 5*time.Second); !ok || km.Txn.Start != 60 {
		t.Fatalf("got %+v (ok %v), want partition 1's start 60", km, ok)
	}
	m.put(ctx, 0, mergeMsg(0, 3, 130, 10))
	if _, ok := recvMerged(t, out, stall/3); !ok {
		t.Fatal("waited for a partition at its high watermark")
	}
}

// TestMergerStartOffsets: before a partition delivers anything, the end
// offsets at start decide the wait: none for a partition with nothing to
// read, stallUnread for one with messages, stall while unknown.
func TestMergerStartOffsets(t *testing.T) {
	const stall, stallUnread = 200 * time.Millisecond, 800 * time.Millisecond
	for _, tc := range []struct {
		name     string
		start    int32
		min, max time.Duration
	}{
		{"empty", startEmpty, 0, stall / 2},
		{"unknown", startUnknown, stall * 9 / 10, stallUnread / 2},
		{"unread", startUnread, stallUnread * 9 / 10, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			out := make(chan KafkaMessage)
			m := newMerger(2, 8, out, stall, stallUnread)
			m.setStart(0, startUnread)
			m.setStart(1, tc.start)
			go m.run(ctx)
			t0 := time.Now()
			m.put(ctx, 0, mergeMsg(0, 0, 100, 10))
			if _, ok := recvMerged(t, out, 5*time.Second); !ok {
				t.Fatal("nothing delivered")
			}
			if d := time.Since(t0); d < tc.min || d > tc.max {
				t.Fatalf("partition 0 delivered after %s, want %s to %s", d, tc.min, tc.max)
			}
		})
	}
}
