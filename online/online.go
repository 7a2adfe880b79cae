package online

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/solver"
)

// Online checks a stream of transactions released in start order by the
// window (window/), raising an alert the moment an anomaly is proven.
//
// This is the first, non-evicting engine: it keeps every released
// transaction and re-checks the released history at each step, so its
// memory grows with the stream. What it gets right, and what the evicting
// engine must keep (docs/SEMANTICS.md §5):
//
//	O1 Online checking is strict serializability with session order (§1):
//	   the level the user promised is recorded, and an alert whose core
//	   does not violate it without real-time edges says NeedsRealtime.
//	O2 A read of a transaction that is not yet time-closed never supports
//	   an alert: a late overlapping writer may still explain it. The alert
//	   instance drops those reads; a closed reader's possible writers are
//	   final (later transactions follow it in real time), so an alert can
//	   never be retracted.
//	O3 The first verdict equals offline: the alert instance has a subset of
//	   the constraints of every later one (future writers only add
//	   candidates to open reads, which it drops), and at end of input every
//	   transaction is closed, so it is the offline instance.
//	O4 After an alert its core is quarantined by the projection rule, as
//	   check --max-anomalies does, and checking goes on.
//	O5 An alert raised while some member was open is shrunk again once all
//	   members have closed (more reads count then, AM1) and updated under
//	   the same id; ids name the anomaly as first alerted by its
//	   members' content, its class and the stream (alertid.go), so a
//	   replay of the same stream gives the same ids and distinct
//	   anomalies never share one.
type Online struct {
	opts     history.Options
	promised history.Level
	// stream is OnlineConfig.Stream, hashed into every alert id.
	stream string

	log txnLog
	// index maps an ID to the newest in-memory transaction with it: the
	// window lets an ID be reused once the first use is past its horizon
	// (window W5), and Close means the newest.
	index map[string]int
	// openGone maps the ID of a transaction that left the index open
	// (evicted before it time-closed) to its position, until its Close
	// (close_gone.go).
	openGone map[string]int
	// goneWaits counts the steps whose violation the bodies prove only
	// once a transaction that left open closes (close_gone.go).
	goneWaits int
	closed    runFlags
	quar      runFlags

	// rewinds are the rewind points, oldest first, and nextRewind the
	// release position the next one is due at (rewind.go).
	rewinds    []rewindPoint
	nextRewind int
	rewound    int // replays that started from a rewind point, for tests
	// inPlace is the first release position quarantined in place since
	// the last replay, plus one (0: none), and inPlaceCount the alert
	// batches quarantined so (alert_inplace.go).
	inPlace, inPlaceCount, healed int

	// Retention (retain.go): the bound, each log chunk's mark, the record
	// bytes released, the floor and the bodies gone below it.
	retention Retention
	marks     []chunkMark
	bodyBytes int64
	floor     int
	goneCount int
	// belowFloor are the bodies below the floor spilled since it last
	// moved: in memory when it passed them.
	belowFloor []int
	// inexactRewinds counts replays whose core began before every rewind
	// point retention left, setAsideCount the transactions setAside
	// quarantined; since and closedSince are what it sets aside: the
	// releases and closings since the last satisfiable step.
	inexactRewinds, setAsideCount int
	since                         int
	closedSince                   []int

	// alerts are the pending alerts and the newest others
	// (alert_kept.go), alertCount every alert raised.
	alerts     []*Alert
	alertCount int
	pending    []*Alert // alerted with an open member; re-shrunk once all close

	steps, checks int
	unchecked     int
	// taintHeld are the writers whose writes are in ev.Taint (true: sticky,
	// with a wildcard), derived from it; taintDropped counts the writers
	// trimTaint dropped and retaken those retaint took back, for tests
	// (storm_taint.go; none saved).
	taintHeld             map[int]bool
	taintDropped, retaken int
	// wild counts the Wild writes in ev.Taint (derived, not saved: a
	// restore recounts), so that runs without any skip their lookups.
	wild int
	// confirmedLocally counts the alerts confirmed on the reduced
	// instance's transactions alone (localAlertHistory), for tests.
	confirmedLocally int
	// Work done, for metrics: solver conflicts and constraints (read
	// choices and writer pairs) encoded, over all checks.
	conflicts, constraints, pruned int64

	// ev is the reduced instance (evict.go); without evict every released
	// transaction stays in it.
	ev       evictState
	evicting bool
	// doubt is the step's unknowns closed by their session, held the
	// steps that evicted nothing for a violation resting on their reads
	// (evict_unknown.go).
	doubt doubtState
	held  int
	// maxPinned is OnlineConfig.MaxPinned; capped counts the transactions
	// it set aside.
	maxPinned, capped int
	// spill holds evicted bodies (spill.go), in the system's temporary
	// directory, opened at the first eviction.
	spill    spill
	spillErr error
	// widx indexes every released write in the body file, for
	// localHistory (writeidx.go).
	widx writeIndex
	// dropped is the last step's prepared instance once nothing uses it,
	// droppedTxns and droppedAt its history's transactions and position
	// map: the next build takes them over (not in a snapshot: a build
	// without them allocates, with the same result).
	dropped     *incremental.Prepared
	droppedTxns []history.Txn
	droppedAt   map[int]int32
	// droppedEnc is the last step's encoder once nothing uses it: the
	// next build's encoder and solver take over its arrays
	// (incremental.WithRecycled, docs/SEMANTICS.md §5 "A step's arrays
	// recycled"). noRecycle turns that off (tests: the step-by-step
	// comparison with fresh arrays).
	droppedEnc *incremental.Encoder
	noRecycle  bool
	// bypass and bypassSess are build's notes for the ghosts a step's
	// instance leaves out (evict_bypass.go), bypassed counts those;
	// noBypass keeps every ghost (tests).
	bypass     map[history.Key]bypassKey
	bypassSess map[string][]sessEntry
	bypassed   int
	noBypass   bool
	// kf are instanceGhosts' key verdicts for bypassGhosts, and
	// noFusedBypass judges them per ghost instead (tests;
	// pg31_bypasskeys.go).
	kf            keyFates
	noFusedBypass bool
	// foldNow are the ghosts the step's build folded into the initial
	// node (live_fold.go), foldVal their versions by key and foldSet
	// the same ghosts as a set (both reused); folded counts them and
	// noFold keeps them in (tests).
	foldNow []int
	foldVal map[history.Key]history.Value
	foldSet map[int]bool
	folded  int
	noFold  bool
	// noClosure is OnlineConfig.NoClosure; closureStats counts what the
	// closure answered (evict_closure.go).
	noClosure    bool
	closureStats ClosureStats
	clScratch    closureScratch
}

