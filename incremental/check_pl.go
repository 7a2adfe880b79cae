package incremental

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// PL-2+ (history/level_pl2plus.go) on the SAT engine. The level forbids
// cycles of ww and wr edges (G0, G1c) and cycles with exactly one rw edge
// (G-single), and allows cycles with two or more: "no cycle" is not the
// condition, so the anti-dependencies cannot go into the solver's
// acyclicity theory as they do for serializable. Instead:
//
//   - the encoding is serializable's, except that every rw edge is kept
//     aside (divertPL, the one hook in encoder.edge) instead of being
//     handed to the theory: the theory keeps ww ∪ wr acyclic;
//   - a model is judged (gSingles): an rw edge a -> b that is present in
//     the model, with a path of present ww/wr edges from b back to a, is a
//     G-single, and the clause "not all of these edges' literals" is
//     added; then the solver runs again (lazy clause generation). Each
//     clause removes at least the model that showed it and is implied by
//     the level's definition (those literals together are a G-single), so
//     the loop ends, Sat only on a model without G-single and Unsat only
//     when every model has one (docs/SEMANTICS.md §1 "Repeatable read and
//     PL-2+").
//
// The encoding is the plain one: every pair of writers of a key gets its
// order variable (dropUnobserved off: an unobserved pair's ww edge can
// still lie on the ww/wr path of a G-single, so orienting it later along
// a topological order is not free as it is under acyclicity), and the
// pruning rules argued for acyclicity (D1, C1, unread unknown writers) are
// off (record mode turns them off, and keeps the edge list gSingles reads).
//
// A history that is serializable is PL-2+ (serializable implies PL-2+):
// the serializable engine's real-time pre-check (stricterFirst) is asked
// first and settles recorded and generated histories of a correct store.
//
// List keys (orderListAppenders): serializable's list encoding draws ww
// edges only between appenders a parse shows, which is enough under
// acyclicity but not here, where an unobserved pair's ww edge can close a
// G-single (two transactions that both read [] and both append). So every
// pair of a list key's appenders gets its order variable, and each parse
// fixes the pairs it determines (docs/SEMANTICS.md §1 "PL-2+ with lists:
// the version order of every list key is chosen").

// plMaxCyclesPerModel bounds the G-singles refuted per model: every one
// found is refuted at once (64 per round left a 10K-transaction history
// with thousands of G-singles per model undecided after minutes).
const plMaxCyclesPerModel = 1 << 16

// divertPL keeps an rw edge of a pl-2+ encoding out of the acyclicity
// theory, recording it with its literals for gSingles; false for every
// other edge and level (encoder.edge then adds it as usual).
func (e *encoder) divertPL(a, b lit, from, to solver.Node, rec edgeRec) bool {
	if rec.kind != kindRW || e.p.opts.Level != history.PL2Plus {
		return false
	}
	if from < 0 || to < 0 || from == to || a == litFalse || b == litFalse {
		return true
	}
	rec.from, rec.to, rec.a, rec.b = int32(from), int32(to), a, b
	e.edges = append(e.edges, rec)
	return true
}

// newPLEncoder encodes p (at pl-2+) for the lazy loop.
func newPLEncoder(ctx context.Context, p *prepared, guarded bool) *encoder {
	e := newEncoder(p, encodeConfig{guarded: guarded, record: true})
	e.encodeCtx(ctx)
	if !e.cancelled {
		e.orderListAppenders()
	}
	// The version order a correct store produced follows time: each
	// pair of writers is tried in start order first. With the theory's
	// own polarity the first model of a 10K-transaction generated history
	// had thousands of G-singles and the loop had not ended after 5
	// minutes; in start order it ends after 13 rounds (BENCHMARKS.md,
	// weaklv). A phase only orders the search; every model is still
	// judged, so the verdict does not depend on it.
	{
		h := p.h
		for _, pv := range e.pairsL {
			ta, tb := &h.Txns[pv.a], &h.Txns[pv.b]
			if pv.x == litTrue || pv.x == litFalse || !ta.HasTime || !tb.HasTime {
				continue
			}
			l := solver.Lit(pv.x)
			want := ta.Start < tb.Start // x: a before b
			if l.IsNeg() {
				want = !want
			}
			e.s.SetPhase(l.Var(), want)
		}
	}
	return e
}

