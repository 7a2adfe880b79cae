package sionline

import (
	"math/rand/v2"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// repeatHistory: p writes x = cur first (real time puts it before the
// rest); then a [10,100] and b [20,50] write x blind, committed, their
// intervals nested; nothing reads x until v, long after, which reads
// want. Fillers on keys of their own push everything out of the window
// before v arrives. Valid at strong SI whichever of a and b v reads.
func repeatHistory(t *testing.T, cur, a, b, want string) (*history.History, history.Options) {
	t.Helper()
	txns := []history.Txn{
		txn("p", "p", 0, 5, w("x", cur)),
		txn("a", "a", 10, 100, w("x", a)),
		txn("b", "b", 20, 50, w("x", b)),
	}
	return paddedHistory(t, txns, r("x", want))
}

// TestRepeatedValueGivesNoOrder (docs/SEMANTICS.md §5 "A repeated value
// gives no order (si31)"): after p's x5, a writes x3, a value at or
// below the key's version (a repeat, as a duplicate of an old value is
// in `gen`'s streams), b writes x6, and v reads a's x3: a committed
// last. The value rule alone runs a first (3 < 6), the ghost keeps x6
// and v's read contradicts it; with repeats left out of the rule the
// sweep runs them by end (b, then a) and nothing comes back. Fresh
// values (a x6, b x7, v reads x7) keep the value rule: by end alone b
// runs first and the ghost keeps x6.
func TestRepeatedValueGivesNoOrder(t *testing.T) {
	defer func(w, s int) { WaitWindow, segTxns = w, s }(WaitWindow, segTxns)
	WaitWindow, segTxns = 0, 4
	defer func(v, r bool) { NoValueOrder, NoRepeatValueOrder = v, r }(NoValueOrder, NoRepeatValueOrder)
	for _, tc := range []struct {
		name              string
		cur, a, b, want   string
		noValue, noRepeat bool
		back              bool // a re-admission expected
	}{
		{"repeat", "5", "3", "6", "3", false, false, false},
		{"repeat-before", "5", "3", "6", "3", false, true, true},
		{"equal", "5", "5", "6", "5", false, false, false},
		{"fresh", "5", "6", "7", "7", false, false, false},
		{"fresh-by-end", "5", "6", "7", "7", true, false, true},
	} {
		NoValueOrder, NoRepeatValueOrder = tc.noValue, tc.noRepeat
		h, opts := repeatHistory(t, tc.cur, tc.a, tc.b, tc.want)
		fired, eng := live(t, h, opts, rand.New(rand.NewPCG(31, 31)), 1000, 1, -1)
		if len(fired) > 0 {
			t.Fatalf("%s: false alarm: %v", tc.name, fired[0].Core)
		}
		back := eng.readmits+eng.resets+eng.diagnosed+eng.failedScreens > 0
		if back != tc.back {
			t.Errorf("%s: %d re-admissions, %d resets, %d diagnosed, %d failed screens; want a contradiction: %v", tc.name, eng.readmits, eng.resets, eng.diagnosed, eng.failedScreens, tc.back)
		}
	}
}
