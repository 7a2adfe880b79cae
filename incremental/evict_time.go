package incremental

import (
	"math"
	"slices"
	"sort"

	"github.com/streamcheck/streamcheck/history"
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

func newTimeOrder(r *reduced) *timeOrder {
	p := r.p
	to := &timeOrder{}
	for t := range r.h.Txns {
		tx := &r.h.Txns[t]
		if tx.HasTime {
			to.byEnd = append(to.byEnd, int32(t))
			to.byStart = append(to.byStart, int32(t))
		}
		if tx.Status == history.Unknown && !p.txns[t].dropped && r.pos[t] >= 0 {
			to.unknown = append(to.unknown, int32(t))
		}
	}
	effEnd := func(t int32) int64 { return p.opts.EffectiveEnd(&p.h.Txns[t]) }
	sort.SliceStable(to.byEnd, func(a, b int) bool { return effEnd(to.byEnd[a]) < effEnd(to.byEnd[b]) })
	sort.SliceStable(to.byStart, func(a, b int) bool { return p.h.Txns[to.byStart[a]].Start < p.h.Txns[to.byStart[b]].Start })
	to.ends = make([]int64, len(to.byEnd))
	for i, t := range to.byEnd {
		to.ends[i] = effEnd(t)
	}
	to.starts = make([]int64, len(to.byStart))
	for i, t := range to.byStart {
		to.starts[i] = p.h.Txns[t].Start
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
func (p *prepared) latestEndBefore(b int32) int64 {
	tb := &p.h.Txns[b]
	if !tb.HasTime {
		return math.MinInt64
	}
	return satAdd(tb.Start, -2*p.opts.Skew)
}

// earliestStartAfter bounds the start of a real-time successor of a: none
// starts before effEnd(a)+2Δ.
func (p *prepared) earliestStartAfter(a int32) int64 {
	ta := &p.h.Txns[a]
	if !ta.HasTime {
		return math.MaxInt64
	}
	return satAdd(p.opts.EffectiveEnd(ta), 2*p.opts.Skew)
}
