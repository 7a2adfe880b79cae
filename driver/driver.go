package driver

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time" // durations and formatting only: the driver reads no clock

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/keycache"
	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/window"
)

// Config is what the schedule depends on. It is fixed for the life of a
// state directory: a checkpoint's State is only meaningful under the
// Config that produced it.
type Config struct {
	// Tick is the step period in event time (nanoseconds, > 0).
	Tick int64
	// Skew is Δ, the clock skew bound: a closing is given at the first
	// tick above effEnd+2Δ (closeKey).
	Skew int64
	// Lateness is the key offset of a dead-lettered writer: the
	// partition's greatest accepted start minus the lateness.
	Lateness int64
	// MaxAhead bounds how far beyond the wall clock (the now Accept is
	// given) an event's start may lie, where both look like wall-clock
	// nanoseconds (window.WallClock); 0 = no bound.
	MaxAhead int64

	_ struct{} // room to grow without breaking keyed literals
}

// State is what the driver holds between ticks (D1), and what a
// checkpoint must hold besides the window's and the engine's snapshots
// (D2). Its JSON field names are those of the loop snapshot the run
// command wrote before the driver existed, so old checkpoints restore.
type State struct {
	// Rel: released by the window, not yet given to the engine (release
	// order). Close: closings not yet given (closing order). Unchecked:
	// dead-lettered writers not yet given, with their key (the partition
	// watermark at arrival), sorted by key, partition, offset.
	Rel       []history.Txn
	Close     []window.Closing
	Unchecked []Unchecked
	// PartMax is each partition's greatest accepted start (MinInt64
	// before any), for the keys of dead-lettered writers.
	PartMax []int64
	// Tick is the last tick the engine stepped at (MinInt64 before any,
	// MaxInt64 after the end of input).
	Tick int64
	// Kinds is what each key has been used as by a decoded event: true
	// a list, false a register (history.Op.KeyKind). An event using a key
	// the other way is an input error, as in check (history.Validate).
	// One entry per key ever written or used as a list: the engine keeps
	// as much (a live version per written key).
	Kinds map[history.Key]bool `json:",omitempty"`
	// Ended says EndInput was called, and EndTick is the last tick the
	// end of input steps at before Final: the tick above the greatest
	// start accepted (D4). Absent in checkpoints taken before the end.
	Ended   bool  `json:",omitempty"`
	EndTick int64 `json:",omitempty"`
}

// Unchecked is a dead-lettered writer waiting for its tick: its writes
// are given to the engine (online.Online.AddUnchecked) so that reads
// they could explain are not called anomalies.
type Unchecked struct {
	Key    int64
	Part   int
	Offset int64
	Txn    history.Txn
}

// NewState is the state of a driver that has seen nothing, for parts
// partitions.
func NewState(parts int) State {
	st := State{Tick: math.MinInt64, PartMax: make([]int64, parts)}
	for i := range st.PartMax {
		st.PartMax[i] = math.MinInt64
	}
	return st
}

// Engine is what the driver steps: the calls of the schedule (D1) and
// nothing else. *online.Online (the serializable engine) and
// *weakonline.Engine (read-committed, read-atomic, causal) satisfy it; the
// driver makes the same calls in the same order whichever it is given.
type Engine interface {
	AddUnchecked(t history.Txn)
	Release(txns ...history.Txn)
	Close(ids ...string)
	CloseAll()
	Step(ctx context.Context) ([]*online.Alert, error)
}

var _ Engine = (*online.Online)(nil)

// Catcher is an engine that can have work of its own between ticks (D5):
// run --stamps' engine, whose black-box engine catches up with the calls
// made before a fallback a bounded part at a time.
type Catcher interface {
	// Pending says Catch has work left.
	Pending() bool
	// Catch does a bounded part of it and returns the alerts it raised.
	// It makes no engine call of the driver's schedule.
	Catch(ctx context.Context) ([]*online.Alert, error)
}

// pending says the engine has catch-up work (D5).
func (d *Driver) pending() bool {
	c, ok := d.eng.(Catcher)
	return ok && c.Pending()
}

