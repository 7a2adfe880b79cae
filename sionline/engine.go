package sionline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
)

// Levels reports whether lv is a level this engine checks: the
// snapshot-isolation family (begin and commit nodes).
func Levels(lv history.Level) bool { return lv.BeginCommit() }

// Checked is the level the engine checks when lv is promised (S1): lv
// itself when it orders by real time (generalized and strong SI), else
// the weakest real-time level of the family that implies it and whose
// real time orders snapshots (strong SI, incremental.WitnessLevel). Only a
// level with real time closes a read: without it a writer that begins
// tomorrow may be what a read saw.
func Checked(lv history.Level) history.Level {
	if lv.RealTime() {
		return lv
	}
	return incremental.WitnessLevel(lv)
}

// CheckedAs says what is checked when lv is promised, for verdict lines
// and help texts.
func CheckedAs(lv history.Level) string {
	if c := Checked(lv); c != lv {
		return fmt.Sprintf("%s (the database promises %s, which has no real time: real time is assumed)", c, lv)
	}
	return lv.String()
}

// Bounded says whether the window at promised level lv is bounded: the
// checked level's real time orders a finished commit before every later
// begin (strong SI, checked for Adya SI and strong session SI too), so a
// sealed prefix can leave for the archive on disk. Not at GSI (E3).
func Bounded(lv history.Level) bool { return Checked(lv).SnapshotRealTime() }

// MemoryNote is what run says at start about the engine's memory at
// promised level lv: exactly which levels of the family evict, what
// stays in memory, and why GSI cannot evict (docs/SEMANTICS.md §5 "The
// window at the snapshot levels", "Eviction at strong snapshot
// isolation", "Re-admitting a suffix of the archive").
func MemoryNote(lv history.Level) string {
	var bounded, kept []string
	for _, name := range history.OnlineLevelNames() {
		if l, err := history.ParseLevel(name); err == nil && Levels(l) {
			if Bounded(l) {
				bounded = append(bounded, name)
			} else {
				kept = append(kept, name)
			}
		}
	}
	levels := fmt.Sprintf("evicting levels of the family: %s; keeping everything: %s", strings.Join(bounded, ", "), strings.Join(kept, ", "))
	if !Bounded(lv) {
		return fmt.Sprintf("warning: at %s the window keeps every released transaction and each step re-checks them all: a read-only snapshot still to come may see any version ever committed, so no transaction can leave (docs/SEMANTICS.md §5 \"The window at the snapshot levels\", E3); memory and step time grow with the stream (%s)", lv, levels)
	}
	why := ""
	if Checked(lv) != lv {
		why = fmt.Sprintf(" (%s itself bounds nothing: without real time a writer still to come may be the source of any read; the bound comes from checking %s)", lv, Checked(lv))
	}
	return fmt.Sprintf("at %s%s a sealed prefix of closed transactions leaves for the body file on disk; memory holds the transactions not yet evicted, one ghost with each written key's last version (it grows with the number of keys, not of transactions) and O(log n) archive segments; a step whose screen fails brings back archive segments, up to half the archive, and one that needs more (an anomaly) loads the whole archive into memory for that step (%s)", lv, why, levels)
}

// screenCheck is how a screen is checked: only its verdict counts (a
// valid screen's witness evicts; an invalid one brings the archive back
// and A_t decides, with its own cores), so no core is searched for.
var screenCheck = incremental.Config{MaxAnomalies: 1, VerdictOnly: true}

// MaxAnomaliesPerStep bounds the cores one step looks for: each is
// projected out and the search repeats (incremental's max-anomalies).
const MaxAnomaliesPerStep = 64

// flag bits of a transaction the engine holds.
const (
	fClosed uint8 = 1 << iota
	fQuarantined
	fUnchecked
)

// Config tunes an engine.
type Config struct {
	// Stream names the stream in every alert id (online.OnlineConfig.Stream).
	Stream string
	// Bodies is the file evicted bodies go to (the archive, archive.go):
	// on disk in `run` (the state directory's body file, or an unlinked
	// temporary one), in memory when nil.
	Bodies online.BodyFile

	_ struct{}
}

