package outboxtest

import (
	"testing"

	"github.com/streamcheck/streamcheck/alerts"
)

// TestMemOutbox runs the suite on the in-memory outbox; its "restart" is
// a new dispatcher over the same outbox (reopen returns it unchanged).
func TestMemOutbox(t *testing.T) {
	Run(t, func(t *testing.T) (alerts.Outbox, func() alerts.Outbox) {
		o := alerts.NewMemOutbox()
		return o, func() alerts.Outbox { return o }
	})
}
