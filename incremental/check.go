package incremental

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// Verdict is three-valued, like porcupine's CheckResult.
type Verdict uint8

const (
	// Valid: the history satisfies the level (a witness order exists).
	Valid Verdict = iota
	// Invalid: at least one anomaly, each with a core.
	Invalid
	// Unknown: the budget (context) ran out before a verdict.
	Unknown
)

func (v Verdict) String() string {
	return [...]string{"valid", "invalid", "unknown"}[v]
}

// Config tunes a check. The zero value checks for one anomaly.
type Config struct {
	// MaxAnomalies bounds how many independent anomalies are reported;
	// after each core the search repeats with the core projected out.
	// 0 means 1.
	MaxAnomalies int

	// VerdictOnly skips the cores of an invalid history: Invalid comes
	// back with no anomaly (sionline's screens, where only validity
	// decides what the step does next).
	VerdictOnly bool

	// NoPrune turns off the encode-time pruning (real-time pruning,
	// unread unknown transactions, the duplicate-value rules of
	// prune_dup.go), so that a differential test can hold the pruned
	// search to the plain one and both to the brute-force oracle. The
	// verdict must not change (docs/SEMANTICS.md §3, "Pruning the
	// offline search").
	NoPrune bool

	// NoTimeWitness turns off the witness built from client time
	// (timeWitness) that the serializable levels with timestamps try
	// before any instance.
	NoTimeWitness bool

	// noStricter turns off stricterFirst, so that tests hold the level's
	// own search to the oracle on histories the strict level settles.
	noStricter bool
	// explainPastDeadline explains every core found, whatever the
	// context: the online engine raises an alert from the first core,
	// and an alert must carry its cycle and class (they are its
	// content), while Check from the CLI honours --timeout.
	explainPastDeadline bool

	_ struct{}
}

// Result is a checker's answer.
type Result struct {
	Verdict   Verdict
	Options   history.Options
	Anomalies []Anomaly
	// Witness is a serial order of the committed transactions (and the
	// unknown ones taken as committed) when the verdict is Valid.
	Witness []string
	Stats   Stats
}

// Stats describe the work done.
type Stats struct {
	Txns  int
	Reads int
	Pairs int
	// Pruned counts read sources and list parses ruled out before search.
	Pruned      int
	Vars        int
	Nodes       int
	Conflicts   int64
	CoreChecks  int
	EncodeTime  time.Duration
	SolveTime   time.Duration
	CoreTime    time.Duration
	TimedOutAny bool
	// ByStricter is set when the verdict Valid came from the witness of a
	// stricter level (see stricterFirst), StricterLevel: the level that
	// witness satisfies (the real-time one, or without timestamps the
	// level's strong session variant, sessionFirst).
	ByStricter    bool
	StricterLevel history.Level
	// ByTime is set when that witness was built from client time without
	// an instance (timeWitness, docs/SEMANTICS.md §3 "T1: a witness from
	// client time").
	ByTime bool
}

// Anomaly is one proven violation: a core whose projection violates the
// level, minimal under the projection (docs/SEMANTICS.md §3), with an
// explanation a person can check.
type Anomaly struct {
	// Type is the most specific name (history.LostUpdate, ...); Class the
	// Adya class of the final cycle with its suffix.
	Type  string
	Class string
	Core  []string
	// Forced lists the orders the core forces before its final cycle, each
	// justified by a cycle that the other choice would close.
	Forced []Forced
	Cycle  []Step
	// Text is the Elle-style explanation, one sentence per step.
	Text []string
}

// Step is one edge of an explanation cycle.
type Step struct {
	From, To string
	Kind     string // ww, wr, rw, process, realtime
	Key      string `json:",omitempty"`
	// Via is set on a ww or rw step whose version order the level's own
	// order fixed ("realtime" or "process") rather than a choice.
	Via string `json:",omitempty"`
	// SlackNS, on a realtime step, is (s_to-Δ)-(e_from+Δ): an alert that
	// leans on a few nanoseconds of slack is a clock-skew suspect.
	SlackNS *int64 `json:",omitempty"`
	Why     string
}