// Engine checks a stream at a level of the snapshot-isolation family. It
// satisfies driver.Engine. It is not safe for concurrent use.
type Engine struct {
	// promised is the level the user named, opts the options checked
	// (opts.Level = Checked(promised)).
	promised history.Level
	opts     history.Options
	stream   string

	// txs are the released transactions and the unchecked writers, in
	// the order given (the names, flags and index are documented on tx).
	txs []tx
	// newest maps an ID to its newest transaction (Close names the
	// newest, as online.Online's does), byName a name to its transaction.
	newest map[string]int
	byName map[string]int

	alerts []*online.Alert
	// dirty: something was given since the last check; deferred: the
	// last check found a core with an open member (S4).
	dirty, deferred bool
	// undecided: the last check ended unknown, so the instance may hold
	// an anomaly no alert names.
	undecided bool

	steps, checks, unchecked, unknowns int
	lastStart                          int64
	conflicts                          int64

	// The bounded window (evict.go): seq numbers releases (the order the
	// full instance is rebuilt in); arch holds the evicted transactions'
	// bodies and later closings (archive.go: in a body file); ghost is
	// what they leave to the screen; pendingClose maps the ID of an
	// archived transaction not yet time-closed to its seq. evicted,
	// resets (the whole archive back), readmits (a suffix back, the
	// screen then valid) and probeFails count.
	seq                                   uint64
	arch                                  archive
	ghost                                 *ghost
	pendingClose                          map[string]uint64
	evicted, resets, readmits, probeFails int
	// writes indexes the newest archived writers' versions; diagnosed
	// counts the steps it sent straight to a segment (diagnose.go),
	// failedScreens the screens checked and found not valid.
	writes                   writes
	diagnosed, failedScreens int
	// readmitted counts the archived transactions re-admissions
	// brought back (what the archive walk costs).
	readmitted int
	// serialScreens counts the screens a serial witness from client
	// time settled (serial.go).
	serialScreens int
	// pastBegins counts the begins in the past the sweep placed in the
	// witnesses it returned, and sweepGaveUp the screens it could not
	// order (the search then decides them).
	pastBegins, sweepGaveUp int
	// companions counts the in-doubt writers that left as companions
	// of the ghost (companion.go).
	companions int
	// listRepairs counts the witnesses whose list orders were moved to
	// follow their values (si28e_listorder.go).
	listRepairs int
	// whole makes the engine take the ghost whole where it now takes
	// the keys a step touches (summarize, replayOn) and write whole
	// ghosts to the archive instead of undo records: the path before
	// docs/SEMANTICS.md §5 "The ghost costs what changes, not the
	// stream", which the tests hold this one to, step by step.
	whole bool
	// leftOut counts the screens that left an unchecked writer out
	// (screenOut).
	leftOut int
	// inReadmit is set while readmitFrom checks the screens after its
	// re-admissions (for traceScreen only).
	inReadmit bool
	// broken is an archive error that left the ghost ahead of the
	// members (archiveChunks): every later step returns it.
	broken error
}

// tx is one transaction the engine holds: its body, the name alert
// histories give it (its ID, or ID@start when the ID was taken, so that a
// reused ID stays apart), and its flags.
type tx struct {
	T    history.Txn
	Name string
	Fl   uint8
	Seq  uint64
}

// New starts an engine for opts.Level, a level of the family (Levels).
func New(opts history.Options, cfg Config) (*Engine, error) {
	if !Levels(opts.Level) {
		return nil, fmt.Errorf("sionline: %s is not a level of the snapshot-isolation family", opts.Level)
	}
	e := &Engine{promised: opts.Level, opts: opts, stream: cfg.Stream, newest: map[string]int{}, byName: map[string]int{}, lastStart: math.MinInt64, pendingClose: map[string]uint64{}}
	e.opts.Level = Checked(opts.Level)
	e.arch.file = cfg.Bodies
	if e.arch.file == nil {
		e.arch.file = online.NewMemBodyFile(false)
	}
	return e, nil
}

// SetStream sets the stream alert ids are scoped to, on a restored
// engine (configuration, not state).
func (e *Engine) SetStream(name string) { e.stream = name }

// add appends t under a name no other transaction has.
func (e *Engine) add(t history.Txn, fl uint8) int {
	name := t.ID
	for n := 0; ; n++ {
		if _, taken := e.byName[name]; !taken {
			break
		}
		name = t.ID + "@" + strconv.FormatInt(t.Start, 10) + primes(n)
	}
	i := len(e.txs)
	e.seq++
	e.txs = append(e.txs, tx{T: t, Name: name, Fl: fl, Seq: e.seq})
	e.byName[name] = i
	e.dirty = true
	return i
}

// primes is the suffix of the n-th clash of a name: none, then ', ”, ...
func primes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '\''
	}
	return string(b)
}

// Release adds transactions the window released (in start order).
func (e *Engine) Release(txns ...history.Txn) {
	for _, t := range txns {
		e.newest[t.ID] = e.add(t, 0)
		if t.HasTime {
			e.lastStart = max(e.lastStart, t.Start)
		}
	}
}

// Close marks released transactions time-closed: their reads count from
// the next step on (S2).
func (e *Engine) Close(ids ...string) {
	for _, id := range ids {
		if i, ok := e.newest[id]; ok && e.txs[i].Fl&fClosed == 0 {
			e.txs[i].Fl |= fClosed
			e.dirty = true
		} else if !ok && e.closeArchived(id) {
			e.dirty = true
		}
	}
}

// CloseAll is end of input: every transaction time-closes.
func (e *Engine) CloseAll() {
	for _, id := range sortedIDs(e.pendingClose) {
		e.closeArchived(id)
		e.dirty = true
	}
	for i := range e.txs {
		if e.txs[i].Fl&fClosed == 0 {
			e.txs[i].Fl |= fClosed
			e.dirty = true
		}
	}
}

// AddUnchecked records a dead-lettered transaction's writes (S5): never a
// member, a possible writer of whatever it wrote, so a read it could
// explain is dropped. Its ops may be online.WildWrite ops, and its times
// may be absent.
func (e *Engine) AddUnchecked(t history.Txn) {
	t.ID = "unchecked:" + t.ID
	e.add(t, fUnchecked|fClosed)
	e.unchecked++
}

// Alerts returns every alert raised so far.
func (e *Engine) Alerts() []*online.Alert { return e.alerts }

