package incremental

import (
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
func TestShiftAgainstBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force")
	}
	defer solver.ForceShiftForTesting(true)()
	before := solver.ShiftsForTesting()
	t.Run("histories", TestAgainstBruteForce)
	t.Run("windowed cores", TestWindowedCoresAgainstBruteForce)
	if solver.ShiftsForTesting() == before {
		t.Fatal("no insertion took the shift: the test does not test it")
	}
}
