package closure

import (
	"math"

	"github.com/streamcheck/streamcheck/history"
)

// IntervalOf is the adjusted interval of t under o: [Start-Δ,
// EffectiveEnd+Δ], with an end that would overflow (or an effective end of
// +∞) saturated to math.MaxInt64, "never ends". For every pair of
// transactions with timestamps more than 2Δ away from the int64 limits,
// the closure's time order on these intervals is exactly o.Precedes
// (TestIntervalOfMatchesPrecedes). The caller checks HasTime.
func IntervalOf(o *history.Options, t *history.Txn) Interval {
	s := t.Start - o.Skew
	if t.Start < math.MinInt64+o.Skew {
		s = math.MinInt64
	}
	e := o.EffectiveEnd(t)
	if e != math.MaxInt64 {
		if e > math.MaxInt64-o.Skew {
			e = math.MaxInt64
		} else {
			e += o.Skew
		}
	}
	return Interval{AdjStart: s, AdjEnd: e}
}
