package online

import (
	"cmp"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// timeOrder indexes one step's instance by time, so that removing a
// transaction finds its real-time neighbours by binary search instead of
// scanning the instance: a scan per removal made eviction quadratic in the
// window, and was half of the evicting engine's CPU.
type timeOrder struct {
	byEnd, byStart []int32 // positions with timestamps
	ends, starts   []int64 // their effective ends and starts, ascending
	// unknown are the positions whose commit is a choice of the instance.
	unknown []int32
}

func newTimeOrder(r *reduced) *timeOrder { return newTimeOrderIn(r, &timeOrder{}) }

// newTimeOrderIn is newTimeOrder in to, whose arrays (the last step's,
// live_scratch.go) it empties and reuses.
func newTimeOrderIn(r *reduced, to *timeOrder) *timeOrder {
	p := r.p
	to.byEnd, to.byStart, to.unknown = to.byEnd[:0], to.byStart[:0], to.unknown[:0]
	for t := range r.h.Txns {
		tx := &r.h.Txns[t]
		if tx.HasTime {
			to.byEnd = append(to.byEnd, int32(t))
			to.byStart = append(to.byStart, int32(t))
		}
		if tx.Status == history.Unknown && !p.Txns()[t].Dropped() && r.pos[t] >= 0 {
			to.unknown = append(to.unknown, int32(t))
		}
	}
	effEnd := func(t int32) int64 { return p.Opts().EffectiveEnd(&p.History().Txns[t]) }
	// Stable sorts without reflection (sort.SliceStable's swapper); a
	// stable order is unique, so the order is the one it gave.
	slices.SortStableFunc(to.byEnd, func(a, b int32) int { return cmp.Compare(effEnd(a), effEnd(b)) })
	slices.SortStableFunc(to.byStart, func(a, b int32) int { return cmp.Compare(p.History().Txns[a].Start, p.History().Txns[b].Start) })
	to.ends = zeroed(&to.ends, len(to.byEnd))
	for i, t := range to.byEnd {
		to.ends[i] = effEnd(t)
	}
	to.starts = zeroed(&to.starts, len(to.byStart))
	for i, t := range to.byStart {
		to.starts[i] = p.History().Txns[t].Start
	}
	return to
}

// endingIn calls f for each position whose effective end is in [lo, hi].
func (to *timeOrder) endingIn(lo, hi int64, f func(int32)) {
	i, _ := slices.BinarySearch(to.ends, lo)
	for ; i < len(to.ends) && to.ends[i] <= hi; i++ {
		f(to.byEnd[i])
	}
}

// startingIn calls f for each position whose start is in [lo, hi].
func (to *timeOrder) startingIn(lo, hi int64, f func(int32)) {
	i, _ := slices.BinarySearch(to.starts, lo)
	for ; i < len(to.starts) && to.starts[i] <= hi; i++ {
		f(to.byStart[i])
	}
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	if b < 0 && a < math.MinInt64-b {
		return math.MinInt64
	}
	return a + b
}

// latestEndBefore bounds the effective end of a real-time predecessor of
// b: none ends later than start(b)-2Δ.
func latestEndBefore(p *incremental.Prepared, b int32) int64 {
	tb := &p.History().Txns[b]
	if !tb.HasTime {
		return math.MinInt64
	}
	return satAdd(tb.Start, -2*p.Opts().Skew)
}

// earliestStartAfter bounds the start of a real-time successor of a: none
// starts before effEnd(a)+2Δ.
func earliestStartAfter(p *incremental.Prepared, a int32) int64 {
	ta := &p.History().Txns[a]
	if !ta.HasTime {
		return math.MaxInt64
	}
	return satAdd(p.Opts().EffectiveEnd(ta), 2*p.Opts().Skew)
}

// sessionBounds bounds, per session of one step's instance, the members
// that real time already orders with a given member, so that remove
// visits only a member's session neighbours that real time leaves
// unordered (a few) instead of its whole session (a scan per removal
// was a tenth of a step). For position t of a session, over the members
// ranked up to t (pre*) and from t on (suf*):
//
//   - preMaxEnd, preMaxStart: the largest effective end and start;
//     preOK: all have timestamps, and each one's commit is a constant of
//     the encoding (asking it cannot probe, so skipping it changes no
//     solver state);
//   - sufMinEnd, sufMinStart: the smallest effective end and start;
//     sufOK: all have timestamps.
//
// Precedes(u, t) is "end(u) <= start(t)-2Δ and not end(t) <= start(u)-2Δ"
// (an end of MaxInt64 precedes nothing), monotone in end(u) and start(u),
// so the extremes decide it for the whole prefix or suffix.
type sessionBounds struct {
	preMaxEnd, preMaxStart, sufMinEnd, sufMinStart []int64
	preOK, sufOK                                   []bool
}

func newSessionBounds(r *reduced) *sessionBounds { return newSessionBoundsIn(r, &sessionBounds{}) }

// newSessionBoundsIn is newSessionBounds in sb, whose arrays (the last
// step's, live_scratch.go) it zeroes and reuses.
func newSessionBoundsIn(r *reduced, sb *sessionBounds) *sessionBounds {
	p, e := r.p, r.e
	n := len(r.h.Txns)
	sb.preMaxEnd, sb.preMaxStart = zeroed(&sb.preMaxEnd, n), zeroed(&sb.preMaxStart, n)
	sb.sufMinEnd, sb.sufMinStart = zeroed(&sb.sufMinEnd, n), zeroed(&sb.sufMinStart, n)
	sb.preOK, sb.sufOK = zeroed(&sb.preOK, n), zeroed(&sb.sufOK, n)
	// Far from the ends of int64, start-2Δ cannot wrap, so it is
	// monotone in start as the bounds assume; elsewhere the bounds are
	// left unusable (OK false) and remove scans the whole session.
	skewOK := skewBoundable(p.Opts().Skew)
	for _, ms := range p.SessionMembers() {
		ok := skewOK
		var maxEnd, maxStart int64 = math.MinInt64, math.MinInt64
		for _, u := range ms {
			tx := &p.History().Txns[u]
			end := p.Opts().EffectiveEnd(tx)
			ok = ok && tx.HasTime && saneBound(tx.Start) && saneBound(end) && (p.Txns()[u].Dropped() || tx.Status == history.Aborted || e.Act()[u] == incremental.LitTrue || e.Act()[u] == incremental.LitFalse)
			maxEnd, maxStart = max(maxEnd, end), max(maxStart, tx.Start)
			sb.preMaxEnd[u], sb.preMaxStart[u], sb.preOK[u] = maxEnd, maxStart, ok
		}
		ok = skewOK
		var minEnd, minStart int64 = math.MaxInt64, math.MaxInt64
		for k := len(ms) - 1; k >= 0; k-- {
			u := ms[k]
			tx := &p.History().Txns[u]
			end := p.Opts().EffectiveEnd(tx)
			ok = ok && tx.HasTime && saneBound(tx.Start) && saneBound(end)
			minEnd, minStart = min(minEnd, end), min(minStart, tx.Start)
			sb.sufMinEnd[u], sb.sufMinStart[u], sb.sufOK[u] = minEnd, minStart, ok
		}
	}
	return sb
}

// allBefore reports whether every member of t's session ranked up to u
// (u before t) precedes t in real time, and asking their commits cannot
// probe.
func (sb *sessionBounds) allBefore(p *incremental.Prepared, u, t int32) bool {
	tt := &p.History().Txns[t]
	if !sb.preOK[u] || !tt.HasTime || !p.Opts().Level.RealTime() {
		return false
	}
	endT := p.Opts().EffectiveEnd(tt)
	maxEnd := sb.preMaxEnd[u]
	return maxEnd != math.MaxInt64 && maxEnd <= tt.Start-2*p.Opts().Skew &&
		(endT == math.MaxInt64 || endT > sb.preMaxStart[u]-2*p.Opts().Skew)
}

// allAfter reports whether t precedes in real time every member of its
// session ranked from u on (u after t).
func (sb *sessionBounds) allAfter(p *incremental.Prepared, t, u int32) bool {
	tt := &p.History().Txns[t]
	if !sb.sufOK[u] || !tt.HasTime || !p.Opts().Level.RealTime() {
		return false
	}
	endT := p.Opts().EffectiveEnd(tt)
	return endT != math.MaxInt64 && endT <= sb.sufMinStart[u]-2*p.Opts().Skew &&
		sb.sufMinEnd[u] > tt.Start-2*p.Opts().Skew
}

// saneBound says a time is far from the ends of int64 (or is the open
// end, MaxInt64), so that start-2Δ cannot wrap and stays monotone in
// start, as the session bounds (here and in burst_session.go) assume.
func saneBound(x int64) bool { return x > math.MinInt64/4 && x < math.MaxInt64/4 || x == math.MaxInt64 }

// skewBoundable says the skew is small enough for those bounds.
func skewBoundable(skew int64) bool { return skew >= 0 && skew < math.MaxInt64/16 }