// Forced is a fact decided by the core: the alternative closes Cycle.
// Before and After name the two transactions when the fact is an order.
type Forced struct {
	Order         string
	Before, After string
	Cycle         []Step
}

// ErrMissingTimestamps is returned for real-time levels on histories
// without client timestamps.
var ErrMissingTimestamps = errors.New("incremental: level needs timestamps")

// Check decides whether h satisfies opts.Level and, if not, finds up to
// cfg.MaxAnomalies independent minimal cores.
func Check(ctx context.Context, h *history.History, opts history.Options, cfg Config) (*Result, error) {
	if opts.Level.RealTime() {
		for i := range h.Txns {
			if !h.Txns[i].HasTime {
				t := &h.Txns[i]
				return nil, &history.Error{Pos: t.Pos, ID: t.ID, Field: "start", Err: fmt.Errorf("%w: %s orders transactions by client time", ErrMissingTimestamps, opts.Level)}
			}
		}
	}
	if !opts.Level.Supported() { // only a Level built from a number
		return nil, fmt.Errorf("incremental: level %s is not supported", opts.Level)
	}
	if opts.Level.Def().Backend == history.BackendPolynomial {
		return checkWeak(ctx, h, opts, cfg) // check_weak.go
	}
	if opts.Level == history.PL2Plus {
		return checkPL(ctx, h, opts, cfg) // check_pl.go
	}
	res := &Result{Options: opts}
	res.Stats.Txns = len(h.Txns)
	t0 := time.Now()
	if order := timeFirst(ctx, h, opts, cfg); order != nil {
		timeValid(res, order, time.Since(t0), func(t int32) string { return h.Txns[t].ID })
		return res, nil
	}
	e, strictSt := stricterFirst(ctx, h, opts, cfg)
	if e != nil {
		res.Stats.EncodeTime = e.encodeTime
		res.Stats.SolveTime = time.Since(t0) - e.encodeTime
		res.Stats.Reads = len(e.reads)
		res.Stats.Pairs = len(e.pairsL)
		res.Stats.Pruned = e.pruned
		res.Stats.Vars = e.s.NumVars()
		res.Stats.Nodes = e.s.NumNodes()
		res.Stats.Conflicts = e.s.Stats().Conflicts
		res.Stats.ByStricter, res.Stats.StricterLevel = true, e.p.opts.Level
		res.Verdict = Valid
		res.Witness = e.witness()
		return res, nil
	}
	// Preparing and encoding are linear but long on long histories: the
	// deadline is polled between the phases too, not only in the search.
	if ctx.Err() != nil {
		res.Verdict = Unknown
		res.Stats.TimedOutAny = true
		return res, nil
	}
	p := prepare(h, opts)
	st := solver.Unsat
	if strictSt != solver.Unsat || !strictCoreViolates(ctx, h, p, cfg) {
		if ctx.Err() != nil {
			res.Verdict = Unknown
			res.Stats.TimedOutAny = true
			return res, nil
		}
		e = newEncoder(p, encodeConfig{dropUnobserved: true, noPrune: cfg.NoPrune})
		e.encodeCtx(ctx)
		res.Stats.EncodeTime = time.Since(t0)
		res.Stats.Reads = len(e.reads)
		res.Stats.Pairs = len(e.pairsL)
		res.Stats.Pruned = e.pruned
		res.Stats.Vars = e.s.NumVars()
		res.Stats.Nodes = e.s.NumNodes()
		t1 := time.Now()
		st = e.solve(ctx)
		res.Stats.SolveTime = time.Since(t1)
		res.Stats.Conflicts = e.s.Stats().Conflicts
	}
	switch st {
	case solver.Sat:
		res.Verdict = Valid
		res.Witness = e.witness()
		return res, nil
	case solver.Unknown:
		res.Verdict = Unknown
		res.Stats.TimedOutAny = true
		return res, nil
	}
	res.Verdict = Invalid
	if cfg.VerdictOnly {
		return res, nil
	}
	e = nil // the cores are searched on fresh, smaller instances
	t2 := time.Now()
	defer func() { res.Stats.CoreTime = time.Since(t2) }()
	describeCore := describe
	if p.opts.Level.BeginCommit() {
		describeCore = describeSI // explain_si.go
	}
	if err := collectCores(ctx, res, p, len(h.Txns), cfg, &localizer{p: p, cfg: cfg}, describeCore); err != nil {
		return nil, err
	}
	return res, nil
}

