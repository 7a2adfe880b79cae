package weakonline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
	"github.com/streamcheck/streamcheck/online"
)

// Levels reports whether lv is a level this engine checks.
func Levels(lv history.Level) bool {
	return lv.Supported() && lv.Def().Backend == history.BackendPolynomial
}

// CheckedAs says what is checked when lv is promised, for verdict lines
// and help texts: the level under the real-time read rule.
func CheckedAs(lv history.Level) string {
	return lv.String() + " with real-time reads (no read from a transaction that began after the reader ended)"
}

// MemoryNote is what run says at start about the engine's memory at
// opts: what retirement bounds and what it keeps (retire.go).
func MemoryNote(opts history.Options) string {
	if opts.Level == history.ReadCommitted {
		note := fmt.Sprintf("at %s settled transactions retire into a per-key value summary (docs/SEMANTICS.md §5 \"Retirement at read committed\"; aborted ones and ones with an intermediate write leave their bodies in it, encoded); open transactions and readers that depend on an unknown outcome stay", opts.Level)
		if opts.InitialState == history.InitialUnknown {
			note += ", and so do the readers of a key's initial value that nothing else explains (§5 \"Retirement under an unknown initial state\")"
		}
		// R8: list members never retire; their bodies alone leave the heap.
		return note + "; transactions with a list op stay (their graph in memory grows with them, their bodies go to a temporary body file), and so do the readers of their register writes (§5 \"Retirement beside list keys\")"
	}
	why := "a late read can make any committed writer a member of every core of a violation, docs/SEMANTICS.md §5 \"Retirement at read atomic and causal\""
	note := fmt.Sprintf("warning: at %s the window keeps every released transaction (issue 26: %s; the real-time read rule does not let one go, §5 \"Retirement under the real-time read rule\"): closed ones' bodies go to a temporary body file, their place in the fast path's graph stays in memory, which grows with the stream", opts.Level, why)
	if opts.Level == history.Causal {
		// weak29_causal.go: the edges, reads and clocks of the settled
		// past leave; the transactions and their index entries stay.
		note += " (more slowly: the graph's settled, overwritten past leaves it, §5 \"The causal graph lets its settled past go\")"
	}
	return note
}

// MaxAnomaliesPerStep bounds the cores one step looks for: each is
// projected out and the search repeats (incremental's max-anomalies).
const MaxAnomaliesPerStep = 64

// flag bits of a released transaction.
const (
	fClosed uint8 = 1 << iota
	fQuarantined
	fUnchecked
	// fSettled: closed, and every possible writer of its reads settled
	// (retire.go, R1); its reads are out of the instance (R2).
	fSettled
	// fList: it appends to or reads a list key (set when it is added,
	// from its ops, which may later leave for the body file): at read
	// committed it is held, never settled (R8).
	fList
	// fInter: it wrote a register value that is not its key's final
	// one (set when it is added, so that a pass need not read back the
	// ops of a member whose body went to the body file, R8).
	fInter
)

// Config tunes an engine.
type Config struct {
	// Stream names the stream in every alert id (online.OnlineConfig.Stream).
	Stream string
	// NoFast turns the incremental fast path off: every step that changed
	// the instance runs the exact check (the reference the tests compare
	// the fast path with).
	NoFast bool
	// NoRetire keeps every released transaction (the reference the
	// tests compare retirement with; R1-R5 in doc.go).
	NoRetire bool

	// Bodies, when set, is where the ops of closed transactions go at
	// read atomic and causal (bodies.go); nil keeps them on the heap.
	Bodies online.BodyFile

	// bodyFlush overrides flushBodiesAt (tests: 1 writes every body
	// out at once, so that reading back goes through the file).
	bodyFlush int
	// retireMin overrides retireFloor (tests: a pass at every step
	// that allows one).
	retireMin int
	// naiveRetire runs read committed's retirement at any level (tests
	// only: the histories of §5 "Retirement at read atomic and causal"
	// show what it misses there).
	naiveRetire bool
	// naiveInit retires under an unknown initial state as under an
	// empty one, every read taken from the initial state forgotten with
	// its reader (tests only: the histories of §5 "Retirement under an
	// unknown initial state" show what it misses).
	naiveInit bool

	_ struct{}
}

