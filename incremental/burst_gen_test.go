package incremental

import (
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// burstHistory is gen.Burst, failing tb on error.
func burstHistory(tb testing.TB, n int) *history.History {
	h, err := gen.Burst(n)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}
