package runcmd

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The run's soft memory limit (memory_limit, --memory-limit; issue 22).
//
// At Go's default GOGC=100 the collector lets the heap grow to twice
// what the last collection left live, and the scavenger returns freed
// pages to the system slowly: a daemon whose live heap is flat still
// shows an RSS that climbs with the largest goal any collection set
// (pg1m: 51 MB live, RSS 104 MB at 78K and 150 MB at 940K). A soft limit
// (runtime/debug.SetMemoryLimit) makes the collector run sooner, and the
// scavenger return pages, as the process nears it, so RSS stays at or
// under the limit while the live heap does.
//
// A limit below the live heap would make the collector run back to back
// (the runtime caps it at about half the CPU): a burst whose window
// really holds 400 MB would crawl. So the limit run sets is never below
// 1.5 times the live heap (memLimitLiveHalves): memLimitFor raises it with
// the live heap, looked at every memLimitEvery of wall time, and puts
// it back to the configured one when the live heap falls again. The
// headroom the collector keeps is then at least half the live heap
// (GOGC=50's), never nothing.
//
// GOMEMLIMIT in the environment wins: run leaves the runtime's limit
// alone. memory_limit: 0 leaves it alone too (the runtime's default is
// no limit). The collector's pace changes no verdict: nothing the
// engine computes reads the heap.
const (
	memLimitEvery = time.Second
	// memLimitLiveHalves is the least limit run sets, in halves of the
	// live heap (3: 1.5x).
	memLimitLiveHalves = 3
)

// memLimitFor is the limit to set for a configured limit and a live
// heap: the configured one, or 1.5x the live heap when that is more.
func memLimitFor(limit, live int64) int64 {
	return max(limit, live*memLimitLiveHalves/2)
}

// memLimit sets and follows the run's soft memory limit.
type memLimit struct {
	limit   int64 // configured
	prev    int64 // the runtime's limit before run set one
	current int64 // set last
	stop    chan struct{}
	done    chan struct{}
	sample  []metrics.Sample
	// set and live stand for debug.SetMemoryLimit and the live heap's
	// size in tests (nil: the runtime's).
	set  func(int64) int64
	live func() int64
}

// memLimitFromEnv says whether the environment sets the limit itself.
func memLimitFromEnv() bool { return os.Getenv("GOMEMLIMIT") != "" }

// start sets the limit (unless the environment or a 0 says not to) and
// follows the live heap until the returned function is called, which
// puts the runtime's limit back as it was.
func (m *memLimit) start(envSet bool) (restore func()) {
	if envSet || m.limit <= 0 {
		return func() {}
	}
	m.current = memLimitFor(m.limit, m.liveHeap())
	m.prev = m.setLimit(m.current)
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go m.follow()
	return func() {
		close(m.stop)
		<-m.done
		m.setLimit(m.prev)
	}
}

func (m *memLimit) follow() {
	defer close(m.done)
	t := time.NewTicker(memLimitEvery)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.retune()
		}
	}
}

// retune sets the limit memLimitFor gives for the live heap now, when it
// differs from the one set last by more than a sixteenth (the live heap
// moves a little at every collection).
func (m *memLimit) retune() {
	want := memLimitFor(m.limit, m.liveHeap())
	if d := want - m.current; d > m.current/16 || -d > m.current/16 || want == m.limit && m.current != m.limit {
		m.setLimit(want)
		m.current = want
	}
}

func (m *memLimit) setLimit(v int64) int64 {
	if m.set != nil {
		return m.set(v)
	}
	return debug.SetMemoryLimit(v)
}

func (m *memLimit) liveHeap() int64 {
	if m.live != nil {
		return m.live()
	}
	if m.sample == nil {
		m.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	}
	metrics.Read(m.sample)
	if m.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(m.sample[0].Value.Uint64())
}