// Driver steps an online engine in event time. It owns the window, the
// engine and the state between ticks; it does no IO and reads no clock.
// It is not safe for concurrent use.
type Driver struct {
	cfg Config
	win *window.Window
	eng Engine
	st  State

	// kindScratch is noteKinds' list of keys, reused from event to event.
	kindScratch []history.Key
	// kinds is a cache in front of st.Kinds (kinds.go).
	kinds keycache.Cache[bool]
	// rel and closing recycle st.Rel's and st.Close's arrays (recycle).
	rel     recycled[history.Txn]
	closing recycled[window.Closing]
}

// recycled keeps the array of one of State's queues (Rel, Close) from
// step to step. Ready hands the queue's head to the engine and keeps its
// tail by reslicing, so the array's front was lost to every later append:
// each tick's releases went into a new array (a fifth of the bytes `run
// --stamps` allocated, and arrays of pointers the collector scanned).
// The tail is moved to the front of a spare array at the driver's next
// call instead, when Ready's views (Ready.Released, Ready.Closed) are no
// longer valid, and the old array, cleared so that it keeps no body
// alive, becomes the spare.
type recycled[T any] struct {
	base  []T  // the queue's array from its start, as it was at the first Ready since the last move
	spare []T  // an empty array to move the tail into
	given bool // a Ready resliced the queue since the last move
}

// take notes that a Ready is about to reslice q from the front.
func (r *recycled[T]) take(q []T) {
	if !r.given {
		r.base, r.given = q, true
	}
}

// move returns q (the tail left by the Readys since take) at the front of
// the spare array, the old array cleared as the next spare. The tail is
// what was released at or above the last tick stepped, about a tick's
// worth, so a move costs O(1) per transaction amortized.
func (r *recycled[T]) move(q []T) []T {
	if !r.given {
		return q
	}
	r.given = false
	out := append(r.spare[:0], q...)
	old := r.base[:cap(r.base)]
	clear(old)
	r.base, r.spare = nil, old[:0]
	return out
}

// New returns a driver over win and eng (new, or restored from one
// checkpoint) and st (NewState, or the same checkpoint's State). The
// driver owns all three from then on.
func New(cfg Config, win *window.Window, eng Engine, st State) *Driver {
	if cfg.Tick <= 0 {
		panic("driver: tick must be positive")
	}
	d := &Driver{cfg: cfg, win: win, eng: eng, st: st}
	// A restored window may release at once what its checkpoint held
	// back; taking it now is what the run's first advance did.
	d.pull()
	return d
}

// State is the driver's state between ticks, for a checkpoint (D2). The
// caller reads it (to marshal it) and must not change it.
func (d *Driver) State() *State { return &d.st }

// Window is the driver's window, for its snapshot and statistics.
func (d *Driver) Window() *window.Window { return d.win }

// Engine is the driver's engine, for its snapshot, statistics and the
// bodies of alerts' cores.
func (d *Driver) Engine() Engine { return d.eng }

// Rejection says why Accept set an event aside. Exactly one field is set.
type Rejection struct {
	// Clash: the event uses a key as a list and as a register (against an
	// earlier event or within itself), the input error check gives.
	Clash error
	// Window: the window set it aside (late, duplicate, no timestamps,
	// ...). If its transaction writes, its writes are queued as an
	// unchecked writer (SetAside).
	Window *window.DeadLetter
}