// AlertTxn returns a member of a's core by the name the core gives it.
func (e *Engine) AlertTxn(_ *online.Alert, name string) *history.Txn {
	if i, ok := e.byName[name]; ok {
		t := e.txs[i].T
		return &t
	}
	return nil
}

// screen checks the screen (the instance with its ghost) for its verdict;
// valid, it evicts the sealed prefix its witness allows and the step is
// done. Its verdict is returned either way (an error stops the step).
func (e *Engine) screen(ctx context.Context) (incremental.Verdict, error) {
	v, _, err := e.screenOr(ctx, nil)
	return v, err
}

// screenOr is screen with a detour: when the serial sweep cannot order
// the screen and named is not nil, named() may send the step elsewhere
// before the search (a read that names an archived writer's segment,
// diagnose.go); it returns true when it did, and the screen's verdict
// is then not known (Unknown). Which way a step goes is precision only:
// a serial witness proves the screen valid whatever a read names, and
// the detour is one the step took before the sweep as well
// (docs/SEMANTICS.md §5 "A read names its segment after the sweep").
func (e *Engine) screenOr(ctx context.Context, named func() (bool, error)) (incremental.Verdict, bool, error) {
	e.checks++
	if e.evicting() && !NoSerialWitness {
		// A serial order from client time, when the sweep finds one, is
		// a witness by construction: the screen is valid without the
		// search (serial.go, docs/SEMANTICS.md §5 "A serial witness for
		// the screen"). The sweep reads the ghost's versions from the
		// ghost itself, so the screen it gets carries the ghost without
		// its ops (the eviction never reads them), when that is the same
		// screen: no projection on it.
		h := e.instanceWith(true, false)
		w := e.serialWitness(h, e.ghost)
		if w == nil {
			e.sweepGaveUp++
		}
		if traceScreen != nil {
			traceScreen(e.inReadmit, "sweep", w != nil, len(h.Txns))
		}
		if w != nil {
			e.serialScreens++
			if serialCheck != nil {
				serialCheck(e.instance(true), e.opts, w)
			}
			e.dirty, e.undecided = false, false
			return incremental.Valid, false, e.evict(h, w)
		}
	}
	if named != nil {
		if went, err := named(); went || err != nil {
			if went {
				e.checks-- // no screen decided: counted as when the detour came first
			}
			return incremental.Unknown, went, err
		}
	}
	h := e.instance(true)
	res, err := incremental.Check(ctx, h, e.opts, screenCheck)
	if err != nil {
		return incremental.Unknown, false, fmt.Errorf("sionline: step %d: %w", e.steps, err)
	}
	e.conflicts += res.Stats.Conflicts
	if traceScreen != nil {
		traceScreen(e.inReadmit, "search", res.Verdict == incremental.Valid, len(h.Txns))
	}
	if res.Verdict != incremental.Valid {
		e.failedScreens++
		return res.Verdict, false, nil
	}
	e.dirty, e.undecided = false, false
	return res.Verdict, false, e.evict(h, res.Witness)
}

// DiagnoseFirst asks diagnose before the serial sweep, at every step
// (the order before the sweep came first); the tests compare against it.
var DiagnoseFirst = false

// NoGhostSkew puts the screen's ghost at its own time under a skew Δ > 0,
// as before docs/SEMANTICS.md §5 "The ghost precedes the members by 2Δ
// (si31)" (the tests compare).
var NoGhostSkew = false