// OnlineConfig tunes an engine.
type OnlineConfig struct {
	// Evict judges each step on the reduced instance and evicts what the
	// rules of docs/SEMANTICS.md §5 allow, with the irrelevance rule of
	// evict.go. It is exact (the differential tests hold it to check) and
	// run's default; it rebuilds the reduced instance at every step, and
	// list keys and unknown outcomes stay pinned.
	Evict bool
	// MaxPinned caps the pinned transactions of the evicting engine (0:
	// no cap). Beyond it the oldest pinned ones are set aside unchecked,
	// like a quarantined core: their writes stay known, so every read they
	// could explain is dropped (§3) and nothing set aside can raise a
	// false alarm, but an anomaly through them is no longer found. The
	// engine is then inexact, and says so (OnlineStats.Capped).
	MaxPinned int
	// Bodies is the body file that holds evicted bodies (bodyfile.go;
	// nil: one in memory). A durable one (state.FileBodies at a
	// checkpointed run's state directory) keeps every body there for
	// SnapshotDurable and RestoreOnlineAt, and a new engine empties it;
	// state.FileBodies without a path is an unlinked temporary file.
	Bodies BodyFile
	// Retention bounds the evicted bodies kept (retain.go); zero keeps
	// every one.
	Retention Retention
	// Stream names the stream in every alert id (alertid.go): empty, the
	// ids name anomalies by their content alone, the same through every
	// source that carries the same events.
	Stream string
	// NoClosure answers eviction's order questions without the compact
	// closure (evict_closure.go): every question the closure would
	// answer is a solver probe instead. The verdicts and the alerts are
	// the same (docs/SEMANTICS.md §5 "The closure switch"); what differs
	// is the probes spent, and within the probe budget the step at
	// which a transaction leaves. For measuring the closure's effect
	// (BENCHMARKS.md) and as a way out should it misbehave.
	NoClosure bool
}

// batchAnomalies bounds the cores one confirmation finds and alerts
// together (Step). Each is a minimal core of the alert instance minus the
// cores found before it, as check --max-anomalies finds them; a bound
// only keeps one step's search finite on a history that is nothing but
// anomalies.
const batchAnomalies = 1 << 16

// Alert is one proven anomaly of the stream.
type Alert struct {
	ID string
	incremental.Anomaly
	// Level is the level checked (strict-serializable) and Promised the one
	// the user asked for; NeedsRealtime says the core violates only with
	// real-time edges, so it proves a stale read rather than a violation of
	// a promise without real time.
	Level         history.Level
	Promised      history.Level
	Skew          int64
	NeedsRealtime bool
	// Updated marks a re-sent alert whose core shrank after its members
	// closed (O5).
	Updated bool
	// PastRetention says what of the alert's proof is past the retention
	// bound: a read whose writer may be a gone body, or (Type
	// PastRetentionType) the transactions set aside because the bodies
	// kept could not prove what the engine found (retain.go).
	PastRetention string `json:",omitempty"`
	// Watermark is the released prefix's last start when the alert fired.
	Watermark int64

	// names maps the core's names to release positions. An alert history
	// names a transaction by its ID, or, when the ID is used again within
	// that history (a reuse, window W5), ID@start from its second use on
	// (nameApart), so names are exact within an alert, and find resolves
	// them without scanning.
	names map[string]int
}

