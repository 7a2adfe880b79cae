package window

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// seeds returns how many random cases a property test runs: a quick
// default, more under WINDOW_SEEDS (e.g. WINDOW_SEEDS=20000).
func seeds(t *testing.T, def int) int {
	if s := os.Getenv("WINDOW_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("WINDOW_SEEDS: %v", err)
		}
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

func randConfig(r *rand.Rand, idle bool) Config {
	cfg := Config{
		Partitions: 1 + r.IntN(4),
		Lateness:   int64(r.IntN(60)),
		Skew:       int64(r.IntN(4)),
		InDoubt:    []int64{history.NoInDoubt, 0, 7}[r.IntN(3)],
	}
	if idle && r.IntN(2) == 0 {
		cfg.IdleTimeout = 1 + int64(r.IntN(100))
	}
	return cfg
}

// genStreams draws one transaction sequence per partition. Each partition
// keeps a clock; a transaction starts within the lateness before it (so the
// partition keeps its promise), except for injected faults: starts beyond
// the lateness, duplicate IDs (within the partition when crossDup is false,
// so that which copy counts does not depend on the interleaving), missing
// timestamps, end before start, and long silences followed by a jump.
func genStreams(r *rand.Rand, cfg Config, n int, crossDup bool) [][]history.Txn {
	streams := make([][]history.Txn, cfg.Partitions)
	originals := make([][]history.Txn, cfg.Partitions)
	clock := make([]int64, cfg.Partitions)
	for p := range clock {
		clock[p] = int64(r.IntN(50))
	}
	for i := 0; i < n; i++ {
		p := r.IntN(cfg.Partitions)
		clock[p] += int64(r.IntN(12))
		if r.IntN(40) == 0 {
			clock[p] += int64(r.IntN(300)) // a burst after silence
		}
		x := history.Txn{ID: fmt.Sprintf("p%dt%d", p, i), HasTime: true}
		x.Start = clock[p] - int64(r.IntN(int(cfg.Lateness)+1))
		if r.IntN(10) == 0 {
			x.Start = clock[p] - cfg.Lateness - 1 - int64(r.IntN(30))
		}
		x.End = x.Start + int64(r.IntN(40))
		switch r.IntN(20) {
		case 0, 1:
			x.Status = history.Unknown
		case 2:
			x.Status = history.Aborted
		}
		switch r.IntN(40) {
		case 0:
			x.HasTime, x.Start, x.End = false, 0, 0
		case 1:
			x.End = x.Start - 1 - int64(r.IntN(5))
		case 2, 3:
			var pool []history.Txn
			if crossDup {
				for q := range originals {
					pool = append(pool, originals[q]...)
				}
			} else {
				pool = originals[p]
			}
			// A repeat is a redelivery (the same transaction) or the same
			// ID within half the lateness of the first: every two events
			// with one ID are then within the lateness of each other, so
			// at most one is accepted. IDs reused further apart are new
			// transactions (TestIDReusedPastHorizon), which the models
			// here, keyed by ID, do not follow.
			if len(pool) > 0 {
				orig := pool[r.IntN(len(pool))]
				if r.IntN(2) == 0 && orig.HasTime {
					x.ID, x.Start = orig.ID, orig.Start+int64(r.IntN(int(cfg.Lateness/2)+1))
					x.End = x.Start + int64(r.IntN(40))
				} else {
					x = orig
				}
				x.Ops = orig.Ops
				streams[p] = append(streams[p], x)
				continue
			}
		}
		x.Ops = []history.Op{{Kind: history.Write, Key: "x", Value: history.IntValue(int64(i))}}
		streams[p] = append(streams[p], x)
		originals[p] = append(originals[p], x)
	}
	return streams
}

type arrival struct {
	p int
	t history.Txn
}

// interleave merges the per-partition sequences, keeping each one's order.
// mode 0: random; 1: partition by partition; 2: the same, partitions in
// reverse; 3: round robin.
func interleave(r *rand.Rand, streams [][]history.Txn, mode int) []arrival {
	var out []arrival
	switch mode {
	case 1, 2:
		for i := range streams {
			p := i
			if mode == 2 {
				p = len(streams) - 1 - i
			}
			for _, x := range streams[p] {
				out = append(out, arrival{p, x})
			}
		}
		return out
	}
	next := make([]int, len(streams))
	for {
		var live []int
		for p := range streams {
			if next[p] < len(streams[p]) {
				live = append(live, p)
			}
		}
		if len(live) == 0 {
			return out
		}
		ps := live
		if mode == 3 {
			ps = live[:1]
			slices.SortFunc(live, func(a, b int) int { return cmp.Compare(next[a], next[b]) })
		}
		p := ps[r.IntN(len(ps))]
		out = append(out, arrival{p, streams[p][next[p]]})
		next[p]++
	}
}

func sameDead(got, want *DeadLetter) bool {
	if (got == nil) != (want == nil) {
		return false
	}
	return got == nil || got.Partition == want.Partition && got.Reason == want.Reason && got.Txn.ID == want.Txn.ID
}

// TestModel drives the window and the naive model with the same random
// events, idle marks, releases and polls, and compares everything
// observable after every step: dead letters, W, releases, closings,
// TimeClosed of every transaction, idleness and the counters.
func TestModel(t *testing.T) {
	for seed := range seeds(t, 400) {
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		cfg := randConfig(r, true)
		streams := genStreams(r, cfg, 20+r.IntN(80), true)
		arr := interleave(r, streams, 0)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			w, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			m := newModel(cfg)
			step := func(what string) {
				t.Helper()
				defer func() {
					if t.Failed() {
						t.Logf("config %+v, after %s", cfg, what)
					}
				}()
				m.check(t, w)
			}
			poll := func() {
				got := w.Release(nil)
				want := m.release(t)
				if !slices.Equal(ids(got), ids(want)) {
					t.Fatalf("release %v, model %v", ids(got), ids(want))
				}
				if r.IntN(3) > 0 {
					gc, wc := w.PopClosed(nil), m.popClosed()
					if !slices.Equal(gc, wc) {
						t.Fatalf("closed %v, model %v", gc, wc)
					}
				}
				step("poll")
			}
			for i, a := range arr {
				if r.IntN(30) == 0 {
					p := r.IntN(cfg.Partitions)
					w.MarkIdle(p)
					m.markIdle(p)
					step(fmt.Sprintf("MarkIdle(%d)", p))
				}
				got, want := w.Add(a.p, a.t), m.add(a.p, a.t)
				if !sameDead(got, want) {
					t.Fatalf("event %d Add(%d, %s) = %v, model %v", i, a.p, a.t.Compact(), got, want)
				}
				step(fmt.Sprintf("event %d Add(%d, %s)", i, a.p, a.t.Compact()))
				if r.IntN(4) == 0 {
					poll()
				}
			}
			w.Close()
			m.closed = true
			poll()
			gc, wc := w.PopClosed(nil), m.popClosed()
			if !slices.Equal(gc, wc) {
				t.Fatalf("final closed %v, model %v", gc, wc)
			}
			if s := w.Stats(); s.Buffered != 0 || s.Open != 0 {
				t.Fatalf("after Close and polls: %+v", s)
			}
			step("close")
		})
	}
}