// Step checks the alert instance if anything changed since the last
// check and returns the alerts it raises.
func (e *Engine) Step(ctx context.Context) ([]*online.Alert, error) {
	if e.broken != nil {
		return nil, e.broken
	}
	e.steps++
	if !e.dirty && !e.deferred {
		return nil, nil
	}
	if e.evicting() && !e.deferred {
		// A read of the screen that names an archived writer sends the
		// step to its segment, which comes back before the search
		// (diagnose.go), and older ones after it if need be; asked only
		// when the serial sweep cannot order the screen, since a screen
		// the sweep orders needs no segment (docs/SEMANTICS.md §5 "A
		// read names its segment after the sweep").
		var back bool
		named := func() (bool, error) {
			j := e.diagnose()
			if j < 1 {
				return false, nil
			}
			e.diagnosed++
			var err error
			back, err = e.readmitFrom(ctx, j)
			return true, err
		}
		var went bool
		if DiagnoseFirst {
			var err error
			if went, err = named(); err != nil {
				return nil, err
			}
		}
		if went {
			if back {
				return nil, nil
			}
		} else {
			if DiagnoseFirst {
				named = nil
			}
			// The screen: the held members, the ghost, and the reads
			// of in-doubt members whose client interval closed. Valid,
			// it proves A_t valid (docs/SEMANTICS.md §5 "Eviction at
			// strong snapshot isolation") and the step evicts;
			// otherwise archive segments come back, and failing that
			// A_t itself decides, on every body (reset).
			verdict, went, err := e.screenOr(ctx, named)
			switch {
			case err != nil:
				return nil, err
			case went:
				if back {
					return nil, nil
				}
			case verdict == incremental.Valid:
				return nil, nil
			default:
				if ok, err := e.readmitSuffix(ctx, verdict); ok || err != nil {
					return nil, err
				}
			}
		}
	}
	if reset := e.ghost != nil || len(e.arch.segs) > 0; reset {
		if err := e.reset(); err != nil {
			return nil, err
		}
		if e.evicting() && !e.deferred {
			// The screen again, on every body and no ghost: a witness
			// choice the stream contradicted (the usual cause of a
			// reset) leaves it valid, and it evicts at once, in chunks
			// (docs/SEMANTICS.md §5 "One witness, several evictions"),
			// instead of one more full check now and the screen of the
			// whole stream at the next step.
			if verdict, err := e.screen(ctx); verdict == incremental.Valid || err != nil {
				return nil, err
			}
		}
	}
	h := e.instance(false)
	e.checks++
	res, err := incremental.Check(ctx, h, e.opts, incremental.Explaining(incremental.Config{MaxAnomalies: MaxAnomaliesPerStep}))
	if err != nil {
		return nil, fmt.Errorf("sionline: step %d: %w", e.steps, err)
	}
	e.conflicts += res.Stats.Conflicts
	e.dirty, e.deferred = false, false
	e.undecided = res.Verdict == incremental.Unknown
	switch res.Verdict {
	case incremental.Valid:
		return nil, nil
	case incremental.Unknown:
		// The search gave up (a context deadline): no alert, never a
		// guess; the next change checks again, and the count says it.
		e.unknowns++
		e.dirty = true
		return nil, nil
	}
	var out []*online.Alert
	for _, an := range res.Anomalies {
		idx := make([]int, 0, len(an.Core))
		open := false
		for _, name := range an.Core {
			i, ok := e.byName[name]
			if !ok {
				return out, fmt.Errorf("sionline: core member %q is not released", name)
			}
			idx = append(idx, i)
			open = open || e.txs[i].Fl&fClosed == 0
		}
		if open {
			e.deferred = true // S4: raised once its members have closed
			continue
		}
		a, err := e.alert(ctx, an, idx)
		if err != nil {
			return out, err
		}
		for _, i := range idx {
			e.txs[i].Fl |= fQuarantined
		}
		e.alerts = append(e.alerts, a)
		out = append(out, a)
	}
	if len(out) > 0 {
		// Quarantine changed the instance: what the projection now keeps
		// is checked at the next step.
		e.dirty = true
	}
	return out, nil
}

// readmitSuffix is what a step whose screen was not valid (verdict)
// tries before the whole archive comes back: the archive's segments, the
// newest first, re-admitted with the ghost before them, the screen
// checked again after each (readmitFrom).
func (e *Engine) readmitSuffix(ctx context.Context, verdict incremental.Verdict) (ok bool, err error) {
	if verdict == incremental.Unknown {
		return false, nil // out of time: the full check says so
	}
	return e.readmitFrom(ctx, len(e.arch.segs)-1)
}

// screenAfterReadmit checks the screen after a re-admission; valid, the
// step is valid and evicts again.
func (e *Engine) screenAfterReadmit(ctx context.Context) (incremental.Verdict, error) {
	v, err := e.screen(ctx)
	if v == incremental.Valid {
		e.readmits++ // counted even if the eviction after it fails, as before
	}
	return v, err
}

// alert builds the alert for anomaly an, whose members are idx (all
// closed), found in the step's instance.
func (e *Engine) alert(ctx context.Context, an incremental.Anomaly, idx []int) (*online.Alert, error) {
	members := make([]history.Txn, len(idx))
	for k, i := range idx {
		members[k] = e.txs[i].T
	}
	a := &online.Alert{
		ID:        incremental.AlertID(e.stream, an.Class, members),
		Anomaly:   an,
		Level:     e.opts.Level,
		Promised:  e.promised,
		Skew:      e.opts.Skew,
		Watermark: e.lastStart,
	}
	if e.opts.Level == e.promised {
		return a, nil
	}
	// S6: does the core violate the promised level without the real time
	// the engine assumed? Its projection at that level (possible writers
	// counted without real time), with every read no core member can have
	// written dropped: without real time a transaction still to come may
	// have written it.
	// The projection is taken on every released transaction, the
	// quarantined and unchecked ones included (unprojected), not on the
	// step's instance: that was projected at the checked level, whose real time rules out
	// writers the promise allows (§5 "The promise's re-check counts
	// every released writer").
	opts := e.opts
	opts.Level = e.promised
	all, _ := e.unprojected(false, true)
	core := dropUnwritten(incremental.Project(all, opts, an.Core), opts)
	r, err := incremental.Check(ctx, core, opts, incremental.Config{MaxAnomalies: 1})
	if err != nil {
		return nil, fmt.Errorf("sionline: re-checking a core without real time: %w", err)
	}
	if r.Verdict != incremental.Invalid {
		a.NeedsRealtime = true
		a.Text = append(append([]string{}, a.Text...), fmt.Sprintf(
			"This core violates %s, which run checks, but not %s, which the database promises, on its own: it rests on real time (client intervals, Δ=%dns), which %s does not order (docs/SEMANTICS.md §5 \"The window at the snapshot levels\").",
			e.opts.Level, e.promised, e.opts.Skew, e.promised))
	}
	return a, nil
}