// NewOnline starts an engine. opts.Level is the promised level; checking
// is strict serializable (O1).
func NewOnline(opts history.Options) *Online {
	return NewOnlineConfig(opts, OnlineConfig{})
}

// NewOnlineConfig starts an engine with cfg.
func NewOnlineConfig(opts history.Options, cfg OnlineConfig) *Online {
	o := &Online{opts: opts, promised: opts.Level, index: map[string]int{}, evicting: cfg.Evict, maxPinned: cfg.MaxPinned, ev: newEvictState(), nextRewind: rewindEvery, noClosure: cfg.NoClosure}
	o.spill.file = bodiesOrMem(cfg.Bodies)
	o.widx.on = cfg.Evict
	// A tail ghost's body is spilled while it stays a member
	// (evict_list_tail.go): its stub stays too.
	o.log.keep = func(i int) bool { return o.quar.get(i) && o.taintHolds(i) || o.ev.Member.get(i) }
	o.log.inMem = func(i int) bool { return !o.spill.spilled(i) } // txnlog.go: sparse chunks
	o.retention = cfg.Retention
	o.stream = cfg.Stream
	o.opts.Level = incremental.OnlineLevel
	return o
}

// Release adds transactions the window released (in start order).
func (o *Online) Release(txns ...history.Txn) {
	for _, t := range txns {
		o.index[t.ID] = o.appendLog(t)
		o.closed.push(false)
		o.quar.push(false)
		o.ev.admit(o.log.len() - 1)
	}
}

// Close marks released transactions time-closed.
func (o *Online) Close(ids ...string) {
	for _, id := range ids {
		i, ok := o.index[id]
		// A transaction that left the index open (close_gone.go); one
		// spilled and brought back is in both, and leaves openGone too.
		if j, gone := o.closeGone(id); !ok {
			i, ok = j, gone
		}
		if ok {
			if o.retention.bounded() && !o.closed.get(i) {
				o.closedSince = append(o.closedSince, i)
			}
			o.closed.set(i, true)
			// A quarantined member's body waited for this (spill.go).
			o.spillQuarantined([]int{i})
		}
	}
}

// CloseAll is end of input: every transaction time-closes (§5).
func (o *Online) CloseAll() {
	o.closed.setAll(true)
}

// Alerts returns the alerts raised so far, oldest first: every pending
// one and the newest keptAlerts others (alert_kept.go); Stats counts
// them all.
func (o *Online) Alerts() []*Alert { return o.alerts }