// Accept gives the driver one decoded transaction read at offset of
// partition part, now being the caller's wall clock in nanoseconds (0:
// none; only Config.MaxAhead reads it). It returns nil when the window
// took it, or why it was set aside, in which case its writes and times
// stay known as an unchecked writer, as every dead letter's do
// (docs/SEMANTICS.md §5 "Dead letters"). It does not step: HasReady says
// whether a tick is due.
func (d *Driver) Accept(part int, offset int64, t history.Txn, now int64) *Rejection {
	// Every decoded event's keys count, also one the window then sets
	// aside (late, a duplicate): check's rule reads every transaction of
	// the history (history.Validate), whatever else is wrong with it.
	if clash := d.noteKinds(&t); clash != nil {
		d.SetAside(part, offset, &t)
		return &Rejection{Clash: clash}
	}
	dl := d.aheadOfClock(part, &t, now)
	if dl == nil {
		dl = d.win.Add(part, t)
	}
	if dl != nil {
		u := dl.Txn
		if !window.TimeTrusted(dl.Reason) {
			u.HasTime = false
		}
		d.SetAside(part, offset, &u)
		return &Rejection{Window: dl}
	}
	if t.Start > d.st.PartMax[part] {
		d.st.PartMax[part] = t.Start
	}
	d.pull()
	return nil
}