// outcome is everything a run hands out, concatenated over calls.
type outcome struct {
	released []string
	closed   []Closing
	dead     []string
	details  []string
}

func run(r *rand.Rand, cfg Config, arr []arrival, pollEvery int) (outcome, error) {
	var o outcome
	w, err := New(cfg)
	if err != nil {
		return o, err
	}
	var rel []history.Txn
	var cl []Closing
	for _, a := range arr {
		if d := w.Add(a.p, a.t); d != nil {
			o.dead = append(o.dead, fmt.Sprintf("%d/%s/%s", d.Partition, d.Txn.ID, d.Reason))
			o.details = append(o.details, d.String())
		}
		if r.IntN(pollEvery) == 0 {
			rel = w.Release(rel)
		}
		if r.IntN(pollEvery) == 0 {
			cl = w.PopClosed(cl)
		}
	}
	w.Close()
	rel = w.Release(rel)
	cl = w.PopClosed(cl)
	o.released = ids(rel)
	o.closed = cl
	slices.Sort(o.dead)
	slices.Sort(o.details)
	return o, nil
}

// TestDeterminism: the same per-partition sequences fed in different
// interleavings (random, partition by partition in both directions, round
// robin) and with different batchings of Release and PopClosed give the
// same releases, closings and dead letters (doc.go W6). The streams break
// the lateness promise now and then; IDs repeat only within a partition.
func TestDeterminism(t *testing.T) {
	for seed := range seeds(t, 300) {
		r := rand.New(rand.NewPCG(uint64(seed), 2))
		cfg := randConfig(r, false)
		streams := genStreams(r, cfg, 30+r.IntN(200), false)
		var first outcome
		for k := range 6 {
			mode := k % 4
			o, err := run(r, cfg, interleave(r, streams, mode), 1+r.IntN(8))
			if err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				first = o
				checkSorted(t, seed, streams, cfg, o)
				continue
			}
			if !slices.Equal(o.released, first.released) || !slices.Equal(o.closed, first.closed) || !slices.Equal(o.dead, first.dead) ||
				!slices.Equal(o.details, first.details) {
				t.Fatalf("seed %d mode %d: outcome differs\n got %+v\nwant %+v", seed, mode, o, first)
			}
		}
	}
}