// Step checks the released history and returns the alerts raised (and
// updated) by this step.
func (o *Online) Step(ctx context.Context) ([]*Alert, error) {
	o.steps++
	var out []*Alert
	// O5 first: pending alerts whose members have all closed.
	keep := o.pending[:0]
	for _, a := range o.pending {
		if !o.allClosed(a) {
			keep = append(keep, a)
			continue
		}
		smaller, err := o.reshrink(ctx, a)
		if err != nil {
			return out, err
		}
		if smaller {
			out = append(out, a)
		}
	}
	o.pending = keep
	for {
		var r *reduced
		if o.evicting {
			// The reduced instance first: it is the window plus what the
			// evicted transactions proved, and only its violations need the
			// bodies.
			r = o.build()
			if len(r.h.Txns) == 0 {
				o.since, o.closedSince = o.log.len(), o.closedSince[:0]
				o.trimTaint() // storm_taint.go
				return out, nil
			}
			o.checks++
			st := r.solve(ctx)
			o.conflicts += r.e.Solver().Stats().Conflicts
			var held bool
			r, st, held = o.solveHeld(ctx, r, st) // evict_unknown.go
			o.constraints += int64(len(r.e.Reads()) + len(r.e.PairsL()))
			o.pruned += int64(r.e.Pruned())
			switch st {
			case solver.Sat:
				if !held {
					o.evict(ctx, r)
				}
				o.drop(r)
				o.capPinned()
				o.trimTaint() // storm_taint.go
				o.takeRewind(o.log.len())
				o.since, o.closedSince = o.log.len(), o.closedSince[:0]
				if selfCheck.Load() {
					if err := o.checkGhostIndex(); err != nil {
						return out, err
					}
					if err := o.checkGhostRefs(); err != nil { // lead33_refcheck.go
						return out, err
					}
				}
				return out, o.retire()
			case solver.Unknown:
				return out, ctx.Err()
			}
		}
		// The violation is confirmed on bodies: first on the transactions
		// the reduced instance stands for, then, if it rested on what
		// evicted ones proved, on the whole released history.
		var h *history.History
		var pos []int
		var res *incremental.Result
		var retaintErr error
		healed, retry := false, false
		for _, local := range []bool{true, false} {
			var err error
			switch {
			case local && r == nil:
				continue
			case local:
				h, pos, err = o.localAlertHistory(r)
			case o.inPlace > 0:
				// The window's violation may rest on a fact a quarantine
				// in place left: rebuild it as a replay would have, and
				// judge that instead (alert_inplace.go).
				healed = true
			default:
				h, pos, err = o.alertHistory()
			}
			if err != nil {
				return out, err
			}
			if healed {
				break
			}
			if len(h.Txns) == 0 {
				continue
			}
			if local {
				// The neighbourhood of the window: one guarded encoding
				// for every core (alert_batch.go).
				ans, err := o.batchCores(ctx, h)
				if err != nil {
					return out, err
				}
				res = &incremental.Result{Verdict: incremental.Valid, Anomalies: ans}
				if len(ans) > 0 {
					res.Verdict = incremental.Invalid
				}
			} else {
				o.checks++
				if res, err = incremental.Check(ctx, h, o.opts, incremental.Explaining(incremental.Config{MaxAnomalies: batchAnomalies})); err != nil {
					return out, err
				}
				o.conflicts += res.Stats.Conflicts
				o.constraints += int64(res.Stats.Reads + res.Stats.Pairs)
				o.pruned += int64(res.Stats.Pruned)
			}
			if res.Verdict == incremental.Invalid && len(res.Anomalies) > 0 {
				if local {
					o.confirmedLocally++
				}
				break
			}
			if local {
				// The violation may rest on a taint entry the engine
				// dropped: take back those of what the window reads and
				// judge the instance again (storm_taint.go).
				if retry, retaintErr = o.retaint(r); retaintErr != nil || retry {
					break
				}
			}
		}
		if retaintErr != nil {
			return out, retaintErr
		}
		if retry {
			continue
		}
		if healed {
			if err := o.heal(ctx); err != nil {
				return out, err
			}
			continue
		}
		if res == nil {
			return out, nil
		}
		if res.Verdict != incremental.Invalid || len(res.Anomalies) == 0 {
			if r != nil && o.floor > 0 {
				// Not a bug, or not only: the proof may run through bodies
				// past retention.
				a, err := o.setAside(ctx)
				if err != nil || a == nil {
					return out, err
				}
				out = append(out, a)
				continue
			}
			if r != nil {
				// The reduced instance kept a fact the bodies do not
				// prove: a bug, counted; rebuilding from the bodies heals
				// it. (A quarantine in place may leave such facts: see
				// heal, which runs before this.) Unless the bodies prove
				// it once the unknowns that left open are closed: the
				// alert waits for their horizon (close_gone.go).
				wait, err := o.waitsOnGone(ctx)
				if err != nil {
					return out, err
				}
				if wait {
					o.goneWaits++
				} else {
					o.ev.Disagreements++
				}
				if !wait && selfCheck.Load() && !quietDisagree {
					// Under the differential tests' self-checks a
					// disagreement fails the step: counted and healed, it
					// changed no verdict those tests compare, and one was
					// found only by a test that asserted the count (§5
					// "H holds the orders a later list read may show").
					return out, fmt.Errorf("self-check: the reduced instance found a violation the bodies do not confirm (step %d)", o.steps)
				}
				if err := o.resetInstance(); err != nil {
					return out, err
				}
			}
			return out, nil
		}
		// Every core the check found is alerted at once (batchAnomalies):
		// one confirmation and one replay per step, not per anomaly
		// (docs/SEMANTICS.md §5 "Alert batches").
		first := o.log.len()
		var batch []*Alert
		wasMember := map[int]bool{}
		var quarAt []int
		for _, an := range res.Anomalies {
			a := &Alert{
				Anomaly:  an,
				Level:    o.opts.Level,
				Promised: o.promised,
				Skew:     o.opts.Skew,
			}
			a.NeedsRealtime = strings.HasSuffix(an.Class, history.RealtimeSuffix) && !o.promised.RealTime()
			a.Watermark = o.lastStart()
			if o.floor > 0 {
				a.PastRetention = o.unwrittenReads(h, an.Core)
			}
			at := o.name(a, h, pos, an.Core)
			var err error
			if a.ID, err = o.alertID(an.Class, at); err != nil {
				return out, err
			}
			for _, i := range at {
				if o.ev.Member.get(i) {
					wasMember[i] = true
				}
				quarAt = append(quarAt, i)
				if err := o.quarantine(i); err != nil {
					return out, err
				}
				first = min(first, i)
			}
			o.raise(a)
			batch = append(batch, a)
		}
		var err error
		if o.evicting && o.quarantineInPlace(quarAt, wasMember) {
			// Nothing to rebuild (alert_inplace.go).
		} else if o.evicting {
			inexact := o.inexactRewinds
			err = o.replay(ctx, o.replayFrom(first))
			if o.inexactRewinds > inexact {
				for _, a := range batch {
					a.PastRetention = strings.TrimPrefix(a.PastRetention+"; ", "; ") + pastPoints
				}
			}
		} else {
			err = o.resetInstance()
		}
		if err != nil {
			return out, err
		}
		o.spillQuarantined(quarAt)
		for _, a := range batch {
			if !o.allClosed(a) {
				o.pending = append(o.pending, a)
			}
			out = append(out, a)
		}
		o.trimAlerts()
	}
}

