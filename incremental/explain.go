package incremental

import (
	"context"
	"fmt"
	"math"

	"github.com/streamcheck/streamcheck/history"
)

// explainer replays the reasoning behind a small unsatisfiable instance:
// 1-width pruning (VeriStrong §6.1.1) done by hand, recording why.
type explainer struct {
	e *encoder
	// assign holds, per solver variable, whether its positive literal is
	// true (1), false (-1) or undecided (0); ver counts its changes, so
	// that the reachability below is rebuilt only when it is stale.
	assign []int8
	ver    uint64
	adj    [][]int // node -> indices into e.edges
	// byLit lists, per literal, the edges it conditions (as a or b).
	byLit [][]int32
	// reach answers "can this choice close a cycle at all" without a
	// search (explain_reach.go); plain turns it off, so that a test can
	// hold the filtered explanation to the unfiltered one.
	reach reachCache
	plain bool
	// BFS scratch of path, reused across searches.
	seen  []uint32
	stamp uint32
	prev  []int32
	queue []int32
	// searches counts cycle searches: case splits multiply them, and a
	// core with many choices (a counter that lost dozens of updates) made
	// the explanation outlast the check by minutes. Past explainBudget no
	// new case split starts; what is forced so far is still reported.
	searches int
	// ctx is the check's deadline: on a large core one explanation can
	// outlast the whole budget, and --timeout overshot by seconds (issue
	// 20, item 6). Once it is done, stopped is set and every search
	// returns nothing, so run unwinds at once.
	ctx     context.Context
	stopped bool
	// work counts the edges the searches have scanned; past explainWork
	// the step-by-step replay stops (exhausted) and explain finishes in
	// batches (explain_reach.go).
	work      int
	exhausted bool
	// batchLog is what batch did, in order: litTrue for a unit
	// propagation, else a literal it set false (tests replay it).
	batchLog []lit
}

// done reports whether the deadline has passed, polling the context.
func (x *explainer) done() bool {
	if !x.stopped && x.ctx != nil && x.ctx.Err() != nil {
		x.stopped = true
	}
	return x.stopped
}

const explainBudget = 20000

// explainWork bounds the edges the step-by-step replay scans (a fraction
// of a second): one forced order per step, each step a search per
// undecided choice, is quadratic in the choices, and a core of 158 list
// transactions has 8,391 of them.
var explainWork = 40_000_000

// explainPlain turns the closure filter off in every new explainer
// (tests: the filtered explanation must be the search's own).
var explainPlain = false

type forcedStep struct {
	what  string
	cycle []edgeRec
	// before/after are set when the forced fact is an order of two
	// transactions (and not a case of a case split).
	before, after string
}

func newExplainer(e *encoder) *explainer {
	nodes := 0
	vars := e.s.NumVars()
	for _, r := range e.edges {
		nodes = max(nodes, int(r.from)+1, int(r.to)+1)
		for _, l := range []lit{r.a, r.b} {
			if l >= 0 {
				vars = max(vars, int(l>>1)+1)
			}
		}
	}
	x := &explainer{e: e, assign: make([]int8, vars), adj: make([][]int, nodes), byLit: make([][]int32, 2*vars)}
	for i, r := range e.edges {
		x.adj[r.from] = append(x.adj[r.from], i)
		for _, l := range []lit{r.a, r.b} {
			if l >= 0 && (l != r.b || r.a != r.b) {
				x.byLit[l] = append(x.byLit[l], int32(i))
			}
		}
	}
	x.seen = make([]uint32, nodes)
	x.prev = make([]int32, nodes)
	x.plain = explainPlain
	return x
}

// grow makes room for variable v (a literal the edges did not mention).
func (x *explainer) grow(v int) {
	for len(x.assign) <= v {
		x.assign = append(x.assign, 0)
	}
}

func (x *explainer) value(l lit) (val, ok bool) {
	switch l {
	case litTrue:
		return true, true
	case litFalse:
		return false, true
	}
	if int(l>>1) >= len(x.assign) {
		return false, false
	}
	a := x.assign[l>>1]
	if a == 0 {
		return false, false
	}
	return (a > 0) == (l&1 == 0), true
}

func (x *explainer) set(l lit, v bool) {
	if l == litTrue || l == litFalse {
		return
	}
	x.grow(int(l >> 1))
	a := int8(-1)
	if v == (l&1 == 0) {
		a = 1
	}
	x.assign[l>>1] = a
	x.ver++
}

// holds reports whether an edge is present, treating extra as true.
func (x *explainer) holds(r *edgeRec, extra lit) bool {
	for _, l := range []lit{r.a, r.b} {
		if l == extra {
			continue
		}
		if v, ok := x.value(l); !ok || !v {
			return false
		}
	}
	return true
}

