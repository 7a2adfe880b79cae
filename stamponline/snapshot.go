package stamponline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// The engine's checkpoint (docs/SEMANTICS.md §10 "A checkpoint of the
// stamps' engine"; invariant C1 in doc.go). A snapshot is everything the
// engine holds between two driver ticks: the facts noted and not yet
// taken, the fast path's queue, per-key states and sessions, the
// frontier, the counters, the alerts, and the length of the call log it
// counts on; once the stream fell back, the black-box engine's own
// snapshot in place of the fast path's. The call log itself is not in
// it: like the black-box engine's body file, it is a durable file beside
// the checkpoint, synced before the checkpoint is stored and cut back to
// the snapshot's length on restore, so a crash between the two leaves
// the previous checkpoint whole.

// snapshotVersion is the snapshot's format; Restore reads it, version 2
// (before the call log's key numbering: no LogKeys, and a log of
// unnumbered releases) and version 1 (before the catch-up, E6: no
// CatchOff), and refuses any other. Version 3's log is not one an older
// build can read (recReleaseKeyed), so it refuses the snapshot rather
// than misread the log.
const snapshotVersion = 3

// ErrCorrupt says a snapshot cannot be read back.
var ErrCorrupt = errors.New("stamponline: corrupt snapshot")

// Durable is what the engine asks of its black-box engine to checkpoint
// it once the stream fell back: a snapshot whose files sync makes
// durable (online.Online and the run command's adapters have it).
type Durable interface {
	SnapshotDurable() ([]byte, func() error, error)
}

type snapshot struct {
	Version  int
	Promised string
	LogEnd   int64

	// Notes are the facts noted and not yet taken: Fifo in acceptance
	// order from the head, ByKey the ones moved out of that order, Late
	// the late writers' (each a release payload's facts, log.go, with
	// the ID and start they were noted under).
	Fifo, ByKey, Late []noteRec `json:",omitempty"`

	// LogKeys is the call log's key numbering (log.go), key id at index
	// id: what the log's keyed releases up to LogEnd name, and what the
	// log goes on numbering from. Version 3 on; before, the fast path's
	// keys (Keys) were numbered afresh in their order.
	LogKeys []history.Key `json:",omitempty"`

	// The fast path: the queue's pending transactions (each once) and
	// its heap array, items naming their transaction by index; the keys'
	// states in id order (the log's ids; before version 3 the fast
	// path's own, in that order).
	Pends    []pendRec          `json:",omitempty"`
	Items    []itemRec          `json:",omitempty"`
	Keys     []keyRec           `json:",omitempty"`
	Sessions map[string]sessRec `json:",omitempty"`
	Open     map[string]int64   `json:",omitempty"`
	Frontier int64
	HaveF    bool
	MaxStart int64
	Placed   bool
	Ended    bool
	Seq      int64

	Failed string `json:",omitempty"`
	// Inner is the black-box engine's snapshot once the stream fell
	// back to it (nil before).
	Inner []byte `json:",omitempty"`
	// CatchOff, when not zero, says the black-box engine was catching up
	// (E6): Inner has the calls up to CatchOff bytes of the log, the
	// last of them a step.
	CatchOff int64 `json:",omitempty"`

	Alerts    []*online.Alert `json:",omitempty"`
	FinalDone bool
	Final     [][]byte `json:",omitempty"` // the inconsistency alert's members' bodies

	Released, Steps, Unchecked, Replayed int
}

type noteRec struct {
	ID    string
	Start int64
	Facts []byte
}

type pendRec struct {
	Body     []byte // online.AppendBody
	CTS, STS int64
	Seq      int64
}

type itemRec struct {
	Stamp  int64
	Commit bool `json:",omitempty"`
	P      int
}

type keyRec struct {
	Key     history.Key
	Val     history.Value   `json:",omitempty"`
	Init    []history.Value `json:",omitempty"`
	Apps    []history.Value `json:",omitempty"`
	InitVal history.Value   `json:",omitempty"`
	LastCTS int64           `json:",omitempty"`
	LastBy  int64           `json:",omitempty"`
	Written bool            `json:",omitempty"`
	Bound   bool            `json:",omitempty"`
	Kind    uint8           `json:",omitempty"`
}

type sessRec struct {
	M   [][3]int64 // start, commit_ts, start_ts
	Cut bool       `json:",omitempty"`
}

