package window

import (
	"errors"
	"fmt"
	"math"

	"github.com/streamcheck/streamcheck/history"
)

// Config fixes a window. Lateness, Skew, InDoubt and IdleTimeout are in the
// timestamps' unit (nanoseconds for native input).
type Config struct {
	// Partitions is the number of input partitions P (a file or stdin is
	// one; a Kafka topic has one per Kafka partition), numbered 0..P-1.
	Partitions int
	// Lateness L: partition p promises that every transaction it delivers
	// after one with start s starts at or after s-L. It must cover the
	// longest transaction plus the producer's delay plus 2*Skew (events are
	// emitted at commit, and starts come from clocks up to Skew apart);
	// transactions that break it are dead-lettered as Late.
	Lateness int64
	// Skew is the clock-skew bound Δ, as in history.Options.Skew. It only
	// moves time-closing: T closes when effEnd(T)+Δ < W-Δ.
	Skew int64
	// InDoubt is the in-doubt horizon D for unknown transactions, as in
	// history.Options.InDoubt: history.NoInDoubt (-1) makes their end +∞,
	// so they close only at Close. The zero value is a horizon of 0, not
	// "none".
	InDoubt int64
	// IdleTimeout: a partition whose latest start lies more than
	// IdleTimeout behind the greatest start seen in any partition stops
	// holding the watermark back (event time, not wall-clock time, so that
	// replays decide the same). 0 turns it off.
	IdleTimeout int64
	// MaxAhead: a transaction whose start lies more than MaxAhead beyond
	// its partition's greatest accepted start (before the partition's
	// first, beyond the greatest accepted start of any partition), where
	// that start looks like wall-clock nanoseconds (WallClock), is
	// dead-lettered as Future instead of moving the watermark, which one
	// clock a day ahead would otherwise do, making every later event
	// late (issue 20 item 4). A run of ReanchorAfter such transactions in
	// a row from one partition, none accepted between them, is a real
	// jump of its clock: the last of the run is accepted. Event time
	// only, so that replays decide the same. 0 turns it off.
	MaxAhead int64

	_ struct{}
}

// ReanchorAfter is the number of consecutive transactions of one
// partition beyond MaxAhead after which the partition's clock is taken
// to have jumped: the last of them is accepted. One clock far ahead
// moves nothing; a producer whose every event is ahead (a partition
// quiet for longer than MaxAhead, whose clock then resumes) loses
// ReanchorAfter-1 events to the dead letters, kept as unchecked writers.
const ReanchorAfter = 16

// ErrConfig is wrapped by New's errors.
var ErrConfig = errors.New("window: bad config")

// Validate reports the first field out of range.
func (c *Config) Validate() error {
	switch {
	case c.Partitions < 1:
		return fmt.Errorf("%w: %d partitions (want at least 1)", ErrConfig, c.Partitions)
	case c.Lateness < 0:
		return fmt.Errorf("%w: negative lateness %d", ErrConfig, c.Lateness)
	case c.Skew < 0:
		return fmt.Errorf("%w: negative skew %d", ErrConfig, c.Skew)
	case c.InDoubt < 0 && c.InDoubt != history.NoInDoubt:
		return fmt.Errorf("%w: in-doubt horizon %d (want >= 0, or history.NoInDoubt)", ErrConfig, c.InDoubt)
	case c.IdleTimeout < 0:
		return fmt.Errorf("%w: negative idle timeout %d", ErrConfig, c.IdleTimeout)
	case c.MaxAhead < 0:
		return fmt.Errorf("%w: negative max-ahead %d", ErrConfig, c.MaxAhead)
	}
	return nil
}

// Reason says why a transaction was dead-lettered.
type Reason uint8

