package oracle

import (
	"slices"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestWeakListHistories: list keys at the weak levels, against
// docs/SEMANTICS.md §1 "Lists at the weak levels": a read shows a prefix
// of the key's version order, reads from the last appender it shows and
// orders the ones it shows; everything else is the level's own
// definition.
func TestWeakListHistories(t *testing.T) {
	const (
		rc = history.ReadCommitted
		ra = history.ReadAtomic
		cc = history.Causal
		pl = history.PL2Plus
		rr = history.RepeatableRead
	)
	all := []history.Level{rc, ra, cc, pl, rr}
	for _, c := range []struct {
		name  string
		text  string
		valid []history.Level
	}{
		{"one append read", "A append x 1 · B r x [1]", all},
		{"empty read", "A append x 1 · B r x []", all},
		{"read of the order", "A append x 1 · B append x 2 · C r x [1 2] · D r x [1]", all},
		// Two reads that no single version order explains.
		{"incompatible orders", "A append x 1 · B append x 2 · C r x [1 2] · D r x [2 1]", nil},
		{"incompatible prefixes", "A append x 1 · B append x 2 · C r x [2] · D r x [1]", nil},
		// A transaction's appends are one version: seeing part of them
		// is an intermediate read, seeing an unknown element garbage.
		{"intermediate", "A append x 1, append x 2 · B r x [1]", nil},
		{"garbage", "A append x 1 · B r x [3]", nil},
		{"aborted", "A append x 1 (aborted) · B r x [1]", nil},
		// Own appends end the list a transaction reads.
		{"own append", "A append x 1 · B append x 2, r x [1 2]", all},
		{"own append missing", "A append x 1 · B append x 2, r x [1]", nil},
		{"own version read", "B r x [2], append x 2", nil},
		// B saw A's append to x, not its write of y: read committed
		// allows it; the read-atomic axiom puts A (a writer of y that
		// B read from) before the initial y.
		{"fractured", "A append x 1, w y 1 · B r x [1], r y null", []history.Level{rc}},
		// Only the last appender shown is read from: C reads x from B,
		// A is ordered before B, not visible to C.
		{"shown, not read from", "A append x 1, w y 1 · B append x 2 · C r x [1 2], r y null", []history.Level{rc, ra, cc}},
		// Plume's TAP-h in its Elle form: T3 sees T2's append to key 2
		// and a list of key 1 without T2's append (so T2 comes after
		// T0 in key 1's order): a fractured read, and a G-single (T3
		// read the version T2 overwrote, T2 -wr-> T3).
		{"plume tap-h", "T0 append 1 2 (session p1) · T1 r 1 [2] (session p2) · T2 append 1 1, append 2 1 (session p2) · T3 r 2 [1], r 1 [2] (session p3)", []history.Level{rc}},
		// A visible appender (session order) missing from the list:
		// Adya's levels have no session order (B before A).
		{"session append missing", "A append x 1 (session s) · B r x [] (session s)", []history.Level{rc, pl, rr}},
		// Causal past through a read: C reads y from B, B read x [1]
		// from A; C's list of x misses A. Not read atomic's concern
		// (A is not C's direct predecessor); at pl-2+ the cycle
		// A -wr-> B -wr-> C -rw-> A has one anti-dependency.
		{"causal append missing", "A append x 1 · B r x [1], w y 1 · C r y 1, r x []", []history.Level{rc, ra}},
		// The version order is a write order at read committed: A's
		// and B's appends in one order on x and the other on z (each
		// shown by a read) is G0.
		{"G0 through lists", "A append x 1, append z 1 · B append x 2, append z 2 · C r x [1 2] · D r z [2 1]", nil},
	} {
		h, err := history.ParseCompact(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, lv := range all {
			opts := history.DefaultOptions()
			opts.Level = lv
			got, w, err := Check(h, opts)
			if err != nil {
				t.Fatalf("%s at %s: %v", c.name, lv, err)
			}
			if want := slices.Contains(c.valid, lv); got != want {
				t.Errorf("%s at %s: valid=%v, want %v (witness %v)", c.name, lv, got, want, w)
			}
		}
	}
}