// Engine checks a stream of transactions at a weak level. It satisfies
// driver.Engine. It is not safe for concurrent use.
type Engine struct {
	opts   history.Options
	stream string

	// txns are the released transactions and the unchecked writers, in
	// the order given; names the name each has in alert histories (its
	// ID, or ID@start when the ID was taken: online's nameApart), flags
	// its fClosed/fQuarantined/fUnchecked bits.
	txns  []history.Txn
	names []string
	flags []uint8
	// ids maps a string to what it names (nameSlot): as an ID, its
	// newest released transaction (Close means the newest, as
	// online.Online's); as a name, its transaction (negative: a retired
	// body, R6). One map for both: an ID is nearly always its
	// transaction's name, and two string maps, each growing with the
	// stream at causal, were two inserts and a lookup per release.
	ids map[string]nameSlot

	alerts []*online.Alert
	// dirty: something was given since the last step's check; deferred:
	// the last check found a core with an open member (W4).
	dirty, deferred bool

	// undecided: the last exact check ended unknown (too many read-from
	// choices), so the instance may hold an anomaly no alert names.
	undecided bool

	steps, checks, unchecked, unknowns int
	lastStart                          int64

	// fast is the incremental fast path (fast.go); nil when it is off
	// (Config.NoFast) or was given up (fastLost says why): a choice of
	// sources it made closed a cycle that another choice avoids.
	fast     *fast
	noFast   bool
	fastLost string
	// skipped counts the steps the fast path vouched for without a check,
	// rebuilds its rebuilds from a witness.
	skipped, rebuilds int
	// compacted counts the passes that compacted the fast path in
	// place (compactInPlace) rather than rebuilding it.
	compacted int

	// sum is what retired transactions left behind (retire.go);
	// nextRetire the number of transactions held at which the next pass
	// runs.
	sum                   *summary
	blob                  []int32 // per transaction: its body in sum (-1: none; a revived one)
	noRetire, naiveRetire bool
	naiveInit             bool
	retireMin, nextRetire int
	// causalMargin: at causal, the nodes released last that a pass
	// holds whatever they are (weak29_causal.go); doubled after each
	// read of a retired writer.
	causalMargin int
	// causalRetired counts the nodes causal passes retired (over
	// rebuilds: tests and stats).
	causalRetired int
	lastPass      PassStats
	// spillAll: the last pass let none go, so members closing now are
	// likely to stay: their bodies go to the body file at close (R8).
	// Memory only: a pass reads back what it retires.
	spillAll bool
	// nWindow and nPinned are Stats' Window and Pinned, kept as flags
	// change.
	nWindow, nPinned int

	// store holds the spilled bodies (bodies.go); nil without
	// Config.Bodies.
	store *bodyStore
	// readErr is the first body that could not be read back while
	// rebuilding the fast path (which then is in trouble); Step
	// returns it.
	readErr error
}

// New starts an engine for opts.Level, one of the weak levels (Levels).
func New(opts history.Options, cfg Config) (*Engine, error) {
	if !Levels(opts.Level) {
		return nil, fmt.Errorf("weakonline: %s is not a weak level", opts.Level)
	}
	e := &Engine{opts: opts, stream: cfg.Stream, ids: map[string]nameSlot{}, lastStart: math.MinInt64, noFast: cfg.NoFast,
		sum: newSummary(), noRetire: cfg.NoRetire, naiveRetire: cfg.naiveRetire, naiveInit: cfg.naiveInit, retireMin: retireFloor}
	if cfg.retireMin > 0 {
		e.retireMin = cfg.retireMin
	}
	e.nextRetire = e.retireMin
	e.causalMargin = e.retireMin
	if cfg.Bodies != nil {
		e.store = &bodyStore{file: cfg.Bodies, flushAt: flushBodiesAt}
		if cfg.bodyFlush > 0 {
			e.store.flushAt = cfg.bodyFlush
		}
	}
	if !cfg.NoFast {
		e.fast = newFast(opts, e.sum)
	}
	return e, nil
}

// naiveRebuild makes rebuild close node by node, each close propagating
// (as before settleClocks): the tests' reference for the batch.
var naiveRebuild bool

// rebuild makes the fast path anew from the engine's transactions: after
// a quarantine (the instance lost the core) and after a restore; with a
// witness (the exact check's commit order, by name), its choices follow
// it (F3).
func (e *Engine) rebuild(witness ...string) {
	if e.noFast || e.fastLost != "" {
		e.fast = nil
		return
	}
	e.fast = e.built(witness...)
}