// cycle finds a shortest cycle among present edges (with extra assumed
// true) that uses at least one edge conditioned on extra, or any cycle
// when extra is litTrue.
func (x *explainer) cycle(extra lit) []edgeRec {
	x.searches++
	if !x.plain && x.cannotClose(extra) {
		return nil
	}
	var best []edgeRec
	try := func(i int) bool {
		// Each edge may start a search through the whole core: poll the
		// deadline every few of them.
		if i&63 == 0 && x.done() {
			return false
		}
		r := &x.e.edges[i]
		if !x.holds(r, extra) {
			return true
		}
		// Shortest path r.to ~> r.from by BFS.
		path := x.path(r.to, r.from, extra)
		if path == nil {
			return true
		}
		c := append([]edgeRec{*r}, path...)
		if best == nil || weight(c) < weight(best) {
			best = c
		}
		return true
	}
	if extra != litTrue && extra >= 0 && int(extra) < len(x.byLit) && !x.plain {
		// Only the edges extra conditions, in the same (index) order.
		for _, i := range x.byLit[extra] {
			if !try(int(i)) {
				return nil
			}
		}
		return best
	}
	for i := range x.e.edges {
		r := &x.e.edges[i]
		if extra != litTrue && r.a != extra && r.b != extra {
			continue
		}
		if !try(i) {
			return nil
		}
	}
	return best
}

func simpler(a, b []edgeRec) bool {
	ra, rb := rwCount(a), rwCount(b)
	if ra != rb {
		return ra < rb
	}
	return weight(a) < weight(b)
}

func rwCount(c []edgeRec) int {
	n := 0
	for _, r := range c {
		if r.kind == kindRW {
			n++
		}
	}
	return n
}

// weight counts transaction hops, so point chains do not look long.
func weight(c []edgeRec) int {
	n := 0
	for _, r := range c {
		if r.kind != kindAux {
			n++
		}
	}
	return n
}

func (x *explainer) path(from, to int32, extra lit) []edgeRec {
	if from == to {
		return []edgeRec{}
	}
	// Breadth first from `from`, nodes marked with this search's stamp
	// (a node not yet marked has no prev edge); the same visiting order
	// as a map of predecessors, without one.
	x.stamp++
	if x.stamp == 0 {
		clear(x.seen)
		x.stamp = 1
	}
	x.seen[from] = x.stamp
	queue := append(x.queue[:0], from)
	defer func() { x.queue = queue[:0] }()
	for qi := 0; qi < len(queue); qi++ {
		n := queue[qi]
		x.work += len(x.adj[n])
		for _, ei := range x.adj[n] {
			r := &x.e.edges[ei]
			if x.seen[r.to] == x.stamp || !x.holds(r, extra) {
				continue
			}
			x.seen[r.to] = x.stamp
			x.prev[r.to] = int32(ei)
			if r.to == to {
				var out []edgeRec
				for at := to; at != from; {
					ei := x.prev[at]
					out = append([]edgeRec{x.e.edges[ei]}, out...)
					at = x.e.edges[ei].from
				}
				return out
			}
			queue = append(queue, r.to)
		}
	}
	return nil
}

// choices are the literals a person would reason about.
func (x *explainer) choices() []lit {
	var out []lit
	for _, pv := range x.e.pairsL {
		if pv.x != litTrue && pv.x != litFalse {
			out = append(out, pv.x)
		}
	}
	for _, rv := range x.e.reads {
		for _, l := range x.e.rfs(&rv) {
			if l != litTrue && l != litFalse {
				out = append(out, l)
			}
		}
	}
	for _, c := range x.e.com {
		if c != litTrue && c != litFalse {
			out = append(out, c)
		}
	}
	return out
}