func (o *Online) allClosed(a *Alert) bool {
	for _, id := range a.Core {
		if i, ok := o.member(a, id); ok && !o.closed.get(i) {
			return false
		}
	}
	return true
}

func (o *Online) lastStart() int64 {
	if n := o.log.len(); n > 0 {
		return o.log.at(n - 1).Start
	}
	return 0
}

// alertHistory is the instance alerts are judged on: the released history
// projected away from quarantined cores (O4), with the reads of
// transactions that are not time-closed dropped (O2); pos gives each of
// its transactions' release position.
func (o *Online) alertHistory() (h *history.History, pos []int, err error) {
	var txns []history.Txn
	var at []int
	var in []bool
	for i := range o.log.len() {
		if o.gone(i) {
			continue
		}
		t, err := o.body(i)
		if err != nil {
			return nil, nil, err
		}
		txns, at, in = append(txns, t), append(at, i), append(in, !o.quar.get(i))
	}
	h, pos = o.projectAlert(txns, at, in)
	return h, pos, nil
}

// projectAlert names txns apart (nameApart), projects them to those in
// in, and drops the reads of those not yet time-closed (O2); at gives
// each one's release position, pos each one's of the result.
func (o *Online) projectAlert(txns []history.Txn, at []int, in []bool) (h *history.History, pos []int) {
	nameApart(txns)
	p := incremental.Prepare(&history.History{Txns: txns}, o.opts)
	h = p.Project(in)
	pos = make([]int, 0, len(h.Txns))
	for j, member := range in {
		if member {
			pos = append(pos, at[j])
		}
	}
	for j := range h.Txns {
		if o.closed.get(pos[j]) {
			continue
		}
		t := &h.Txns[j]
		ops := t.Ops[:0:0]
		for _, op := range t.Ops {
			if op.Kind != history.Read {
				ops = append(ops, op)
			}
		}
		t.Ops = ops
	}
	return h, pos
}

// nameApart renames, in place, each transaction whose ID an earlier one
// of txns already has (an ID the stream reused, window W5) to ID@start,
// with primes should that repeat too. A name depends only on the
// transactions before it, so it is stable as an alert history grows.
func nameApart(txns []history.Txn) {
	seen := make(map[string]struct{}, len(txns))
	for i := range txns {
		t := &txns[i]
		if _, dup := seen[t.ID]; dup {
			name := fmt.Sprintf("%s@%d", t.ID, t.Start)
			for _, dup := seen[name]; dup; _, dup = seen[name] {
				name += "'"
			}
			t.ID = name
		}
		seen[t.ID] = struct{}{}
	}
}

// name records in a the release positions of core, names of h's
// transactions (pos: their positions), so that find resolves them, and
// returns them.
func (o *Online) name(a *Alert, h *history.History, pos []int, core []string) []int {
	want := make(map[string]bool, len(core))
	for _, id := range core {
		want[id] = true
	}
	a.names = make(map[string]int, len(core))
	var out []int
	for j := range h.Txns {
		if want[h.Txns[j].ID] {
			a.names[h.Txns[j].ID] = pos[j]
			out = append(out, pos[j])
		}
	}
	return out
}

// localAlertHistory is the alert instance for a violation of the reduced
// instance r, on the transactions r stands for (S: its members, ghosts
// included) instead of every released one: H|S, with the reads of open
// transactions dropped (O2). H|S needs, besides S's bodies, every possible
// writer of what S reads, wherever it is: one pass over the released
// bodies finds them (W: writers of a value S reads, appenders of a key S
// reads), and H|S is the projection of S ∪ W to S, exactly what the whole
// history projects to S. A core C within S then re-checks as on the whole
// history ((H|S)|C = H|C), and so does its minimality; and confirming an
// alert costs a pass over the spill instead of a check of every released
// body (which held them all in memory at once). r's violation can rest on
// orders that evicted transactions proved (its kept edges); H|S may then
// be consistent, and Step falls back to the whole history.
func (o *Online) localAlertHistory(r *reduced) (*history.History, []int, error) {
	var set []int
	for _, i := range r.pos {
		if i >= 0 && !o.quar.get(i) {
			set = append(set, i)
		}
	}
	// A ghost folded into the initial node stands in the instance as
	// that node's version: its body is the instance's (live_fold.go).
	return o.localHistory(r.withFolded(set, func(g int) bool { return !o.quar.get(g) }))
}