// SnapshotDurable takes the engine's snapshot for a checkpoint: the call
// log's buffer is written to its file and its length recorded, and once
// the stream fell back the black-box engine's snapshot is taken too (it
// must be Durable). sync makes the log, and the black-box engine's files,
// durable up to what the snapshot counts on; call it before storing the
// snapshot. The log must be a durable file (Config.Log).
func (e *Engine) SnapshotDurable() ([]byte, func() error, error) {
	if !e.log.file.Durable() {
		return nil, nil, fmt.Errorf("stamponline: snapshot: the call log %s is not a durable file", e.log.file.Name())
	}
	end, err := e.log.end()
	if err != nil {
		return nil, nil, err
	}
	s := snapshot{Version: snapshotVersion, Promised: e.promised.String(), LogEnd: end,
		Open: e.open, Frontier: e.frontier, HaveF: e.haveF, MaxStart: e.maxStart, Placed: e.placed, Ended: e.ended, Seq: e.seq,
		Failed: e.failed, Alerts: e.alerts, FinalDone: e.finalDone,
		Released: e.released, Steps: e.steps, Unchecked: e.unchecked, Replayed: e.replayed}
	for _, n := range e.fifo[e.head:] {
		s.Fifo = append(s.Fifo, noteRec{n.k.id, n.k.start, appendFacts(nil, &n.f)})
	}
	for k, f := range e.notes {
		s.ByKey = append(s.ByKey, noteRec{k.id, k.start, appendFacts(nil, &f)})
	}
	for k, f := range e.late {
		s.Late = append(s.Late, noteRec{k.id, k.start, appendFacts(nil, &f)})
	}
	idx := map[*pend]int{}
	for _, it := range e.queue.q {
		i, ok := idx[it.p]
		if !ok {
			i = len(s.Pends)
			idx[it.p] = i
			s.Pends = append(s.Pends, pendRec{Body: online.AppendBody(nil, &it.p.t), CTS: it.p.cts, STS: it.p.sts, Seq: it.p.seq})
		}
		s.Items = append(s.Items, itemRec{Stamp: it.stamp, Commit: it.commit, P: i})
	}
	// The log's numbering whatever the fast path's fate; the keys'
	// states while it holds them (nil once the black-box engine has
	// taken over).
	s.LogKeys = e.log.names
	for id := range e.keys {
		k, c := &e.keys[id], &e.cold[id]
		s.Keys = append(s.Keys, keyRec{Key: e.log.names[id], Val: k.val, Init: c.init, Apps: k.apps, InitVal: c.initVal,
			LastCTS: k.lastCTS, LastBy: k.lastBy, Written: k.written, Bound: k.bound, Kind: k.kind})
	}
	if len(e.sessions) > 0 {
		s.Sessions = make(map[string]sessRec, len(e.sessions))
		for name, ss := range e.sessions {
			r := sessRec{Cut: ss.cut, M: make([][3]int64, len(ss.m))}
			for i, m := range ss.m {
				r.M[i] = [3]int64{m.start, m.cts, m.sts}
			}
			s.Sessions[name] = r
		}
	}
	for _, t := range e.final {
		s.Final = append(s.Final, online.AppendBody(nil, t))
	}
	syncInner := func() error { return nil }
	in := e.inner
	if e.catch != nil {
		// Catch stops only after a step or at the log's end (where it
		// sets inner), so the engine is between two steps.
		in, s.CatchOff = e.catch.in, e.catch.off
	}
	if in != nil {
		d, ok := in.(Durable)
		if !ok {
			return nil, nil, fmt.Errorf("stamponline: snapshot: the black-box engine %T has no durable snapshot", in)
		}
		if s.Inner, syncInner, err = d.SnapshotDurable(); err != nil {
			return nil, nil, err
		}
	}
	b, err := json.Marshal(&s)
	if err != nil {
		return nil, nil, err
	}
	file := e.log.file
	return b, func() error {
		if err := file.Sync(); err != nil {
			return fmt.Errorf("stamponline: syncing %s: %w", file.Name(), err)
		}
		return syncInner()
	}, nil
}

