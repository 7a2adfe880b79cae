package incremental

import (
	"os"
	"testing"

	"github.com/streamcheck/streamcheck/solver"
)

// TestShiftAgainstBruteForce runs the brute-force comparisons with the
// theory's order kept by moving descendants alone at every reorder
// (solver T6, theory_shift.go), which the default thresholds take only
// on intervals of hundreds of nodes, so almost never on tiny histories:
// the checker's answers, cores and witnesses do not depend on which
// topological order the theory keeps.
//
//	STREAMCHECK_TINY=800 go test ./incremental -run TestShiftAgainstBruteForce
//
// runs the snapshot, session-first, pl-2+ and Vbox comparisons too.
func TestShiftAgainstBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force")
	}
	defer solver.ForceShiftForTesting(true)()
	before := solver.ShiftsForTesting()
	defer func() {
		if solver.ShiftsForTesting() == before {
			t.Fatal("no insertion took the shift: the test does not test it")
		}
	}()
	t.Run("histories", TestAgainstBruteForce)
	t.Run("windowed cores", TestWindowedCoresAgainstBruteForce)
	if os.Getenv("STREAMCHECK_TINY") == "" {
		// The other back ends' comparisons double the package's
		// brute force: asked for with STREAMCHECK_TINY.
		return
	}
	t.Run("snapshot isolation", TestSIAgainstBruteForce)
	t.Run("session first", TestSessionFirstAgainstBruteForce)
	t.Run("pl-2+", TestPLAgainstBruteForce)
	t.Run("vbox", TestVboxPruneAgainstBruteForce)
}