// built is a fast path made anew from the engine's transactions
// (rebuild).
func (e *Engine) built(witness ...string) *fast {
	f := newFast(e.opts, e.sum)
	if witness != nil {
		f.rank = make([]int32, len(e.txns))
		for i := range f.rank {
			f.rank[i] = -1
		}
		for k, name := range witness {
			// A retired body the instance held (R6) is named in the
			// witness but is no transaction of the engine (a negative
			// index): it is not in the fast path and needs no rank.
			if i, ok := e.named(name); ok && i >= 0 {
				f.rank[i] = int32(k)
			}
		}
	}
	whole := func(i int) *history.Txn {
		t, err := e.txn(i)
		if err != nil {
			e.readErr = err
			f.fail("a body unreadable from the body file")
		}
		return &t
	}
	for i := range e.txns {
		if e.flags[i]&(fUnchecked|fQuarantined) != 0 {
			f.addTaint(i, whole(i), e.flags[i]&fUnchecked != 0)
		}
	}
	for i := range e.txns {
		if e.flags[i]&(fUnchecked|fQuarantined) == 0 {
			f.release(i, whole(i))
		}
	}
	f.batch = !naiveRebuild
	// The rebuild's closes keep choose's picks (fast.reconsider): the
	// batch adds no forced edges until settleClocks, so a look-ahead
	// would see less in it than closing node by node, and the two must
	// agree (TestSettleClocksAsNaive); a witness guides them anyway.
	f.rebuilding = true
	for i := range e.txns {
		if e.flags[i]&(fUnchecked|fQuarantined|fClosed|fSettled) == fClosed {
			f.close(i, e.txns)
		}
	}
	f.settleClocks()
	f.rebuilding = false
	return f
}

// SetStream sets the stream alert ids are scoped to, on a restored
// engine (configuration, not state).
func (e *Engine) SetStream(name string) { e.stream = name }

// nameSlot is what a string of Engine.ids names.
type nameSlot struct {
	// name: the transaction with this name (hasName); newest: the
	// newest released transaction with this ID (hasNewest).
	name, newest       int32
	hasName, hasNewest bool
}

// named is the transaction with name (negative: retired body -1-i).
func (e *Engine) named(name string) (int, bool) {
	sl, ok := e.ids[name]
	return int(sl.name), ok && sl.hasName
}

// newestOf is the newest released transaction with ID id.
func (e *Engine) newestOf(id string) (int, bool) {
	sl, ok := e.ids[id]
	return int(sl.newest), ok && sl.hasNewest
}

// setName makes name name transaction i (negative: a retired body).
func (e *Engine) setName(name string, i int) {
	sl := e.ids[name]
	sl.name, sl.hasName = int32(i), true
	e.ids[name] = sl
}

// dropName frees name.
func (e *Engine) dropName(name string) {
	sl, ok := e.ids[name]
	if !ok {
		return
	}
	if sl.hasName = false; !sl.hasNewest {
		delete(e.ids, name)
		return
	}
	e.ids[name] = sl
}

// nameFor is the name transaction t takes (its ID, or ID@start when the
// ID is taken: online's nameApart).
func (e *Engine) nameFor(t *history.Txn) string {
	name := t.ID
	if _, taken := e.named(name); taken {
		name = t.ID + "@" + strconv.FormatInt(t.Start, 10)
		for _, again := e.named(name); again; _, again = e.named(name) {
			name += "'"
		}
	}
	return name
}

// add holds t as the next transaction; released, it is its ID's newest.
func (e *Engine) add(t history.Txn, fl uint8, released bool) {
	i := len(e.txns)
	var name string
	if sl := e.ids[t.ID]; !sl.hasName {
		// The common case, one lookup and one store: the ID is free as
		// a name, and names this transaction both ways.
		name = t.ID
		sl.name, sl.hasName = int32(i), true
		if released {
			sl.newest, sl.hasNewest = int32(i), true
		}
		e.ids[name] = sl
	} else {
		name = e.nameFor(&t)
		e.setName(name, i)
		if released {
			sl := e.ids[t.ID]
			sl.newest, sl.hasNewest = int32(i), true
			e.ids[t.ID] = sl
		}
	}
	fl |= opFlags(&t)
	if i == cap(e.txns) {
		e.growHeld(i + 1)
	}
	e.txns = append(e.txns, t)
	e.names = append(e.names, name)
	e.flags = append(e.flags, fl)
	e.countFlags(fl, 1)
	e.blob = append(e.blob, -1)
	if s := e.store; s != nil {
		s.off, s.n = append(s.off, -1), append(s.n, 0)
	}
	e.dirty = true
}

