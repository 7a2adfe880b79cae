package window

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// model is the naive reference: it keeps every event it was fed and
// recomputes the partition watermarks, idleness, W, the releasable set and
// the closable set from scratch at every step, by scans and sorts. Only W's
// monotonicity (W = max(previous W, candidate)) and what was already handed
// out are carried between steps, as the definition says.
type model struct {
	cfg  Config
	opts history.Options

	events   []modelEvent
	marked   []bool
	idle     []bool
	idleN    uint64
	w        int64
	closed   bool
	released []string // IDs in release order
	popped   int      // how many of released have been popped as closed
	poppedID map[string]bool
	dead     [NumReasons]uint64
	ids      []modelEvent // remembered IDs, with their starts
}

type modelEvent struct {
	p        int
	t        history.Txn
	accepted bool
}

func newModel(cfg Config) *model {
	m := &model{
		cfg:      cfg,
		opts:     history.Options{Skew: cfg.Skew, InDoubt: cfg.InDoubt},
		marked:   make([]bool, cfg.Partitions),
		idle:     make([]bool, cfg.Partitions),
		w:        math.MinInt64,
		poppedID: map[string]bool{},
	}
	m.recompute()
	return m
}

func (m *model) accepted() []history.Txn {
	var out []history.Txn
	for _, e := range m.events {
		if e.accepted {
			out = append(out, e.t)
		}
	}
	return out
}

// partMax is the greatest accepted start of partition p.
func (m *model) partMax(p int) (int64, bool) {
	best, ok := int64(0), false
	for _, e := range m.events {
		if e.accepted && e.p == p && (!ok || e.t.Start > best) {
			best, ok = e.t.Start, true
		}
	}
	return best, ok
}

func (m *model) recompute() {
	var first, global int64
	seenAny := false
	for _, e := range m.events {
		if e.accepted {
			if !seenAny {
				first, global, seenAny = e.t.Start, e.t.Start, true
			}
			global = max(global, e.t.Start)
		}
	}
	cand, haveCand := int64(math.MaxInt64), false
	for p := range m.marked {
		mx, seen := m.partMax(p)
		idle := m.marked[p]
		if !idle && m.cfg.IdleTimeout > 0 && seenAny {
			ref := first
			if seen && mx > ref {
				ref = mx
			}
			// Test-sized times: no overflow to care about.
			idle = global-ref > m.cfg.IdleTimeout
		}
		if idle && !m.idle[p] {
			m.idleN++
		}
		m.idle[p] = idle
		if idle {
			continue
		}
		k := int64(math.MinInt64)
		if seen {
			k = mx - m.cfg.Lateness
		}
		cand, haveCand = min(cand, k), true
	}
	if !haveCand {
		if !seenAny {
			return
		}
		cand = global - m.cfg.Lateness
	}
	m.w = max(m.w, cand)
}

func (m *model) add(p int, t history.Txn) *DeadLetter {
	dl := func(r Reason) *DeadLetter {
		m.events = append(m.events, modelEvent{p: p, t: t})
		m.dead[r]++
		return &DeadLetter{Partition: p, Txn: t, Reason: r}
	}
	if !t.HasTime {
		return dl(MissingTime)
	}
	if t.End < t.Start {
		return dl(EndBeforeStart)
	}
	if m.closed {
		return dl(Late)
	}
	if mx, seen := m.partMax(p); seen && t.Start < mx-m.cfg.Lateness {
		return dl(Late)
	}
	// An ID is remembered with its start while that start is at least
	// W-lateness, and repeats only within the lateness of it.
	floor := m.floor()
	for _, r := range m.ids {
		if r.t.ID == t.ID && r.t.Start >= floor && absDiff(r.t.Start, t.Start) <= uint64(m.cfg.Lateness) {
			return dl(DuplicateID)
		}
	}
	if t.Start >= floor {
		m.ids = append(m.ids, modelEvent{t: t})
	}
	if t.Start < m.w {
		return dl(Late)
	}
	m.events = append(m.events, modelEvent{p: p, t: t, accepted: true})
	m.marked[p] = false
	m.recompute()
	return nil
}

func (m *model) markIdle(p int) {
	m.marked[p] = true
	m.recompute()
}

func releaseOrder(a, b history.Txn) int {
	return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(a.ID, b.ID))
}

