package state_test

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/streamcheck/streamcheck/alerts"
	"github.com/streamcheck/streamcheck/alerts/outboxtest"
	"github.com/streamcheck/streamcheck/state"
)

// pebbleOutbox adapts Store to alerts.Outbox (its entry type is state's).
type pebbleOutbox struct{ *state.Store }

func (p pebbleOutbox) Pending() ([]alerts.OutboxEntry, error) {
	es, err := p.Store.Pending()
	out := make([]alerts.OutboxEntry, len(es))
	for i, e := range es {
		out[i] = alerts.OutboxEntry(e)
	}
	return out, err
}

// TestOutboxConformance runs alerts' outbox suite on the Pebble outbox; a
// restart is a power-loss clone of the filesystem reopened.
func TestOutboxConformance(t *testing.T) {
	outboxtest.Run(t, func(t *testing.T) (alerts.Outbox, func() alerts.Outbox) {
		fs := vfs.NewCrashableMem()
		s, err := state.Open("st", state.Options{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		cur := s
		t.Cleanup(func() { cur.Close() })
		return pebbleOutbox{s}, func() alerts.Outbox {
			clone := fs.CrashClone(vfs.CrashCloneCfg{})
			cur.Close()
			fs = clone
			r, err := state.Open("st", state.Options{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			cur = r
			return pebbleOutbox{r}
		}
	})
}