// growHeld gives the slices parallel to e.txns room for at least n,
// doubling: append grows a slice past 256 elements by a quarter at a
// time (Go's growth for large slices), and at read atomic and causal,
// where nothing retires, e.txns (a pointerful element of about 100
// bytes) was copied about four times its final size over a run: its
// growth was 6% of run --level read-atomic's CPU on u300k.
func (e *Engine) growHeld(n int) {
	c := max(n, 2*len(e.txns), 64)
	e.txns = slices.Grow(e.txns, c-len(e.txns))
	e.names = slices.Grow(e.names, c-len(e.names))
	e.flags = slices.Grow(e.flags, c-len(e.flags))
	e.blob = slices.Grow(e.blob, c-len(e.blob))
	if s := e.store; s != nil {
		s.off = slices.Grow(s.off, c-len(s.off))
		s.n = slices.Grow(s.n, c-len(s.n))
	}
}

// opFlags are the flags t's ops decide: fList, fInter.
func opFlags(t *history.Txn) uint8 {
	var fl uint8
	if hasListOp(t) {
		fl |= fList
	}
	if hasIntermediate(t) {
		fl |= fInter
	}
	return fl
}

// hasIntermediate reports whether t wrote a register value that is not
// its key's last write (list appends are never intermediate here: a list
// member never retires, R8).
func hasIntermediate(t *history.Txn) bool {
	for j, op := range t.Ops {
		if op.Kind != history.Write {
			continue
		}
		final := op.Value
		for _, l := range t.Ops[j+1:] {
			if l.Kind == history.Write && l.Key == op.Key {
				final = l.Value
			}
		}
		if final != op.Value {
			return true
		}
	}
	return false
}

// hasListOp reports whether t appends to or reads a list.
func hasListOp(t *history.Txn) bool {
	for _, op := range t.Ops {
		if op.Kind == history.Append || op.IsList {
			return true
		}
	}
	return false
}

// Release adds transactions the window released (in start order).
func (e *Engine) Release(txns ...history.Txn) {
	for _, t := range txns {
		if t.HasTime {
			e.lastStart = max(e.lastStart, t.Start)
		}
		e.add(t, 0, true)
		if e.fast != nil {
			e.fast.release(len(e.txns)-1, &e.txns[len(e.txns)-1])
		}
	}
}

// Close marks released transactions time-closed: their reads count from
// the next step on (W1).
func (e *Engine) Close(ids ...string) {
	for _, id := range ids {
		if i, ok := e.newestOf(id); ok && e.flags[i]&fClosed == 0 {
			e.setFlags(i, e.flags[i]|fClosed)
			e.dirty = true
			if e.fast != nil && e.flags[i]&fQuarantined == 0 {
				e.fast.close(i, e.txns)
				if e.spillsAtClose(i) {
					e.spill(i)
				}
			}
		}
	}
}

// CloseAll is end of input: every transaction time-closes.
func (e *Engine) CloseAll() {
	for i := range e.flags {
		if e.flags[i]&fClosed == 0 {
			e.setFlags(i, e.flags[i]|fClosed)
			e.dirty = true
			if e.fast != nil && e.flags[i]&fQuarantined == 0 {
				e.fast.close(i, e.txns)
				if e.spillsAtClose(i) {
					e.spill(i)
				}
			}
		}
	}
}

// AddUnchecked records a dead-lettered transaction's writes (W5): it is
// never a member, and a read it could explain is dropped. Its ops may be
// online.WildWrite ops, and its times may be absent.
func (e *Engine) AddUnchecked(t history.Txn) {
	t.ID = "unchecked:" + t.ID
	e.add(t, fUnchecked|fClosed, false)
	if e.fast != nil {
		// More possible writers only drop reads from the instance: the
		// fast path's graph keeps constraints the instance may have lost,
		// which can only make it see trouble, never miss it.
		e.fast.addTaint(len(e.txns)-1, &e.txns[len(e.txns)-1], true)
	}
	e.unchecked++
}

// Alerts returns every alert raised so far.
func (e *Engine) Alerts() []*online.Alert { return e.alerts }

// AlertTxn returns a member of a's core by the name the core gives it.
func (e *Engine) AlertTxn(a *online.Alert, name string) *history.Txn {
	i, ok := e.named(name)
	if !ok {
		return nil
	}
	if i < 0 {
		// A retired body (R6): a core that names it revived it, so
		// this is an older alert's member, shown from the summary.
		var bd body
		if json.Unmarshal(e.sum.bodies[-1-i], &bd) != nil {
			return nil
		}
		return &bd.Txn
	}
	t, err := e.txn(i)
	if err != nil {
		return nil
	}
	return &t
}