// localHistory is H|S for the released transactions set (see
// localAlertHistory), with the reads of open ones dropped.
func (o *Online) localHistory(set []int) (*history.History, []int, error) {
	n := o.log.len()
	inS := make(map[int]bool, len(set))
	for _, i := range set {
		inS[i] = true
	}
	type keyVal struct {
		k history.Key
		v history.Value
	}
	values := map[keyVal]bool{}
	keys := map[history.Key]bool{}
	for _, i := range set {
		t, err := o.body(i)
		if err != nil {
			return nil, nil, err
		}
		for _, op := range t.Ops {
			if op.Kind == history.Read {
				keys[op.Key] = true
				if !op.IsList {
					values[keyVal{op.Key, op.Value}] = true
				}
			}
		}
	}
	writes := func(t *history.Txn) bool {
		return slices.ContainsFunc(t.Ops, func(op history.Op) bool {
			return op.Kind != history.Read && keys[op.Key] && (op.Kind == history.Append || values[keyVal{op.Key, op.Value}])
		})
	}
	// The candidates: S and, from the write index, every release that
	// may write what S reads (a superset, filtered by writes below:
	// writeidx.go W1); without the index, every release.
	var cand []int
	if o.widx.on {
		qs := o.widx.queries(keys, func(yield func(history.Key, history.Value)) {
			for kv := range values {
				yield(kv.k, kv.v)
			}
		})
		found, err := o.lookupWrites(qs)
		if err != nil {
			return nil, nil, err
		}
		cand = append(found, set...)
		slices.Sort(cand)
		cand = slices.Compact(cand)
	}
	// The bodies in memory first; the spilled ones are read in the
	// file's order, not release order: records are appended as
	// transactions are evicted, so release order jumped about the file
	// and every record cost a read of its own (half of a storm step's
	// CPU at 50K transactions); in file order one read-ahead serves
	// hundreds.
	picked := map[int]history.Txn{}
	var spilled []spilledAt
	visit := func(i int) error {
		if o.gone(i) {
			return nil
		}
		if !o.spill.spilled(i) {
			if t := o.log.at(i); inS[i] || writes(t) {
				picked[i] = *t
			}
			return nil
		}
		off, err := o.spill.offset(i)
		if err != nil {
			if errors.Is(err, errGone) {
				err = o.goneError(i)
			}
			return err
		}
		spilled = append(spilled, spilledAt{off, i})
		return nil
	}
	if o.widx.on {
		for _, i := range cand {
			if i < n {
				if err := visit(i); err != nil {
					return nil, nil, err
				}
			}
		}
	} else {
		for i := range n {
			if err := visit(i); err != nil {
				return nil, nil, err
			}
		}
	}
	slices.SortFunc(spilled, func(a, b spilledAt) int { return cmp.Compare(a.off, b.off) })
	for _, sa := range spilled {
		b, err := o.spill.recordAt(sa.off, sa.i)
		if err != nil {
			return nil, nil, err
		}
		t, err := decodeTxn(b)
		if err != nil {
			return nil, nil, o.spill.corrupt(fmt.Sprintf("body %d", sa.i), sa.off, err.Error())
		}
		if inS[sa.i] || writes(&t) {
			picked[sa.i] = t
		}
	}
	at := slices.Sorted(maps.Keys(picked))
	txns := make([]history.Txn, len(at))
	in := make([]bool, len(at))
	for k, i := range at {
		txns[k], in[k] = picked[i], inS[i]
	}
	h, pos := o.projectAlert(txns, at, in)
	return h, pos, nil
}

// spilledAt is a spilled body's record offset and release position.
type spilledAt struct {
	off int64
	i   int
}

// reshrink shrinks a pending alert's core under the projection now that
// every member is closed; it reports whether the core got smaller.
func (o *Online) reshrink(ctx context.Context, a *Alert) (bool, error) {
	// The core is shrunk on H|core: a subset C of it projects the same
	// from there as from the whole history ((H|X)|C = H|C), so members of
	// other cores stay out and the rest need not be read.
	members := map[int]bool{}
	var set []int
	for _, id := range a.Core {
		if i, ok := o.member(a, id); ok && !members[i] {
			members[i] = true
			set = append(set, i)
		}
	}
	h, pos, err := o.localHistory(set)
	if err != nil {
		return false, err
	}
	ph := incremental.Prepare(h, o.opts)
	cf := incremental.NewCoreFinder(ph)
	var core []int32
	for j, i := range pos {
		if members[i] {
			core = append(core, int32(j))
		}
	}
	shrunk, err := cf.Shrink(ctx, core)
	if err != nil {
		return false, err
	}
	if len(shrunk) >= len(core) {
		return false, nil
	}
	an := incremental.Describe(context.WithoutCancel(ctx), ph, shrunk) // an alert is always explained (Config.explainPastDeadline)
	an.Core = sortedIDs(h, shrunk)
	o.name(a, h, pos, an.Core)
	a.Anomaly = an
	a.Updated = true
	a.NeedsRealtime = strings.HasSuffix(an.Class, history.RealtimeSuffix) && !o.promised.RealTime()
	return true, nil
}

