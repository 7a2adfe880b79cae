package stamponline

import (
	"context"
	"fmt"
	"math"

	"github.com/streamcheck/streamcheck/driver"
	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/sionline"
	"github.com/streamcheck/streamcheck/stampcheck"
)

// Inconsistent is the type and class of the alert that says the stamps
// contradict the reads of a history valid at the level
// (docs/SEMANTICS.md §10): never an isolation anomaly.
const Inconsistent = "stamps-inconsistent-with-reads"

// Levels reports whether lv is a level whose online check this engine
// can speed up with stamps: the serializable levels and the
// snapshot-isolation family.
func Levels(lv history.Level) bool {
	switch lv {
	case history.Serializable, history.StrongSessionSerializable, history.StrictSerializable:
		return true
	}
	return sionline.Levels(lv)
}

// Checked is the level checked when lv is promised: the black-box
// engine's (strict serializability for the serializable levels, O1 of
// package online; sionline.Checked for the snapshot family).
func Checked(lv history.Level) history.Level {
	if sionline.Levels(lv) {
		return sionline.Checked(lv)
	}
	return incremental.OnlineLevel
}

// Inner is the black-box engine the stream falls back to: what the
// driver steps, plus what `run` reads of an engine's alerts and
// statistics.
type Inner interface {
	driver.Engine
	AlertTxn(a *online.Alert, name string) *history.Txn
	Stats() online.OnlineStats
}

// Config tunes an engine.
type Config struct {
	// Stream names the stream in every alert id.
	Stream string
	// Inner builds the level's black-box engine, called once, when the
	// stamps stop vouching (E3).
	Inner func() (Inner, error)
	// Log holds the call log (log.go); nil keeps it in memory. `run`
	// gives a file on disk, so that memory holds the window, not the
	// stream.
	Log online.BodyFile
	// CatchSteps is how many of the logged steps one driver step gives
	// the black-box engine while it catches up after a fallback (E6; 0
	// means 16): the bound on one step, so that an interrupt waits for
	// that many of the black-box engine's steps, not for the whole
	// stream so far.
	CatchSteps int

	_ struct{}
}

// Engine checks a stream with the database's commit and snapshot stamps
// (doc.go). It satisfies driver.Engine; it is not safe for concurrent
// use.
type Engine struct {
	promised history.Level
	opts     history.Options // opts.Level = Checked(promised)
	si       bool
	cfg      Config
	log      callLog

	// notes holds the facts of accepted transactions until their release
	// (NoteFacts): in acceptance order (fifo, from head), which is
	// release order on a stream that arrives in start order, and by ID
	// and start for what is released out of that order (moved there
	// when the head does not match).
	fifo  []note
	head  int
	notes map[noteKey]history.Facts
	// late holds the facts of committed writers the window set aside as
	// late (NoteLate) until the driver gives them (AddUnchecked), which
	// it does for every writer it sets aside.
	late map[noteKey]history.Facts

	// The fast path (fast.go).
	queue    items
	pool     []*pend    // replayed pends for reuse (newPend)
	keys     []keyState // by the log's key id (callLog.keyIDs)
	cold     []keyCold  // by kx's id
	sessions map[string]*session
	open     map[string]int64 // released committed, not yet closed: commit_ts
	own      []own
	frontier int64 // the greatest commit_ts of a closed committed transaction
	haveF    bool
	maxStart int64 // the greatest start among the placed transactions
	placed   bool
	ended    bool
	seq      int64

	// failed says why the stamps stopped vouching ("" while they do);
	// inner is the black-box engine once the stream fell back to it.
	failed string
	inner  Inner
	// catch is the black-box engine while it catches up (E6): nil before
	// the fallback and once inner is set.
	catch *catching

	alerts    []*online.Alert
	finalDone bool
	final     map[string]*history.Txn // the inconsistency alert's members

	released, steps, unchecked, replayed int

	catches int       // Catch calls that had work (tests)
	naive   naiveRule // tests only
}

type noteKey struct {
	id    string
	start int64
}

type note struct {
	k noteKey
	f history.Facts
}

// New starts an engine for opts.Level (Levels).
func New(opts history.Options, cfg Config) (*Engine, error) {
	if !Levels(opts.Level) {
		return nil, fmt.Errorf("stamponline: %s is not a level the stamps are used at online", opts.Level)
	}
	if cfg.Inner == nil {
		return nil, fmt.Errorf("stamponline: no black-box engine to fall back to")
	}
	e := newEngine(opts, cfg)
	if err := e.log.start(); err != nil {
		return nil, err
	}
	if e.opts.Level.RealTime() && !e.opts.Level.SnapshotRealTime() && e.si {
		// Generalized SI orders commits only: a transaction still to come
		// may begin before what was already replayed, so no frontier
		// holds for begins (doc.go, what is left).
		e.failed = "generalized snapshot isolation: the fast path needs real time on snapshots"
	}
	return e, nil
}

