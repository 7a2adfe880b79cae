package ingest

import (
	"context"
	"math"
	"sync/atomic"
	"time"
)

// merger interleaves the partitions of a KafkaSource by event time: it
// hands on the queued message with the smallest start, and before it
// hands on one while a partition that is behind and may have unread
// messages (not at its high watermark) has nothing queued, it waits for
// that partition: up to stallUnread when it is known to have unread
// messages (its last message was below its high watermark, or before its
// first message, its end offset at start was beyond its start offset),
// up to stall while that is not known yet; a partition known to have
// nothing to read is not waited for.
//
// Why: the window releases a transaction only once every partition's
// watermark has passed its start, so a partition that falls behind in
// delivery holds everything back while the others keep arriving; with
// the partitions merged as they arrived (one channel, first come first
// served) a partition that fell behind once, a fetch that timed out, say,
// stayed behind by the same amount for the rest of a catch-up, since it
// got an equal share of the channel. The window then buffered a large
// part of the topic (130,000 transactions and 42 s of event time behind
// on a 500,000-transaction catch-up), every checkpoint encoded those, and
// a partition further behind than the idle timeout would have been
// declared idle with unread messages, its later events dead-lettered as
// late. Merged by start, a partition that fell behind is drained first
// when it delivers again, and the others wait in their bounded queues.
//
// The order only decides how partitions interleave, which never changes
// what is checked (the window's release order and the engine's calls do
// not depend on it); within a partition the offset order is kept.
type merger struct {
	in []chan KafkaMessage
	// notify has a token after some queue received a message since the
	// merger last looked (each reader sends, then sets it).
	notify chan struct{}
	out    chan<- KafkaMessage
	// stallUnread bounds the wait for a partition with unread messages
	// and none queued (a reader retrying a failed fetch), stall the wait
	// for one that has delivered nothing yet (it may be empty): after it
	// the others go on, as they did before the merge, and the partition
	// is not waited for again until it delivers. A partition at its high
	// watermark (caught up) is never waited for.
	stall, stallUnread time.Duration
	// start is what each partition had to read when the source started
	// (startUnknown until the end offsets are in): it decides the wait
	// for a partition that has delivered nothing yet.
	start []atomic.Int32
}

// Values of merger.start.
const (
	startUnknown = iota
	startEmpty   // nothing to read at start
	startUnread  // messages to read at start
)

// setStart records what partition p had to read at start and wakes the
// merger to look again.
func (m *merger) setStart(p int, v int32) {
	m.start[p].Store(v)
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

func newMerger(partitions, queue int, out chan<- KafkaMessage, stall, stallUnread time.Duration) *merger {
	m := &merger{in: make([]chan KafkaMessage, partitions), notify: make(chan struct{}, 1), out: out, stall: stall, stallUnread: stallUnread,
		start: make([]atomic.Int32, partitions)}
	for p := range m.in {
		m.in[p] = make(chan KafkaMessage, queue)
	}
	return m
}

// put queues a message of partition p; false once ctx ends.
func (m *merger) put(ctx context.Context, p int, km KafkaMessage) bool {
	select {
	case m.in[p] <- km:
	case <-ctx.Done():
		return false
	}
	select {
	case m.notify <- struct{}{}:
	default:
	}
	return true
}

// eventKey orders messages: by start; a message without one (not
// decoded, invalid, no timestamps) goes first, as nothing waits on it.
func eventKey(km *KafkaMessage) int64 {
	if km.Err != nil || km.Oversized || !km.Txn.HasTime {
		return math.MinInt64
	}
	return km.Txn.Start
}

// run merges until ctx ends.
func (m *merger) run(ctx context.Context) {
	n := len(m.in)
	heads := make([]KafkaMessage, n)
	have := make([]bool, n)
	// last is each partition's greatest key handed on (MinInt64 before
	// any); caught: its last message was at its high watermark (nothing
	// more to read for now, so nothing to wait for); absent: waited for
	// in vain, not waited for again until it delivers.
	last := make([]int64, n)
	caught := make([]bool, n)
	absent := make([]bool, n)
	seen := make([]bool, n) // delivered something
	for p := range last {
		last[p] = math.MinInt64
	}
	// deadline ends the current wait for partitions behind (zero: not
	// waiting); wakeups by other partitions do not extend it.
	var deadline time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		for p := range n {
			if have[p] {
				continue
			}
			select {
			case km := <-m.in[p]:
				heads[p], have[p] = km, true
				absent[p], seen[p] = false, true
				caught[p] = km.HighWaterMark > 0 && km.Offset+1 >= km.HighWaterMark
			default:
			}
		}
		best := -1
		for p := range n {
			if have[p] && (best < 0 || eventKey(&heads[p]) < eventKey(&heads[best])) {
				best = p
			}
		}
		behind, unread := false, false
		if best >= 0 {
			k := eventKey(&heads[best])
			for p := range n {
				if have[p] || caught[p] || absent[p] || last[p] >= k {
					continue
				}
				switch {
				case seen[p]:
					unread = true
				case m.start[p].Load() == startEmpty:
					continue
				case m.start[p].Load() == startUnread:
					unread = true
				}
				behind = true
			}
		}
		if best >= 0 && !behind {
			select {
			case m.out <- heads[best]:
			case <-ctx.Done():
				return
			}
			last[best] = max(last[best], eventKey(&heads[best]))
			heads[best], have[best] = KafkaMessage{}, false
			deadline = time.Time{}
			continue
		}
		var expired <-chan time.Time
		if best >= 0 {
			if deadline.IsZero() {
				d := m.stall
				if unread {
					d = m.stallUnread
				}
				deadline = time.Now().Add(d)
			}
			timer.Reset(time.Until(deadline))
			expired = timer.C
		}
		select {
		case <-m.notify:
			timer.Stop()
		case <-expired:
			for p := range n {
				if !have[p] {
					absent[p] = true
				}
			}
			deadline = time.Time{}
		case <-ctx.Done():
			timer.Stop()
			return
		}
	}
}