// orderListAppenders chooses the version order of every list key at
// pl-2+: an order variable (with its two ww edges, newPair) for every pair
// of the key's appenders in the instance. The theory keeps ww acyclic, so
// the variables of a key's committed appenders form a total order: the
// key's version order. Without them two appenders that no read shows had
// no ww edge, and a G-single through it was missed.
//
// No clause ties the order to the parses; none is needed (docs/SEMANTICS.md
// §1 "PL-2+ with lists"). A chosen parse a1..an of reader R draws ww
// a_j -> a_j+1 (so the order agrees, or ww has a cycle), wr an -> R, and
// rw R -> c for every other appender c; an order with c before an closes
// R -rw-> c -ww-> an -wr-> R, one rw edge, which the lazy loop refutes (or,
// c being R, a ww/wr cycle the theory refutes). So a model the loop
// accepts has each parse's appenders first, in its order.
//
// A pair variable is shared with the transactions' other keys (pairVar is
// per pair of transactions): two keys ordering a pair differently is a
// ww cycle, forbidden (G0), so sharing loses no witness.
func (e *encoder) orderListAppenders() {
	p := e.p
	for k := range p.keys {
		if !p.isList[k] {
			continue
		}
		ws := e.wsScratch[:0]
		for _, w := range p.writersOf[k] {
			if e.node[w] >= 0 {
				ws = append(ws, w)
			}
		}
		e.wsScratch = ws
		for i := range ws {
			if e.stopped() {
				return
			}
			for j := i + 1; j < len(ws); j++ {
				e.pairVar(ws[i], ws[j])
			}
		}
	}
}

// litValue is l's value in the solver's last model.
func (e *encoder) litValue(l lit) bool {
	switch l {
	case litTrue:
		return true
	case litFalse:
		return false
	}
	return e.s.Value(solver.Lit(l))
}

// gSingles returns up to max G-single cycles of the last model, each as
// its rw edge followed by the ww/wr path from the rw edge's target back
// to its source.
func (e *encoder) gSingles(max int) [][]edgeRec {
	order := e.s.Order()
	rank := make([]int32, e.s.NumNodes())
	for i, n := range order {
		rank[n] = int32(i)
	}
	adj := map[int32][]int32{} // node -> indices into e.edges (present ww/wr)
	var rws []int32
	for i := range e.edges {
		r := &e.edges[i]
		if !e.litValue(r.a) || !e.litValue(r.b) {
			continue
		}
		if r.kind == kindRW {
			if rank[r.to] < rank[r.from] { // only a backward rw edge can close a cycle
				rws = append(rws, int32(i))
			}
			continue
		}
		adj[r.from] = append(adj[r.from], int32(i))
	}
	var out [][]edgeRec
	parent := map[int32]int32{}
	for _, ri := range rws {
		if len(out) >= max {
			break
		}
		rw := e.edges[ri]
		// Every present ww/wr edge goes forward in the theory's order, so
		// the search from rw.to stays at ranks up to rw.from's.
		clear(parent)
		parent[rw.to] = -1
		stack := []int32{rw.to}
		found := false
		for len(stack) > 0 && !found {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, ei := range adj[v] {
				u := e.edges[ei].to
				if _, seen := parent[u]; seen || rank[u] > rank[rw.from] {
					continue
				}
				parent[u] = ei
				if u == rw.from {
					found = true
					break
				}
				stack = append(stack, u)
			}
		}
		if !found {
			continue
		}
		var path []edgeRec
		for v := rw.from; parent[v] >= 0; v = e.edges[parent[v]].from {
			path = append(path, e.edges[parent[v]])
		}
		slices.Reverse(path)
		out = append(out, append([]edgeRec{rw}, path...))
	}
	return out
}

// solvePL is solve for pl-2+: solve, refute the model's G-singles, repeat.
// last holds the G-singles of the last refuted model (describePL's
// cycle).
func (e *encoder) solvePL(ctx context.Context, assumptions ...solver.Lit) (st solver.Status, last [][]edgeRec) {
	for {
		st = e.solve(ctx, assumptions...)
		if st != solver.Sat {
			return st, last
		}
		cycles := e.gSingles(plMaxCyclesPerModel)
		if len(cycles) == 0 {
			return solver.Sat, last
		}
		last = cycles
		for _, c := range cycles {
			var cl []lit
			for _, r := range c {
				for _, l := range []lit{r.a, r.b} {
					if l != litTrue {
						cl = append(cl, l.not())
					}
				}
			}
			e.clause(cl...)
			if e.unsat {
				return solver.Unsat, last
			}
		}
	}
}

