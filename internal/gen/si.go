package gen

import (
	"github.com/streamcheck/streamcheck/history"
)

// The ValidAt shapes once the snapshot-isolation family is checked
// (issue 24). A ValidAt history must be valid exactly at the levels the
// lattice puts at or below the level asked for, so it must also violate
// the levels beside it, and the family made the lattice wide: snapshot
// isolation sits below three incomparable levels (strong session SI,
// GSI, serializable) and serializable now has GSI beside it. No shape of
// a few transactions is a minimal core at all of them (a GSI violation
// needs only the two writers that real time orders; a serializable one a
// cycle of two adjacent anti-dependencies that SI allows), so most levels
// get a set of shapes, each a minimal core at the levels it violates and
// together violating every level not implied:
//
//	strict-serializable                (the top: none)
//	strong-session-serializable        StaleRead + StaleOverwrite
//	serializable                       SessionStaleRead + StaleOverwrite
//	strong-snapshot-isolation          WriteSkew
//	generalized-snapshot-isolation     WriteSkew + SessionStaleRead
//	strong-session-snapshot-isolation  WriteSkew + StaleOverwrite
//	snapshot-isolation                 WriteSkew + SessionStaleRead + StaleOverwrite
//
// WriteSkew (A r x,y w x · B r x,y w y, concurrent) violates the
// serializable levels only; SessionStaleRead the levels with session
// order; StaleRead the levels whose snapshots follow real time (strong
// SI, strict); StaleOverwrite the levels whose commits follow real time
// (GSI, strong SI, strict).
const (
	// StaleOverwrite: A writes x blind; B begins StaleGap after A ended,
	// in another session, reads x's initial version and writes x. Valid at
	// SI, strong session SI and the serializable levels without time (B
	// entirely before A); invalid where real time orders commits (GSI,
	// strong SI, strict): B's snapshot misses A, so B overlaps A on x.
	StaleOverwrite = "stale-overwrite"
)

// shapeSets are the ValidAt entries that stand for several shapes.
var shapeSets = map[string][]string{
	"strong-session-serializable-shapes":       {StaleRead, StaleOverwrite},
	"serializable-shapes":                      {SessionStaleRead, StaleOverwrite},
	"generalized-snapshot-isolation-shapes":    {history.WriteSkew, SessionStaleRead},
	"strong-session-snapshot-isolation-shapes": {history.WriteSkew, StaleOverwrite},
	"snapshot-isolation-shapes":                {history.WriteSkew, SessionStaleRead, StaleOverwrite},
}

func init() {
	allowedShapes[history.StrongSessionSerializable] = "strong-session-serializable-shapes"
	allowedShapes[history.Serializable] = "serializable-shapes"
	allowedShapes[history.StrongSnapshotIsolation] = history.WriteSkew
	allowedShapes[history.GeneralizedSnapshotIsolation] = "generalized-snapshot-isolation-shapes"
	allowedShapes[history.StrongSessionSnapshotIsolation] = "strong-session-snapshot-isolation-shapes"
	allowedShapes[history.SnapshotIsolation] = "snapshot-isolation-shapes"
}

// injectAllowedSI adds the family's own shapes (the others go through
// inject) and reports whether typ was one of them.
func (g *generator) injectAllowedSI(typ string, lv history.Level, now int64) bool {
	if set, ok := shapeSets[typ]; ok {
		for _, t := range set {
			g.injectAllowed(t, lv, now)
		}
		return true
	}
	if typ != StaleOverwrite {
		return false
	}
	b := &builder{k: g.nInj, now: now, dur: max(g.meanDur, 8)}
	g.nInj++
	x := b.key("x")
	first := b.txn(ok, w(x, v1))
	second := b.txn(ok, r(x, null), w(x, v2))
	second.Start = first.End + g.cfg.StaleGap
	second.End = second.Start + b.dur
	rec := Injected{Type: typ, Class: classOf(typ), ValidAt: lv.String()}
	for i := range b.txns {
		p := g.newPending()
		p.txn = b.txns[i]
		p.m = meta{commit: -1, visible: p.txn.Status == history.Committed, inj: b.k}
		rec.Txns = append(rec.Txns, p.txn.ID)
		g.queue(p)
	}
	g.injected = append(g.injected, rec)
	return true
}