// coreSearch is what collectCores needs of a localizer: a core of the
// members' projection, whether anything is left once cores are removed,
// and how many checks that took.
type coreSearch interface {
	find(ctx context.Context, members []bool) ([]int32, error)
	fast(ctx context.Context, members []bool) solver.Status
	checkCount() int
}

func (l *localizer) checkCount() int   { return l.checks }
func (l *plLocalizer) checkCount() int { return l.checks }

// collectCores finds up to cfg.MaxAnomalies (at least one) disjoint cores
// of an invalid history, each explained by describeCore, removing each
// core before looking for the next (the rest is checked as its
// projection). Errors past the deadline end the search with what was
// found (TimedOutAny); other errors are returned. One loop for every SAT
// back end, so that the deadline and explanation rules cannot drift apart.
func collectCores(ctx context.Context, res *Result, p *prepared, n int, cfg Config, loc coreSearch, describeCore func(context.Context, *prepared, []int32) Anomaly) error {
	remaining := make([]bool, n)
	for i := range remaining {
		remaining[i] = true
	}
	// known: H|remaining is known to violate the level (so at first).
	open, _ := loc.(openSearch)
	if closedLoop {
		open = nil
	}
	known := true
	for len(res.Anomalies) < max(cfg.MaxAnomalies, 1) {
		var core []int32
		var err error
		if known {
			core, err = loc.find(ctx, remaining)
		} else {
			var rest solver.Status
			core, rest, err = open.findOpen(ctx, remaining)
			if err == nil && rest != solver.Unsat {
				res.Stats.CoreChecks = loc.checkCount()
				if rest == solver.Unknown {
					res.Stats.TimedOutAny = true
				}
				return nil
			}
		}
		res.Stats.CoreChecks = loc.checkCount()
		if err != nil {
			if ctx.Err() != nil {
				res.Stats.TimedOutAny = true
				return nil
			}
			return err
		}
		dctx := ctx
		if cfg.explainPastDeadline {
			dctx = context.WithoutCancel(ctx)
		}
		res.Anomalies = append(res.Anomalies, describeCore(dctx, p, core))
		if ctx.Err() != nil {
			// The core is proven; its explanation may have been cut short
			// (timedOutAnomaly), and nothing more is searched.
			res.Stats.TimedOutAny = true
			return nil
		}
		for _, t := range core {
			remaining[t] = false
		}
		if open != nil {
			// Whether anything is left is asked by the next search
			// (findOpen), only once its windows found nothing; and
			// after the last anomaly wanted, not at all.
			known = false
			continue
		}
		rest := loc.fast(ctx, remaining)
		if rest != solver.Unsat {
			if rest == solver.Unknown {
				res.Stats.TimedOutAny = true
			}
			return nil
		}
	}
	return nil
}

// closedLoop makes collectCores check the whole rest after every core
// (the loop before C1): a variable so that tests can compare the two.
var closedLoop = false

// openSearch is a coreSearch that can look for a core of members not
// known to violate the level: findOpen returns the core and Unsat, or
// no core and the status of the members' whole projection when no window
// violates and the whole does not either (Sat) or was not decided
// (Unknown). collectCores uses it after the first core: the question
// "is anything left?" was a check of the whole remaining history after
// every core, a third of the time of ten anomalies on a 13K recording
// (BENCHMARKS.md "check27 (issue 27)", session 19), where a violating
// window, found first in the same order as before, answers it; the
// cores found, and their order, are the same.
type openSearch interface {
	coreSearch
	findOpen(ctx context.Context, members []bool) ([]int32, solver.Status, error)
}

