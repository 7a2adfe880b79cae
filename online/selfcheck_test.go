package online

import (
	"os"
	"testing"
)

// TestMain runs the package's tests with the engine's self-checks on
// (SetSelfCheck: the ghost index against a rebuild after every step,
// build's ghosts against the pass over every member), so that every
// stream the tests drive holds the derived indexes to their definition.
// STREAMCHECK_SELFCHECK=0 turns them off (benchmarks, CPU figures).
func TestMain(m *testing.M) {
	if os.Getenv("STREAMCHECK_SELFCHECK") != "0" {
		SetSelfCheck(true)
	}
	os.Exit(m.Run())
}