// Step checks the alert instance if anything changed since the last
// check and returns the alerts it raises.
func (e *Engine) Step(ctx context.Context) ([]*online.Alert, error) {
	e.steps++
	if e.readErr != nil {
		return nil, e.readErr
	}
	if !e.dirty && !e.deferred {
		return nil, nil
	}
	if e.fast != nil && !e.fast.trouble && !e.deferred {
		// F1: the fast path's graph is acyclic under its choice of
		// sources and holds every constraint of the instance: a witness.
		e.dirty, e.undecided = false, false
		e.skipped++
		e.maybeRetire()
		return nil, nil
	}
	h, in, err := e.instance()
	if err != nil {
		return nil, err
	}
	e.checks++
	res, err := incremental.CheckWeakOnline(ctx, h, e.opts, incremental.Config{MaxAnomalies: MaxAnomaliesPerStep}, in)
	if err != nil {
		return nil, fmt.Errorf("weakonline: step %d: %w", e.steps, err)
	}
	e.dirty, e.deferred = false, false
	if res.Verdict != incremental.Unknown {
		e.undecided = false
	}
	switch res.Verdict {
	case incremental.Valid:
		if e.fast != nil && e.fast.trouble {
			// F3: the instance is valid under another choice than the
			// fast path's. Rebuilt with its choices guided by the
			// witness, it vouches again; if that too is in trouble, it
			// is given up for the rest of the run.
			why := e.fast.why
			if why == whyRetiredRead {
				// Memory only: a pass that lets a writer go that a
				// read still wanted costs a check and a rebuild.
				e.causalMargin *= 2
			}
			e.rebuild(res.Witness...)
			e.rebuilds++
			if e.fast != nil && e.fast.trouble {
				e.fastLost, e.fast = why+"; again after a rebuild from the witness: "+e.fast.why, nil
				// Every step checks from now on, reading every body:
				// they come back to the heap (B1).
				if err := e.unspill(); err != nil {
					return nil, err
				}
			}
		}
		e.maybeRetire()
		return nil, nil
	case incremental.Unknown:
		// Too many read-from choices to enumerate: no alert (never a
		// guess); the next change checks again, and the count says it.
		e.unknowns++
		e.undecided = true
		return nil, nil
	}
	var out []*online.Alert
	for _, an := range res.Anomalies {
		idx := make([]int, 0, len(an.Core))
		open := false
		for _, name := range an.Core {
			i, ok := e.named(name)
			if !ok {
				return out, fmt.Errorf("weakonline: core member %q is not released", name)
			}
			if i < 0 {
				// A retired body the instance held (R6): back in.
				var err error
				if i, err = e.revive(int32(-1 - i)); err != nil {
					return out, err
				}
			}
			idx = append(idx, i)
			if e.flags[i]&fClosed == 0 {
				open = true
			}
		}
		if open {
			e.deferred = true // W4: raised once its members closed
			continue
		}
		a, err := e.alert(ctx, h, an, idx)
		if err != nil {
			return out, err
		}
		for _, i := range idx {
			e.setFlags(i, e.flags[i]|fQuarantined)
		}
		e.alerts = append(e.alerts, a)
		out = append(out, a)
	}
	if len(out) > 0 {
		// Quarantine changed the instance: what the projection now keeps
		// is checked at the next step, on a fast path built anew (F4).
		e.dirty = true
		e.rebuild()
	}
	return out, nil
}

// alert builds the alert for anomaly an, whose members are idx (all
// closed), found in the instance h.
func (e *Engine) alert(ctx context.Context, h *history.History, an incremental.Anomaly, idx []int) (*online.Alert, error) {
	members := make([]history.Txn, len(idx))
	for k, i := range idx {
		var err error
		if members[k], err = e.txn(i); err != nil {
			return nil, err
		}
	}
	a := &online.Alert{
		ID:        incremental.AlertID(e.stream, an.Class, members),
		Anomaly:   an,
		Level:     e.opts.Level,
		Promised:  e.opts.Level,
		Skew:      e.opts.Skew,
		Watermark: e.lastStart,
	}
	// Without the real-time read rule, does the core still violate the
	// promised level? The projection is the level's own (a writer after
	// the reader is a possible writer again).
	// A read no transaction of the core can have written is dropped too:
	// without the rule a transaction that begins later could write its
	// value, so it proves nothing about the promised level (WK3).
	core := dropUnwritten(incremental.Project(h, e.opts, an.Core), e.opts)
	r, err := incremental.Check(ctx, core, e.opts, incremental.Config{MaxAnomalies: 1})
	if err != nil {
		return nil, fmt.Errorf("weakonline: re-checking a core without real time: %w", err)
	}
	if r.Verdict != incremental.Invalid {
		a.NeedsRealtime = true
		a.Text = append(append([]string{}, a.Text...), fmt.Sprintf(
			"This core violates %s only under the real-time read rule run adds (no read from a transaction that began after the reader ended, Δ=%dns): it proves a read from a transaction that had not begun (or of a value no transaction at hand wrote), which %s alone allows of a transaction still to come.",
			e.opts.Level, e.opts.Skew, e.opts.Level))
	}
	return a, nil
}