// stricterBudget bounds the conflicts stricterFirst spends: histories
// that satisfy the strict level mostly need few (real time decides most
// orders), and one that does not should fall through quickly.
const stricterBudget = 2000

// stricterFirst tries the strict level on a history checked at a weaker
// one, and returns the encoder of a satisfied strict check (its witness
// order serves the weaker level: strict serializability implies strong
// session serializability implies serializability), or nil. Without real
// time every pair of a key's writers is an order variable and search on
// a valid history of 10K transactions can run for minutes; with it, most
// pairs are decided by time and the same history is solved in
// milliseconds. Histories recorded from databases that promise
// serializability are nearly always strictly serializable within a small
// skew, so this settles the common case; an anomaly, a history without
// timestamps or a spent budget falls through to the level's own search.
//
// Without timestamps the only stricter level that needs none is the
// session one, which snapshot-isolation and serializable try
// (sessionFirst): a history valid at strong session SI is valid at SI,
// one valid at strong session serializability is serializable, and
// session order gives V1 its known paths (vbox_si.go, vbox_prune.go).
// Its failure is reported as Unknown, never Unsat, so that
// strictCoreViolates (which localizes at the real-time level) is not
// asked.
func stricterFirst(ctx context.Context, h *history.History, opts history.Options, cfg Config) (*encoder, solver.Status) {
	if cfg.noStricter || ctx.Err() != nil {
		return nil, solver.Unknown
	}
	strict := strictOf(opts)
	for i := range h.Txns {
		if !h.Txns[i].HasTime {
			return sessionFirst(ctx, h, opts, cfg)
		}
	}
	if strict.Level == opts.Level {
		return nil, solver.Unknown
	}
	return budgeted(ctx, h, strict, cfg)
}

// budgeted encodes h at opts.Level and solves it within stricterBudget
// conflicts: the encoder when satisfied, else nil and the solver's status.
func budgeted(ctx context.Context, h *history.History, opts history.Options, cfg Config) (*encoder, solver.Status) {
	t0 := time.Now()
	e := newEncoder(prepare(h, opts), encodeConfig{conflictBudget: stricterBudget, dropUnobserved: true, noPrune: cfg.NoPrune})
	e.encodeCtx(ctx)
	e.encodeTime = time.Since(t0)
	if st := e.solve(ctx); st != solver.Sat {
		return nil, st
	}
	return e, solver.Sat
}

// sessionFirst is stricterFirst for snapshot-isolation and serializable
// on a history without timestamps: the level's strong session variant
// with the same conflict budget. On the PostgreSQL REPEATABLE READ
// recording without timestamps (12K transactions, 48 keys, up to 1,615
// writers a key) SI alone had no verdict in 120 CPU-s and strong session
// SI took about 10: without session order the known edges are the forced
// reads only and V1 leaves most pairs open (BENCHMARKS.md, "sivbox").
// Serializable is the same: a PostgreSQL SERIALIZABLE recording with
// repeated values (2,170 committed) had no verdict in 114 CPU-s and was
// valid at strong session serializability in 0.19 (BENCHMARKS.md,
// "peers4"). A witness at the session level is one at the level (the
// lattice; internal/oracle's TestLatticeInclusion), and a failure there
// decides nothing.
func sessionFirst(ctx context.Context, h *history.History, opts history.Options, cfg Config) (*encoder, solver.Status) {
	strict := opts
	switch opts.Level {
	case history.SnapshotIsolation:
		strict.Level = history.StrongSessionSnapshotIsolation
	case history.Serializable:
		strict.Level = history.StrongSessionSerializable
	default:
		return nil, solver.Unknown
	}
	if e, _ := budgeted(ctx, h, strict, cfg); e != nil {
		return e, solver.Sat
	}
	return nil, solver.Unknown
}

