package incremental

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/solver"
)

// describe names a core and explains it. It re-encodes the projection
// H|C with every edge recorded and replays, by hand, the reasoning a
// person would follow: choices that would close a cycle are excluded
// (each a Forced step with its cycle), until the known edges alone close
// the final cycle. Cores are small, so this naive propagation is cheap;
// a large one can still outlast the check's budget, so describe stops at
// ctx's deadline and then names the core without explaining it
// (timedOutAnomaly).
func describe(ctx context.Context, p *prepared, core []int32) Anomaly {
	h := p.h
	in := make([]bool, len(h.Txns))
	ids := make([]string, 0, len(core))
	for _, t := range core {
		in[t] = true
	}
	sorted := append([]int32(nil), core...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	for _, t := range sorted {
		ids = append(ids, h.Txns[t].ID)
	}
	a := Anomaly{Core: ids}
	// Each phase below is linear in the core (a core may hold a list of
	// a million elements); the deadline is polled between them and
	// inside the list walks.
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	hc := p.project(in)
	pc := prepare(hc, p.opts)
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	name, text := specialAnomaly(ctx, pc)
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	if name != "" {
		a.Type, a.Class, a.Text = name, name, text
		return a
	}
	// Explain at the weakest level at which the core still violates: its
	// cycles then use real-time or session edges only when they are needed,
	// and the suffix says which order was (docs/SEMANTICS.md §3).
	lv, ok := weakestViolated(ctx, pc)
	if !ok {
		return timedOutAnomaly(a, p.opts.Level)
	}
	pe := prepare(hc, withLevel(p.opts, lv))
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	e := newEncoder(pe, encodeConfig{record: true, dropUnobserved: true})
	e.encodeCtx(ctx)
	if e.cancelled {
		return timedOutAnomaly(a, p.opts.Level)
	}
	x := newExplainer(e)
	x.ctx = ctx
	forced, cycle, note := x.explain(3)
	if x.stopped {
		return timedOutAnomaly(a, p.opts.Level)
	}
	for _, f := range forced {
		a.Forced = append(a.Forced, Forced{Order: f.what, Before: f.before, After: f.after, Cycle: x.steps(f.cycle)})
	}
	a.Cycle = x.steps(cycle)
	a.Class = classify(a.Cycle, nil)
	var renamed string
	if !lv.RealTime() && !lv.SessionOrder() {
		a.Class, renamed = confirmClass(ctx, hc, p.opts, a.Class)
	}
	switch {
	case lv.RealTime():
		a.Class += history.RealtimeSuffix
	case lv.SessionOrder():
		a.Class += history.ProcessSuffix
	}
	a.Type = pattern(pe, a.Cycle, a.Class)
	for _, f := range a.Forced {
		a.Text = append(a.Text, fmt.Sprintf("%s, because the other order would close the cycle %s.", f.Order, cycleString(f.Cycle)))
	}
	if note != "" {
		a.Text = append(a.Text, note)
	}
	for _, s := range a.Cycle {
		a.Text = append(a.Text, s.Why+".")
	}
	if len(a.Cycle) > 0 {
		a.Text = append(a.Text, "That closes the cycle "+cycleString(a.Cycle)+".")
		if renamed != "" {
			a.Text = append(a.Text, renamed)
		}
	} else {
		a.Type, a.Class = "cycle", "cycle"
		a.Text = append(a.Text, "No serial order explains these transactions: the search tried every choice of read-from source, version order and commit, and each closes a dependency cycle; the case analysis is too deep to print.")
	}
	return a
}

// timedOutAnomaly is a core that the deadline left unexplained. The
// core itself is proven (a minimal violating set, found before the
// deadline); only its cycle and class are missing, and the text says so
// rather than guess them.
func timedOutAnomaly(a Anomaly, lv history.Level) Anomaly {
	a.Type, a.Class = "cycle", "cycle"
	a.Forced, a.Cycle = nil, nil
	a.Text = []string{fmt.Sprintf("These transactions are a minimal set that violates %s; the time budget ran out before the cycle that proves it was drawn (check them again with a longer --timeout to see it).", lv)}
	return a
}

func cycleString(steps []Step) string {
	if len(steps) == 0 {
		return "(none)"
	}
	var b strings.Builder
	b.WriteString(steps[0].From)
	for _, s := range steps {
		fmt.Fprintf(&b, " -%s-> %s", s.Kind, s.To)
	}
	return b.String()
}

// specialAnomaly recognises violations found without search: a read with
// no possible source, an internal inconsistency, an impossible list. Once
// ctx is done it returns nothing; the caller tells that from no finding.
func specialAnomaly(ctx context.Context, p *prepared) (string, []string) {
	h := p.h
	for _, ia := range p.internal {
		t := &h.Txns[ia.txn]
		return history.Internal, []string{fmt.Sprintf("%s read %s=%s after writing %s=%s itself.", t.ID, unq(p.keys[ia.key]), ia.got, unq(p.keys[ia.key]), ia.want)}
	}
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status != history.Committed {
			continue
		}
		for ri := range p.txns[ti].reads {
			r := &p.txns[ti].reads[ri]
			if r.isList() {
				if ctx.Err() != nil {
					return "", nil
				}
				if name, text := listSpecial(ctx, p, int32(ti), r); name != "" {
					return name, []string{text}
				}
				continue
			}
			ws, initial := p.possibleWriters(int32(ti), r)
			if initial {
				continue
			}
			var aborted, intermediate, committed []string
			for _, w := range ws {
				wt := &h.Txns[w]
				final, _ := p.txns[w].finalValue(r.key)
				switch {
				case wt.Status == history.Aborted:
					aborted = append(aborted, wt.ID)
				case final != r.val:
					intermediate = append(intermediate, wt.ID)
				default:
					committed = append(committed, wt.ID)
				}
			}
			if len(committed) > 0 {
				continue
			}
			k := unq(p.keys[r.key])
			switch {
			case len(aborted) > 0:
				return history.G1a, []string{fmt.Sprintf("%s read %s=%s, which only aborted %s wrote.", t.ID, k, r.val, strings.Join(aborted, ", "))}
			case len(intermediate) > 0:
				return history.G1b, []string{fmt.Sprintf("%s read %s=%s, which %s wrote and then overwrote in the same transaction.", t.ID, k, r.val, strings.Join(intermediate, ", "))}
			default:
				return history.GarbageRead, []string{fmt.Sprintf("%s read %s=%s, which no transaction wrote.", t.ID, k, r.val)}
			}
		}
	}
	// Two list reads of one key, neither a prefix of the other.
	for k := range p.keys {
		if !p.isList[k] {
			continue
		}
		var reads []struct {
			t    int32
			list []history.Value
		}
		for ti := range h.Txns {
			if h.Txns[ti].Status != history.Committed {
				continue
			}
			for _, r := range p.txns[ti].reads {
				if r.key == int32(k) && r.isList() {
					reads = append(reads, struct {
						t    int32
						list []history.Value
					}{int32(ti), r.lr.list})
				}
			}
		}
		for i := range reads {
			for j := i + 1; j < len(reads); j++ {
				a, b := reads[i].list, reads[j].list
				if len(a) > len(b) {
					a, b = b, a
				}
				if !equalValues(a, b[:len(a)]) {
					return history.IncompatibleOrder, []string{fmt.Sprintf("%s read %s=%s and %s read %s=%s: neither list is a prefix of the other.",
						h.Txns[reads[i].t].ID, unq(p.keys[k]), joinValues(reads[i].list), h.Txns[reads[j].t].ID, unq(p.keys[k]), joinValues(reads[j].list))}
				}
			}
		}
	}
	return "", nil
}