// dropUnwritten drops from h (a core's projection) every external read
// that no other member can have written: a register read of a value no
// other member writes (or, with session order, only members after the
// reader in its session write), a list read with an element no other
// member appends; unless the initial state explains it (a null read of a
// known initial state). Only reads whose sources are all at hand stay.
func dropUnwritten(h *history.History, opts history.Options) *history.History {
	type kv struct{ k, v history.Value }
	writers := map[kv][]int{}
	for j := range h.Txns {
		for _, op := range h.Txns[j].Ops {
			if op.Kind != history.Read {
				writers[kv{op.Key, op.Value}] = append(writers[kv{op.Key, op.Value}], j)
			}
		}
	}
	so := opts.Level.SessionOrder()
	written := func(i int, k, v history.Value) bool {
		t := &h.Txns[i]
		for _, j := range writers[kv{k, v}] {
			w := &h.Txns[j]
			if j == i || (so && w.HasSession && t.HasSession && w.Session == t.Session && (w.Start > t.Start || (w.Start == t.Start && j > i))) {
				continue
			}
			return true
		}
		return false
	}
	for i := range h.Txns {
		t := &h.Txns[i]
		own := map[history.Key]bool{}
		ops := t.Ops[:0:0]
		for _, op := range t.Ops {
			keep := true
			if op.Kind != history.Read {
				own[op.Key] = true
			} else if !own[op.Key] && opts.InitialState != history.InitialUnknown {
				switch {
				case op.IsList:
					for _, v := range op.List {
						keep = keep && written(i, op.Key, v)
					}
				case op.Value != history.Null:
					keep = written(i, op.Key, op.Value)
				}
			}
			if keep {
				ops = append(ops, op)
			}
		}
		t.Ops = ops
	}
	return h
}

// instance builds the alert instance (S2): every transaction given, named
// apart; the external reads of open ones, and reads a wildcard unchecked
// write could explain, dropped; unchecked writers as unknown-outcome
// writers outside every session; projected on the members (released, not
// quarantined), so that a read a quarantined or unchecked writer could
// explain is dropped too (docs/SEMANTICS.md §3).
func (e *Engine) instance(screen bool) *history.History { return e.instanceWith(screen, true) }

// instanceWith is instance; with ghostOps false, a screen's ghost comes
// without its ops (the serial sweep looks its versions up in e.ghost),
// unless the instance is projected (a quarantined or unchecked
// transaction in e.txs), where the ghost's writes take part in what the
// projection keeps.
func (e *Engine) instanceWith(screen, ghostOps bool) *history.History {
	h, members := e.unprojected(screen, ghostOps)
	if len(members) == len(h.Txns) {
		return h
	}
	return incremental.Project(h, e.opts, members)
}

// unprojected is instanceWith before its projection on the members: the
// quarantined transactions with their bodies, the unchecked writers as
// unknown-outcome writers, and the members' names. An alert's re-check
// at the promised level (S6) projects this, not the instance: the
// instance was projected at the checked level, whose real time rules out
// writers the promise does not (§5 "The promise's re-check counts every
// released writer").
func (e *Engine) unprojected(screen, ghostOps bool) (*history.History, []string) {
	wildKeys := map[history.Key]bool{}
	wildAll := false
	for i := range e.txs {
		if e.txs[i].Fl&fUnchecked == 0 {
			continue
		}
		for _, op := range e.txs[i].T.Ops {
			if op.Kind != history.Read && op.Value == online.Wild {
				wildAll = wildAll || op.Key == online.Wild
				wildKeys[op.Key] = true
			}
		}
	}
	h := &history.History{Txns: make([]history.Txn, len(e.txs), len(e.txs)+1)}
	members := make([]string, 0, len(e.txs)+1)
	var out map[int]bool
	if screen {
		out = e.screenOut()
	}
	if screen && e.ghost != nil {
		// After the members' slots (h.Txns[i] is e.txs[i] below).
		// Only the keys a transaction of the screen touches (every key
		// when a wildcard write stands for all of them): the ghost's op
		// on any other key is alone on it, and a completion of the
		// screen without it takes it back first (docs/SEMANTICS.md §5
		// "The ghost in the screen: only the keys the window touches").
		g := history.Txn{ID: ghostName, Start: e.ghost.Time, End: e.ghost.Time, HasTime: true, Status: history.Committed}
		if ghostOps || !e.allMembers() {
			var on map[history.Key]bool
			if !wildAll {
				on = map[history.Key]bool{}
				for i := range e.txs {
					for _, op := range e.txs[i].T.Ops {
						on[op.Key] = true
					}
				}
			}
			g = e.ghost.txn(on)
		}
		if comps := e.screenCompanions(); len(comps) > 0 {
			// The ghost moves earlier so that it precedes its
			// companions, which precede every member (companion.go).
			gt, _, _ := e.companionTimes(e.ghost)
			g.Start, g.End = gt, gt
			h.Txns = append(h.Txns, comps...)
			for _, c := range comps {
				members = append(members, c.ID)
			}
		} else if s := e.opts.Skew; s > 0 && !NoGhostSkew && e.ghost.Time >= math.MinInt64/2+2*s {
			// 2Δ earlier, so that real time puts the ghost before every
			// member (each starts at or after its time) under skew Δ too
			// (docs/SEMANTICS.md §5 "The ghost precedes the members by
			// 2Δ (si31)").
			g.Start, g.End = e.ghost.Time-2*s, e.ghost.Time-2*s
		}
		h.Txns = append(h.Txns, g)
		members = append(members, ghostName)
	}
	for i := range e.txs {
		x := &e.txs[i]
		t := x.T
		t.ID = x.Name
		switch {
		case x.Fl&fUnchecked != 0:
			// A possible writer of anything it wrote, at any time if its
			// times could not be believed; never a member, out of every
			// session (its place there is not known, and session order
			// could rule it out as a writer).
			t.Status = history.Unknown
			t.HasSession, t.Session = false, ""
			t.Ops = filterOps(t.Ops, func(op history.Op, _ bool) bool {
				return op.Kind != history.Read && op.Value != online.Wild && op.Key != online.Wild
			})
		case x.Fl&fQuarantined != 0:
			// Out of the members; its writes stay known to the projection.
		default:
			members = append(members, x.Name)
			closed := x.Fl&fClosed != 0 || (screen && e.readsClosed(x))
			t.Ops = filterOps(t.Ops, func(op history.Op, internal bool) bool {
				return op.Kind != history.Read || internal || (closed && !wildAll && !wildKeys[op.Key])
			})
		}
		h.Txns[i] = t
	}
	if len(out) > 0 {
		// The unchecked writers the screen leaves out (screenOut).
		e.leftOut++
		kept := h.Txns[:0]
		for i := range h.Txns {
			if i >= len(e.txs) || !out[i] {
				kept = append(kept, h.Txns[i])
			}
		}
		h.Txns = kept
	}
	return h, members
}

