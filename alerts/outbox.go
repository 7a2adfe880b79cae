package alerts

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
)

// Outbox holds alerts until every sink they are meant for has delivered
// them, so that an alert proven just before a crash (or while a sink was
// down) is delivered after the restart. The dispatcher Puts an alert before
// its first delivery attempt and marks each sink Done after that sink's
// delivery succeeded; on start it re-delivers Pending().
//
// The Pebble store in state/ implements it for a daemon with a state
// directory; MemOutbox is the in-process one for everything else.
type Outbox interface {
	Put(id string, payload []byte, sinks []string) error // durable on return
	Done(id, sink string) error                          // sink delivered id; entry removed when all are done
	Pending() ([]OutboxEntry, error)                     // undelivered entries, oldest first
}

// OutboxEntry is one undelivered alert: its delivery key (DeliveryKey), the
// alert as JSON (the `check --format json` anomaly schema, verdict.Alert)
// and the sinks that have not delivered it yet.
type OutboxEntry struct {
	ID      string
	Payload []byte
	Sinks   []string
}

// MemOutbox is an Outbox in memory: durable for the life of the process
// only. It keeps the contract exactly (oldest first, removal when the last
// sink is done) so that tests of the dispatcher against it hold for the
// Pebble one. Safe for concurrent use.
type MemOutbox struct {
	mu      sync.Mutex
	seq     uint64
	entries map[string]*memEntry
}

type memEntry struct {
	seq     uint64
	payload []byte
	sinks   []string
}

// NewMemOutbox returns an empty in-memory outbox.
func NewMemOutbox() *MemOutbox { return &MemOutbox{entries: map[string]*memEntry{}} }

// Put stores (or replaces) the entry id. A replaced entry moves to the end
// of the order and owes delivery to exactly the given sinks again: the
// dispatcher only replaces an entry when it enqueues the same delivery key
// again, which must be delivered again.
func (o *MemOutbox) Put(id string, payload []byte, sinks []string) error {
	if id == "" {
		return fmt.Errorf("alerts: outbox put: empty id")
	}
	if len(sinks) == 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq++
	o.entries[id] = &memEntry{seq: o.seq, payload: slices.Clone(payload), sinks: slices.Compact(slices.Sorted(slices.Values(sinks)))}
	return nil
}

// Done records that sink delivered id. Unknown ids and sinks are not an
// error: a redelivery after a restart may complete an entry twice.
func (o *MemOutbox) Done(id, sink string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.entries[id]
	if e == nil {
		return nil
	}
	if i := slices.Index(e.sinks, sink); i >= 0 {
		e.sinks = slices.Delete(e.sinks, i, i+1)
	}
	if len(e.sinks) == 0 {
		delete(o.entries, id)
	}
	return nil
}

// Pending returns copies of the undelivered entries, oldest Put first.
func (o *MemOutbox) Pending() ([]OutboxEntry, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	type kv struct {
		id string
		e  *memEntry
	}
	all := make([]kv, 0, len(o.entries))
	for id, e := range o.entries {
		all = append(all, kv{id, e})
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Compare(a.e.seq, b.e.seq) })
	out := make([]OutboxEntry, 0, len(all))
	for _, x := range all {
		out = append(out, OutboxEntry{ID: x.id, Payload: slices.Clone(x.e.payload), Sinks: slices.Clone(x.e.sinks)})
	}
	return out, nil
}