func listSpecial(ctx context.Context, p *prepared, t int32, r *pread) (string, string) {
	h := p.h
	id := h.Txns[t].ID
	k := unq(p.keys[r.key])
	count := map[history.Value]int{}
	for _, el := range r.lr.list {
		count[el]++
	}
	// How often each appender appends each element of the list, counted
	// in one pass per appender: counting per element walked an
	// appender's whole sequence for each element, quadratic in the
	// length of a list one transaction appended (issue 20, item 6).
	type appEl struct {
		a  int32
		el history.Value
	}
	finals := map[appEl]int{}
	ops := map[appEl]int{}
	counted := map[int32]bool{}
	opsCounted := map[int32]bool{}
	key := p.keys[r.key]
	checked := make(map[history.Value]bool, len(count))
	for i, el := range r.lr.list {
		if i&4095 == 4095 && ctx.Err() != nil {
			return "", ""
		}
		if checked[el] {
			continue // the verdict on an element does not depend on where it occurs
		}
		checked[el] = true
		var appended, committed int
		var aborted []string
		for _, a := range p.appendersOf[r.key][el] {
			if a == t {
				continue
			}
			if !counted[a] {
				counted[a] = true
				for _, x := range p.txns[a].appendsTo(r.key) {
					if _, ok := count[x]; ok {
						finals[appEl{a, x}]++
					}
				}
			}
			n := finals[appEl{a, el}]
			if n == 0 { // only through a non-final path; count the ops
				if !opsCounted[a] {
					opsCounted[a] = true
					for _, op := range h.Txns[a].Ops {
						if op.Kind == history.Append && op.Key == key {
							if _, ok := count[op.Value]; ok {
								ops[appEl{a, op.Value}]++
							}
						}
					}
				}
				n = ops[appEl{a, el}]
			}
			appended += n
			if h.Txns[a].Status == history.Aborted {
				aborted = append(aborted, h.Txns[a].ID)
			} else {
				committed += n
			}
		}
		if p.opts.InitialState == history.InitialUnknown {
			continue
		}
		switch {
		case appended == 0:
			return history.GarbageRead, fmt.Sprintf("%s read %s=%s, whose element %s nobody appended.", id, k, joinValues(r.lr.list), el)
		case committed == 0:
			return history.G1a, fmt.Sprintf("%s read %s=%s, whose element %s only aborted %s appended.", id, k, joinValues(r.lr.list), el, strings.Join(aborted, ", "))
		case count[el] > committed:
			return history.DuplicateElements, fmt.Sprintf("%s read %s=%s, where %s occurs %d times but was appended %d times.", id, k, joinValues(r.lr.list), el, count[el], committed)
		}
	}
	return "", ""
}

