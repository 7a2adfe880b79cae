package closure

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestIntervalOfMatchesPrecedes: the time edges the closure derives from
// IntervalOf are history.Options.Precedes, the rule every checker and
// oracle shares (points at one instant included).
func TestIntervalOfMatchesPrecedes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		o := history.Options{Skew: int64(r.IntN(3)), InDoubt: int64(r.IntN(4)) - 1}
		var txns [2]history.Txn
		for i := range txns {
			s := int64(r.IntN(10))
			txns[i] = history.Txn{Start: s, End: s + int64(r.IntN(4)), HasTime: true, Status: history.Status(r.IntN(3))}
		}
		a, b := IntervalOf(&o, &txns[0]), IntervalOf(&o, &txns[1])
		got := timeBefore(a.AdjStart, a.AdjEnd, b.AdjStart, b.AdjEnd)
		if want := o.Precedes(&txns[0], &txns[1]); got != want {
			t.Fatalf("%+v %+v under %+v: closure %v, Precedes %v", txns[0], txns[1], o, got, want)
		}
	}
}