// timeFirst is the strict pre-check without an instance: when every
// transaction has client time and the level's witness level orders by
// it, a witness built by executing the history in real-time order
// (timeWitness) settles a valid history in one pass. Off with
// NoTimeWitness, NoPrune and noStricter, so that the differential tests
// still hold the search to the oracle; nil when it builds none. On a long
// history it first tries the first timeProbe transactions of the input
// alone: an attempt that fails costs up to a third of a check at 100K
// (BENCHMARKS.md, scale5), and one that fails on the probe is not made.
// The probe is a heuristic gate only: either way the search decides.
func timeFirst(ctx context.Context, h *history.History, opts history.Options, cfg Config) []int32 {
	if !timeFirstApplies(opts, cfg) {
		return nil
	}
	for i := range h.Txns {
		if !h.Txns[i].HasTime {
			return nil
		}
	}
	sopts := strictOf(opts)
	// The probe's form is built alone: a probe that fails then costs the
	// numbering of its transactions only.
	if len(h.Txns) > 4*timeProbe && timeWitness(ctx, &history.History{Txns: h.Txns[:timeProbe]}, sopts) == nil {
		return nil
	}
	return timeWitness(ctx, h, sopts)
}

// timeFirstApplies says whether timeFirst tries the witness from client
// time at all (the history aside): the conditions both check paths
// share (Check here, TimeCompact.Check on the compact form).
func timeFirstApplies(opts history.Options, cfg Config) bool {
	return !cfg.NoTimeWitness && !cfg.NoPrune && !cfg.noStricter && !opts.Level.BeginCommit() && WitnessLevel(opts.Level).RealTime()
}

// timeValid makes res the Valid result of a witness from client time:
// order as transaction ids (id), the witness level named.
func timeValid(res *Result, order []int32, took time.Duration, id func(int32) string) {
	opts := res.Options
	res.Stats.EncodeTime = took
	res.Stats.ByStricter = WitnessLevel(opts.Level) != opts.Level
	res.Stats.StricterLevel = WitnessLevel(opts.Level)
	res.Stats.ByTime = true
	res.Verdict = Valid
	res.Witness = make([]string, len(order))
	for i, t := range order {
		res.Witness[i] = id(t)
	}
}

// timeProbe is the length of timeFirst's probe.
const timeProbe = 4096

func strictOf(opts history.Options) history.Options {
	opts.Level = WitnessLevel(opts.Level)
	return opts
}

// strictCoreViolates is the other half of the strict pre-check: when the
// strict level finds a violation, a core of it (localized by windows,
// cheap under real time) that also violates the weaker level proves the
// history invalid there, and the cores can then be searched window by
// window at that level. Otherwise encoding a long history whole at a
// level without real time is the cost: a 100K-transaction history with
// one lost update did not finish encoding in 2 minutes (1.8M order
// variables, 1.7 GB). A strict core that needs real time or session
// order leaves the decision to the level's own search.
func strictCoreViolates(ctx context.Context, h *history.History, p *prepared, cfg Config) bool {
	opts := p.opts
	if ctx.Err() != nil {
		return false
	}
	sp := prepare(h, strictOf(opts))
	all := make([]bool, len(h.Txns))
	for i := range all {
		all[i] = true
	}
	core, err := (&localizer{p: sp, cfg: cfg}).find(ctx, all)
	if err != nil || len(core) == 0 {
		return false
	}
	in := make([]bool, len(h.Txns))
	for _, t := range core {
		in[t] = true
	}
	if ctx.Err() != nil {
		return false
	}
	e := newEncoder(prepare(p.project(in), opts), encodeConfig{dropUnobserved: true, noPrune: cfg.NoPrune})
	e.encodeCtx(ctx)
	return e.solve(ctx) == solver.Unsat
}

func (e *encoder) solve(ctx context.Context, assumptions ...solver.Lit) solver.Status {
	if e.cancelled {
		return solver.Unknown
	}
	if e.unsat {
		return solver.Unsat
	}
	return e.s.Solve(ctx, assumptions...)
}