// aheadOfClock sets aside as future an event whose start lies more than
// MaxAhead beyond the wall clock now, where both look like wall-clock
// nanoseconds. The window's own bound (window.Config.MaxAhead) measures
// against the partition's recent events in event time, so that replays
// decide alike; it has no reference before the first accepted event,
// which one clock a day ahead could then be. The wall clock covers that
// case. It can only set aside, never accept, and its reading goes into
// the dead letter; a replay from a checkpoint never re-decides an event
// the checkpoint covers, but one re-read after a crash is decided again
// with a later clock (docs/SEMANTICS.md §5 "Future events").
func (d *Driver) aheadOfClock(part int, t *history.Txn, now int64) *window.DeadLetter {
	ahead := d.cfg.MaxAhead
	if ahead <= 0 || now == 0 || !t.HasTime || !window.WallClock(t.Start) {
		return nil
	}
	if !window.WallClock(now) || t.Start <= satAdd(now, ahead) {
		return nil
	}
	return d.win.SetAside(part, *t, window.Future, fmt.Sprintf("start %d is %s ahead of the wall clock %s (max-ahead %s)",
		t.Start, time.Duration(t.Start-now), time.Unix(0, now).UTC().Format(time.RFC3339Nano), time.Duration(ahead)))
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// SetAside queues what was recovered of a dead-lettered event (nil: nothing)
// as an unchecked writer if it writes: its key is the partition's
// greatest accepted start minus the lateness at its arrival, so it is
// given to the engine at the same tick whatever the interleaving of the
// partitions (D1).
func (d *Driver) SetAside(part int, offset int64, t *history.Txn) {
	if t == nil || !t.Writes() {
		return
	}
	key := d.st.PartMax[part]
	if key != math.MinInt64 {
		key = satSub(key, d.cfg.Lateness)
	}
	u := Unchecked{Key: key, Part: part, Offset: offset, Txn: *t}
	i := sort.Search(len(d.st.Unchecked), func(i int) bool { return uncheckedBefore(&u, &d.st.Unchecked[i]) })
	d.st.Unchecked = append(d.st.Unchecked, Unchecked{})
	copy(d.st.Unchecked[i+1:], d.st.Unchecked[i:])
	d.st.Unchecked[i] = u
}

// pull takes what the window releases and closes into the state.
func (d *Driver) pull() {
	d.st.Rel = d.rel.move(d.st.Rel)
	d.st.Close = d.closing.move(d.st.Close)
	d.st.Rel = d.win.Release(d.st.Rel)
	d.st.Close = d.win.PopClosed(d.st.Close)
}

// Watermark is the window's watermark W.
func (d *Driver) Watermark() int64 { return d.win.Watermark() }

// next is the next tick due (≤ W), or false.
func (d *Driver) next() (int64, bool) {
	t := int64(math.MaxInt64)
	if len(d.st.Rel) > 0 {
		t = min(t, d.TickAbove(d.st.Rel[0].Start))
	}
	if len(d.st.Close) > 0 {
		t = min(t, d.TickAbove(d.closeKey(&d.st.Close[0])))
	}
	if len(d.st.Unchecked) > 0 {
		t = min(t, d.TickAbove(d.st.Unchecked[0].Key))
	}
	if t == math.MaxInt64 || t > d.win.Watermark() {
		return 0, false
	}
	if d.st.Ended && t > d.st.EndTick {
		// Past the last start nothing arrives any more: what is left
		// is closings, given all at once by Final (D4).
		return 0, false
	}
	return t, true
}

// HasReady says whether a tick is due (the watermark has crossed the
// tick of something not yet given to the engine) or the engine has
// catch-up work (D5). The caller may stop
// between Readys (an interrupt); what is not stepped stays in State.
func (d *Driver) HasReady() bool {
	_, ok := d.next()
	return ok || d.pending()
}

// Ready is the outcome of one step.
type Ready struct {
	// Tick is the tick stepped at (MaxInt64: the end of input).
	Tick int64
	// Unchecked, Released and Closed are what the step gave the engine,
	// in the order given (D1). They are views of the driver's buffers,
	// valid until the next call to the driver.
	Unchecked []Unchecked
	Released  []history.Txn
	Closed    []window.Closing
	// Alerts are the step's alerts, to deliver (the caller drops those it
	// delivered before a crash, by id).
	Alerts []*online.Alert
}

// Ready steps the engine at the next tick due (HasReady must be true):
// it gives the engine the unchecked writers, the released transactions
// and the closings whose key is below the tick, then steps. A step is
// never cut short: ctx's cancellation is ignored (stepping off schedule
// would change the alerts); ctx carries values only.
func (d *Driver) Ready(ctx context.Context) (Ready, error) {
	t, ok := d.next()
	if !ok {
		if d.pending() {
			// No tick is due: a part of the engine's catch-up (D5).
			found, err := d.eng.(Catcher).Catch(context.WithoutCancel(ctx))
			return Ready{Tick: d.st.Tick, Alerts: found}, err
		}
		panic("driver: Ready without HasReady")
	}
	var rd Ready
	n := 0
	for n < len(d.st.Unchecked) && d.st.Unchecked[n].Key < t {
		d.eng.AddUnchecked(d.st.Unchecked[n].Txn)
		n++
	}
	rd.Unchecked, d.st.Unchecked = d.st.Unchecked[:n], d.st.Unchecked[n:]
	n = 0
	for n < len(d.st.Rel) && d.st.Rel[n].Start < t {
		n++
	}
	d.eng.Release(d.st.Rel[:n]...)
	d.rel.take(d.st.Rel)
	rd.Released, d.st.Rel = d.st.Rel[:n], d.st.Rel[n:]
	n = 0
	for n < len(d.st.Close) && d.closeKey(&d.st.Close[n]) < t {
		d.eng.Close(d.st.Close[n].ID)
		n++
	}
	d.closing.take(d.st.Close)
	rd.Closed, d.st.Close = d.st.Close[:n], d.st.Close[n:]
	d.st.Tick = t
	return d.step(ctx, rd, t)
}

func (d *Driver) step(ctx context.Context, rd Ready, t int64) (Ready, error) {
	found, err := d.eng.Step(context.WithoutCancel(ctx))
	rd.Tick, rd.Alerts = t, found
	return rd, err
}

// RaiseIdle moves W to the tick above the greatest start accepted
// (window.RaiseTo), for a source the caller found quiet for its
// idle-release time on its own clock. It returns the new W and whether
// it moved: not when nothing was accepted, the input ended, or W is at
// that tick already. The caller then drains HasReady/Ready.
func (d *Driver) RaiseIdle() (int64, bool) {
	ws := d.win.Stats()
	if ws.MaxStart == math.MinInt64 || ws.Watermark == math.MaxInt64 {
		return 0, false
	}
	t := d.TickAbove(ws.MaxStart)
	if t == math.MaxInt64 || ws.Watermark >= t {
		return 0, false
	}
	d.win.RaiseTo(t)
	d.pull()
	return t, true
}

// EndInput closes the window (W = +∞): everything buffered is released
// and every transaction closes. The caller drains HasReady/Ready, then
// calls Final. The drain steps only the ticks up to the one above the
// greatest start accepted, the ticks RaiseIdle would step (D4): the
// closings beyond it, an unknown outcome's up to its in-doubt horizon
// later, are Final's, in one step.
func (d *Driver) EndInput() {
	if !d.st.Ended {
		d.st.Ended = true
		d.st.EndTick = math.MinInt64
		if ms := d.win.Stats().MaxStart; ms != math.MinInt64 {
			d.st.EndTick = d.TickAbove(ms)
		}
	}
	d.win.Close()
	d.pull()
}

// Final is the last step of the end of input: what is left is given to
// the engine, every transaction closes, and the engine steps once more.
// Its cost is the window's, whatever the in-doubt horizon: stepping each
// tick of the closings left (one per 100 ms of the horizon's span past
// the last start) re-judged the whole window at each (D4).
func (d *Driver) Final(ctx context.Context) (Ready, error) {
	for _, u := range d.st.Unchecked {
		d.eng.AddUnchecked(u.Txn)
	}
	d.eng.Release(d.st.Rel...)
	for i := range d.st.Close {
		d.eng.Close(d.st.Close[i].ID)
	}
	rd := Ready{Unchecked: d.st.Unchecked, Released: d.st.Rel, Closed: d.st.Close}
	d.st.Unchecked, d.st.Rel, d.st.Close = nil, nil, nil
	d.eng.CloseAll()
	d.st.Tick = math.MaxInt64
	rd, err := d.step(ctx, rd, math.MaxInt64)
	if err != nil {
		return rd, err
	}
	// The last step: the catch-up left is done here (D5).
	return d.catchAll(ctx, rd)
}

// catchAll runs the engine's catch-up to its end (D5), adding its alerts
// to rd's.
func (d *Driver) catchAll(ctx context.Context, rd Ready) (Ready, error) {
	for d.pending() {
		found, err := d.eng.(Catcher).Catch(context.WithoutCancel(ctx))
		rd.Alerts = append(rd.Alerts, found...)
		if err != nil {
			return rd, err
		}
	}
	return rd, nil
}

// Flush is an interrupt without a checkpoint: what the window released
// and closed is given to the engine off schedule and stepped, so the
// alerts the batch in hand proves are not lost. Unchecked writers stay
// queued. The driver must not be used for a checkpoint afterwards.
func (d *Driver) Flush(ctx context.Context) (Ready, error) {
	d.eng.Release(d.st.Rel...)
	for i := range d.st.Close {
		d.eng.Close(d.st.Close[i].ID)
	}
	rd := Ready{Released: d.st.Rel, Closed: d.st.Close}
	d.st.Rel, d.st.Close = nil, nil
	rd, err := d.step(ctx, rd, d.st.Tick)
	if err != nil {
		return rd, err
	}
	// No checkpoint follows, so nothing would resume a catch-up left
	// half done: its alerts are proven now or never (D5).
	return d.catchAll(ctx, rd)
}

func uncheckedBefore(a, b *Unchecked) bool {
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	if a.Part != b.Part {
		return a.Part < b.Part
	}
	return a.Offset < b.Offset
}

func satSub(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// TickAbove is the smallest tick strictly above x (math.MaxInt64 when
// there is none: x is +∞ or too close to it).
func (d *Driver) TickAbove(x int64) int64 {
	t := d.cfg.Tick
	if x >= math.MaxInt64-t {
		return math.MaxInt64
	}
	if x < math.MinInt64+t {
		// Flooring would overflow; the lowest tick is the multiple of t
		// nearest above MinInt64 (or the next one).
		low := math.MinInt64 / t * t
		if low > x {
			return low
		}
		return low + t
	}
	q := x / t
	if x%t != 0 && x < 0 {
		q--
	}
	return q*t + t
}

// closeKey is the W a closing needs: effEnd+2Δ < W.
func (d *Driver) closeKey(c *window.Closing) int64 {
	if c.EffEnd > math.MaxInt64-2*d.cfg.Skew {
		return math.MaxInt64
	}
	return c.EffEnd + 2*d.cfg.Skew
}
