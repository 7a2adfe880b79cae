package gen

import (
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// StaleRead is the injected real-time anomaly's type: a read that misses a
// write which finished before the read began. Only strict serializability
// (and other real-time levels) forbids it.
const StaleRead = history.GSingle + history.RealtimeSuffix

// injectTypes are the anomaly types Inject accepts, with the class
// `check` reports for each injection's core (internal/report's Anomaly
// Class; gencmd's TestManifestClassIsChecksClass holds them equal): the
// Adya class of the cycle that proves it, or the type itself for the
// anomalies found without search. A lost update is G2-item, not G-single:
// with no version order given, the proof that holds whatever order the
// writes took is the cycle of the two anti-dependencies.
var injectTypes = []struct{ name, class string }{
	{history.G0, history.G0},
	{history.G1a, history.G1a},
	{history.G1b, history.G1b},
	{history.GarbageRead, history.GarbageRead},
	{history.Internal, history.Internal},
	{history.G1c, history.G1c},
	{history.GSingle, history.GSingle},
	{history.ReadSkew, history.GSingle},
	{history.LostUpdate, history.G2Item},
	{history.WriteSkew, history.G2Item},
	{history.G2Item, history.G2Item},
	{StaleRead, StaleRead},
	{history.DuplicateElements, history.DuplicateElements},
	{history.IncompatibleOrder, history.IncompatibleOrder},
}

// InjectTypes lists the anomaly type names Config.Inject accepts
// ("stale-read" is accepted too, as an alias of G-single-realtime).
func InjectTypes() []string {
	out := make([]string, len(injectTypes))
	for i, t := range injectTypes {
		out[i] = t.name
	}
	return out
}

func canonicalType(name string) (string, bool) {
	if strings.EqualFold(name, "stale-read") {
		return StaleRead, true
	}
	for _, t := range injectTypes {
		if strings.EqualFold(name, t.name) {
			return t.name, true
		}
	}
	return "", false
}

func classOf(typ string) string {
	for _, t := range injectTypes {
		if t.name == typ {
			return t.class
		}
	}
	if typ == SessionStaleRead || isWeakShape(typ) {
		return typ // a ValidAt shape, not an --inject type
	}
	return ""
}

// injectPlan says when to inject what: fixed positions (Inject, rate 0) or
// a per-transaction rate.
type injectPlan struct {
	types []string
	pos   []int // base transaction index before which types[i] is injected
	next  int
}

func (g *generator) injectPositions() *injectPlan {
	p := &injectPlan{}
	for _, n := range g.cfg.Inject {
		c, _ := canonicalType(n)
		p.types = append(p.types, c)
	}
	if g.cfg.InjectRate > 0 {
		if len(p.types) == 0 {
			p.types = InjectTypes()
		}
		return p
	}
	m := len(p.types)
	for i := 0; i < m; i++ {
		p.pos = append(p.pos, (i+1)*g.cfg.Txns/(m+1))
	}
	return p
}

// rest returns the fixed injections not yet placed (only when the history
// has no base transactions to place them between).
func (p *injectPlan) rest() []string {
	if p.pos == nil {
		return nil
	}
	r := p.types[p.next:]
	p.next = len(p.types)
	return r
}

func (g *generator) maybeInject(produced int, plan *injectPlan, now int64) error {
	if g.cfg.InjectRate > 0 {
		if g.irng.Float64() < g.cfg.InjectRate {
			g.inject(plan.types[g.nInj%len(plan.types)], now)
		}
		return nil
	}
	for plan.next < len(plan.pos) && plan.pos[plan.next] <= produced {
		g.inject(plan.types[plan.next], now)
		plan.next++
	}
	return nil
}

// builder makes one injection's transactions: fresh keys "inj<k>.<name>"
// that no other transaction touches, one fresh session per transaction,
// and intervals that all overlap each other (so no real-time edge joins
// them) unless the anomaly is a stale read (invariant G6).
type builder struct {
	k    int
	now  int64
	dur  int64
	txns []history.Txn
}

func (b *builder) key(name string) history.Key {
	return history.StringValue("inj" + strconv.Itoa(b.k) + "." + name)
}

func (b *builder) txn(status history.Status, ops ...history.Op) *history.Txn {
	j := len(b.txns)
	sess := "inj" + strconv.Itoa(b.k) + "." + strconv.Itoa(j)
	start := b.now + 1 + int64(j)
	b.txns = append(b.txns, history.Txn{
		ID: sess + "-0", Session: sess, HasSession: true,
		Start: start, End: start + b.dur, HasTime: true,
		Status: status, Ops: ops,
	})
	return &b.txns[j]
}

func r(k history.Key, v history.Value) history.Op {
	return history.Op{Kind: history.Read, Key: k, Value: v}
}
func w(k history.Key, v history.Value) history.Op {
	return history.Op{Kind: history.Write, Key: k, Value: v}
}
func app(k history.Key, v history.Value) history.Op {
	return history.Op{Kind: history.Append, Key: k, Value: v}
}
func rl(k history.Key, vs ...history.Value) history.Op {
	return history.Op{Kind: history.Read, Key: k, IsList: true, List: vs}
}

var (
	v1    = history.IntValue(1)
	v2    = history.IntValue(2)
	null  = history.Null
	ok    = history.Committed
	abort = history.Aborted
)

// inject appends one anomaly of type typ, its transactions starting just
// after now. Every shape below is a minimal core: the projection of any
// proper subset (docs/SEMANTICS.md §3) replays.
func (g *generator) inject(typ string, now int64) {
	b := &builder{k: g.nInj, now: now, dur: max(g.meanDur, 8)}
	g.nInj++
	x, y, z := b.key("x"), b.key("y"), b.key("z")
	switch typ {
	case history.G0:
		// The list read orders T1 before T2 on x and T2 before T1 on y: a
		// cycle of write dependencies only.
		b.txn(ok, app(x, v1), app(y, v1))
		b.txn(ok, app(x, v2), app(y, v2))
		b.txn(ok, rl(x, v1, v2), rl(y, v2, v1))
	case history.G1a:
		b.txn(abort, w(x, v1))
		b.txn(ok, r(x, v1))
	case history.G1b:
		b.txn(ok, w(x, v1), w(x, v2))
		b.txn(ok, r(x, v1))
	case history.GarbageRead:
		b.txn(ok, r(x, history.IntValue(404)))
	case history.Internal:
		b.txn(ok, w(x, v1), r(x, null))
	case history.G1c:
		// Each reads the other's write: wr both ways.
		b.txn(ok, w(x, v1), r(y, v1))
		b.txn(ok, w(y, v1), r(x, v1))
	case history.GSingle, history.ReadSkew:
		// R sees W's y but W0's x, which W overwrote: W -wr-> R -rw-> W.
		b.txn(ok, w(x, v1), w(y, v1))
		b.txn(ok, w(x, v2), w(y, v2))
		b.txn(ok, r(x, v1), r(y, v2))
	case history.LostUpdate:
		b.txn(ok, r(x, null), w(x, v1))
		b.txn(ok, r(x, null), w(x, v2))
	case history.WriteSkew:
		b.txn(ok, r(x, null), r(y, null), w(x, v1))
		b.txn(ok, r(x, null), r(y, null), w(y, v1))
	case history.G2Item:
		// Three anti-dependencies in a ring: T1 -rw-> T3 -rw-> T2 -rw-> T1.
		b.txn(ok, r(x, null), w(y, v1))
		b.txn(ok, r(y, null), w(z, v1))
		b.txn(ok, r(z, null), w(x, v1))
	case StaleRead:
		// R begins StaleGap after W ended and still reads the initial
		// state: fine serially (R, W), not in real time.
		wt := b.txn(ok, w(x, v1))
		rt := b.txn(ok, r(x, null))
		rt.Start = wt.End + g.cfg.StaleGap
		rt.End = rt.Start + b.dur
	case SessionStaleRead:
		// R follows W in W's own session and still reads the initial
		// state: fine serially (R, W), not in session order.
		wt := b.txn(ok, w(x, v1))
		rt := b.txn(ok, r(x, null))
		rt.Session, rt.ID = wt.Session, wt.Session+"-1"
		rt.Start = wt.End + 1
		rt.End = rt.Start + b.dur
	case history.DuplicateElements:
		b.txn(ok, app(x, v1))
		b.txn(ok, rl(x, v1, v1))
	case history.IncompatibleOrder:
		b.txn(ok, app(x, v1))
		b.txn(ok, app(x, v2))
		b.txn(ok, rl(x, v1, v2))
		b.txn(ok, rl(x, v2, v1))
	default:
		if !weakShape(b, typ) { // weak.go
			panic("gen: inject: unhandled type " + typ)
		}
	}
	rec := Injected{Type: typ, Class: classOf(typ)}
	for i := range b.txns {
		p := g.newPending()
		p.txn = b.txns[i]
		p.m = meta{commit: -1, visible: p.txn.Status == history.Committed, inj: b.k}
		rec.Txns = append(rec.Txns, p.txn.ID)
		g.queue(p)
	}
	g.injected = append(g.injected, rec)
}