// witness maps the solver's topological order to transaction ids,
// keeping committed transactions and unknown ones the model commits.
func (e *encoder) witness() []string {
	if e.si != nil {
		return e.witnessSI() // encode_si.go: begin and commit events
	}
	// Sized up front: the witness is built at the peak of memory, where
	// doubling a 100K-entry slice added 8 MB of garbage.
	out := make([]string, 0, len(e.p.h.Txns))
	for _, n := range e.s.Order() {
		t := e.nodeTxn[n]
		if t < 0 {
			continue
		}
		if c := e.com[t]; c != litTrue && !e.s.Value(solver.Lit(c)) {
			continue
		}
		out = append(out, e.p.h.Txns[t].ID)
	}
	return out
}

// localizer narrows the search for a core before the guarded encoding,
// whose one-assumption-per-transaction solves are slow on long histories:
// it checks windows of members in start order (each as the projection
// H|window, so a violation there is one of H) and runs the guarded search
// on the first violating window. Windows overlap by half and grow fourfold
// until one violates; the last covers every member, so nothing is missed.
// Cores are local in practice (Boomslang §6: almost all involve at most
// five transactions close in time), so this is a few fast checks.
type localizer struct {
	p      *prepared
	cfg    Config
	checks int
	// whole is the guarded instance of p kept across cores (reuseGuarded,
	// core_reuse.go); nil until the first core.
	whole *coreFinder
	// hint is the size of the last guarded instance built (core_hint.go).
	hint sizeHint
	// valid holds the member sets found valid (core_valid.go, C6).
	valid validSets
}

var firstWindow = 1024 // a variable so tests can exercise windowing on tiny histories

func (l *localizer) find(ctx context.Context, members []bool) ([]int32, error) {
	return findInWindows(ctx, l.p, members, firstWindow, l.fast, l.guarded)
}

func (l *localizer) findOpen(ctx context.Context, members []bool) ([]int32, solver.Status, error) {
	return windowSearch(ctx, l.p, members, firstWindow, false, l.fast, l.guarded)
}

// findInWindows finds a core of H|members: windows of members in content
// order (start first), growing fourfold, each decided by fast; the first
// violating window, or all the members once a window would hold them all,
// is shrunk by guarded. Shared by every SAT back end's localizer.
func findInWindows(ctx context.Context, p *prepared, members []bool, first int,
	fast func(context.Context, []bool) solver.Status,
	guarded func(context.Context, []bool) ([]int32, error)) ([]int32, error) {
	core, _, err := windowSearch(ctx, p, members, first, true, fast, guarded)
	return core, err
}

// windowSearch is findInWindows; with known false, H|members is not
// known to violate, and before the guarded search of all the members
// their projection is decided by fast: no core, and its status, unless
// it is Unsat (openSearch).
func windowSearch(ctx context.Context, p *prepared, members []bool, first int, known bool,
	fast func(context.Context, []bool) solver.Status,
	guarded func(context.Context, []bool) ([]int32, error)) ([]int32, solver.Status, error) {
	var order []int32
	for i, in := range members {
		if in {
			order = append(order, int32(i))
		}
	}
	// Windows follow the members' content (contentCompare: start
	// first), not their positions, as the shrink does (alertid.go A3).
	var rank []int32
	if windowBySession {
		rank = sessionRanks(p.h)
	}
	sort.SliceStable(order, func(a, b int) bool {
		ta, tb := &p.h.Txns[order[a]], &p.h.Txns[order[b]]
		if ta.HasTime && tb.HasTime && ta.Start != tb.Start {
			return ta.Start < tb.Start
		}
		if rank != nil && !ta.HasTime && !tb.HasTime && rank[order[a]] != rank[order[b]] {
			return rank[order[a]] < rank[order[b]]
		}
		if c := contentCompare(ta, tb); c != 0 {
			return c < 0
		}
		return order[a] < order[b]
	})
	all := func() ([]int32, solver.Status, error) {
		if !known {
			switch st := fast(ctx, members); st {
			case solver.Unknown:
				return nil, st, ctx.Err()
			case solver.Sat:
				return nil, st, nil
			}
		}
		core, err := guarded(ctx, members)
		return core, solver.Unsat, err
	}
	for size := first; ; size *= 4 {
		if size >= len(order) {
			return all()
		}
		for lo := 0; lo < len(order); lo += size / 2 {
			hi := min(lo+size, len(order))
			window := make([]bool, len(p.h.Txns))
			for _, t := range order[lo:hi] {
				window[t] = true
			}
			switch fast(ctx, window) {
			case solver.Unknown:
				return nil, solver.Unknown, ctx.Err()
			case solver.Unsat:
				core, err := guarded(ctx, window)
				return core, solver.Unsat, err
			}
			if hi == len(order) {
				break
			}
		}
	}
}