// checkPL is Check at pl-2+.
func checkPL(ctx context.Context, h *history.History, opts history.Options, cfg Config) (*Result, error) {
	res := &Result{Options: opts}
	res.Stats.Txns = len(h.Txns)
	t0 := time.Now()
	// Serializable implies PL-2+: a serial order is a witness.
	if e, _ := stricterFirst(ctx, h, withLevel(opts, history.Serializable), cfg); e != nil {
		res.Stats.ByStricter, res.Stats.StricterLevel = true, e.p.opts.Level
		res.Stats.EncodeTime = e.encodeTime
		res.Stats.SolveTime = time.Since(t0) - e.encodeTime
		res.Verdict = Valid
		res.Witness = e.witness()
		return res, nil
	}
	if ctx.Err() != nil {
		res.Verdict, res.Stats.TimedOutAny = Unknown, true
		return res, nil
	}
	p := prepare(h, opts)
	e := newPLEncoder(ctx, p, false)
	res.Stats.EncodeTime = time.Since(t0)
	res.Stats.Reads = len(e.reads)
	res.Stats.Pairs = len(e.pairsL)
	res.Stats.Vars = e.s.NumVars()
	res.Stats.Nodes = e.s.NumNodes()
	t1 := time.Now()
	st, _ := e.solvePL(ctx)
	if e.cancelled {
		st = solver.Unknown
	}
	res.Stats.SolveTime = time.Since(t1)
	res.Stats.Conflicts = e.s.Stats().Conflicts
	switch st {
	case solver.Sat:
		res.Verdict = Valid
		res.Witness = e.witness()
		return res, nil
	case solver.Unknown:
		res.Verdict, res.Stats.TimedOutAny = Unknown, true
		return res, nil
	}
	res.Verdict = Invalid
	e = nil
	t2 := time.Now()
	defer func() { res.Stats.CoreTime = time.Since(t2) }()
	if err := collectCores(ctx, res, p, len(h.Txns), cfg, &plLocalizer{p: p, cfg: cfg}, describePL); err != nil {
		return nil, err
	}
	return res, nil
}

// plFirstWindow is the first window of plLocalizer: the guarded lazy loop
// refutes G-singles one model at a time, so it is run on as few
// transactions as possible (a 514-transaction MariaDB recording took 64 s
// as one window).
const plFirstWindow = 64

// plLocalizer is localizer for pl-2+: windows of members in start order,
// each decided as the projection H|window, the first violating window
// shrunk on a guarded instance.
type plLocalizer struct {
	p      *prepared
	cfg    Config
	checks int
	valid  validSets // member sets found valid (core_valid.go, C6)
}

// fast decides H|members at pl-2+.
func (l *plLocalizer) fast(ctx context.Context, members []bool) solver.Status {
	return fastRemembering(ctx, &l.valid, members, l.decide)
}

// decide is fast without the memory of valid sets.
func (l *plLocalizer) decide(ctx context.Context, members []bool) solver.Status {
	l.checks++
	if ctx.Err() != nil {
		return solver.Unknown
	}
	hs := l.p.project(members)
	if e, _ := stricterFirst(ctx, hs, withLevel(l.p.opts, history.Serializable), l.cfg); e != nil {
		return solver.Sat
	}
	e := newPLEncoder(ctx, prepare(hs, l.p.opts), false)
	if e.cancelled {
		return solver.Unknown
	}
	st, _ := e.solvePL(ctx)
	return st
}

func (l *plLocalizer) find(ctx context.Context, members []bool) ([]int32, error) {
	return findInWindows(ctx, l.p, members, min(firstWindow, plFirstWindow), l.fast, l.guarded)
}

// findOpen is find for members not known to violate (openSearch, C1 of
// docs/SEMANTICS.md §3): the same windows in the same order, the whole
// projection decided only when no window violates.
func (l *plLocalizer) findOpen(ctx context.Context, members []bool) ([]int32, solver.Status, error) {
	return windowSearch(ctx, l.p, members, min(firstWindow, plFirstWindow), false, l.fast, l.guarded)
}

