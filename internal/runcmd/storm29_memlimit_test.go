package runcmd

import (
	"bytes"
	"context"
	"io"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
)

const mib = 1 << 20

func TestMemLimitFor(t *testing.T) {
	for _, c := range []struct{ limit, live, want int64 }{
		{256 * mib, 0, 256 * mib},
		{256 * mib, 51 * mib, 256 * mib},
		{256 * mib, 170 * mib, 256 * mib}, // 1.5x is 255
		{256 * mib, 172 * mib, 258 * mib},
		{256 * mib, 400 * mib, 600 * mib}, // a burst's window: headroom, not a collector running back to back
	} {
		if got := memLimitFor(c.limit, c.live); got != c.want {
			t.Errorf("memLimitFor(%d MiB, %d MiB) = %d MiB, want %d MiB", c.limit/mib, c.live/mib, got/mib, c.want/mib)
		}
	}
}

// fakeLimit records the limits set, starting from the runtime's default.
type fakeLimit struct {
	sets []int64
	cur  int64
	live atomic.Int64
}

func newFake(m *memLimit) *fakeLimit {
	f := &fakeLimit{cur: -1} // stands for math.MaxInt64, the runtime's "none"
	m.set = func(v int64) int64 { prev := f.cur; f.cur = v; f.sets = append(f.sets, v); return prev }
	m.live = f.live.Load
	return f
}

// TestMemLimitStart: the environment's GOMEMLIMIT and a 0 leave the
// runtime alone; otherwise the limit is set, and put back at the end.
func TestMemLimitStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		limit  int64
		env    bool
		live   int64
		first  int64 // 0: no set at all
		restor bool
	}{
		{"env wins", 256 * mib, true, 10 * mib, 0, false},
		{"zero is none", 0, false, 10 * mib, 0, false},
		{"configured", 256 * mib, false, 10 * mib, 256 * mib, true},
		{"live heap above", 256 * mib, false, 400 * mib, 600 * mib, true},
	} {
		m := &memLimit{limit: c.limit}
		f := newFake(m)
		f.live.Store(c.live)
		restore := m.start(c.env)
		if c.first == 0 {
			if len(f.sets) != 0 {
				t.Errorf("%s: set %v, want nothing", c.name, f.sets)
			}
		} else if len(f.sets) != 1 || f.sets[0] != c.first {
			t.Errorf("%s: set %v, want [%d]", c.name, f.sets, c.first)
		}
		restore()
		if f.cur != -1 {
			t.Errorf("%s: the limit is %d after the run, want the runtime's back (-1 here)", c.name, f.cur)
		}
	}
}

// TestMemLimitFollowsLiveHeap: the limit rises with a live heap above
// two thirds of it and comes back down to the configured one; small
// moves of the live heap set nothing.
func TestMemLimitFollowsLiveHeap(t *testing.T) {
	m := &memLimit{limit: 256 * mib}
	f := newFake(m)
	f.live.Store(40 * mib)
	m.current = memLimitFor(m.limit, f.live.Load())
	m.setLimit(m.current)
	for _, step := range []struct{ live, want int64 }{
		{60 * mib, 256 * mib},
		{200 * mib, 300 * mib},
		{204 * mib, 300 * mib}, // 306: within a sixteenth, not set
		{300 * mib, 450 * mib},
		{100 * mib, 256 * mib}, // back to the configured limit
		{50 * mib, 256 * mib},
	} {
		f.live.Store(step.live)
		m.retune()
		if f.cur != step.want || m.current != step.want {
			t.Fatalf("live %d MiB: limit %d MiB (current %d), want %d MiB; sets %v", step.live/mib, f.cur/mib, m.current/mib, step.want/mib, f.sets)
		}
	}
	if len(f.sets) != 4 {
		t.Errorf("sets %v: want 4 (the first, 300, 450, 256)", f.sets)
	}
}

// TestMemoryLimitFlag: the flag and the default reach the configuration,
// a negative one is refused, and a run puts the runtime's limit back.
func TestMemoryLimitFlag(t *testing.T) {
	rc, err := parse([]string{"--memory-limit", "128MiB"}, io.Discard)
	if err != nil || rc.MemoryLimit != 128*mib {
		t.Fatalf("--memory-limit 128MiB: %v, %v", rc, err)
	}
	rc, err = parse(nil, io.Discard)
	if err != nil || rc.MemoryLimit != 256*mib {
		t.Fatalf("default: %v, %v", rc, err)
	}
	if _, err := parse([]string{"--memory-limit", "-1"}, io.Discard); err == nil {
		t.Fatal("--memory-limit -1 accepted")
	}
	if memLimitFromEnv() {
		t.Skip("GOMEMLIMIT is set: run leaves the limit alone")
	}
	before := debug.SetMemoryLimit(-1)
	in := `{"session":"a","id":"t1","start":1,"end":2,"status":"committed","ops":[["w","x",1]]}` + "\n"
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"--http=", "--memory-limit", "64MiB", "--lateness", "1ms"}, strings.NewReader(in), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("limit after the run %d, want %d as before", after, before)
	}
}
