package weakonline

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// feed is one run of a history through the window, the driver and the
// engine, as `streamcheck run` does it: arrival in order, the driver
// drained every batch events; at restart (>= 0) the engine and the
// window are snapshotted and restored mid-stream and the driver rebuilt
// from its State, as a restart from a checkpoint does.
type feed struct {
	tick    int64
	order   []int // arrival order (indices into h.Txns)
	batch   int
	restart int
	noFast  bool
	// noRetire keeps every transaction; otherwise a retirement pass
	// runs at every step that allows one (the most passes, the most
	// chances to retire too early).
	noRetire bool
	// lateness, when set, replaces the history's whole span (which
	// lets any arrival order through): a history given in start order
	// can then have a transaction closed before a later one is
	// released.
	lateness int64
}

type firing struct {
	alert *online.Alert
	at    int // events accepted when it fired
}

// span is the lateness that lets any arrival order of h through the
// window: its whole time span.
func span(h *history.History) int64 {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, t := range h.Txns {
		lo, hi = min(lo, t.Start), max(hi, t.End)
	}
	return hi - lo + 1
}

func runFeed(t *testing.T, h *history.History, opts history.Options, f feed) ([]firing, *Engine) {
	t.Helper()
	ctx := context.Background()
	wcfg := window.Config{Partitions: 1, Lateness: span(h), Skew: opts.Skew, InDoubt: opts.InDoubt}
	if f.lateness > 0 {
		wcfg.Lateness = f.lateness
	}
	win, err := window.New(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	ecfg := Config{Stream: "test", NoFast: f.noFast, NoRetire: f.noRetire, retireMin: 1}
	if !f.noRetire {
		// The engine under test spills closed bodies where it may
		// (read atomic and causal with the fast path on); the keeping
		// engine it is compared with holds them on the heap.
		ecfg.Bodies = online.NewMemBodyFile(false)
		if f.batch%2 == 0 {
			ecfg.bodyFlush = 1 // read back from the file, not the buffer
		}
	}
	eng, err := New(opts, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	dcfg := driver.Config{Tick: f.tick, Skew: opts.Skew, Lateness: wcfg.Lateness}
	d := driver.New(dcfg, win, eng, driver.NewState(1))
	var out []firing
	drain := func(n int) {
		for d.HasReady() {
			rd, err := d.Ready(ctx)
			if err != nil {
				t.Fatalf("step: %v", err)
			}
			for _, a := range rd.Alerts {
				out = append(out, firing{a, n})
			}
			naiveStats(t, eng)
			checkCompacted(t, eng)
		}
	}
	for n, i := range f.order {
		if rej := d.Accept(0, int64(n), h.Txns[i], 0); rej != nil {
			t.Fatalf("%s set aside: %+v", h.Txns[i].ID, rej)
		}
		if f.batch <= 1 || n%f.batch == f.batch-1 {
			drain(n + 1)
		}
		if n == f.restart {
			drain(n + 1)
			esnap, err := eng.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			wsnap := d.Window().Snapshot()
			st := *d.State()
			if eng, err = Restore(opts, ecfg, esnap); err != nil {
				t.Fatal(err)
			}
			if win, err = window.Restore(wcfg, wsnap); err != nil {
				t.Fatal(err)
			}
			d = driver.New(dcfg, win, eng, st)
		}
	}
	d.EndInput()
	drain(len(f.order))
	rd, err := d.Final(ctx)
	if err != nil {
		t.Fatalf("final: %v", err)
	}
	for _, a := range rd.Alerts {
		out = append(out, firing{a, len(f.order)})
	}
	return out, eng
}

// randomFeed draws an arrival order (a random displacement of start
// order), a tick and a batch size.
func randomFeed(rng *rand.Rand, h *history.History, ticks []int64) feed {
	order := make([]int, len(h.Txns))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(min(max(h.Txns[a].Start-h.Txns[b].Start, -1), 1)) })
	switch rng.IntN(3) {
	case 0: // start order
	case 1: // fully shuffled
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	default: // local swaps
		for i := 1; i < len(order); i++ {
			if rng.IntN(2) == 0 {
				order[i-1], order[i] = order[i], order[i-1]
			}
		}
	}
	return feed{tick: ticks[rng.IntN(len(ticks))], order: order, batch: 1 + rng.IntN(4), restart: -1}
}

// offline is `check` under the same rule: the first verdict online must
// equal it (W3).
func offline(t *testing.T, h *history.History, opts history.Options) incremental.Verdict {
	t.Helper()
	r, err := incremental.CheckWeakOnline(context.Background(), h, opts, incremental.Config{MaxAnomalies: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Verdict
}

// checkCores holds every alert's core to its contract on the whole
// history: it violates on its own (the projection, under the rule run
// checks), and dropping any one member makes it pass.
func checkCores(t *testing.T, h *history.History, opts history.Options, fired []firing, e *Engine) {
	t.Helper()
	ctx := context.Background()
	for _, f := range fired {
		in := make([]bool, len(e.txns))
		for _, name := range f.alert.Core {
			i, ok := e.named(name)
			if !ok {
				t.Fatalf("alert %s: core member %s unknown", f.alert.ID, name)
			}
			in[i] = true
		}
		hh, _ := e.instanceAll()
		viol := func() bool {
			r, err := incremental.CheckWeakOnline(ctx, hh, opts, incremental.Config{MaxAnomalies: 1}, in)
			if err != nil {
				t.Fatal(err)
			}
			return r.Verdict == incremental.Invalid
		}
		if !viol() {
			t.Errorf("alert %s (%s): core %v does not violate %s on its own", f.alert.ID, f.alert.Type, f.alert.Core, opts.Level)
			continue
		}
		for i := range in {
			if !in[i] {
				continue
			}
			in[i] = false
			if viol() {
				t.Errorf("alert %s: core %v still violates without %s: not minimal", f.alert.ID, f.alert.Core, e.names[i])
			}
			in[i] = true
		}
	}
}

// instanceAll is every transaction given, whole (bodies as released),
// under the names alerts use, with unchecked writers as instance() makes
// them: the whole stream a core is judged on.
func (e *Engine) instanceAll() (*history.History, []bool) {
	saved := slices.Clone(e.flags)
	for i := range e.flags {
		e.flags[i] = (e.flags[i] | fClosed) &^ fQuarantined
	}
	h, in, err := e.instance()
	if err != nil {
		panic(err)
	}
	copy(e.flags, saved)
	return h, in
}

// naiveStats holds Stats' counters (kept as flags change) to a count
// over every transaction's flags, the loop Stats ran before.
func naiveStats(t *testing.T, e *Engine) {
	t.Helper()
	var window, pinned int
	for _, fl := range e.flags {
		if fl&(fUnchecked|fQuarantined) == 0 {
			window++
			if fl&fClosed != 0 {
				pinned++
			}
		}
	}
	if st := e.Stats(); st.Window != window || st.Pinned != pinned {
		t.Fatalf("Stats: window %d pinned %d, the flags say %d and %d", st.Window, st.Pinned, window, pinned)
	}
}
