package weakonline

import (
	"testing"
)

// Every key's log trims as soon as it may, in every test of the package:
// the short histories of the tests would never reach the default.
func init() { minLog = 0 }

// TestFrontierAsNaive: forcedCausal visiting only the writes at or after
// its source's frontier (docs/SEMANTICS.md §5 "A read visits the writes
// after its source's frontier") raises the alerts, and makes the steps
// check, that visiting every session of the key does.
func TestFrontierAsNaive(t *testing.T) {
	causalAsNaive(t, 5005, &naiveFrontier, "frontier vs every session", "visiting every session")
}