// newEngine is an engine with empty state whose log is not opened yet
// (New starts it, Restore resumes it).
func newEngine(opts history.Options, cfg Config) *Engine {
	e := &Engine{promised: opts.Level, opts: opts, cfg: cfg, si: sionline.Levels(opts.Level),
		notes: map[noteKey]history.Facts{}, late: map[noteKey]history.Facts{},
		sessions: map[string]*session{}, open: map[string]int64{}}
	e.opts.Level = Checked(opts.Level)
	e.queue.e = e
	e.log.file, e.log.kx = cfg.Log, stampcheck.NewKeyIndex()
	if e.log.file == nil {
		e.log.file = online.NewMemBodyFile(false)
	}
	return e
}

// NoteFacts gives the engine the facts of a transaction the driver
// accepted (driver.Driver.Accept returned nil), zero ones included; they
// are taken at its release. `run` calls it with what the decoder read (ingest's
// NativeDecoder.Facts).
func (e *Engine) NoteFacts(t *history.Txn, f history.Facts) {
	e.fifo = append(e.fifo, note{noteKey{t.ID, t.Start}, f})
}

// NoteLate gives the engine the facts of a transaction the window set
// aside as late (window.Late), which the driver gives as an unchecked
// writer (AddUnchecked) if it writes: a late event was decoded whole and
// its times are kept, so its stamps can place it in the witness (F4;
// docs/SEMANTICS.md §10 "Late writers in the witness online"). Only
// committed writers are kept (the only ones the fast path places; the
// driver gives every writer it sets aside, so each note is taken), and a
// second note for one ID and start voids the first, so that no facts are
// paired with the wrong body.
func (e *Engine) NoteLate(t *history.Txn, f history.Facts) {
	if t.Status != history.Committed || !t.Writes() {
		return
	}
	k := noteKey{t.ID, t.Start}
	if _, dup := e.late[k]; dup {
		f = history.Facts{}
	}
	e.late[k] = f
}

// factsOf takes the noted facts of t (zero when none were noted).
func (e *Engine) factsOf(t *history.Txn) history.Facts {
	k := noteKey{t.ID, t.Start}
	if f, ok := e.notes[k]; ok {
		delete(e.notes, k)
		return f
	}
	for e.head < len(e.fifo) {
		n := &e.fifo[e.head]
		e.head++
		if n.k == k {
			f := n.f
			*n = note{}
			e.compact()
			return f
		}
		// Released later (or never: set aside after all) than its
		// acceptance order says.
		e.notes[n.k] = n.f
		*n = note{}
	}
	e.compact()
	return history.Facts{}
}

// compact drops the taken notes once they are half the fifo.
func (e *Engine) compact() {
	if e.head > 1024 && 2*e.head > len(e.fifo) {
		e.fifo = e.fifo[:copy(e.fifo, e.fifo[e.head:])]
		e.head = 0
	}
}

// Release takes the transactions the window released, in release order.
func (e *Engine) Release(txns ...history.Txn) {
	for i := range txns {
		t := &txns[i]
		f := e.factsOf(t)
		ids := e.log.release(t, &f)
		e.released++
		e.seq++
		if e.inner != nil {
			e.inner.Release(*t)
			continue
		}
		if e.failed == "" {
			e.failed = e.admit(t, &f, e.seq, false, ids)
		}
	}
}

// Close marks released transactions time-closed; each closed committed
// one moves the frontier (F1).
func (e *Engine) Close(ids ...string) {
	for _, id := range ids {
		e.log.put(recClose, []byte(id))
	}
	if e.inner != nil {
		e.inner.Close(ids...)
		return
	}
	for _, id := range ids {
		if cts, ok := e.open[id]; ok {
			delete(e.open, id)
			e.closed(cts)
		}
	}
}

// CloseAll is the end of the input.
func (e *Engine) CloseAll() {
	e.log.put(recCloseAll, nil)
	e.ended = true
	if e.inner != nil {
		e.inner.CloseAll()
	}
}

