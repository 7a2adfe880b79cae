package gen

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/streamcheck/streamcheck/history"
)

// Injected records one injected anomaly: the requested type, the class
// `check` reports for it (the Adya class of its cycle, or the type itself
// for anomalies found without search) and the transactions of its minimal
// core.
type Injected struct {
	Type  string   `json:"type"`
	Class string   `json:"class,omitempty"`
	Txns  []string `json:"txns"`
	// ValidAt is set for the shapes Config.ValidAt adds: the level that
	// allows them (they are anomalies only at the stronger levels).
	ValidAt string `json:"valid_at,omitempty"`
}

// Generate returns a whole history and its injected anomalies. Its
// transactions are in completion (end time) order.
func Generate(cfg Config) (*history.History, []Injected, error) {
	h := &history.History{}
	inj, err := GenerateStream(cfg, func(t history.Txn) error {
		h.Txns = append(h.Txns, t)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return h, inj, nil
}

// GenerateStream calls emit for every transaction in completion (end time)
// order without keeping the history: memory is O(Keys + Sessions) plus
// the list contents of the current list keys. It stops at emit's first
// error and returns it. The injected anomalies are returned at the end.
func GenerateStream(cfg Config, emit func(history.Txn) error) ([]Injected, error) {
	return run(cfg, func(t *history.Txn, _ meta) error { return emit(*t) })
}

// meta is what the simulation knows about a transaction beyond its text;
// tests use it to replay the history in commit order.
type meta struct {
	commit  int64 // the instant the store executed it, in (Start, End)
	visible bool  // its writes took effect
	inj     int   // index of its injection, or -1
	exec    int   // execution order of base transactions (ties in commit are concurrent)
}

// pending is a finished transaction waiting for its turn in end order.
type pending struct {
	txn history.Txn
	m   meta
	seq uint64
}

// session is a client and its next planned transaction.
type session struct {
	idx                int
	name               string
	n                  int
	start, commit, end int64
}

type regState struct {
	cur  history.Value // current visible value (Null before any write)
	next int64         // next fresh value; values 1..next-1 were written
}

type listState struct {
	gen   int
	key   history.Key
	elems []history.Value
	next  int64
}

// effect is a transaction's own write, kept apart until it commits so
// that invisible outcomes leave the store untouched (invariant G3).
type effect struct {
	slot  int32
	list  bool
	fresh bool // allocated a fresh value (for choosing duplicates)
	val   history.Value
}

type generator struct {
	cfg  Config
	rng  *rand.Rand // the base history's only randomness
	irng *rand.Rand // injections' randomness, so injecting leaves the base history unchanged (G5)
	zipf *rand.Zipf

	isList  []bool
	regKeys []history.Key
	regs    []regState
	lists   []listState // indexed by slot; zero for register slots

	meanDur, meanThink int64

	sessions heapOf[*session]
	out      heapOf[*pending]
	seq      uint64
	emit     func(*history.Txn, meta) error

	overlay  []effect
	opSlab   []history.Op // carved into transactions' Ops to save allocations
	free     []*pending   // emitted pending records, reused
	ints     [4096]history.Value
	injected []Injected
	nInj     int
	nExec    int
}

func run(cfg Config, emit func(*history.Txn, meta) error) ([]Injected, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &generator{
		cfg:  cfg,
		rng:  rand.New(rand.NewPCG(cfg.Seed, 0x5eed_ba5e_0f_c11e47)),
		irng: rand.New(rand.NewPCG(cfg.Seed, 0x1a7e_c7ed_a40_a11e)),
		emit: emit,
	}
	g.sessions.less = func(a, b *session) bool {
		if a.commit != b.commit {
			return a.commit < b.commit
		}
		return a.idx < b.idx
	}
	g.out.less = func(a, b *pending) bool {
		if a.txn.End != b.txn.End {
			return a.txn.End < b.txn.End
		}
		return a.seq < b.seq
	}
	g.initKeys()
	g.initTiming()
	return g.loop()
}

func (g *generator) initKeys() {
	k := g.cfg.Keys
	g.isList = make([]bool, k)
	g.regKeys = make([]history.Key, k)
	g.regs = make([]regState, k)
	g.lists = make([]listState, k)
	nList := int(math.Round(g.cfg.ListRatio * float64(k)))
	for i := 0; i < k; i++ {
		// Exactly nList list slots, spread evenly so that a skewed key
		// distribution hits lists and registers alike.
		g.isList[i] = (i+1)*nList/k > i*nList/k
		if g.isList[i] {
			g.lists[i] = listState{key: history.StringValue("l" + strconv.Itoa(i)), next: 1}
		} else {
			g.regKeys[i] = history.StringValue("x" + strconv.Itoa(i))
			g.regs[i] = regState{cur: history.Null, next: 1}
		}
	}
	if g.cfg.KeyDist == Zipf && k > 1 {
		g.zipf = rand.NewZipf(g.rng, g.cfg.ZipfS, 1, uint64(k-1))
	}
}

// initTiming solves the overlap model for the think time. A transaction of
// duration d overlaps, in each other stationary session, (d + E[d'])/cycle
// transactions on average, cycle = E[d] + E[think]; so the mean overlap is
// (S-1)*2*E[d]/(E[d]+E[think]) (invariant G4).
func (g *generator) initTiming() {
	g.meanDur = g.cfg.Latency
	s := float64(g.cfg.Sessions - 1)
	if s == 0 {
		g.meanThink = g.meanDur
	} else {
		th := float64(g.meanDur) * (2*s/g.cfg.Concurrency - 1)
		g.meanThink = int64(math.Round(math.Max(0, th)))
	}
	cycle := g.meanDur + g.meanThink
	for i := 0; i < g.cfg.Sessions; i++ {
		s := &session{idx: i, name: "c" + strconv.Itoa(i)}
		// Stagger the first starts over one cycle so the sessions are
		// stationary from the beginning.
		g.plan(s, g.cfg.StartTime+g.rng.Int64N(cycle+1))
		g.sessions.push(s)
	}
}

func (g *generator) duration() int64 {
	// A floor plus an exponential tail: latencies are long-tailed.
	d := int64(float64(g.meanDur) * (0.25 + 0.75*g.rng.ExpFloat64()))
	return max(d, 2)
}

func (g *generator) think() int64 {
	if g.meanThink == 0 {
		return 0
	}
	return g.rng.Int64N(2*g.meanThink + 1)
}

// plan fixes a session's next transaction: its commit point lies strictly
// inside (start, end), which makes commit order extend real-time and
// session order (invariant G1).
func (g *generator) plan(s *session, start int64) {
	d := g.duration()
	s.start = start
	s.end = start + d
	s.commit = start + 1 + g.rng.Int64N(d-1)
}

func (g *generator) loop() ([]Injected, error) {
	positions := g.injectPositions()
	allowed, validAt := g.validAtPlan()
	now := g.cfg.StartTime
	for produced := 0; produced < g.cfg.Txns; produced++ {
		s := g.sessions.peek()
		now = s.commit
		// Every transaction still to come commits at or after now and
		// ends after its commit, so what ended by now goes out in order.
		if err := g.flush(now); err != nil {
			return nil, err
		}
		if err := g.maybeInject(produced, positions, now); err != nil {
			return nil, err
		}
		for allowed.next < len(allowed.pos) && allowed.pos[allowed.next] <= produced {
			g.injectAllowed(allowed.types[allowed.next], validAt, now)
			allowed.next++
		}
		g.execute(s)
		s.n++
		g.plan(s, s.end+g.think())
		g.sessions.fix0()
	}
	for _, typ := range positions.rest() {
		g.inject(typ, now)
	}
	for _, typ := range allowed.rest() {
		g.injectAllowed(typ, validAt, now)
	}
	return g.injected, g.flush(math.MaxInt64)
}

func (g *generator) flush(upto int64) error {
	for g.out.len() > 0 && g.out.peek().txn.End <= upto {
		p := g.out.pop()
		if err := g.emit(&p.txn, p.m); err != nil {
			return err
		}
		// emit has copied what it keeps (Ops are never reused).
		*p = pending{}
		g.free = append(g.free, p)
	}
	return nil
}

// newPending returns a cleared record to fill in place; queue files it.
func (g *generator) newPending() *pending {
	if n := len(g.free); n > 0 {
		p := g.free[n-1]
		g.free = g.free[:n-1]
		return p
	}
	return new(pending)
}

func (g *generator) queue(p *pending) {
	g.seq++
	p.seq = g.seq
	g.out.push(p)
}

func (g *generator) pickSlot() int {
	if g.zipf != nil {
		return int(g.zipf.Uint64())
	}
	return g.rng.IntN(g.cfg.Keys)
}

// execute runs s's planned transaction atomically at its commit point.
func (g *generator) execute(s *session) {
	cfg := &g.cfg
	p := g.newPending()
	t := &p.txn
	t.ID = s.name + "-" + strconv.Itoa(s.n)
	t.Session, t.HasSession = s.name, true
	t.Start, t.End, t.HasTime = s.start, s.end, true
	u := g.rng.Float64()
	visible := true
	switch {
	case u < cfg.AbortRatio:
		t.Status, visible = history.Aborted, false
	case u < cfg.AbortRatio+cfg.UnknownRatio:
		t.Status = history.Unknown
		visible = g.rng.IntN(2) == 0
	}
	ops := g.allocOps(2 * cfg.OpsPerTxn)
	g.overlay = g.overlay[:0]
	readOnly := false
	if cfg.Workload == BlindW {
		readOnly = g.rng.Float64() < cfg.ReadRatio
	}
	for i := 0; i < cfg.OpsPerTxn; i++ {
		slot := g.pickSlot()
		var read bool
		if cfg.Workload == BlindW {
			read = readOnly
		} else {
			read = g.rng.Float64() < cfg.ReadRatio
		}
		if g.isList[slot] {
			l := g.listFor(slot)
			if read {
				ops = append(ops, history.Op{Kind: history.Read, Key: l.key, IsList: true, List: g.readList(slot)})
			} else {
				v := g.intValue(l.next)
				l.next++
				g.overlay = append(g.overlay, effect{slot: int32(slot), list: true, fresh: true, val: v})
				ops = append(ops, history.Op{Kind: history.Append, Key: l.key, Value: v})
			}
			continue
		}
		key := g.regKeys[slot]
		if read {
			ops = append(ops, history.Op{Kind: history.Read, Key: key, Value: g.readReg(slot)})
			continue
		}
		if cfg.Workload == Mixed && g.rng.Float64() >= cfg.BlindWriteRatio {
			ops = append(ops, history.Op{Kind: history.Read, Key: key, Value: g.readReg(slot)})
		}
		v, fresh := g.writeValue(slot)
		g.overlay = append(g.overlay, effect{slot: int32(slot), fresh: fresh, val: v})
		ops = append(ops, history.Op{Kind: history.Write, Key: key, Value: v})
	}
	// Each logical op adds at most two micro-ops, so ops never outgrew
	// its slab capacity.
	t.Ops = g.commitOps(ops)
	if visible {
		g.apply()
	}
	g.nExec++
	p.m = meta{commit: s.commit, visible: visible, inj: -1, exec: g.nExec}
	g.queue(p)
}

// listFor returns slot's list, retiring its key for a fresh one once it
// holds MaxListLen elements. Within one transaction the store does not
// change, so every op of a transaction on a slot sees the same key.
func (g *generator) listFor(slot int) *listState {
	l := &g.lists[slot]
	if len(l.elems) >= g.cfg.MaxListLen {
		l.gen++
		l.key = history.StringValue("l" + strconv.Itoa(slot) + "." + strconv.Itoa(l.gen))
		l.elems = nil
	}
	return l
}

// readReg is the register's value as this transaction sees it: its own
// last write, else the store's.
func (g *generator) readReg(slot int) history.Value {
	for i := len(g.overlay) - 1; i >= 0; i-- {
		if e := g.overlay[i]; !e.list && int(e.slot) == slot {
			return e.val
		}
	}
	return g.regs[slot].cur
}

// readList is the list as this transaction sees it. The store's slice is
// only ever appended to, so a capacity-clipped alias of it never changes
// under the reader.
func (g *generator) readList(slot int) []history.Value {
	l := &g.lists[slot]
	out := l.elems[:len(l.elems):len(l.elems)]
	for _, e := range g.overlay {
		if e.list && int(e.slot) == slot {
			out = append(out, e.val)
		}
	}
	return out
}

// writeValue picks a fresh value, or with DupValueRatio one that another
// transaction already wrote to the key. Fresh values of the running
// transaction are the newest of the key, so every value below its first
// fresh one belongs to someone else.
func (g *generator) writeValue(slot int) (history.Value, bool) {
	r := &g.regs[slot]
	if g.cfg.DupValueRatio > 0 && g.rng.Float64() < g.cfg.DupValueRatio {
		limit := r.next - 1
		for _, e := range g.overlay {
			if !e.list && e.fresh && int(e.slot) == slot {
				v, _ := strconv.ParseInt(string(e.val), 10, 64)
				limit = v - 1
				break
			}
		}
		if limit >= 1 {
			return g.intValue(1 + g.rng.Int64N(limit)), false
		}
	}
	v := g.intValue(r.next)
	r.next++
	return v, true
}

// allocOps returns an empty slice of capacity n carved from a slab, so
// that transactions share allocations; commitOps clips it to its length,
// so a consumer appending to a transaction's Ops reallocates instead of
// overwriting the next transaction's.
func (g *generator) allocOps(n int) []history.Op {
	if len(g.opSlab) < n {
		g.opSlab = make([]history.Op, max(n, 8192))
	}
	return g.opSlab[:0:n]
}

func (g *generator) commitOps(ops []history.Op) []history.Op {
	g.opSlab = g.opSlab[len(ops):]
	return ops[:len(ops):len(ops)]
}

// intValue caches the text of the small integers most writes use.
func (g *generator) intValue(i int64) history.Value {
	if i >= 0 && i < int64(len(g.ints)) {
		if g.ints[i] == "" {
			g.ints[i] = history.IntValue(i)
		}
		return g.ints[i]
	}
	return history.IntValue(i)
}

func (g *generator) apply() {
	for _, e := range g.overlay {
		if e.list {
			l := &g.lists[e.slot]
			l.elems = append(l.elems, e.val)
		} else {
			g.regs[e.slot].cur = e.val
		}
	}
}

// heapOf is a binary min-heap; container/heap's interface calls cost more
// than the simulation itself.
type heapOf[T any] struct {
	a    []T
	less func(a, b T) bool
}

func (h *heapOf[T]) len() int { return len(h.a) }
func (h *heapOf[T]) peek() T  { return h.a[0] }

func (h *heapOf[T]) push(x T) {
	h.a = append(h.a, x)
	i := len(h.a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.a[i], h.a[p]) {
			break
		}
		h.a[i], h.a[p] = h.a[p], h.a[i]
		i = p
	}
}

func (h *heapOf[T]) pop() T {
	x := h.a[0]
	n := len(h.a) - 1
	h.a[0] = h.a[n]
	var zero T
	h.a[n] = zero
	h.a = h.a[:n]
	h.down(0)
	return x
}

// fix0 restores the heap after the root's key grew.
func (h *heapOf[T]) fix0() { h.down(0) }

func (h *heapOf[T]) down(i int) {
	n := len(h.a)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(h.a[r], h.a[l]) {
			m = r
		}
		if !h.less(h.a[m], h.a[i]) {
			return
		}
		h.a[i], h.a[m] = h.a[m], h.a[i]
		i = m
	}
}