func sortedIDs(h *history.History, ts []int32) []string {
	s := append([]int32(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := make([]string, len(s))
	for i, t := range s {
		out[i] = h.Txns[t].ID
	}
	return out
}

// alertID names the anomaly of class class whose core members are the
// released transactions at (alertid.go: A1, A2), by their bodies as
// released: not by the alert history's names for them, nor its copies,
// whose reads of open members are dropped.
func (o *Online) alertID(class string, at []int) (string, error) {
	members := make([]history.Txn, 0, len(at))
	for _, i := range at {
		t, err := o.body(i)
		if err != nil {
			return "", err
		}
		members = append(members, t)
	}
	return incremental.AlertID(o.stream, class, members), nil
}

// SetStream sets the stream name alert ids are scoped to
// (OnlineConfig.Stream) on a restored engine: it is configuration, and a
// restart must give it again for the ids to stay the same.
func (o *Online) SetStream(name string) { o.stream = name }

// find returns a released transaction's index by the name an alert core
// gives it (the newest alert first), or else the first released with the
// ID (the one a bare ID names in an alert history, nameApart). The scan
// reads spilled bodies whose chunk was dropped; every alert keeps its
// names, so only a caller asking for something no core names pays for it.
func (o *Online) find(id string) (int, bool) {
	for k := len(o.alerts) - 1; k >= 0; k-- {
		if i, ok := o.alerts[k].names[id]; ok {
			return i, true
		}
	}
	for i := range o.log.len() {
		if o.log.inMemory(i) {
			if o.log.at(i).ID == id {
				return i, true
			}
			continue
		}
		// Its chunk was dropped: the id is in the spilled body.
		if o.gone(i) {
			continue
		}
		t, err := o.spill.get(i)
		if err == nil && t.ID == id {
			return i, true
		}
		if errors.Is(err, ErrCorrupt) && o.spillErr == nil {
			// Not a match, but not silently: the next snapshot fails
			// with it, which stops a checkpointed run.
			o.spillErr = err
		}
	}
	return 0, false
}

// member resolves a name in a's core to its release position: by a's
// own names first. find alone looks through the newest alert's names
// first, so when a later core reused a transaction id, a pending alert's
// name resolved to the later alert's member, and the pending alert was
// pinned, judged closed and re-shrunk on the wrong transaction.
func (o *Online) member(a *Alert, name string) (int, bool) {
	if i, ok := a.names[name]; ok {
		return i, true
	}
	return o.find(name)
}

// AlertTxn returns a member of a's core by the name the core gives it
// (nil if none), for rendering a: a reused ID (window W5) can name
// different transactions in different alerts.
func (o *Online) AlertTxn(a *Alert, name string) *history.Txn {
	if i, ok := a.names[name]; ok {
		return o.txnAt(i)
	}
	return o.Txn(name)
}

// Txn returns a released transaction by id (nil if none), for rendering
// alerts: the newest alert naming it, else the first with the ID.
func (o *Online) Txn(id string) *history.Txn {
	if i, ok := o.find(id); ok {
		return o.txnAt(i)
	}
	return nil
}

func (o *Online) txnAt(i int) *history.Txn {
	if o.spill.spilled(i) {
		t, err := o.body(i)
		if err != nil {
			return nil
		}
		return &t
	}
	return o.log.at(i)
}

// Wild is the value (and the key) of a wildcard write that an unchecked
// writer carries: WildWrite(k) for a key it may have set to anything,
// WildWrite(Wild) when any key may have been written. "*" is not JSON,
// so no key or value of a decoded event is ever spelled so.
const Wild history.Value = "*"

// WildWrite is the op that stands for "may have written anything to k"
// (k Wild: to any key) in a transaction given to AddUnchecked.
func WildWrite(k history.Key) history.Op {
	return history.Op{Kind: history.Write, Key: k, Value: Wild}
}

// countWild counts the Wild writes a taint index holds.
func countWild(taint map[string][]int) int {
	n := 0
	for k, ws := range taint {
		if strings.HasSuffix(k, "\x00"+string(Wild)) {
			n += len(ws)
		}
	}
	return n
}

// AddUnchecked records a dead-lettered transaction's writes as unchecked
// writers (docs/SEMANTICS.md §5 "Dead letters"): it is never a member of
// any instance, so the projection drops every read it could have written.
// Its ops may include WildWrite ops, and its times may be absent (HasTime
// unset: they could not be believed), when it may have written at any
// time. Its id is prefixed so that a duplicate id cannot alias a checked
// one.
func (o *Online) AddUnchecked(t history.Txn) {
	if !t.HasTime {
		// Times for the log's bookkeeping only (retention marks, the
		// latest start); HasTime stays unset, so the projection never
		// rules this writer out by real time.
		t.Start, t.End = o.lastStart(), o.lastStart()
	}
	t.ID = "unchecked:" + t.ID
	for _, dup := o.index[t.ID]; dup; _, dup = o.index[t.ID] {
		t.ID += "'"
	}
	o.index[t.ID] = o.appendLog(t)
	o.closed.push(true)
	o.quar.push(false)
	o.ev.Member.push(false)
	_ = o.quarantine(o.log.len() - 1) // in memory: it cannot fail
	o.unchecked++
}

// quarantine takes a released transaction out of every instance; its
// writes stay known, so that reads it could explain are dropped (§3).
func (o *Online) quarantine(i int) error {
	// The taint rule needs its writes (into Taint now) and its times (its
	// stub, which the log keeps past its chunk's drop: txnLog.keep); its
	// body may stay in the spill, or go there once it leaves the
	// instance (spillQuarantined).
	t, err := o.body(i)
	if err != nil {
		return err
	}
	o.quar.set(i, true)
	o.ev.Member.set(i, false)
	o.addTaintOf(i, &t) // storm_taint.go
	return nil
}

// capPinned sets aside the oldest pinned transactions beyond maxPinned
// (OnlineConfig.MaxPinned). Members of pending alerts stay: their cores
// are still to be shrunk on the bodies.
func (o *Online) capPinned() {
	if o.maxPinned <= 0 {
		return
	}
	pinned := o.Stats().Pinned
	if pinned <= o.maxPinned {
		return
	}
	inCore := map[int]bool{}
	for _, a := range o.pending {
		for _, id := range a.Core {
			if i, ok := o.member(a, id); ok {
				inCore[i] = true
			}
		}
	}
	for _, i := range o.ev.windowList() {
		if pinned <= o.maxPinned {
			break
		}
		if o.ev.Member.get(i) && o.ev.GhostKeys[i] == nil && o.closed.get(i) && !o.quar.get(i) && !inCore[i] {
			_ = o.quarantine(i) // a member: in memory, it cannot fail
			delete(o.ev.Replaced, i)
			o.spillQuarantined([]int{i})
			o.capped++
			pinned--
		}
	}
}

// Stats describe the engine's state.
func (o *Online) Stats() OnlineStats {
	st := OnlineStats{Released: o.log.len() - o.unchecked, Unchecked: o.unchecked, Alerts: o.alertCount, Pending: len(o.pending), Steps: o.steps, Checks: o.checks,
		Evicted: o.ev.Evicted, Ghosts: o.ev.Ghosts, Disagreements: o.ev.Disagreements,
		Conflicts: o.conflicts, Constraints: o.constraints, Pruned: o.pruned, Capped: o.capped,
		PastRetention: o.goneCount, SetAside: o.setAsideCount, InexactRewinds: o.inexactRewinds,
		PinnedBy: o.ev.pinnedBy, InPlace: o.inPlaceCount, Healed: o.healed, Closure: o.closureStats}
	for _, i := range o.ev.windowList() { // ghost_index.go: not a pass over every ghost
		st.Window++
		if o.closed.get(i) {
			st.Pinned++
		}
	}
	return st
}

// OnlineStats count what the engine holds and did. Window is the
// transactions in the reduced instance with their bodies, Pinned those of
// them that are time-closed but not evicted, Ghosts the evicted writers
// kept as live versions; Disagreements counts steps whose reduced instance
// found a violation the bodies did not confirm (always 0 unless there is a
// bug; it heals by a rebuild).
type OnlineStats struct {
	Released, Unchecked, Alerts, Pending, Steps, Checks int
	Window, Pinned, Evicted, Ghosts, Disagreements      int
	// Conflicts, Constraints and Pruned add up every check's solver
	// conflicts, encoded constraints (read choices and writer pairs) and
	// read sources or list parses ruled out before search.
	Conflicts, Constraints, Pruned int64
	// Capped counts transactions set aside unchecked by the pinned cap
	// (OnlineConfig.MaxPinned): when it is not 0 the check is inexact.
	Capped int
	// PastRetention counts the bodies retention deleted; SetAside the
	// transactions set aside because the bodies kept could not prove an
	// anomaly, and InexactRewinds the replays whose core began before
	// every rewind point kept (retain.go): either makes the check inexact.
	PastRetention, SetAside, InexactRewinds int
	// PinnedBy counts the pinned members by the rule that kept each, at
	// the last step that evicted (PinReason). Its sum is Pinned as of
	// that step; members closed since are not in it.
	PinnedBy PinnedBy
	// InPlace counts the alert batches quarantined in place, Healed the
	// replays a later step ran for them (alert_inplace.go).
	InPlace, Healed int
	// Closure counts the order questions eviction asked and what
	// answered them (evict_closure.go).
	Closure ClosureStats
}