// dropUnwritten drops from h every external read of a value that no
// other transaction of h writes (with session order: none that is not
// after the reader in its session) and the initial state cannot have
// held, so that only reads whose possible sources are all at hand stay.
func dropUnwritten(h *history.History, opts history.Options) *history.History {
	so := opts.Level.SessionOrder()
	for i := range h.Txns {
		t := &h.Txns[i]
		var wrote map[history.Key]bool
		t.Ops = keepOps(t.Ops, func(op history.Op, internal bool) bool {
			if op.Kind != history.Read || internal || op.Value == history.Null || opts.InitialState == history.InitialUnknown {
				return true
			}
			for j := range h.Txns {
				w := &h.Txns[j]
				if j == i || (so && w.HasSession && t.HasSession && w.Session == t.Session && (w.Start > t.Start || (w.Start == t.Start && j > i))) {
					continue
				}
				for _, wo := range w.Ops {
					if wo.Kind != history.Read && wo.Key == op.Key && wo.Value == op.Value {
						return true
					}
				}
			}
			return false
		}, &wrote)
	}
	return h
}

// instance builds the alert instance: every transaction given, the
// external reads of open ones (and reads a wildcard unchecked write could
// explain) dropped, unchecked writers as unknown-outcome writers; in
// marks the members (released, not quarantined).
func (e *Engine) instance() (*history.History, []bool, error) {
	wildKeys := map[history.Key]bool{}
	wildAll := false
	for i := range e.txns {
		if e.flags[i]&fUnchecked == 0 {
			continue
		}
		for _, op := range e.txns[i].Ops {
			if op.Kind != history.Read && op.Value == online.Wild {
				if op.Key == online.Wild {
					wildAll = true
				}
				wildKeys[op.Key] = true
			}
		}
	}
	h := &history.History{Txns: make([]history.Txn, len(e.txns))}
	in := make([]bool, len(e.txns))
	var wrote map[history.Key]bool
	for i := range e.txns {
		t, err := e.txn(i)
		if err != nil {
			return nil, nil, err
		}
		t.ID = e.names[i]
		fl := e.flags[i]
		in[i] = fl&(fUnchecked|fQuarantined) == 0
		switch {
		case fl&fUnchecked != 0:
			// A possible writer of anything it wrote, at any time if its
			// times could not be believed; never a member.
			t.Status = history.Unknown
			// Out of every session: its place there is not known, and a
			// session order could rule it out as a writer.
			t.HasSession, t.Session = false, ""
			t.Ops = keepOps(t.Ops, func(op history.Op, _ bool) bool {
				return op.Kind != history.Read && op.Value != online.Wild && op.Key != online.Wild
			}, &wrote)
		case fl&fQuarantined != 0:
			// Out of the instance; its writes stay known through the
			// projection (it is not in in).
		default:
			// A settled transaction's reads are out (R2), as an open
			// one's are; a read of a value the summary holds has a
			// retired source nothing can rule out, and is out too.
			closed := fl&(fClosed|fSettled) == fClosed
			t.Ops = keepOps(t.Ops, func(op history.Op, internal bool) bool {
				if op.Kind != history.Read || internal {
					return true
				}
				return closed && !wildAll && !wildKeys[op.Key] && !e.sum.has(op.Key, op.Value)
			}, &wrote)
		}
		h.Txns[i] = t
	}
	// Retired bodies a kept read may need (R6): settled members, their
	// reads out, after everything held.
	bodies, _, err := e.bodiesRead(wildAll, wildKeys)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range bodies {
		t.Ops = keepOps(t.Ops, func(op history.Op, internal bool) bool { return op.Kind != history.Read || internal }, &wrote)
		h.Txns = append(h.Txns, t)
		in = append(in, true)
	}
	return h, in, nil
}