// releasable is every accepted transaction W has passed, sorted.
func (m *model) releasable() []history.Txn {
	var out []history.Txn
	for _, t := range m.accepted() {
		if m.closed || t.Start < m.w {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, releaseOrder)
	return out
}

func (m *model) release(t *testing.T) []history.Txn {
	all := m.releasable()
	for i, id := range m.released {
		if i >= len(all) || all[i].ID != id {
			t.Fatalf("model: release is not monotone: %v was released at %d, now sorts %v", id, i, ids(all))
		}
	}
	out := all[len(m.released):]
	for _, x := range out {
		m.released = append(m.released, x.ID)
	}
	return out
}

func (m *model) closes(x *history.Txn) bool {
	if m.closed {
		return true
	}
	e := m.opts.EffectiveEnd(x)
	return m.w != math.MinInt64 && e != math.MaxInt64 && e+m.cfg.Skew < m.w-m.cfg.Skew
}

func (m *model) popClosed() []Closing {
	if len(m.releasable()) > len(m.released) {
		return nil
	}
	seq := map[string]uint64{}
	for i, id := range m.released {
		seq[id] = uint64(i)
	}
	var cands []history.Txn
	for _, x := range m.accepted() {
		if _, ok := seq[x.ID]; ok && !m.poppedID[x.ID] {
			cands = append(cands, x)
		}
	}
	slices.SortFunc(cands, func(a, b history.Txn) int {
		return cmp.Or(cmp.Compare(m.opts.EffectiveEnd(&a), m.opts.EffectiveEnd(&b)), releaseOrder(a, b))
	})
	var out []Closing
	for i := range cands {
		if !m.closes(&cands[i]) {
			break
		}
		m.poppedID[cands[i].ID] = true
		m.popped++
		out = append(out, Closing{Seq: seq[cands[i].ID], ID: cands[i].ID, EffEnd: m.opts.EffectiveEnd(&cands[i])})
	}
	return out
}

func (m *model) watermark() int64 {
	if m.closed {
		return math.MaxInt64
	}
	return m.w
}

func ids(ts []history.Txn) []string {
	out := make([]string, len(ts))
	for i := range ts {
		out[i] = ts[i].ID
	}
	return out
}

// check compares the window's observable state with the model's.
func (m *model) check(t *testing.T, w *Window) {
	t.Helper()
	if got, want := w.Watermark(), m.watermark(); got != want {
		t.Fatalf("watermark %s, model %s", fmtTime(got), fmtTime(want))
	}
	s := w.Stats()
	var acc, buffered int
	for _, e := range m.events {
		if e.accepted {
			acc++
		}
	}
	buffered = acc - len(m.released)
	idle := 0
	for p, b := range m.idle {
		if b {
			idle++
		}
		if w.Idle(p) != b {
			t.Fatalf("partition %d idle=%v, model %v", p, w.Idle(p), b)
		}
	}
	want := fmt.Sprintf("accepted=%d buffered=%d open=%d released=%d closed=%d dead=%v idle=%d idleN=%d ids=%d",
		acc, buffered, len(m.released)-m.popped, len(m.released), m.popped, m.dead, idle, m.idleN, len(m.idsSeen()))
	got := fmt.Sprintf("accepted=%d buffered=%d open=%d released=%d closed=%d dead=%v idle=%d idleN=%d ids=%d",
		s.Accepted, s.Buffered, s.Open, s.Released, s.Closed, s.DeadLetters, s.IdlePartitions, s.IdleTransitions, s.IDs)
	if got != want {
		t.Fatalf("stats\n got %s\nwant %s", got, want)
	}
	// TimeClosed agrees on every transaction seen.
	for i := range m.events {
		x := &m.events[i].t
		if !x.HasTime {
			continue
		}
		if g, w := w.TimeClosed(x), m.closes(x); g != w {
			t.Fatalf("TimeClosed(%s) = %v, model %v (W=%s)", x.Compact(), g, w, fmtTime(m.watermark()))
		}
	}
}

func (m *model) idsSeen() []modelEvent {
	var out []modelEvent
	for _, r := range m.ids {
		if r.t.Start >= m.floor() {
			out = append(out, r)
		}
	}
	return out
}

func (m *model) floor() int64 {
	if m.w < math.MinInt64+m.cfg.Lateness {
		return math.MinInt64
	}
	return m.w - m.cfg.Lateness
}

func absDiff(a, b int64) uint64 {
	if a < b {
		a, b = b, a
	}
	return uint64(a) - uint64(b)
}

func fmtTime(v int64) string {
	switch v {
	case math.MinInt64:
		return "-inf"
	case math.MaxInt64:
		return "+inf"
	}
	return fmt.Sprint(v)
}
