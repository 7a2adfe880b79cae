package online

import (
	"os"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// tinyCount is the number of tiny random histories a test runs: def, or
// $STREAMCHECK_TINY (as in package incremental's tests).
func tinyCount(def int) int {
	if s := os.Getenv("STREAMCHECK_TINY"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return def
}

// dump lists h's transactions, one a line, for a failure message.
func dump(h *history.History) string {
	s := ""
	for i := range h.Txns {
		s += "  " + h.Txns[i].Compact() + "\n"
	}
	return s
}