func unq(v history.Value) string {
	s := string(v)
	if len(s) >= 2 && s[0] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// classify names a cycle by the weakest Adya class. The -realtime and
// -process suffixes come from the weakest level the core violates
// (describe); here they are added only when the cycle itself shows such
// edges (callers that pass forced cycles too).
func classify(cycle []Step, forced []Forced) string {
	if len(cycle) == 0 {
		return "cycle"
	}
	var rw, wr int
	var rt, so bool
	note := func(s Step) {
		switch {
		case s.Kind == "realtime" || s.Via == "realtime":
			rt = true
		case s.Kind == "process" || s.Via == "process":
			so = true
		}
	}
	for _, s := range cycle {
		switch s.Kind {
		case "rw":
			rw++
		case "wr":
			wr++
		}
		note(s)
	}
	for _, f := range forced {
		for _, s := range f.Cycle {
			note(s)
		}
	}
	var class string
	switch {
	case rw == 0 && wr == 0:
		class = history.G0
	case rw == 0:
		class = history.G1c
	case rw == 1:
		class = history.GSingle
	default:
		adjacent := false
		for i := range cycle {
			if cycle[i].Kind == "rw" && cycle[(i+1)%len(cycle)].Kind == "rw" {
				adjacent = true
			}
		}
		if adjacent {
			class = history.G2Item
		} else {
			class = history.GNonadjacent
		}
	}
	if forced != nil {
		switch {
		case rt:
			class += history.RealtimeSuffix
		case so:
			class += history.ProcessSuffix
		}
	}
	return class
}

// weakestViolated returns the weakest level, no stronger than the one
// checked, at which the prepared history (a core) violates: the checked
// levels the checked one implies, weakest first (serializable, then
// strong-session-serializable), then the checked level. ok is false when
// ctx ended before the answer was known.
func weakestViolated(ctx context.Context, p *prepared) (lv history.Level, ok bool) {
	for _, lv := range p.opts.Level.Implied() {
		if lv.BeginCommit() != p.opts.Level.BeginCommit() {
			// A serializable level implies its SI counterpart, but its
			// cores are explained over transaction nodes.
			continue
		}
		e := newEncoder(prepare(p.h, withLevel(p.opts, lv)), encodeConfig{dropUnobserved: true})
		e.encodeCtx(ctx)
		switch e.solve(ctx) {
		case solver.Unsat:
			return lv, true
		case solver.Unknown:
			return p.opts.Level, false
		}
	}
	return p.opts.Level, true
}

func withLevel(o history.Options, lv history.Level) history.Options {
	o.Level = lv
	return o
}

// pattern gives familiar names to the shapes people know: a lost update
// and a write skew (two transactions), a read skew (a two-edge cycle in
// which one reader sees one writer's effect on one key but not another's).
func pattern(p *prepared, cycle []Step, class string) string {
	if class == history.GSingle && len(cycle) == 2 {
		wr, rw := cycle[0], cycle[1]
		if wr.Kind == "rw" {
			wr, rw = rw, wr
		}
		if wr.Kind == "wr" && rw.Kind == "rw" && wr.Key != rw.Key && len(p.h.Txns) > 2 {
			return history.ReadSkew
		}
	}
	h := p.h
	if lostUpdate(p, cycle) {
		return history.LostUpdate
	}
	if len(h.Txns) != 2 || strings.HasSuffix(class, history.RealtimeSuffix) || strings.HasSuffix(class, history.ProcessSuffix) {
		return class
	}
	rws := 0
	keys := map[string]bool{}
	for _, s := range cycle {
		if s.Kind == "rw" {
			rws++
			keys[s.Key] = true
		}
	}
	switch {
	case rws == 2 && len(keys) == 2 && class == history.G2Item:
		return history.WriteSkew
	case class == history.GSingle:
		return history.ReadSkew
	}
	return class
}

// lostUpdate: two committed transactions of the core read the same value of
// a key and both write it, and the final cycle runs through an rw edge of
// that key between two such transactions. On a list key the pair read the
// same list (their own appends left out) and both append to it; the
// shape is the same lost update, and it is named the same at every level
// (docs/SEMANTICS.md §3 "Naming an anomaly with lists").
func lostUpdate(p *prepared, cycle []Step) bool {
	h := p.h
	// (key, value or list read) -> read-modify-writers; the value is
	// tagged so that a register's value never meets a list's rendering.
	rmw := map[[2]string][]string{}
	for ti := range h.Txns {
		if h.Txns[ti].Status != history.Committed {
			continue
		}
		pt := &p.txns[ti]
		for _, r := range pt.reads {
			var read string
			if r.isList() {
				if pt.appendsTo(r.key) == nil {
					continue
				}
				read = "list " + joinValues(r.lr.list)
			} else {
				if _, ok := pt.finalValue(r.key); !ok {
					continue
				}
				read = "value " + string(r.val)
			}
			k := [2]string{unq(p.keys[r.key]), read}
			rmw[k] = append(rmw[k], h.Txns[ti].ID)
		}
	}
	for _, s := range cycle {
		if s.Kind != "rw" {
			continue
		}
		for k, ids := range rmw {
			if k[0] == s.Key && len(ids) >= 2 && slices.Contains(ids, s.From) && slices.Contains(ids, s.To) {
				return true
			}
		}
	}
	return false
}

// confirmClass checks a name the final cycle alone suggests. The cycle's
// version orders may have been forced through anti-dependencies (the
// forced cycles printed above it), so a cycle of ww and wr edges only, or
// with one rw edge, need not be a cycle under every version order; but
// Adya's G0 and G1c say that every version order closes a ww/wr cycle (a
// violation of read-committed) and G-single that every one closes a cycle
// with exactly one anti-dependency (a violation of pl-2+). So the core is
// checked at those levels and named by the weakest class it does show
// (docs/SEMANTICS.md §3 "Naming an anomaly"): G0 or G1c if it violates
// read-committed, G-single if it violates pl-2+; otherwise, at a
// serializable level, G2-item if the core is valid under snapshot
// isolation (an SI witness leaves adjacent anti-dependencies only) and
// G-nonadjacent if not; at a snapshot-isolation level G-nonadjacent.
// A core with list keys is asked the same questions: read-committed and
// pl-2+ both read lists (§1 "Lists at the weak levels", "PL-2+ with
// lists"; §3 "Naming an anomaly with lists"). An answer that ran out of
// ctx keeps the cycle's name; extra says why the name differs from the
// cycle, for the explanation.
func confirmClass(ctx context.Context, hc *history.History, opts history.Options, class string) (named, extra string) {
	if class != history.G0 && class != history.G1c && class != history.GSingle {
		return class, ""
	}
	why := "These transactions are valid at pl-2+: the cycle's version orders were forced through anti-dependencies, so "
	if class != history.GSingle {
		out, err := decideWeak(ctx, prepare(hc, withLevel(opts, history.ReadCommitted)))
		if err != nil || out.verdict != Valid || ctx.Err() != nil {
			return class, ""
		}
		why = "These transactions are valid at read-committed: the cycle's version orders were forced through anti-dependencies, so "
	}
	// The core violates the level checked, which implies serializable's
	// failure too, so pl-2+'s own search runs without plLocalizer's
	// serializable pre-check.
	pl := newPLEncoder(ctx, prepare(hc, withLevel(opts, history.PL2Plus)), false)
	if pl.cancelled {
		return class, ""
	}
	st, _ := pl.solvePL(ctx)
	if pl.cancelled {
		st = solver.Unknown
	}
	switch st {
	case solver.Unsat:
		if class == history.GSingle {
			return class, ""
		}
		return history.GSingle, why + "every version order closes a cycle with exactly one anti-dependency (G-single)."
	case solver.Unknown:
		return class, ""
	}
	if !opts.Level.BeginCommit() {
		si := newEncoder(prepare(hc, withLevel(opts, history.SnapshotIsolation)), encodeConfig{dropUnobserved: true})
		si.encodeCtx(ctx)
		switch si.solve(ctx) {
		case solver.Sat:
			return history.G2Item, why + "every version order closes a cycle with two adjacent anti-dependencies (G2-item), allowed under snapshot isolation."
		case solver.Unknown:
			return class, ""
		}
	}
	return history.GNonadjacent, why + "every version order closes a cycle with anti-dependencies, none of them adjacent (G-nonadjacent)."
}