// Restore rebuilds an engine from a snapshot SnapshotDurable took, with
// cfg.Log the same durable file (cut back to the snapshot's length).
// restoreInner rebuilds the black-box engine from its snapshot when the
// stream had fallen back; before that, cfg.Inner builds it afresh at the
// fallback, as in a run that never stopped.
func Restore(opts history.Options, cfg Config, snap []byte, restoreInner func(snap []byte) (Inner, error)) (*Engine, error) {
	var s snapshot
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if s.Version < 1 || s.Version > snapshotVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads version %d", ErrCorrupt, s.Version, snapshotVersion)
	}
	if s.Promised != opts.Level.String() {
		return nil, fmt.Errorf("stamponline: the snapshot checked %s, not %s (a changed level needs a new state directory)", s.Promised, opts.Level)
	}
	if !Levels(opts.Level) {
		return nil, fmt.Errorf("stamponline: %s is not a level the stamps are used at online", opts.Level)
	}
	if cfg.Inner == nil {
		return nil, fmt.Errorf("stamponline: no black-box engine to fall back to")
	}
	e := newEngine(opts, cfg)
	if err := e.log.resume(s.LogEnd); err != nil {
		return nil, err
	}
	facts := func(r noteRec) (noteKey, history.Facts, error) {
		f, rest, err := readFacts(r.Facts)
		if err == nil && len(rest) > 0 {
			err = fmt.Errorf("%d bytes after the facts of %s", len(rest), r.ID)
		}
		if err != nil {
			return noteKey{}, f, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		return noteKey{r.ID, r.Start}, f, nil
	}
	for _, r := range s.Fifo {
		k, f, err := facts(r)
		if err != nil {
			return nil, err
		}
		e.fifo = append(e.fifo, note{k, f})
	}
	for _, set := range []struct {
		recs []noteRec
		to   map[noteKey]history.Facts
	}{{s.ByKey, e.notes}, {s.Late, e.late}} {
		for _, r := range set.recs {
			k, f, err := facts(r)
			if err != nil {
				return nil, err
			}
			set.to[k] = f
		}
	}
	// The log's numbering first: the keys' states and the pends' ids
	// are by it.
	logKeys := s.LogKeys
	if s.Version < 3 {
		// The fast path's keys were numbered in this order; the log
		// numbered nothing (its releases carry their keys' text), so it
		// can go on from these.
		logKeys = make([]history.Key, len(s.Keys))
		for id, r := range s.Keys {
			logKeys[id] = r.Key
		}
	}
	if err := e.log.restoreKeys(logKeys); err != nil {
		return nil, err
	}
	for id, r := range s.Keys {
		if id >= len(e.log.names) || e.log.names[id] != r.Key {
			return nil, fmt.Errorf("%w: key %s's state at id %d, not the log's", ErrCorrupt, r.Key, id)
		}
		e.keys = append(e.keys, keyState{val: r.Val, apps: r.Apps,
			lastCTS: r.LastCTS, lastBy: r.LastBy, written: r.Written, bound: r.Bound, kind: r.Kind})
		e.cold = append(e.cold, keyCold{init: r.Init, initVal: r.InitVal})
	}
	pends := make([]*pend, len(s.Pends))
	for i, r := range s.Pends {
		t, err := online.DecodeBody(r.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: pending transaction %d: %v", ErrCorrupt, i, err)
		}
		// Numbered as at its release: every key of a version 3 pend is
		// in LogKeys already; an older one's may be new here.
		pends[i] = &pend{t: t, ids: slices.Clone(e.log.keyIDs(&t)), cts: r.CTS, sts: r.STS, seq: r.Seq}
	}
	for _, r := range s.Items {
		if r.P < 0 || r.P >= len(pends) {
			return nil, fmt.Errorf("%w: an item names transaction %d of %d", ErrCorrupt, r.P, len(pends))
		}
		// The heap array as it was: its order is the heap's invariant.
		e.queue.q = append(e.queue.q, item{stamp: r.Stamp, commit: r.Commit, p: pends[r.P]})
		pends[r.P].items++
	}
	for name, r := range s.Sessions {
		ss := &session{cut: r.Cut, m: make([]member, len(r.M))}
		for i, m := range r.M {
			ss.m[i] = member{start: m[0], cts: m[1], sts: m[2]}
		}
		e.sessions[name] = ss
	}
	if s.Open != nil {
		e.open = s.Open
	}
	e.frontier, e.haveF, e.maxStart, e.placed, e.ended, e.seq = s.Frontier, s.HaveF, s.MaxStart, s.Placed, s.Ended, s.Seq
	e.failed, e.alerts, e.finalDone = s.Failed, s.Alerts, s.FinalDone
	e.released, e.steps, e.unchecked, e.replayed = s.Released, s.Steps, s.Unchecked, s.Replayed
	if len(s.Final) > 0 {
		e.final = map[string]*history.Txn{}
		for _, b := range s.Final {
			t, err := online.DecodeBody(b)
			if err != nil {
				return nil, fmt.Errorf("%w: an inconsistency member: %v", ErrCorrupt, err)
			}
			e.final[t.ID] = &t
		}
	}
	if s.Inner != nil {
		if restoreInner == nil {
			return nil, fmt.Errorf("stamponline: the snapshot holds a black-box engine and none can be restored")
		}
		in, err := restoreInner(s.Inner)
		if err != nil {
			return nil, err
		}
		if s.CatchOff > 0 {
			e.catch = &catching{in: in, off: s.CatchOff}
		} else {
			e.inner = in
		}
		e.queue.q, e.pool, e.keys, e.cold, e.sessions, e.open, e.own = nil, nil, nil, nil, nil, nil, nil
	}
	return e, nil
}