// fast decides H|members with the plain encoding.
func (l *localizer) fast(ctx context.Context, members []bool) solver.Status {
	return fastRemembering(ctx, &l.valid, members, l.decide)
}

// fastRemembering answers a check from valid when members lie inside a
// set found valid, and otherwise asks decide and remembers a valid set.
func fastRemembering(ctx context.Context, valid *validSets, members []bool, decide func(context.Context, []bool) solver.Status) solver.Status {
	if valid.covers(members) {
		if recheckValidSets {
			if st := decide(ctx, members); st != solver.Sat {
				panic("incremental: a subset of a valid set is not valid")
			}
		}
		return solver.Sat
	}
	st := decide(ctx, members)
	if st == solver.Sat {
		valid.add(members)
	}
	return st
}

// decide is fast without the memory of valid sets.
func (l *localizer) decide(ctx context.Context, members []bool) solver.Status {
	l.checks++
	if ctx.Err() != nil {
		return solver.Unknown
	}
	hs := l.p.project(members)
	if e, _ := stricterFirst(ctx, hs, l.p.opts, l.cfg); e != nil {
		return solver.Sat
	}
	if ctx.Err() != nil {
		return solver.Unknown
	}
	hp := prepare(hs, l.p.opts)
	e := newEncoder(hp, encodeConfig{dropUnobserved: true, noPrune: l.cfg.NoPrune})
	e.encodeCtx(ctx)
	return e.solve(ctx)
}