// AddUnchecked takes a dead-lettered writer. A late one whose stamps
// were noted (NoteLate) is placed in the witness like a released one,
// with the stricter checks its lateness calls for (admit); any other has
// no stamps the fast path can trust, and a read it might explain is no
// proof of anything: the stream falls back to the black-box engine, which
// holds it as its rules say.
func (e *Engine) AddUnchecked(t history.Txn) {
	e.log.txn(recUnchecked, &t)
	e.unchecked++
	k := noteKey{t.ID, t.Start}
	f, noted := e.late[k]
	delete(e.late, k)
	if e.inner != nil {
		e.inner.AddUnchecked(t)
		return
	}
	if e.failed != "" {
		return
	}
	if !noted || !t.HasTime {
		e.failed = "a dead-lettered writer (" + t.ID + ") has no stamps"
		return
	}
	e.seq++
	e.failed = e.admit(&t, &f, e.seq, true, e.log.keyIDs(&t))
}

// Step replays what the frontier allows; once the stamps stop vouching
// it hands the stream to the black-box engine and steps that. At the
// first step after the end of the input, a stream that fell back and
// is valid at the level gets its facts checked: an inconsistency is
// alerted in its own class (E4).
func (e *Engine) Step(ctx context.Context) ([]*online.Alert, error) {
	e.steps++
	if e.inner == nil && e.failed == "" {
		e.failed = e.advance()
	}
	e.log.put(recStep, nil)
	if e.log.err != nil {
		return nil, e.log.err
	}
	var out []*online.Alert
	var err error
	switch {
	case e.inner != nil:
		out, err = e.inner.Step(ctx)
	case e.failed != "":
		out, err = e.catchUp(ctx)
	}
	return e.stepped(ctx, out, err)
}

// stepped records a step's alerts and, at the first step after the end of
// the input once the black-box engine has every call, the inconsistency
// check (E4).
func (e *Engine) stepped(ctx context.Context, out []*online.Alert, err error) ([]*online.Alert, error) {
	e.alerts = append(e.alerts, out...)
	if err != nil {
		return out, err
	}
	if e.ended && !e.finalDone && e.inner != nil {
		e.finalDone = true
		a, err := e.inconsistency(ctx)
		if err != nil {
			return out, err
		}
		if a != nil {
			e.alerts = append(e.alerts, a)
			out = append(out, a)
		}
	}
	return out, nil
}

// catchSteps is Config.CatchSteps's default.
const catchSteps = 16

// catching is the black-box engine being given the logged calls after a
// fallback (E6): in has every call up to off bytes of the log.
type catching struct {
	in  Inner
	off int64
}

// Pending says the stream fell back and the black-box engine does not have
// every call yet: the driver calls Catch until it has (driver D5).
func (e *Engine) Pending() bool { return e.inner == nil && e.failed != "" }

// Catch gives the black-box engine up to Config.CatchSteps more of the logged
// steps (E6), with the calls between them. It makes no call of its own:
// the black-box engine gets the calls the driver made, in their order,
// whatever the number of Catch calls between them, so its alerts are
// those of a fallback done in one step; only when they are raised
// differs.
func (e *Engine) Catch(ctx context.Context) ([]*online.Alert, error) {
	if !e.Pending() {
		return nil, nil
	}
	e.catches++
	out, err := e.catchUp(ctx)
	return e.stepped(ctx, out, err)
}

// catchUp builds the black-box engine at its first call (E3) and gives it
// the log from where the last call stopped, up to Config.CatchSteps steps; once
// it has the whole log it is the engine the driver's calls go to.
func (e *Engine) catchUp(ctx context.Context) ([]*online.Alert, error) {
	if e.catch == nil {
		in, err := e.cfg.Inner()
		if err != nil {
			return nil, err
		}
		e.catch = &catching{in: in}
		e.queue.q, e.pool, e.keys, e.cold, e.sessions, e.open, e.own = nil, nil, nil, nil, nil, nil, nil
		clear(e.late)
	}
	c := e.catch
	var out []*online.Alert
	left := e.cfg.CatchSteps
	if left <= 0 {
		left = catchSteps
	}
	off, err := e.log.eachFrom(c.off, func(r *call) (bool, error) {
		switch r.kind {
		case recRelease:
			c.in.Release(r.txn)
		case recClose:
			c.in.Close(r.id)
		case recCloseAll:
			c.in.CloseAll()
		case recUnchecked:
			c.in.AddUnchecked(r.txn)
		case recStep:
			a, err := c.in.Step(ctx)
			out = append(out, a...)
			left--
			return left == 0, err
		}
		return false, nil
	})
	c.off = off
	if err != nil {
		return out, err
	}
	if off == e.log.size {
		e.inner, e.catch = c.in, nil
	}
	return out, nil
}

