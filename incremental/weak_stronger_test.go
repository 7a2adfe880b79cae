package incremental

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestStrongerWorthTrying: the stronger level's witness is asked for on
// every Unknown weak outcome except clocks refused for size on a history
// some transaction of which has no client time.
func TestStrongerWorthTrying(t *testing.T) {
	timed := &history.History{Txns: []history.Txn{{ID: "a", HasTime: true, End: 1}, {ID: "b", HasTime: true, Start: 2, End: 3}}}
	partly := &history.History{Txns: []history.Txn{{ID: "a", HasTime: true, End: 1}, {ID: "b"}}}
	untimed := &history.History{Txns: []history.Txn{{ID: "a"}, {ID: "b"}}}
	for _, c := range []struct {
		name string
		out  weakOutcome
		h    *history.History
		want bool
	}{
		{"enumeration gave up, no time", weakOutcome{verdict: Unknown, reason: "too many sources"}, untimed, true},
		{"clocks too large, timed", weakOutcome{verdict: Unknown, tooLarge: true}, timed, true},
		{"clocks too large, partly timed", weakOutcome{verdict: Unknown, tooLarge: true}, partly, false},
		{"clocks too large, no time", weakOutcome{verdict: Unknown, tooLarge: true}, untimed, false},
	} {
		if got := strongerWorthTrying(c.out, c.h); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