// screenCompanions returns the ghost's companions the screen carries:
// those writing a key some member touches, when companions are allowed
// and the times leave room (companionTimes), and every member begins at
// or after the ghost's time, so that each companion precedes every
// member in real time. Otherwise none: each taken as not committed, a
// stronger screen.
func (e *Engine) screenCompanions() []history.Txn {
	if e.ghost == nil || len(e.ghost.Comp) == 0 || !e.companionsAllowed() {
		return nil
	}
	_, ct, ok := e.companionTimes(e.ghost)
	if !ok {
		return nil
	}
	on := map[history.Key]bool{}
	for i := range e.txs {
		x := &e.txs[i].T
		if !x.HasTime || x.Start < e.ghost.Time {
			return nil
		}
		for _, op := range x.Ops {
			on[op.Key] = true
		}
	}
	return companionTxns(e.ghost, on, ct)
}

// allMembers says whether every transaction the screen holds is a
// member (none quarantined, no unchecked writer it takes, screenOut):
// the screen is then not projected.
func (e *Engine) allMembers() bool {
	out := e.screenOut()
	for i := range e.txs {
		if e.txs[i].Fl&(fUnchecked|fQuarantined) != 0 && !out[i] {
			return false
		}
	}
	return true
}

// screenOut returns the unchecked writers the screen leaves out
// (docs/SEMANTICS.md §5 "An unchecked writer no member can meet leaves
// the screen"): with nothing quarantined and no wildcard write, each
// unchecked writer none of whose writes is on a key that a member or a
// companion of the ghost touches. Such a writer shares no key with the
// screen, so the projection drops no read for it, and a completion of
// the screen without it is one with it not committed (its outcome is
// unknown): the screen's verdict and witnesses are the same without it.
// nil when there is none (or when KeepUnchecked keeps them all).
func (e *Engine) screenOut() map[int]bool {
	if KeepUnchecked || e.unchecked == 0 {
		return nil
	}
	keys := map[history.Key]bool{}
	for i := range e.txs {
		x := &e.txs[i]
		switch {
		case x.Fl&fQuarantined != 0:
			return nil
		case x.Fl&fUnchecked != 0:
			for _, op := range x.T.Ops {
				if op.Kind != history.Read && (op.Value == online.Wild || op.Key == online.Wild) {
					return nil
				}
			}
		default:
			for _, op := range x.T.Ops {
				keys[op.Key] = true
			}
		}
	}
	if e.ghost != nil {
		for _, c := range e.ghost.Comp {
			for _, k := range c.Keys {
				keys[k] = true
			}
			for _, op := range c.Writes {
				keys[op.Key] = true
			}
		}
	}
	var out map[int]bool
	for i := range e.txs {
		x := &e.txs[i]
		if x.Fl&fUnchecked == 0 {
			continue
		}
		meets := false
		for _, op := range x.T.Ops {
			meets = meets || (op.Kind != history.Read && keys[op.Key])
		}
		if !meets {
			if out == nil {
				out = map[int]bool{}
			}
			out[i] = true
		}
	}
	return out
}

// KeepUnchecked keeps every unchecked writer in the screen (the path
// before screenOut, which the tests compare with).
var KeepUnchecked = false

