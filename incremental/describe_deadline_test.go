package incremental

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestDescribeStopsAtDeadline: an explanation past the check's deadline
// is given up, and the core, which is proven, is still reported whole
// with a text that says the cycle is missing (issue 20, item 6: the
// describe path made --timeout overshoot). With time left, the same core
// is explained in full.
func TestDescribeStopsAtDeadline(t *testing.T) {
	h := gen.ListRead(1000, 1, "g-single")
	opts := history.DefaultOptions()
	p := prepare(h, opts)
	core := []int32{0, 1}

	full := describe(context.Background(), p, core)
	if full.Class != history.GSingle || len(full.Cycle) == 0 {
		t.Fatalf("explained core: class %q, cycle %v", full.Class, full.Cycle)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cut := describe(ctx, p, core)
	if !slices.Equal(cut.Core, full.Core) {
		t.Fatalf("core %v past the deadline, %v before", cut.Core, full.Core)
	}
	if cut.Class != "cycle" || len(cut.Cycle) != 0 || len(cut.Text) != 1 || !strings.Contains(cut.Text[0], "time budget ran out") {
		t.Fatalf("past the deadline: class %q, cycle %v, text %q", cut.Class, cut.Cycle, cut.Text)
	}

}
