package runcmd

import (
	"testing"

	"github.com/streamcheck/streamcheck/online"
)

// TestPinnedByText: the status line lists the pinned members' reasons,
// largest first, ties in the reasons' order, and nothing when none is
// pinned.
func TestPinnedByText(t *testing.T) {
	var by online.PinnedBy
	if got := pinnedByText(by); got != "" {
		t.Fatalf("no pinned: %q, want empty", got)
	}
	by[online.PinReadSource] = 40
	by[online.PinOpenNeighbour] = 120
	by[online.PinCommit] = 40
	want := " (r3-open-neighbour 120, r2-read-source 40, r2-commit 40)"
	if got := pinnedByText(by); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
