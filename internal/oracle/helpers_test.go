package oracle

import (
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

func compactOf(h *history.History) string {
	var b strings.Builder
	for i := range h.Txns {
		b.WriteString(h.Txns[i].Compact())
		b.WriteByte('\n')
	}
	return b.String()
}