// inconsistency decides, at the end of a stream that fell back, whether
// its facts contradict its reads: only when the black-box engine raised
// no alert (the history is valid at the level, the one case in which
// check reports the class, stampcheck S3) and nothing was dead-lettered
// (check would have read those events). The set is stampcheck's, found on
// the history the call log holds.
func (e *Engine) inconsistency(ctx context.Context) (*online.Alert, error) {
	if len(e.alerts) > 0 || e.unchecked > 0 {
		return nil, nil
	}
	if u, ok := e.inner.(interface{ Undecided() bool }); ok && u.Undecided() {
		return nil, nil
	}
	h := &history.History{}
	var facts []history.Facts
	ids := map[string]bool{}
	dup := false
	err := e.log.each(func(c *call) error {
		if c.kind == recRelease {
			dup = dup || ids[c.txn.ID]
			ids[c.txn.ID] = true
			h.Txns = append(h.Txns, c.txn)
			facts = append(facts, c.facts)
		}
		return nil
	})
	if err != nil || dup || len(h.Txns) == 0 {
		// A reused ID makes the history one check would refuse.
		return nil, err
	}
	for i := range facts {
		h.SetFacts(i, facts[i])
	}
	if !h.HasFacts() {
		return nil, nil
	}
	valid := func(_ context.Context, _ *history.History, opts history.Options) (*incremental.Result, error) {
		return &incremental.Result{Verdict: incremental.Valid, Options: opts}, nil
	}
	var rep *stampcheck.Report
	if e.si {
		rep, err = stampcheck.CheckSnapshotLevel(ctx, h, e.opts, stampcheck.RulesFor(e.opts.Level), valid)
	} else {
		rep, err = stampcheck.CheckWith(ctx, h, e.opts, incremental.Config{}, valid)
	}
	if err != nil || rep == nil || len(rep.Inconsistent) == 0 {
		return nil, err
	}
	byID := make(map[string]*history.Txn, len(h.Txns))
	for i := range h.Txns {
		byID[h.Txns[i].ID] = &h.Txns[i]
	}
	e.final = map[string]*history.Txn{}
	members := make([]history.Txn, len(rep.Inconsistent))
	var wm int64 = math.MinInt64
	for k, id := range rep.Inconsistent {
		t := byID[id]
		e.final[id] = t
		members[k] = *t
		wm = max(wm, t.Start)
	}
	a := &online.Alert{
		ID:        incremental.AlertID(e.cfg.Stream, Inconsistent, members),
		Level:     e.opts.Level,
		Promised:  e.promised,
		Skew:      e.opts.Skew,
		Watermark: wm,
	}
	a.Type, a.Class, a.Core = Inconsistent, Inconsistent, rep.Inconsistent
	a.Text = []string{"the history is valid at " + e.opts.Level.String() + ", but no order of the level keeps the database's own facts: " + rep.Why}
	return a, nil
}

// Alerts returns every alert raised so far.
func (e *Engine) Alerts() []*online.Alert { return e.alerts }

// AlertTxn returns a member of a's core by the name the core gives it.
func (e *Engine) AlertTxn(a *online.Alert, name string) *history.Txn {
	if a.Class == Inconsistent {
		if t := e.final[name]; t != nil {
			c := *t
			return &c
		}
		return nil
	}
	if e.inner != nil {
		return e.inner.AlertTxn(a, name)
	}
	if e.catch != nil {
		// Raised by the black-box engine while it catches up (E6).
		return e.catch.in.AlertTxn(a, name)
	}
	return nil
}

// Stats are the engine's counters in the serializable engine's shape:
// the black-box engine's once the stream fell back, with the releases
// and steps counted here.
func (e *Engine) Stats() online.OnlineStats {
	var s online.OnlineStats
	if e.inner != nil {
		s = e.inner.Stats()
	} else {
		s.Window = len(e.open)
		s.Pending = e.queue.Len()
	}
	s.Released, s.Steps, s.Alerts, s.Unchecked = e.released, e.steps, len(e.alerts), e.unchecked
	return s
}

// Inner is the black-box engine once the stream fell back to it (nil
// before).
func (e *Engine) Inner() Inner { return e.inner }

// FastPath says how far the stamps carried the stream: the items the
// replay placed and, once they stopped vouching, why ("" while they do).
func (e *Engine) FastPath() (replayed int, fellBack string) { return e.replayed, e.failed }

// Level is the level checked, Promised the one the user named.
func (e *Engine) Level() history.Level    { return e.opts.Level }
func (e *Engine) Promised() history.Level { return e.promised }

// SetStream sets the stream alert ids are scoped to.
func (e *Engine) SetStream(name string) { e.cfg.Stream = name }

var _ driver.Engine = (*Engine)(nil)