// guarded finds a minimal core of H|members and maps it back to H.
func (l *localizer) guarded(ctx context.Context, members []bool) ([]int32, error) {
	if reuseGuarded {
		return l.guardedReused(ctx, members)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	hs := l.p.project(members)
	ps := prepare(hs, l.p.opts)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	cf := newCoreFinderHinted(ps, l.cfg.NoPrune, &l.hint)
	all := make([]bool, len(hs.Txns))
	for i := range all {
		all[i] = true
	}
	core, err := cf.find(ctx, all)
	l.checks += cf.checks
	if err != nil {
		return nil, err
	}
	pos := make(map[string]int32, len(l.p.h.Txns))
	for i := range l.p.h.Txns {
		pos[l.p.h.Txns[i].ID] = int32(i)
	}
	out := make([]int32, len(core))
	for i, t := range core {
		out[i] = pos[hs.Txns[t].ID]
	}
	return out, nil
}

// coreFinder extracts minimal cores: a guarded encoding of the whole
// history, solved under selector assumptions, names a violating set; then
// deletion shrinks it under the projection (in find, on that set's own
// guarded instance: C3, core_shrink.go).
type coreFinder struct {
	p      *prepared
	g      *encoder
	checks int
	pos    map[solver.Lit]int32 // a selector's transaction (failed)
	// noPrune: the switch g was built with, for the instances shrinkSmall
	// builds (core_shrink.go).
	noPrune bool
}

func newCoreFinder(p *prepared) *coreFinder { return newCoreFinderWith(p, false) }

// newCoreFinderWith is newCoreFinder with the duplicate-value rule D1
// switchable off (Config.NoPrune).
func newCoreFinderWith(p *prepared, noPrune bool) *coreFinder {
	g := newEncoder(p, encodeConfig{guarded: true, dropUnobserved: true, noPrune: noPrune})
	g.encode()
	return &coreFinder{p: p, g: g, noPrune: noPrune}
}

// assumptions select exactly the members.
func (cf *coreFinder) assumptions(members []bool) []solver.Lit {
	return cf.g.selectOnly(members)
}

// selectOnly returns the assumptions of a guarded encoding that select
// exactly the members: each undecided selector true or false.
func (g *encoder) selectOnly(members []bool) []solver.Lit {
	var as []solver.Lit
	for i, s := range g.sel {
		if s == litFalse || s == litTrue {
			continue
		}
		if members[i] {
			as = append(as, solver.Lit(s))
		} else {
			as = append(as, solver.Lit(s.not()))
		}
	}
	return as
}

// check decides the projection H|members with the guarded instance.
func (cf *coreFinder) check(ctx context.Context, members []bool) solver.Status {
	return cf.g.solve(ctx, cf.assumptions(members)...)
}

func (cf *coreFinder) find(ctx context.Context, members []bool) ([]int32, error) {
	st := cf.check(ctx, members)
	switch st {
	case solver.Unknown:
		return nil, ctx.Err()
	case solver.Sat:
		return nil, errors.New("incremental: guarded instance is satisfiable where the plain one is not")
	}
	core := cf.failed()
	if len(core) == 0 {
		return nil, errors.New("incremental: unsatisfiable with no transaction selected")
	}
	if freshShrink {
		return cf.shrink(ctx, core)
	}
	return cf.shrinkSmall(ctx, core) // C3
}

// shrinkAskAll makes shrink ask every check, implied or not: a variable
// so that tests can hold C2 to the shrink that asks them all.
var shrinkAskAll = false

// failed lists, after a check that the solver found unsatisfiable, the
// members whose selectors are among its failed assumptions: a set whose
// projection violates the level by itself (with the non-members the
// check assumed out, which every later check of a subset assumes out
// too).
func (cf *coreFinder) failed() []int32 {
	if cf.pos == nil {
		cf.pos = map[solver.Lit]int32{}
		for i, s := range cf.g.sel {
			if s != litFalse && s != litTrue {
				cf.pos[solver.Lit(s)] = int32(i)
			}
		}
	}
	var out []int32
	for _, a := range cf.g.s.FailedAssumptions() {
		if t, ok := cf.pos[a]; ok {
			out = append(out, t)
		}
	}
	return out
}

// shrink removes members one at a time while the projection still
// violates the level. The projection is monotone, so one pass leaves a
// subset-minimal core (docs/SEMANTICS.md §3).
func (cf *coreFinder) shrink(ctx context.Context, core []int32) ([]int32, error) {
	h := cf.p.h
	// Try the latest transactions first: cores found this way tend to keep
	// the earlier, causally prior ones, which reads more naturally. The
	// order is the transactions' content (contentCompare, A3), not their
	// positions in h: the same facts then give the same core whatever
	// else the history being checked holds and in what order, which the
	// alert id's stability across restarts and replays rests on.
	order := slices.Clone(core)
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := contentCompare(&h.Txns[a], &h.Txns[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	sort.Slice(core, func(i, j int) bool { return core[i] < core[j] })
	members := make([]bool, len(h.Txns))
	for _, t := range core {
		members[t] = true
	}
	// inFailed: the members of the failed assumptions of the last check
	// found unsatisfiable (at first core itself: find's check). That set
	// violates by itself, so removing a member outside it leaves a
	// superset of it, which violates too (the projection is monotone):
	// the check's answer is known, and it is not asked. Same answers, so
	// the same core as asking every one (docs/SEMANTICS.md §3 "C2").
	inFailed := make([]bool, len(h.Txns))
	for _, t := range core {
		inFailed[t] = true
	}
	for i := len(order) - 1; i >= 0; i-- {
		t := order[i]
		members[t] = false
		if !inFailed[t] && !shrinkAskAll {
			continue // still violates without t: implied
		}
		cf.checks++
		st := cf.check(ctx, members)
		switch st {
		case solver.Unknown:
			return nil, ctx.Err()
		case solver.Unsat:
			if !cf.g.unsat {
				clear(inFailed)
				for _, u := range cf.failed() {
					inFailed[u] = true
				}
			}
			continue // still violates without t
		}
		members[t] = true
	}
	var out []int32
	for _, t := range core {
		if members[t] {
			out = append(out, t)
		}
	}
	return out, nil
}