// filterOps returns the ops keep accepts, given whether a read follows the
// transaction's own write of its key; it shares ops when all are kept.
func filterOps(ops []history.Op, keep func(op history.Op, internal bool) bool) []history.Op {
	var out []history.Op
	var own map[history.Key]bool
	for k, op := range ops {
		ok := keep(op, op.Kind == history.Read && own[op.Key])
		if !ok && out == nil {
			out = append(make([]history.Op, 0, len(ops)), ops[:k]...)
		}
		if ok && out != nil {
			out = append(out, op)
		}
		if op.Kind != history.Read {
			if own == nil {
				own = map[history.Key]bool{}
			}
			own[op.Key] = true
		}
	}
	if out == nil {
		return ops
	}
	return out
}

// Stats describe the engine in the serializable engine's terms (the run
// command's metrics and summaries read them): Window is the transactions
// held, every released one in this engine.
func (e *Engine) Stats() online.OnlineStats {
	st := online.OnlineStats{Released: int(e.seq) - e.unchecked, Unchecked: e.unchecked, Alerts: len(e.alerts), Steps: e.steps, Checks: e.checks, Conflicts: e.conflicts, Evicted: e.evicted}
	if e.ghost != nil {
		st.Ghosts = 1
	}
	for _, x := range e.txs {
		if x.Fl&(fUnchecked|fQuarantined) == 0 {
			st.Window++
			if x.Fl&fClosed != 0 {
				st.Pinned++
			}
		}
	}
	return st
}

// Undecided reports whether the last check ended unknown: the verdict on
// what was checked is then partial, not valid.
func (e *Engine) Undecided() bool { return e.undecided }

// Unknowns counts the checks that ended unknown.
func (e *Engine) Unknowns() int { return e.unknowns }

// Promised is the level the database promises; Level the one checked.
func (e *Engine) Promised() history.Level { return e.promised }

// Level is the level checked (Checked of the promise).
func (e *Engine) Level() history.Level { return e.opts.Level }

// snapshot is the engine's state, JSON-encoded.
type snapshot struct {
	Version   int
	Promised  string
	Txs       []tx
	Newest    map[string]int
	Alerts    []*online.Alert
	Dirty     bool
	Deferred  bool
	Undecided bool `json:",omitempty"`
	Steps     int
	Checks    int
	Unchecked int
	Unknowns  int
	LastStart int64
	Conflicts int64
	// The bounded window (evict.go).
	Seq uint64
	// Arch is a version 2 snapshot's archive (its records, in memory).
	Arch []byte `json:",omitempty"`
	// The archive (archive.go): its segments, and either the file's
	// bytes from ArchFrom on (ArchBytes: Snapshot, the file not
	// durable) or the durable file's length (ArchEnd: SnapshotDurable).
	Segs         []segment         `json:",omitempty"`
	ArchFrom     int64             `json:",omitempty"`
	ArchBytes    []byte            `json:",omitempty"`
	ArchEnd      int64             `json:",omitempty"`
	Ghost        *ghost            `json:",omitempty"`
	PendingClose map[string]uint64 `json:",omitempty"`
	Evicted      int               `json:",omitempty"`
	Resets       int               `json:",omitempty"`
	Readmits     int               `json:",omitempty"`
	ProbeFails   int               `json:",omitempty"`
	// Journal is the last segment's journal when it is a Delta one
	// (undo.go, encodeJournal).
	Journal []byte `json:",omitempty"`
}

// snapshotVersion is 4 since the archive's ghosts are in the spill codec
// (encodeGhost): a build before that cannot read them, and rejects the
// snapshot rather than fail at its first re-admission. Version 3 (JSON
// ghosts, which decodeGhost still reads) restores.
//
// Version 5: an archive ghost may have companions (codec 2,
// companion.go), which a build before it cannot read; versions 3 and 4
// restore (their ghosts have none).
//
// Version 6: segments may be Delta ones, whose ghost is found by undo
// records (undo.go) that a build before it cannot read, and the
// snapshot carries the last segment's journal; versions 3 to 5 restore
// (their segments carry whole ghosts, and the segments opened after the
// restore are Delta ones).
const snapshotVersion = 6

// ErrCorrupt marks a snapshot that does not decode.
var ErrCorrupt = errors.New("sionline: corrupt snapshot")