const (
	// Late: its start lies below the global watermark W, or below its own
	// partition's watermark (the partition broke its lateness promise), or
	// it arrived after Close.
	Late Reason = iota
	// DuplicateID: a transaction with its ID and a start within the
	// lateness of this one's was seen before (doc.go W5).
	DuplicateID
	// MissingTime: it has no timestamps; run needs them.
	MissingTime
	// EndBeforeStart: its end lies before its start.
	EndBeforeStart
	// Future: its start lies implausibly far ahead (Config.MaxAhead, or
	// the wall clock, which run checks before Add: SetAside).
	Future

	// NumReasons is the number of reasons, for arrays indexed by Reason.
	NumReasons = 5
	// legacyReasons is how many reasons snapshots before version 4 count.
	legacyReasons = 4
)

// TimeTrusted reports whether a transaction dead-lettered for r keeps
// its times as an unchecked writer: a late or duplicate one's times are
// as good as any accepted one's; missing, inverted or implausibly future
// times are not times (its writes may lie anywhere in time).
func TimeTrusted(r Reason) bool {
	return r == Late || r == DuplicateID
}

func (r Reason) String() string {
	switch r {
	case Late:
		return "late"
	case DuplicateID:
		return "duplicate-id"
	case MissingTime:
		return "missing-time"
	case EndBeforeStart:
		return "end-before-start"
	case Future:
		return "future"
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// DeadLetter is a transaction set aside. It is never released; its writes
// stay known as unchecked writers (docs/SEMANTICS.md §5 "Dead letters"), which
// the engine records from Txn.Ops.
type DeadLetter struct {
	Partition int
	Txn       history.Txn
	Reason    Reason
	Detail    string
}

func (d *DeadLetter) String() string {
	return fmt.Sprintf("%s (partition %d): %s: %s", d.Txn.ID, d.Partition, d.Reason, d.Detail)
}

// Closing names a released transaction that became time-closed.
type Closing struct {
	// Seq is its release sequence number: the number of transactions
	// Release returned before it.
	Seq uint64
	ID  string
	// EffEnd is its effective end (history.Options.EffectiveEnd);
	// math.MaxInt64 is +∞, which only Close closes.
	EffEnd int64
}

// Stats is a snapshot of the window's counters and gauges.
type Stats struct {
	// Watermark is W: math.MinInt64 while it is -∞, math.MaxInt64 after
	// Close.
	Watermark int64
	// MaxStart is the greatest start accepted in any partition
	// (math.MinInt64 before any).
	MaxStart int64
	// Lag is MaxStart-Watermark while both are finite, else 0.
	Lag int64
	// Buffered: accepted, not yet released. Open: released, not yet
	// returned by PopClosed.
	Buffered, Open int
	Accepted       uint64
	Released       uint64
	Closed         uint64
	DeadLetters    [NumReasons]uint64
	// IDs is the number of IDs remembered for the duplicate check: those
	// whose start is within the lateness of W.
	IDs int
	// IdlePartitions is how many partitions do not hold W back now;
	// IdleTransitions counts how often a partition became idle.
	IdlePartitions  int
	IdleTransitions uint64

	_ struct{}
}

// partition is one input partition's watermark state. Only accepted
// transactions change it: a dead-lettered one carries no promise about the
// future (a late start is below W anyway, and a duplicate's start may be a
// replay of anything).
type partition struct {
	maxStart int64
	seen     bool
	// marked: MarkIdle was called and no transaction was accepted since.
	marked bool
	// idle is the idle status as last evaluated, to count transitions.
	// It equals isIdle except in the moment between a change of maxStart
	// and the re-evaluation that follows (see Add).
	idle bool
	// ahead counts the transactions dead-lettered as Future since the
	// partition's last accepted one (Config.MaxAhead, ReanchorAfter).
	ahead uint32
}

// Window is the online window's front: it turns finished transactions
// arriving out of order from P partitions into a stream released in start
// order behind a start-time watermark, and reports when released
// transactions become time-closed. It is a deterministic state machine: no
// IO, no goroutines, not safe for concurrent use.
type Window struct {
	cfg  Config
	opts history.Options // Skew and InDoubt, for EffectiveEnd

	parts []partition
	// W is the watermark; closed means +∞ (end of input).
	w      int64
	closed bool

	anySeen    bool
	firstStart int64 // start of the first accepted transaction
	maxStart   int64 // greatest accepted start

	// tree holds the key and ref of every partition that is not idle;
	// active counts those partitions.
	tree   minTree
	active int

	buf  pendingHeap
	slab []history.Txn
	free []int32
	open openHeap

	ids *idSet

	accepted, released, closedN uint64
	dead                        [NumReasons]uint64
	idleTransitions             uint64
	rebuilds                    uint64 // O(P) passes, for tests of the cost
}

// New returns an empty window: W = -∞ until every partition has accepted a
// transaction or is idle.
func New(cfg Config) (*Window, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Window{
		cfg:      cfg,
		opts:     history.Options{Skew: cfg.Skew, InDoubt: cfg.InDoubt},
		parts:    make([]partition, cfg.Partitions),
		w:        math.MinInt64,
		maxStart: math.MinInt64,
		ids:      newIDSet(cfg.Lateness),
		tree:     newMinTree(cfg.Partitions),
	}
	w.rebuild()
	return w, nil
}

// Config returns the window's configuration.
func (w *Window) Config() Config { return w.cfg }

// satSub is a-b clamped to the int64 range, for b >= 0.
func satSub(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// satAdd is a+b clamped to the int64 range, for b >= 0.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// key is partition p's watermark W_p = maxStart_p - L, -∞ before its first
// transaction.
func (w *Window) key(p *partition) int64 {
	if !p.seen {
		return math.MinInt64
	}
	return satSub(p.maxStart, w.cfg.Lateness)
}

// ref is partition p's latest sign of life in event time: its latest
// start, or the stream's first start if that is later (a partition that
// never delivers anything is measured from the start of the stream).
func (w *Window) ref(p *partition) int64 {
	if p.seen && p.maxStart > w.firstStart {
		return p.maxStart
	}
	return w.firstStart
}

// isIdle: marked, or silent for more than IdleTimeout of event time.
// Before the first accepted transaction there is no event time yet.
func (w *Window) isIdle(p *partition) bool {
	if p.marked {
		return true
	}
	if w.cfg.IdleTimeout == 0 || !w.anySeen {
		return false
	}
	return quiet(w.maxStart, w.ref(p), w.cfg.IdleTimeout)
}

// quiet reports whether latest-ref > timeout, for ref <= latest, without
// overflow (the difference of two int64s fits in a uint64).
func quiet(latest, ref, timeout int64) bool {
	return uint64(latest)-uint64(ref) > uint64(timeout)
}

// rebuild recomputes every idle flag and tree leaf in O(P). It runs at New
// and when the first transaction is accepted (every ref changes then).
func (w *Window) rebuild() {
	w.rebuilds++
	w.active = 0
	for i := range w.parts {
		p := &w.parts[i]
		idle := w.isIdle(p)
		if idle && !p.idle {
			w.idleTransitions++
		}
		p.idle = idle
		if !idle {
			w.active++
		}
		w.update(i)
	}
}

// update writes partition i's leaf from its state and idle flag.
func (w *Window) update(i int) {
	p := &w.parts[i]
	if p.idle {
		w.tree.set(i, idleLeaf)
		return
	}
	w.tree.set(i, treeNode{w.key(p), w.ref(p)})
}

// setIdle flags partition i idle or active, keeping the counts; the
// caller updates its leaf.
func (w *Window) setIdle(i int, idle bool) {
	p := &w.parts[i]
	if p.idle == idle {
		return
	}
	if idle {
		w.idleTransitions++
		w.active--
	} else {
		w.active++
	}
	p.idle = idle
}

// expire flags idle every active partition that has been silent for more
// than IdleTimeout: the quietest first, while the root says there is one.
// Each costs O(log P), once per time the partition goes idle.
func (w *Window) expire() {
	if w.cfg.IdleTimeout == 0 || !w.anySeen {
		return
	}
	for w.active > 0 {
		r := w.tree.root().ref
		if r == math.MaxInt64 || !quiet(w.maxStart, r, w.cfg.IdleTimeout) {
			return
		}
		i := w.tree.minRefLeaf()
		w.setIdle(i, true)
		w.update(i)
	}
}

// raise sets W to the minimum partition watermark over partitions that are
// not idle, never lowering it: a partition that comes back from idleness
// cannot take back what W already promised (its transactions below W are
// late). With every partition idle, the most advanced partition's
// watermark is the best evidence there is.
func (w *Window) raise() {
	if w.closed {
		return
	}
	c := w.tree.root().key
	if w.active == 0 {
		if !w.anySeen {
			return
		}
		c = satSub(w.maxStart, w.cfg.Lateness)
	}
	if c > w.w {
		w.w = c
		w.ids.advance(c)
	}
}

// Add feeds one finished transaction from partition p (0 <= p < P; other
// values panic). It returns nil if the transaction was accepted (buffered
// until Release), or the dead letter it became. The checks, in order:
// MissingTime, EndBeforeStart, Future (Config.MaxAhead), Late (after end of input, or below its own
// partition's promise), DuplicateID, Late (below W). A transaction that
// passes the first three has its ID remembered while its start is within
// the lateness of W: a repeat that is not late by its own partition is
// then always caught, and no other order keeps the reason a repeat gets
// independent of how partitions interleave (idset.go).
func (w *Window) Add(p int, t history.Txn) *DeadLetter {
	if p < 0 || p >= len(w.parts) {
		panic(fmt.Sprintf("window: partition %d out of range [0,%d)", p, len(w.parts)))
	}
	if !t.HasTime {
		return w.deadLetter(p, t, MissingTime, "no timestamps")
	}
	if t.End < t.Start {
		return w.deadLetter(p, t, EndBeforeStart, fmt.Sprintf("end %d < start %d", t.End, t.Start))
	}
	part := &w.parts[p]
	if ref, ok := w.aheadRef(part); ok && w.cfg.MaxAhead > 0 && !w.closed && WallClock(ref) && t.Start > satAdd(ref, w.cfg.MaxAhead) {
		if part.ahead+1 < ReanchorAfter {
			part.ahead++
			return w.deadLetter(p, t, Future, fmt.Sprintf("start %d is %d beyond partition %d's latest start %d (max-ahead %d)",
				t.Start, uint64(t.Start)-uint64(ref), p, ref, w.cfg.MaxAhead))
		}
		// ReanchorAfter in a row: the partition's clock jumped. The
		// checks below still apply.
	}
	switch {
	case w.closed:
		return w.deadLetter(p, t, Late, "after end of input")
	case part.seen && t.Start < w.key(part):
		// Below its own partition's promise. Whether W has passed it too
		// depends on how far the other partitions happen to be, so
		// accepting it when W has not would make the outcome depend on
		// the interleaving of partitions; refusing it keeps it
		// deterministic (invariant W6). Checked before W so that the
		// detail does not depend on the interleaving either.
		return w.deadLetter(p, t, Late, fmt.Sprintf("start %d < partition %d watermark %d (lateness %d exceeded)",
			t.Start, p, w.key(part), w.cfg.Lateness))
	case !w.ids.add(t.ID, t.Start):
		return w.deadLetter(p, t, DuplicateID, fmt.Sprintf("id %q seen before", t.ID))
	case t.Start < w.w:
		return w.deadLetter(p, t, Late, fmt.Sprintf("start %d < watermark %d", t.Start, w.w))
	}
	w.accepted++
	w.bufferTxn(t)

	part.marked, part.ahead = false, 0
	if !part.seen || t.Start > part.maxStart {
		part.maxStart, part.seen = t.Start, true
	}
	if t.Start > w.maxStart {
		w.maxStart = t.Start
	}
	if !w.anySeen {
		// Event time begins: every ref is defined from now on.
		w.anySeen, w.firstStart = true, t.Start
		w.rebuild()
	} else {
		// Its own transaction can bring an idle partition back (its
		// ref grew and its mark is gone), never make it idler.
		w.setIdle(p, w.isIdle(part))
		w.update(p)
	}
	// A larger maxStart may have made the quietest partitions idle.
	w.expire()
	w.raise()
	return nil
}

// WallClockLow and WallClockHigh bound the timestamps taken to be Unix
// nanoseconds (2001-09-09 to 2096-10-02). MaxAhead bounds the error of
// clients' wall clocks, so it applies only where the reference start is
// one: relative or logical timestamps (Jepsen's, tests') may jump by any
// amount, and a jump means nothing there.
const WallClockLow, WallClockHigh = int64(1e18), int64(4e18)

// WallClock reports whether a timestamp looks like Unix nanoseconds.
func WallClock(t int64) bool { return t >= WallClockLow && t <= WallClockHigh }

// aheadRef is the start a new transaction of part is measured against
// for MaxAhead: its partition's greatest accepted start, or before its
// first, the greatest accepted start of any partition; none before the
// first accepted transaction.
func (w *Window) aheadRef(part *partition) (int64, bool) {
	if part.seen {
		return part.maxStart, true
	}
	return w.maxStart, w.anySeen
}

// SetAside dead-letters a transaction of partition p for a reason decided
// outside the window (run's wall-clock bound: Future), so that it is
// counted with the others. It changes nothing else.
func (w *Window) SetAside(p int, t history.Txn, r Reason, detail string) *DeadLetter {
	if p < 0 || p >= len(w.parts) {
		panic(fmt.Sprintf("window: partition %d out of range [0,%d)", p, len(w.parts)))
	}
	return w.deadLetter(p, t, r, detail)
}

func (w *Window) deadLetter(p int, t history.Txn, r Reason, detail string) *DeadLetter {
	w.dead[r]++
	return &DeadLetter{Partition: p, Txn: t, Reason: r, Detail: detail}
}

func (w *Window) bufferTxn(t history.Txn) {
	var slot int32
	if n := len(w.free); n > 0 {
		slot = w.free[n-1]
		w.free = w.free[:n-1]
		w.slab[slot] = t
	} else {
		slot = int32(len(w.slab))
		w.slab = append(w.slab, t)
	}
	w.buf.push(pending{start: t.Start, end: t.End, id: t.ID, slot: slot})
}

// MarkIdle tells the window that partition p holds nothing back now (for
// example a Kafka partition with no producer): W no longer waits for it.
// Its next accepted transaction makes it active again; transactions of it
// that start below W by then are late.
func (w *Window) MarkIdle(p int) {
	if p < 0 || p >= len(w.parts) {
		panic(fmt.Sprintf("window: partition %d out of range [0,%d)", p, len(w.parts)))
	}
	w.parts[p].marked = true
	w.setIdle(p, true)
	w.update(p)
	w.raise()
}

// RaiseTo raises W to t if it is below (W1: it never decreases), as if
// every partition had promised nothing more before t: everything
// buffered that starts below t is released, and a transaction accepted
// later that starts below t is late. The run loop calls it when its
// only input has been quiet for a wall-clock period (idle_release), with
// t just above the greatest start accepted, so that the last
// transactions are checked without waiting for events that may never
// come.
func (w *Window) RaiseTo(t int64) {
	if w.closed || t <= w.w {
		return
	}
	w.w = t
	w.ids.advance(t)
}

// Idle reports whether partition p holds W back now.
func (w *Window) Idle(p int) bool { return w.parts[p].idle }

// Watermark returns W: every transaction accepted from now on starts at or
// after it. math.MinInt64 is -∞ (some partition has delivered nothing and
// is not idle); math.MaxInt64 after Close.
func (w *Window) Watermark() int64 {
	if w.closed {
		return math.MaxInt64
	}
	return w.w
}

// Release appends to dst, in release order (start, then end, then ID),
// every buffered transaction whose start W has passed (start < W), and
// returns it. Everything it returns sorts before everything it will return
// later. Release hands each transaction its sequence number implicitly:
// the first one returned is number Stats().Released before the call.
func (w *Window) Release(dst []history.Txn) []history.Txn {
	for len(w.buf) > 0 && (w.closed || w.buf[0].start < w.w) {
		e := w.buf.pop()
		t := w.slab[e.slot]
		w.slab[e.slot] = history.Txn{} // let the body go with dst
		w.free = append(w.free, e.slot)
		w.open.push(open{effEnd: w.opts.EffectiveEnd(&t), start: t.Start, end: t.End, id: t.ID, seq: w.released})
		w.released++
		dst = append(dst, t)
	}
	return dst
}

// closes is the time-closing condition for an effective end:
// effEnd+Δ < W-Δ; at end of input everything closes, +∞ included.
func (w *Window) closes(effEnd int64) bool {
	if w.closed {
		return true
	}
	if effEnd == math.MaxInt64 {
		return false
	}
	return satAdd(effEnd, 2*w.cfg.Skew) < w.w
}

// TimeClosed reports whether t is time-closed under the current W: every
// transaction still to come follows it in real time
// (history.Options.Precedes). A transaction without timestamps never is,
// until Close.
func (w *Window) TimeClosed(t *history.Txn) bool {
	if w.closed {
		return true
	}
	if !t.HasTime {
		return false
	}
	return w.closes(w.opts.EffectiveEnd(t))
}

// PopClosed appends to dst the released transactions that became
// time-closed since the last call, in closing order (effective end, then
// release order), and returns it. Everything it returns sorts before
// everything it will return later. It returns nothing new while Release
// has something to return: a transaction not yet released may close with
// an earlier effective end, and a closing never precedes its release.
func (w *Window) PopClosed(dst []Closing) []Closing {
	if len(w.buf) > 0 && (w.closed || w.buf[0].start < w.w) {
		return dst
	}
	for len(w.open) > 0 && w.closes(w.open[0].effEnd) {
		o := w.open.pop()
		w.closedN++
		dst = append(dst, Closing{Seq: o.seq, ID: o.id, EffEnd: o.effEnd})
	}
	return dst
}

// NextClosing returns the effective end of the open transaction that will
// close first, and false if none is open; W must exceed it by 2Δ.
func (w *Window) NextClosing() (int64, bool) {
	if len(w.open) == 0 {
		return 0, false
	}
	return w.open[0].effEnd, true
}

// Close ends the input: W becomes +∞, Release returns everything buffered
// and PopClosed then closes every released transaction, unknown ones with
// an infinite end included (docs/SEMANTICS.md §5). Later Adds are dead-lettered
// as Late.
func (w *Window) Close() { w.closed = true }

// Ended reports whether Close was called.
func (w *Window) Ended() bool { return w.closed }

// Stats returns the counters and gauges; O(P).
func (w *Window) Stats() Stats {
	s := Stats{
		Watermark:       w.Watermark(),
		MaxStart:        w.maxStart,
		Buffered:        len(w.buf),
		Open:            len(w.open),
		Accepted:        w.accepted,
		Released:        w.released,
		Closed:          w.closedN,
		DeadLetters:     w.dead,
		IDs:             w.ids.len(),
		IdleTransitions: w.idleTransitions,
	}
	if s.Watermark != math.MinInt64 && s.Watermark != math.MaxInt64 && s.MaxStart != math.MinInt64 {
		s.Lag = s.MaxStart - s.Watermark
	}
	for i := range w.parts {
		if w.parts[i].idle {
			s.IdlePartitions++
		}
	}
	return s
}