// run replays pruning: close a cycle if the known edges have one; else
// force the choice whose alternative closes the shortest cycle (shortest
// first keeps explanations on the edges a person would use, e.g. the rw
// edges of a lost update rather than ww orders derived from them); else,
// within depth, split on a choice and show that both cases close a cycle.
func (x *explainer) run(depth int) ([]forcedStep, []edgeRec) {
	var forced []forcedStep
	choices := x.choices()
	for iter := 0; iter < 1000 && !x.done(); iter++ {
		if x.work > explainWork {
			x.exhausted = true
		}
		if x.exhausted {
			break
		}
		x.unitPropagate()
		if c := x.cycle(litTrue); c != nil {
			return forced, c
		}
		// Force the choice whose excluded alternative closes the simplest
		// cycle: fewest rw edges, then fewest hops. Orders forced by
		// read-from ("B read S's write, so S precedes B") come first, and
		// the anti-dependency cycle that is the anomaly stays the final one.
		var bestLit lit
		var best []edgeRec
		for _, l := range choices {
			if x.work > explainWork {
				// One scan of a large core's choices can outlast the
				// bound many times over: stop within it, force nothing
				// half-compared, and let explain finish in batches.
				x.exhausted = true
				return forced, nil
			}
			if _, ok := x.value(l); ok {
				continue
			}
			for _, pol := range []lit{l, l.not()} {
				if c := x.cycle(pol); c != nil && (best == nil || simpler(c, best)) {
					bestLit, best = pol, c
				}
			}
		}
		if best != nil {
			x.set(bestLit, false)
			f := forcedStep{what: x.describeLit(bestLit.not()), cycle: best}
			f.before, f.after, _ = x.orderOf(bestLit.not())
			forced = append(forced, f)
			continue
		}
		if depth == 0 || x.searches > explainBudget || x.exhausted {
			break
		}
		// Split on read-from choices first: "either T read from A or from
		// B" is how a person argues about duplicate values.
		for _, l := range x.splitOrder(choices) {
			if x.searches > explainBudget || x.exhausted {
				break
			}
			if _, ok := x.value(l); ok {
				continue
			}
			saved := x.snapshot()
			x.set(l, true)
			f1, c1 := x.run(depth - 1)
			x.restore(saved)
			x.set(l, false)
			f2, c2 := x.run(depth - 1)
			x.restore(saved)
			if c1 == nil || c2 == nil {
				continue
			}
			yes, no := x.describeLit(l), x.describeLit(l.not())
			for _, f := range f1 {
				forced = append(forced, forcedStep{what: "if " + yes + ": " + f.what, cycle: f.cycle})
			}
			forced = append(forced, forcedStep{what: "if " + yes + ", a cycle closes; so " + no, cycle: c1})
			for _, f := range f2 {
				forced = append(forced, forcedStep{what: "then " + f.what, cycle: f.cycle})
			}
			return forced, c2
		}
		break
	}
	return forced, nil
}

func (x *explainer) splitOrder(choices []lit) []lit {
	var rf, rest []lit
	isRF := map[lit]bool{}
	for _, rv := range x.e.reads {
		for _, l := range x.e.rfs(&rv) {
			isRF[l] = true
		}
	}
	for _, l := range choices {
		if isRF[l] {
			rf = append(rf, l)
		} else {
			rest = append(rest, l)
		}
	}
	return append(rf, rest...)
}

func (x *explainer) snapshot() []int8 {
	return append([]int8(nil), x.assign...)
}

func (x *explainer) restore(m []int8) {
	x.assign = append(x.assign[:0], m...)
	x.ver++
}

// unitPropagate applies each read's exactly-one and a chosen writer's
// commit, to a fixpoint.
func (x *explainer) unitPropagate() {
	for changed := true; changed; {
		changed = false
		for _, rv := range x.e.reads {
			if gv, ok := x.value(rv.g); !ok || !gv {
				continue
			}
			var open []int
			chosen := -1
			for i, l := range x.e.rfs(&rv) {
				v, ok := x.value(l)
				switch {
				case !ok:
					open = append(open, i)
				case v:
					chosen = i
				}
			}
			switch {
			case chosen >= 0:
				for _, i := range open {
					x.set(x.e.rfs(&rv)[i], false)
					changed = true
				}
				if w := x.e.cands(&rv)[chosen]; w >= 0 {
					if c := x.e.com[w]; c != litTrue && c != litFalse {
						if v, ok := x.value(c); !ok || !v {
							x.set(c, true)
							changed = !ok
						}
					}
				}
			case len(open) == 1:
				x.set(x.e.rfs(&rv)[open[0]], true)
				changed = true
			}
		}
	}
}

// orderOf says which transaction a pair literal puts first.
func (x *explainer) orderOf(l lit) (before, after string, ok bool) {
	h := x.e.p.h
	for _, pv := range x.e.pairsL {
		switch l {
		case pv.x:
			return h.Txns[pv.a].ID, h.Txns[pv.b].ID, true
		case pv.x.not():
			return h.Txns[pv.b].ID, h.Txns[pv.a].ID, true
		}
	}
	return "", "", false
}

