package online

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestRMW31Growth feeds $STREAMCHECK_RMW_FILE through the evicting engine
// as TestRMWGrowth does (growthRun) and logs, at every
// $STREAMCHECK_GROWTH_EVERY transactions, the pinned members by reason
// (the status line's and streamcheck_pinned_by_reason's figures) and
// how many window members end with their session (rmw31_sessend.go). A
// measurement, skipped without the variable; STREAMCHECK_SESSEND=off
// measures the engine without the rule.
//
//	STREAMCHECK_RMW_FILE=rmw100k.jsonl STREAMCHECK_GROWTH_EVERY=50000 go test ./online -run TestRMW31Growth -v -timeout 1h
func TestRMW31Growth(t *testing.T) {
	if os.Getenv("STREAMCHECK_SESSEND") == "off" {
		// The engine without the rule: main's figures, on this code.
		defer func(v bool) { sessEndRule = v }(sessEndRule)
		sessEndRule = false
	}
	growthRun(t, "STREAMCHECK_RMW_FILE", history.InitialEmpty, func(o *Online) {
		s := o.Stats()
		var b strings.Builder
		for r, n := range s.PinnedBy {
			if n > 0 {
				fmt.Fprintf(&b, " %s %d", pinReasonNames[r], n)
			}
		}
		t.Logf("   pinned %d by reason:%s; ending with their session %d, session ends kept %d", s.Pinned, b.String(), len(o.doubt.ended), len(o.doubt.ends))
	})
}
