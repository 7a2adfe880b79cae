package runcmd

import (
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