// checkSorted derives the outcome from the per-partition rule alone (doc.go
// W6: without idleness an event is late iff it breaks its own partition's
// promise) and compares: the dead letters, every accepted transaction
// released in release order, and all of them closed in closing order.
func checkSorted(t *testing.T, seed int, streams [][]history.Txn, cfg Config, o outcome) {
	t.Helper()
	var acc []history.Txn
	var dead []string
	byID := map[string]history.Txn{}
	for p, s := range streams {
		seen := map[string]bool{}
		mx, seenAny := int64(0), false
		for _, x := range s {
			reason := Reason(255)
			switch {
			case !x.HasTime:
				reason = MissingTime
			case x.End < x.Start:
				reason = EndBeforeStart
			case seenAny && x.Start < mx-cfg.Lateness:
				reason = Late
			case seen[x.ID]:
				reason = DuplicateID
			default:
				seen[x.ID] = true
			}
			if reason != 255 {
				dead = append(dead, fmt.Sprintf("%d/%s/%s", p, x.ID, reason))
				continue
			}
			if !seenAny || x.Start > mx {
				mx, seenAny = x.Start, true
			}
			acc = append(acc, x)
			byID[x.ID] = x
		}
	}
	slices.Sort(dead)
	if !slices.Equal(dead, o.dead) {
		t.Fatalf("seed %d: dead letters %v, want %v", seed, o.dead, dead)
	}
	slices.SortFunc(acc, releaseOrder)
	if !slices.Equal(ids(acc), o.released) {
		t.Fatalf("seed %d: released %v, want every accepted in start order %v", seed, o.released, ids(acc))
	}
	opts := history.Options{Skew: cfg.Skew, InDoubt: cfg.InDoubt}
	if !slices.IsSortedFunc(o.closed, func(a, b Closing) int {
		x, y := byID[a.ID], byID[b.ID]
		return cmp.Or(cmp.Compare(opts.EffectiveEnd(&x), opts.EffectiveEnd(&y)), releaseOrder(x, y))
	}) || len(o.closed) != len(acc) {
		t.Fatalf("seed %d: closings %v not all in closing order", seed, o.closed)
	}
}