func (x *explainer) describeLit(l lit) string {
	e := x.e
	h := e.p.h
	for _, pv := range e.pairsL {
		switch l {
		case pv.x:
			return fmt.Sprintf("%s must precede %s", h.Txns[pv.a].ID, h.Txns[pv.b].ID)
		case pv.x.not():
			return fmt.Sprintf("%s must precede %s", h.Txns[pv.b].ID, h.Txns[pv.a].ID)
		}
	}
	for _, rv := range e.reads {
		for i, r := range e.rfs(&rv) {
			if r == l || r == l.not() {
				neg := ""
				if r != l {
					neg = " not"
				}
				src := "the initial version"
				if w := e.cands(&rv)[i]; w >= 0 {
					src = h.Txns[w].ID
				} else if w == -2 {
					src = fmt.Sprintf("parse %d of its list", i+1)
				}
				return fmt.Sprintf("%s must%s read from %s", h.Txns[rv.txn].ID, neg, src)
			}
		}
	}
	for t, c := range e.com {
		if c == l {
			return h.Txns[t].ID + " must have committed"
		}
		if c == l.not() {
			return h.Txns[t].ID + " cannot have committed"
		}
	}
	return "a choice is forced"
}

// steps turns a cycle of edge records into transaction-level steps,
// folding the point chains of session and real-time order.
func (x *explainer) steps(c []edgeRec) []Step {
	if len(c) == 0 {
		return nil
	}
	e := x.e
	// Rotate so the cycle starts at its earliest transaction in history
	// order: the same cycle always reads the same way.
	start := -1
	for i, r := range c {
		if t := e.nodeTxn[r.from]; t >= 0 && (start < 0 || t < e.nodeTxn[c[start].from]) {
			start = i
		}
	}
	c = append(append([]edgeRec(nil), c[start:]...), c[:start]...)
	var out []Step
	h := e.p.h
	for i := 0; i < len(c); {
		from := e.nodeTxn[c[i].from]
		kind := c[i].kind
		first := c[i]
		j := i
		for e.nodeTxn[c[j].to] < 0 {
			j++
			if c[j].kind == kindSO || c[j].kind == kindRT {
				kind = c[j].kind
			}
		}
		to := e.nodeTxn[c[j].to]
		out = append(out, x.step(from, to, kind, first, h))
		i = j + 1
	}
	return out
}

func (x *explainer) step(from, to int32, kind edgeKind, r edgeRec, h *history.History) Step {
	p := x.e.p
	tf, tt := &h.Txns[from], &h.Txns[to]
	s := Step{From: tf.ID, To: tt.ID, Kind: kind.String()}
	because := ""
	if r.via == kindRT || r.via == kindSO {
		s.Via = r.via.String()
		a, b := tf, tt
		if kind == kindRW && r.writer >= 0 {
			a = &h.Txns[r.writer]
		}
		if r.via == kindRT {
			because = fmt.Sprintf(" (%s precedes %s in real time)", a.ID, b.ID)
		} else {
			because = fmt.Sprintf(" (%s precedes %s in session %s)", a.ID, b.ID, a.Session)
		}
	}
	key := ""
	if r.key >= 0 && int(r.key) < len(p.keys) {
		key = unq(p.keys[r.key])
		s.Key = key
	}
	switch kind {
	case kindWR:
		s.Why = fmt.Sprintf("%s read %s=%s written by %s, so %s wr-> %s", tt.ID, key, r.val, tf.ID, tf.ID, tt.ID)
	case kindWW:
		if key != "" {
			s.Why = fmt.Sprintf("%s appended to %s before %s, so %s ww-> %s", tf.ID, key, tt.ID, tf.ID, tt.ID)
		} else {
			s.Why = fmt.Sprintf("%s's writes come before %s's in version order%s, so %s ww-> %s", tf.ID, tt.ID, because, tf.ID, tt.ID)
		}
	case kindRW:
		src := "the initial version"
		if r.writer >= 0 {
			src = h.Txns[r.writer].ID + "'s version"
		}
		s.Why = fmt.Sprintf("%s read %s of %s and %s wrote %s over it%s, so %s rw-> %s", tf.ID, src, key, tt.ID, key, because, tf.ID, tt.ID)
	case kindSO:
		s.Why = fmt.Sprintf("%s came before %s in session %s, so %s process-> %s", tf.ID, tt.ID, tf.Session, tf.ID, tt.ID)
	case kindRT:
		end := p.opts.EffectiveEnd(tf)
		slack := "∞"
		if end != math.MaxInt64 {
			ns := (tt.Start - p.opts.Skew) - (end + p.opts.Skew)
			s.SlackNS = &ns
			slack = history.FormatDuration(ns)
		}
		// Times as people read them (RFC 3339 for wall-clock ones) and
		// spans as durations; SlackNS keeps the number for programs.
		endS := "∞"
		if end != math.MaxInt64 {
			endS = history.FormatTime(end)
		}
		s.Why = fmt.Sprintf("%s ended (%s+Δ) before %s began (%s-Δ), Δ=%s, slack %s, so %s realtime-> %s", tf.ID, endS, tt.ID, history.FormatTime(tt.Start), history.FormatDuration(p.opts.Skew), slack, tf.ID, tt.ID)
	}
	return s
}