// guarded finds a subset-minimal core of H|members: one selector per
// transaction, the failed assumptions of the lazy loop, then deletion.
// The clauses the loop adds hold whatever is selected (each edge's
// literals include its endpoints' selectors), so they are kept from one
// check to the next.
func (l *plLocalizer) guarded(ctx context.Context, members []bool) ([]int32, error) {
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	hs := l.p.project(members)
	ps := prepare(hs, l.p.opts)
	g := newPLEncoder(ctx, ps, true)
	if g.cancelled {
		return nil, ctx.Err()
	}
	check := func(in []bool) solver.Status {
		l.checks++
		st, _ := g.solvePL(ctx, g.selectOnly(in)...)
		return st
	}
	all := make([]bool, len(hs.Txns))
	for i := range all {
		all[i] = true
	}
	switch check(all) {
	case solver.Unknown:
		return nil, ctx.Err()
	case solver.Sat:
		return nil, errors.New("incremental: guarded pl-2+ instance is satisfiable where the plain one is not")
	}
	pos := map[solver.Lit]int32{}
	for i, s := range g.sel {
		if s != litFalse && s != litTrue {
			pos[solver.Lit(s)] = int32(i)
		}
	}
	var core []int32
	for _, a := range g.s.FailedAssumptions() {
		if t, ok := pos[a]; ok {
			core = append(core, t)
		}
	}
	if len(core) == 0 {
		return nil, errors.New("incremental: pl-2+ instance unsatisfiable with no transaction selected")
	}
	// Deletion, latest by content first (as coreFinder.shrink).
	order := slices.Clone(core)
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := contentCompare(&hs.Txns[a], &hs.Txns[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	in := make([]bool, len(hs.Txns))
	for _, t := range core {
		in[t] = true
	}
	for i := len(order) - 1; i >= 0; i-- {
		t := order[i]
		in[t] = false
		switch check(in) {
		case solver.Unknown:
			return nil, ctx.Err()
		case solver.Unsat:
			continue
		}
		in[t] = true
	}
	at := make(map[string]int32, len(l.p.h.Txns))
	for i := range l.p.h.Txns {
		at[l.p.h.Txns[i].ID] = int32(i)
	}
	var out []int32
	for i, keep := range in {
		if keep {
			out = append(out, at[hs.Txns[i].ID])
		}
	}
	slices.Sort(out)
	return out, nil
}

// describePL names and explains a pl-2+ core. A read no choice explains
// (garbage, G1a, G1b, internal) is named as everywhere else; a core whose
// every choice has a ww/wr cycle (G0, G1c) is explained as at
// read-committed, whose cycles are exactly those; otherwise the lazy loop
// on the core's recorded instance ends with a model whose G-single is
// shown: its rw edge and the ww/wr path back.
func describePL(ctx context.Context, p *prepared, core []int32) Anomaly {
	h := p.h
	in := make([]bool, len(h.Txns))
	for _, t := range core {
		in[t] = true
	}
	var ids []string
	for _, t := range core {
		ids = append(ids, h.Txns[t].ID)
	}
	a := Anomaly{Core: ids}
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	hc := p.project(in)
	pc := prepare(hc, p.opts)
	if name, text := specialAnomaly(ctx, pc); name != "" {
		a.Type, a.Class, a.Text = name, name, text
		return a
	}
	e := newPLEncoder(ctx, pc, false)
	st, last := e.solvePL(ctx)
	if st == solver.Unknown || e.cancelled {
		return timedOutAnomaly(a, p.opts.Level)
	}
	if st == solver.Sat {
		// Cannot happen for a core; say so rather than invent a cycle.
		a.Type, a.Class = "cycle", "cycle"
		a.Text = []string{fmt.Sprintf("These transactions were found to violate %s, but their projection alone has a model without G-single.", p.opts.Level)}
		return a
	}
	if len(last) == 0 {
		// No model at all: every choice has a ww/wr cycle, which is
		// read-committed's condition; its explanation names G0 or G1c.
		all := make([]int32, len(hc.Txns))
		for i := range all {
			all[i] = int32(i)
		}
		b := describeWeak(ctx, prepare(hc, withLevel(p.opts, history.ReadCommitted)), all)
		b.Core = ids
		return b
	}
	x := newExplainer(e)
	a.Cycle = x.steps(last[0])
	a.Class = classify(a.Cycle, nil)
	a.Type = pattern(pc, a.Cycle, a.Class)
	for _, s := range a.Cycle {
		a.Text = append(a.Text, s.Why+".")
	}
	a.Text = append(a.Text, "That closes the cycle "+cycleString(a.Cycle)+", which has exactly one anti-dependency (G-single).")
	if len(last) > 1 || e.s.Stats().Conflicts > 0 {
		a.Text = append(a.Text, "Every other choice of version order and read-from closes such a cycle, or one of ww and wr edges, too.")
	}
	return a
}
