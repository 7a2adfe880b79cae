package runcmd

import (
	"os"
	"runtime/debug"
	"runtime/metrics"

	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/stamponline"
	"github.com/streamcheck/streamcheck/state"
)

// stampEngine adapts stamponline.Engine (run --stamps). Its call log is
// the state directory's stamps log (state.Store.StampLogFile), or
// without one an unlinked temporary file; its checkpoint is the
// engine's snapshot with, once the stream fell back, the black-box
// engine's inside (docs/SEMANTICS.md §10 "A checkpoint of the stamps'
// engine"). The body file, its retention and its punching are the
// black-box engine's, which holds bodies only once the stream fell back.
type stampEngine struct{ *stamponline.Engine }

// inner is the black-box engine as the loop knows it: the one built
// for the fallback, once the stream fell back (nil before).
func (e stampEngine) inner() runEngine {
	in, _ := e.Inner().(runEngine)
	return in
}

func (e stampEngine) Punch() func() error {
	if in := e.inner(); in != nil {
		return in.Punch()
	}
	return func() error { return nil }
}

func (e stampEngine) BodyFileSize() int64 {
	if in := e.inner(); in != nil {
		return in.BodyFileSize()
	}
	return 0
}

func (e stampEngine) SpillError() error {
	if in := e.inner(); in != nil {
		return in.SpillError()
	}
	return nil
}

// SetRetention reaches the black-box engine once the stream fell back;
// before, the one the fallback will use was built with it (newEngine).
func (e stampEngine) SetRetention(r online.Retention) {
	if in := e.inner(); in != nil {
		in.SetRetention(r)
	}
}

// stampLog is the stamps' call log: durable in a state directory.
func (r *runner) stampLog() *state.FileBodies {
	if r.store == nil {
		return state.NewFileBodies("")
	}
	return state.NewFileBodies(r.store.StampLogFile())
}

// stampsOver puts the stamps' engine in front of the level's engine
// (built unstepped): it is what the stream falls back to.
func (r *runner) stampsOver(inner runEngine) (runEngine, error) {
	e, err := stamponline.New(r.cfg.opts, stamponline.Config{Stream: r.cfg.Alerts.Stream, Log: r.stampLog(),
		Inner: func() (stamponline.Inner, error) { return inner, nil }})
	return stampEngine{e}, err
}

// restoreStamps restores the stamps' engine from a checkpoint's snapshot:
// restore rebuilds the black-box engine from its own snapshot when the
// stream had fallen back; before that, the engine the fallback will use
// is built afresh, as a run from the start builds it (its body file is
// opened on first use, so nothing of it is on disk yet).
func (r *runner) restoreStamps(snap []byte, restore func([]byte) (runEngine, error)) (runEngine, error) {
	cfg := stamponline.Config{Stream: r.cfg.Alerts.Stream, Log: r.stampLog(),
		Inner: func() (stamponline.Inner, error) { return r.newEngine() }}
	e, err := stamponline.Restore(r.cfg.opts, cfg, snap, func(b []byte) (stamponline.Inner, error) {
		in, err := restore(b)
		if err != nil {
			return nil, err
		}
		in.SetStream(r.cfg.Alerts.Stream)
		return in, nil
	})
	if err != nil {
		return nil, err
	}
	return stampEngine{e}, nil
}

// The collector's pace while the stamps vouch. The fast path keeps
// little (the per-key state, the transactions above the frontier: tens
// of MB), while the decoder allocates every transaction's ops and id, so
// at the default GOGC=100 the collector ran every ~20 MB of allocation
// (about 130 cycles for 1M stamped transactions), each marking the whole
// per-key state: a quarter of `run --stamps`' instructions
// (BENCHMARKS.md "stampsrun29"). While the stamps vouch, the heap's goal
// is kept at least stampsHeapFloor (GOGC raised for a small live heap,
// the default's goal once the live heap is half the floor or more), so
// that memory stays flat at about the floor rather than twice the live
// heap. Once the stream falls back, the black-box engine's heap is the
// one that grows, and GOGC is put back as it was. A GOGC the user set
// in the environment is left alone. It changes no verdict: the
// collector's pace is invisible to the program's results.
const (
	stampsHeapFloor = 64 << 20
	// stampsGCEvery is how many steps pass between two looks at the live
	// heap (a step is a tick of event time).
	stampsGCEvery = 32
)

// stampsGC paces the collector for the stamps' fast path (above). GOGC
// is the process's: a process runs one `run` (the command, or a test
// that calls it, none of them in parallel), which puts it back as it was.
type stampsGC struct {
	on      bool // GOGC is ours (set by retune)
	prev    int  // GOGC before the first retune
	percent int  // GOGC set last
	steps   int  // steps since the last look
	sample  []metrics.Sample
	// set and live stand for debug.SetGCPercent and the live heap's
	// size in tests (nil: the runtime's).
	set  func(int) int
	live func() int64
}

// stampsGCPercent is the GOGC that puts the heap's goal, live*(1+GOGC/100),
// at the floor at least: the default's 100 once the live heap is half the
// floor or more, at most 1000.
func stampsGCPercent(live int64) int {
	if live <= 0 || 2*live >= stampsHeapFloor {
		return 100
	}
	return int(min(100*(stampsHeapFloor-live)/live, 1000))
}

func (g *stampsGC) setPercent(p int) int {
	if g.set != nil {
		return g.set(p)
	}
	return debug.SetGCPercent(p)
}

func (g *stampsGC) liveHeap() int64 {
	if g.live != nil {
		return g.live()
	}
	if g.sample == nil {
		g.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	}
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(g.sample[0].Value.Uint64())
}

// retune looks at the live heap every stampsGCEvery steps while the
// stamps vouch, and sets GOGC so that the heap's goal is at least the
// floor; once they stop vouching it puts GOGC back, for good.
func (g *stampsGC) retune(vouch bool, userGOGC bool) {
	if !vouch {
		g.restore()
		g.steps = -1 // never again: the black-box engine's heap is the one that grows
		return
	}
	if g.steps < 0 || userGOGC && !g.on {
		return
	}
	if g.steps++; g.steps < stampsGCEvery && g.on {
		return
	}
	g.steps = 0
	want := stampsGCPercent(g.liveHeap())
	switch {
	case !g.on:
		g.prev = g.setPercent(want)
		g.on, g.percent = true, want
	case want != g.percent:
		g.setPercent(want)
		g.percent = want
	}
}

// restore puts GOGC back as it was before the first retune.
func (g *stampsGC) restore() {
	if g.on {
		g.setPercent(g.prev)
		g.on = false
	}
}

// retuneGC paces the collector after a step of the stamps' engine.
func (r *runner) retuneGC() {
	if se, ok := r.engine.(stampEngine); ok {
		_, why := se.FastPath()
		r.gc.retune(why == "", os.Getenv("GOGC") != "")
	}
}