// keepOps returns ops filtered by keep (given whether a read follows the
// transaction's own write of its key), sharing ops when all are kept.
func keepOps(ops []history.Op, keep func(op history.Op, internal bool) bool, wrote *map[history.Key]bool) []history.Op {
	if *wrote == nil {
		*wrote = map[history.Key]bool{}
	}
	w := *wrote
	clear(w)
	all := true
	for _, op := range ops {
		if !keep(op, op.Kind == history.Read && w[op.Key]) {
			all = false
			break
		}
		if op.Kind != history.Read {
			w[op.Key] = true
		}
	}
	if all {
		return ops
	}
	clear(w)
	out := make([]history.Op, 0, len(ops))
	for _, op := range ops {
		if keep(op, op.Kind == history.Read && w[op.Key]) {
			out = append(out, op)
		}
		if op.Kind != history.Read {
			w[op.Key] = true
		}
	}
	return out
}

// Stats describe the engine in the serializable engine's terms (the run
// command's metrics and summaries read them): Window is the transactions
// held, all of them in this engine.
//
// O(1): Window and Pinned are counters kept as flags change (setFlags,
// countFlags; recount after a retirement pass compacts the transactions
// and after Restore). The driver asks at every step, and a loop over
// every transaction held was a step's cost on a long stream.
func (e *Engine) Stats() online.OnlineStats {
	return online.OnlineStats{Released: len(e.txns) - e.unchecked + e.sum.n, Unchecked: e.unchecked, Alerts: len(e.alerts), Steps: e.steps, Checks: e.checks,
		Window: e.nWindow, Pinned: e.nPinned}
}

// countFlags adds d to the counters a transaction with flags fl counts
// in: Window for a member (neither unchecked nor quarantined), Pinned
// for a closed member.
func (e *Engine) countFlags(fl uint8, d int) {
	if fl&(fUnchecked|fQuarantined) == 0 {
		e.nWindow += d
		if fl&fClosed != 0 {
			e.nPinned += d
		}
	}
}

// setFlags sets transaction i's flags, keeping the counters.
func (e *Engine) setFlags(i int, fl uint8) {
	e.countFlags(e.flags[i], -1)
	e.flags[i] = fl
	e.countFlags(fl, 1)
}

// recount sets the counters from the flags (after a compaction or a
// restore: O(n) where the transactions were just walked anyway).
func (e *Engine) recount() {
	e.nWindow, e.nPinned = 0, 0
	for _, fl := range e.flags {
		e.countFlags(fl, 1)
	}
}

// FastPath says whether the incremental fast path is on, and if it was
// given up, why; Skipped counts the steps it vouched for without a check.
func (e *Engine) FastPath() (on bool, lost string, skipped int) {
	return e.fast != nil, e.fastLost, e.skipped
}

// Undecided reports whether the last exact check ended unknown: the
// verdict on what was checked is then partial, not valid.
func (e *Engine) Undecided() bool { return e.undecided }

// Unknowns counts the checks that ended unknown (too many read-from
// choices): no alert was possible then.
func (e *Engine) Unknowns() int { return e.unknowns }

// snapshot is the engine's state, JSON-encoded.
type snapshot struct {
	Version   int
	Level     string
	Txns      []history.Txn
	Names     []string
	Flags     []uint8
	Index     map[string]int
	Alerts    []*online.Alert
	Dirty     bool
	Deferred  bool
	Undecided bool `json:",omitempty"`
	Steps     int
	Checks    int
	Unchecked int
	Unknowns  int
	LastStart int64
	FastLost  string `json:",omitempty"`
	Skipped   int
	// Retired (version 2) is the summary retired transactions left
	// (R5); NextRetire when the next pass runs.
	Retired    *summaryJSON `json:",omitempty"`
	NextRetire int          `json:",omitempty"`
	Blob       []int32      `json:",omitempty"`
}

// snapshotVersion 2 added the retirement summary; a version 1 snapshot
// (nothing retired) restores with an empty one.
const snapshotVersion = 2

// ErrCorrupt marks a snapshot that does not decode.
var ErrCorrupt = errors.New("weakonline: corrupt snapshot")