// Snapshot encodes the engine's state (S7), the archive's bytes
// included.
func (e *Engine) Snapshot() ([]byte, error) {
	s := e.snapshot()
	var err error
	if s.ArchFrom, s.ArchBytes, err = e.arch.bytes(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

func (e *Engine) snapshot() *snapshot {
	return &snapshot{Version: snapshotVersion, Promised: e.promised.String(), Txs: e.txs, Newest: e.newest,
		Alerts: e.alerts, Dirty: e.dirty, Deferred: e.deferred, Undecided: e.undecided, Steps: e.steps, Checks: e.checks,
		Unchecked: e.unchecked, Unknowns: e.unknowns, LastStart: e.lastStart, Conflicts: e.conflicts,
		Seq: e.seq, Segs: e.arch.segs, Ghost: e.ghost, PendingClose: e.pendingClose, Evicted: e.evicted, Resets: e.resets,
		Readmits: e.readmits, ProbeFails: e.probeFails, Journal: journalBytes(e.arch.jr)}
}

func journalBytes(j *journal) []byte {
	if j == nil {
		return nil
	}
	return encodeJournal(j)
}

// Restore rebuilds an engine from a Snapshot, for opts (the same level).
func Restore(opts history.Options, cfg Config, snap []byte) (*Engine, error) {
	var s snapshot
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if s.Version != snapshotVersion && (s.Version < 3 || s.Version > 5) {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, s.Version, snapshotVersion)
	}
	if s.Promised != opts.Level.String() {
		return nil, fmt.Errorf("sionline: the snapshot checked %s, not %s (a changed level needs a new state directory)", s.Promised, opts.Level)
	}
	e, err := New(opts, cfg)
	if err != nil {
		return nil, err
	}
	e.txs = s.Txs
	for i := range e.txs {
		if _, dup := e.byName[e.txs[i].Name]; dup {
			return nil, fmt.Errorf("%w: name %q twice", ErrCorrupt, e.txs[i].Name)
		}
		e.byName[e.txs[i].Name] = i
	}
	if s.Newest != nil {
		e.newest = s.Newest
	}
	for id, i := range e.newest {
		if i < 0 || i >= len(e.txs) {
			return nil, fmt.Errorf("%w: id %q at %d of %d", ErrCorrupt, id, i, len(e.txs))
		}
	}
	e.alerts, e.dirty, e.deferred, e.undecided = s.Alerts, s.Dirty, s.Deferred, s.Undecided
	e.steps, e.checks, e.unchecked, e.unknowns, e.lastStart, e.conflicts = s.Steps, s.Checks, s.Unchecked, s.Unknowns, s.LastStart, s.Conflicts
	e.seq, e.ghost, e.evicted, e.resets, e.readmits, e.probeFails = s.Seq, s.Ghost, s.Evicted, s.Resets, s.Readmits, s.ProbeFails
	if s.PendingClose != nil {
		e.pendingClose = s.PendingClose
	}
	if e.ghost != nil {
		// JSON leaves empty maps nil; the ghost's are written to.
		e.ghost.fill()
	}
	if err := e.arch.restore(&s); err != nil {
		return nil, err
	}
	if s.Journal != nil {
		if e.arch.jr, err = decodeJournal(s.Journal); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	if n := len(e.arch.segs); (n > 0 && e.arch.segs[n-1].Delta) != (e.arch.jr != nil) {
		return nil, fmt.Errorf("%w: a journal without a Delta segment last, or one without a journal", ErrCorrupt)
	}
	if e.ghost != nil {
		e.ghost.jr = e.arch.jr
	}
	return e, nil
}

// restore opens the archive as snapshot s left it: a durable file cut
// back to its length then, or a file started afresh with the bytes s
// carries (a version 2 snapshot's records become one segment).
func (a *archive) restore(s *snapshot) error {
	if s.Arch != nil {
		n, err := countTxns(s.Arch)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		s.ArchBytes, s.ArchFrom = s.Arch, 0
		s.Segs = []segment{{Ranges: []int64{0, int64(len(s.Arch))}, Txns: n}}
	}
	if len(s.Segs) == 0 {
		return nil
	}
	for _, g := range s.Segs {
		if len(g.Ranges)%2 != 0 || g.Txns < 0 || g.GhostLen < 0 || len(g.Undo)%2 != 0 {
			return fmt.Errorf("%w: archive segment %+v", ErrCorrupt, g)
		}
	}
	a.segs = s.Segs
	if s.ArchBytes == nil {
		if err := a.file.Resume(s.ArchEnd); err != nil {
			return fmt.Errorf("sionline: archive %s: %w", a.file.Name(), err)
		}
		a.opened, a.size = true, s.ArchEnd
		return nil
	}
	if err := a.open(); err != nil {
		return err
	}
	for i := range a.segs {
		g := &a.segs[i]
		for r := range g.Ranges {
			g.Ranges[r] -= s.ArchFrom
		}
		if g.GhostLen > 0 {
			g.GhostAt -= s.ArchFrom
		}
		for r := 0; r+1 < len(g.Undo); r += 2 {
			g.Undo[r] -= s.ArchFrom
		}
	}
	a.buf = append(a.buf, s.ArchBytes...)
	a.flush()
	return a.err
}

// countTxns counts the transaction records of an archive's bytes.
func countTxns(b []byte) (int, error) {
	out, _, err := decodeRecords(bufio.NewReader(bytes.NewReader(b)), nil, map[uint64]int{}, nil)
	return len(out), err
}

// SnapshotDurable is Snapshot in the shape the run command's checkpoint
// takes from the serializable engine: with a durable body file the
// snapshot names the archive's length in it, and sync makes the file
// durable up to there (call it before storing the snapshot); otherwise
// the snapshot carries the archive's bytes.
func (e *Engine) SnapshotDurable() ([]byte, func() error, error) {
	if !e.arch.file.Durable() {
		b, err := e.Snapshot()
		return b, func() error { return nil }, err
	}
	s := e.snapshot()
	e.arch.flush()
	if e.arch.err != nil {
		return nil, nil, e.arch.err
	}
	s.ArchEnd = e.arch.size
	b, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	if !e.arch.opened {
		return b, func() error { return nil }, nil
	}
	return b, e.arch.file.Sync, nil
}

// BodyFileSize is the archive's size in its file (the run command's
// metrics).
func (e *Engine) BodyFileSize() int64 { return e.arch.end() }

// ArchiveError is the error the archive's file gave, if any.
func (e *Engine) ArchiveError() error { return e.arch.err }
