package online

import (
	"os"
	"strconv"
)

// STREAMCHECK_REWIND_EVERY runs the package's tests with rewind points
// that close together, so that every replay after an alert starts from
// one (the default spacing is longer than most test streams).
func init() {
	if n, err := strconv.Atoi(os.Getenv("STREAMCHECK_REWIND_EVERY")); err == nil && n > 0 {
		rewindEvery = n
	}
}
