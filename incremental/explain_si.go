package incremental

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// describeSI names and explains a core of a level of the
// snapshot-isolation family as describe does for the serializable ones,
// over begin and commit nodes: the forced orders ("A must commit before
// B begins") and the final cycle, each step said in plain words about
// when a transaction took its snapshot and when it committed. The class
// is the Adya class of the cycle folded to transactions (every cycle of
// a BC-polygraph has no two adjacent rw edges: G0, G1c, G-single or
// G-nonadjacent), named as people know it where the shape is familiar
// (lost update, read skew).
func describeSI(ctx context.Context, p *prepared, core []int32) Anomaly {
	h := p.h
	in := make([]bool, len(h.Txns))
	sorted := append([]int32(nil), core...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	ids := make([]string, 0, len(core))
	for _, t := range sorted {
		in[t] = true
		ids = append(ids, h.Txns[t].ID)
	}
	a := Anomaly{Core: ids}
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	hc := p.project(in)
	pc := prepare(hc, p.opts)
	name, text := specialAnomaly(ctx, pc)
	if ctx.Err() != nil {
		return timedOutAnomaly(a, p.opts.Level)
	}
	if name != "" {
		a.Type, a.Class, a.Text = name, name, text
		return a
	}
	lv, ok := weakestViolated(ctx, pc)
	if !ok {
		return timedOutAnomaly(a, p.opts.Level)
	}
	pe := prepare(hc, withLevel(p.opts, lv))
	e := newEncoder(pe, encodeConfig{record: true})
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
		what := f.what
		if f.before != "" {
			what = fmt.Sprintf("%s must commit before %s begins", f.before, f.after)
		} else {
			what = strings.ReplaceAll(what, " must precede ", " must commit before the begin of ")
		}
		a.Forced = append(a.Forced, Forced{Order: what, Before: f.before, After: f.after, Cycle: siSteps(e, f.cycle)})
	}
	a.Cycle = siSteps(e, cycle)
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
		a.Text = append(a.Text, "That closes the cycle "+cycleString(a.Cycle)+": no order of begins and commits gives every transaction one snapshot and lets no two writers of a key overlap.")
		if renamed != "" {
			a.Text = append(a.Text, renamed)
		}
	} else {
		a.Type, a.Class = "cycle", "cycle"
		a.Text = append(a.Text, "No order of begins and commits explains these transactions: the search tried every choice of read-from source, version order and commit, and each closes a cycle; the case analysis is too deep to print.")
	}
	return a
}

// siNode says which transaction a node belongs to and whether it is its
// begin; t is -1 for a point of a session or time chain.
func siNode(e *encoder, n int32) (t int32, begin bool) {
	if int(n) < len(e.si.beginTxn) && e.si.beginTxn[n] >= 0 {
		return e.si.beginTxn[n], true
	}
	return e.nodeTxn[n], false
}

// siSteps folds a cycle over begin, commit and point nodes into steps
// between transactions: a B_t -> C_t edge is inside t and dropped, the
// points of a chain fold into one session or real-time step.
func siSteps(e *encoder, c []edgeRec) []Step {
	if len(c) == 0 {
		return nil
	}
	// Drop the begin-commit edges; what is left runs from a node of one
	// transaction to a node of another, through points.
	var rs []edgeRec
	for _, r := range c {
		ft, _ := siNode(e, r.from)
		tt, _ := siNode(e, r.to)
		if ft >= 0 && ft == tt {
			continue
		}
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		return nil
	}
	// Rotate to start at the earliest transaction in history order.
	start, first := -1, int32(-1)
	for i, r := range rs {
		if t, _ := siNode(e, r.from); t >= 0 && (start < 0 || t < first) {
			start, first = i, t
		}
	}
	if start < 0 {
		return nil
	}
	rs = append(append([]edgeRec(nil), rs[start:]...), rs[:start]...)
	var out []Step
	h := e.p.h
	for i := 0; i < len(rs); {
		from, _ := siNode(e, rs[i].from)
		kind := rs[i].kind
		first := rs[i]
		j := i
		for {
			if t, _ := siNode(e, rs[j].to); t >= 0 || j == len(rs)-1 {
				break
			}
			j++
			if rs[j].kind == kindSO || rs[j].kind == kindRT {
				kind = rs[j].kind
			}
		}
		to, toBegin := siNode(e, rs[j].to)
		if to < 0 {
			break
		}
		out = append(out, siStep(e, from, to, toBegin, kind, first, h))
		i = j + 1
	}
	return out
}

// siStep says one step in the words of snapshots and commits.
func siStep(e *encoder, from, to int32, toBegin bool, kind edgeKind, r edgeRec, h *history.History) Step {
	p := e.p
	tf, tt := &h.Txns[from], &h.Txns[to]
	s := Step{From: tf.ID, To: tt.ID, Kind: kind.String()}
	if r.via == kindRT || r.via == kindSO {
		s.Via = r.via.String()
	}
	key := ""
	if r.key >= 0 && int(r.key) < len(p.keys) {
		key = unq(p.keys[r.key])
		s.Key = key
	}
	switch kind {
	case kindWR:
		s.Why = fmt.Sprintf("%s read %s=%s written by %s, so %s committed before %s took its snapshot (%s wr-> %s)", tt.ID, key, r.val, tf.ID, tf.ID, tt.ID, tf.ID, tt.ID)
	case kindWW:
		if key != "" {
			s.Why = fmt.Sprintf("%s appended to %s before %s, so %s committed before %s began (%s ww-> %s)", tf.ID, key, tt.ID, tf.ID, tt.ID, tf.ID, tt.ID)
		} else {
			s.Why = fmt.Sprintf("%s's writes come before %s's in version order and two writers of a key may not overlap (first committer wins), so %s committed before %s began (%s ww-> %s)", tf.ID, tt.ID, tf.ID, tt.ID, tf.ID, tt.ID)
		}
	case kindRW:
		src := "the initial version"
		if r.writer >= 0 {
			src = h.Txns[r.writer].ID + "'s version"
		}
		s.Why = fmt.Sprintf("%s read %s of %s and %s wrote %s over it, so %s took its snapshot before %s committed (%s rw-> %s)", tf.ID, src, key, tt.ID, key, tf.ID, tt.ID, tf.ID, tt.ID)
	case kindSO:
		s.Why = fmt.Sprintf("%s came before %s in session %s, so %s committed before %s began (%s process-> %s)", tf.ID, tt.ID, tf.Session, tf.ID, tt.ID, tf.ID, tt.ID)
	case kindRT:
		end := p.opts.EffectiveEnd(tf)
		slack, endS := "∞", "∞"
		if end != math.MaxInt64 {
			ns := (tt.Start - p.opts.Skew) - (end + p.opts.Skew)
			s.SlackNS = &ns
			slack = history.FormatDuration(ns)
			endS = history.FormatTime(end)
		}
		what := "committed"
		if toBegin {
			what = "took its snapshot"
		}
		s.Why = fmt.Sprintf("%s ended (%s+Δ) before %s began (%s-Δ), Δ=%s, slack %s, so %s committed before %s %s (%s realtime-> %s)", tf.ID, endS, tt.ID, history.FormatTime(tt.Start), history.FormatDuration(p.opts.Skew), slack, tf.ID, tt.ID, what, tf.ID, tt.ID)
	}
	return s
}