// Snapshot encodes the engine's state (W7).
func (e *Engine) Snapshot() ([]byte, error) {
	// A snapshot stands alone (the body file is not durable): spilled
	// bodies are read back into it.
	txns := e.txns
	if e.store != nil && slices.ContainsFunc(e.store.off, func(o int64) bool { return o >= 0 }) {
		txns = make([]history.Txn, len(e.txns))
		for i := range e.txns {
			var err error
			if txns[i], err = e.txn(i); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(&snapshot{Version: snapshotVersion, Level: e.opts.Level.String(), Txns: txns, Names: e.names, Flags: e.flags, Index: e.index(),
		Alerts: e.alerts, Dirty: e.dirty, Deferred: e.deferred, Undecided: e.undecided, Steps: e.steps, Checks: e.checks, Unchecked: e.unchecked,
		Unknowns: e.unknowns, LastStart: e.lastStart, FastLost: e.fastLost, Skipped: e.skipped, Retired: e.sum.encode(), NextRetire: e.nextRetire, Blob: e.blob})
}

// Restore rebuilds an engine from a Snapshot, for opts (the same level).
func Restore(opts history.Options, cfg Config, snap []byte) (*Engine, error) {
	var s snapshot
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if s.Version != snapshotVersion && s.Version != 1 {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, s.Version, snapshotVersion)
	}
	if s.Level != opts.Level.String() {
		return nil, fmt.Errorf("weakonline: the snapshot checked %s, not %s (a changed level needs a new state directory)", s.Level, opts.Level)
	}
	if len(s.Names) != len(s.Txns) || len(s.Flags) != len(s.Txns) {
		return nil, fmt.Errorf("%w: %d transactions, %d names, %d flags", ErrCorrupt, len(s.Txns), len(s.Names), len(s.Flags))
	}
	e, err := New(opts, cfg)
	if err != nil {
		return nil, err
	}
	e.txns, e.names, e.flags = s.Txns, s.Names, s.Flags
	e.recount()
	for i, n := range e.names {
		e.setName(n, i)
	}
	for id, i := range s.Index {
		if i < 0 || i >= len(e.txns) {
			return nil, fmt.Errorf("%w: id %q at %d of %d", ErrCorrupt, id, i, len(e.txns))
		}
		sl := e.ids[id]
		sl.newest, sl.hasNewest = int32(i), true
		e.ids[id] = sl
	}
	e.alerts, e.dirty, e.deferred, e.undecided = s.Alerts, s.Dirty, s.Deferred, s.Undecided
	e.steps, e.checks, e.unchecked, e.unknowns, e.lastStart = s.Steps, s.Checks, s.Unchecked, s.Unknowns, s.LastStart
	e.fastLost, e.skipped = s.FastLost, s.Skipped
	if e.sum, err = decodeSummary(s.Retired); err != nil {
		return nil, err
	}
	if s.NextRetire > 0 {
		e.nextRetire = s.NextRetire
	}
	for i := range e.txns {
		// A snapshot from before R8 has no op flags; the bodies in it
		// are whole.
		e.flags[i] |= opFlags(&e.txns[i])
	}
	e.blob = s.Blob
	if e.blob == nil {
		e.blob = make([]int32, len(e.txns))
		for i := range e.blob {
			e.blob[i] = -1
		}
	}
	if len(e.blob) != len(e.txns) {
		return nil, fmt.Errorf("%w: %d transactions, %d body marks", ErrCorrupt, len(e.txns), len(e.blob))
	}
	// The names of the retired bodies not revived stay taken (R6).
	held := map[int32]bool{}
	for _, b := range e.blob {
		if int(b) >= len(e.sum.bodies) {
			return nil, fmt.Errorf("%w: body %d of %d", ErrCorrupt, b, len(e.sum.bodies))
		}
		held[b] = true
	}
	for b := range e.sum.bodies {
		if held[int32(b)] {
			continue
		}
		var bd body
		if err := json.Unmarshal(e.sum.bodies[b], &bd); err != nil {
			return nil, fmt.Errorf("%w: body %d: %v", ErrCorrupt, b, err)
		}
		e.setName(bd.Name, -1-b)
	}
	if e.store != nil {
		e.store.off, e.store.n = slices.Repeat([]int64{-1}, len(e.txns)), make([]int32, len(e.txns))
	}
	e.rebuild()
	for i := range e.txns {
		if e.flags[i]&fClosed != 0 && e.spillsAtClose(i) {
			e.spill(i)
		}
	}
	return e, nil
}

// index is each ID's newest released transaction (the snapshot's Index).
func (e *Engine) index() map[string]int {
	m := map[string]int{}
	for id, sl := range e.ids {
		if sl.hasNewest {
			m[id] = int(sl.newest)
		}
	}
	return m
}

// SnapshotDurable is Snapshot in the shape the run command's checkpoint
// takes from the serializable engine: this engine has no body file, so
// there is nothing to sync.
func (e *Engine) SnapshotDurable() ([]byte, func() error, error) {
	b, err := e.Snapshot()
	return b, func() error { return nil }, err
}
