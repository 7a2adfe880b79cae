package gen

import (
	"fmt"

	"github.com/streamcheck/streamcheck/history"
)

// SessionStaleRead is the session-order anomaly Config.ValidAt adds for
// serializable: a transaction misses the write of an earlier transaction
// of its own session. Serializable allows it (the serial order puts the
// reader first); every level with session order forbids it.
const SessionStaleRead = history.GSingle + history.ProcessSuffix

// allowedShapes maps each checked level below the top of the registry to
// the shape ValidAt adds for it: valid at the level (and every level it
// implies), invalid at every checked level strictly stronger. The table
// is per level, like the level files: a level added to the registry adds
// its shape here (TestValidAtEveryLevel fails until it does), and checks
// it against the oracle as it teaches the oracle the level.
//
//	serializable                 SessionStaleRead  W w x1 · R r x null, R after W in W's session
//	strong-session-serializable  StaleRead         W w x1 · R r x null, R begins StaleGap after W ended, another session
//	read-committed               FracturedReadShape, read-atomic CausalityViolationShape, causal LongForkShape (weak.go)
var allowedShapes = map[history.Level]string{
	history.ReadCommitted:             FracturedReadShape,
	history.ReadAtomic:                CausalityViolationShape,
	history.Causal:                    LongForkShape,
	history.Serializable:              SessionStaleRead,
	history.StrongSessionSerializable: StaleRead,
}

// validAtEvery is the spacing of ValidAt shapes: one per so many base
// transactions, and at least one per history.
const validAtEvery = 1000

// validAtPlan places the shapes of Config.ValidAt at fixed positions,
// independent of Inject and InjectRate (whose plans it does not change).
func (g *generator) validAtPlan() (*injectPlan, history.Level) {
	p := &injectPlan{}
	if g.cfg.ValidAt == "" {
		return p, 0
	}
	lv, _ := history.ParseLevel(g.cfg.ValidAt) // validate() checked it
	typ, ok := allowedShapes[lv]
	if !ok {
		return p, lv // the top level: the base is valid there, nothing is stronger
	}
	n := max(1, g.cfg.Txns/validAtEvery)
	for i := 0; i < n; i++ {
		p.types = append(p.types, typ)
		p.pos = append(p.pos, (2*i+1)*g.cfg.Txns/(2*n))
	}
	return p, lv
}

// injectAllowed adds one ValidAt shape and marks its record with the level
// that allows it.
func (g *generator) injectAllowed(typ string, lv history.Level, now int64) {
	if g.injectAllowedSI(typ, lv, now) { // si.go
		return
	}
	g.inject(typ, now)
	g.injected[len(g.injected)-1].ValidAt = lv.String()
}

func validateValidAt(name string) error {
	if name == "" {
		return nil
	}
	if _, err := history.ParseLevel(name); err != nil {
		return fmt.Errorf("valid-at: %w", err)
	}
	return nil
}
