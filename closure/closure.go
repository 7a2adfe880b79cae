package closure

import (
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"unsafe"

	"github.com/bits-and-blooms/bitset"
)

// ID is a transaction's absolute sequence number, assigned by Append and
// never reused, so that a row's bit positions stay meaningful while the band
// slides.
type ID int64

// Options select the model. They can grow; construct them with field names.
type Options struct {
	// RealTime adds the time edges of docs/SEMANTICS.md §1 and enables the band:
	// i precedes j iff adjEnd_i <= adjStart_j and not adjEnd_j <=
	// adjStart_i. Without it there are no time edges and rows span
	// everything.
	RealTime bool

	_ struct{}
}

// Interval is an adjusted client interval: AdjStart = start-Δ, AdjEnd =
// effectiveEnd+Δ, math.MaxInt64 for a transaction that never ends.
type Interval struct{ AdjStart, AdjEnd int64 }

// Pair is an ordered pair of transactions: From reaches To.
type Pair struct{ From, To ID }

// HopKind says what justifies one hop of a path.
type HopKind uint8

const (
	// HopEdge is an edge given to AddEdge or Build.
	HopEdge HopKind = iota
	// HopTime is a real-time edge between two live transactions.
	HopTime
	// HopEvicted stands for a path whose intermediate transactions have
	// all been evicted; Via lists them in path order.
	HopEvicted
)

func (k HopKind) String() string {
	switch k {
	case HopEdge:
		return "edge"
	case HopTime:
		return "time"
	case HopEvicted:
		return "evicted"
	}
	return fmt.Sprintf("HopKind(%d)", uint8(k))
}

// Hop is one step of a witness path.
type Hop struct {
	From, To ID
	Kind     HopKind
	// Via holds the evicted transactions a HopEvicted passes through, in
	// path order; nil for the other kinds.
	Via []ID
}

func (h Hop) String() string {
	if h.Kind == HopEvicted {
		return fmt.Sprintf("t%d -evicted%v-> t%d", h.From, h.Via, h.To)
	}
	return fmt.Sprintf("t%d -%s-> t%d", h.From, h.Kind, h.To)
}

const never = math.MaxInt64

// node flags.
const (
	fLive      = 1 << iota
	fPoint     // zero-length adjusted interval
	fUnbounded // RealTime and AdjEnd == MaxInt64: kept out of the band (I5)
	fDNP       // some descendant-or-self ending at d is not a point
	fANP       // some ancestor-or-self starting at a is not a point
)

// arc is an edge of the live graph: inserted (via == nil) or derived from a
// path through evicted transactions (I7).
type arc struct {
	peer ID
	via  *[]ID // nil for an inserted edge
}

func (a arc) path() []ID {
	if a.via == nil {
		return nil
	}
	return *a.via
}

// proxy is an evicted transaction w reached from (exit) or reaching (entry)
// a live one through the evicted transactions in via (w included), kept for
// witness paths only (I7).
type proxy struct {
	s, e int64
	via  []ID
}

type node struct {
	s, e  int64
	d     int64 // earliest end among descendants-or-self, evicted ones included (I3)
	a     int64 // latest start among ancestors-or-self, evicted ones included (I4)
	lo    ID    // RealTime: every bounded transaction below lo is time-before this one (I2)
	flags uint8
	row   row
	out   []arc
	in    []arc
	x     *extra // rarely used fields, allocated on first use
}

type extra struct {
	uset  []ID            // unbounded transactions reached and not implied by d (I5)
	col   map[ID]struct{} // unbounded only: the rows whose uset holds it
	exit  *proxy          // I7
	entry *proxy          // I7
}

func (n *node) ext() *extra {
	if n.x == nil {
		n.x = &extra{}
	}
	return n.x
}

func (n *node) uset() []ID {
	if n.x == nil {
		return nil
	}
	return n.x.uset
}

func (n *node) exit() *proxy {
	if n.x == nil {
		return nil
	}
	return n.x.exit
}

func (n *node) entry() *proxy {
	if n.x == nil {
		return nil
	}
	return n.x.entry
}

func (n *node) live() bool      { return n.flags&fLive != 0 }
func (n *node) point() bool     { return n.flags&fPoint != 0 }
func (n *node) unbounded() bool { return n.flags&fUnbounded != 0 }

// row is a bitset of absolute IDs starting at off (a multiple of 64).
type row struct {
	off int64
	bs  bitset.BitSet
}

func (r *row) test(id ID) bool {
	i := int64(id) - r.off
	if i < 0 {
		return false
	}
	return r.bs.Test(uint(i))
}

// cover makes the row's words span id (growing to the left by copying,
// which only a first or out-of-band bit causes).
func (r *row) cover(id ID) {
	if r.bs.Len() == 0 {
		r.off = int64(id) &^ 63
	} else if int64(id) < r.off {
		newOff := int64(id) &^ 63
		k := (r.off - newOff) / 64
		old := r.bs.Words()
		w := make([]uint64, int(k)+len(old))
		copy(w[k:], old)
		r.bs.SetBitsetFrom(w)
		r.off = newOff
	}
	i := uint(int64(id) - r.off)
	if i >= r.bs.Len() {
		r.bs.Set(i)
		r.bs.Clear(i)
	}
}

func (r *row) set(id ID) {
	r.cover(id)
	r.bs.Set(uint(int64(id) - r.off))
}

// orFrom ORs src's bits with IDs <= hi into r and calls fresh for each bit
// that was not set before.
func (r *row) orFrom(src *row, hi ID, fresh func(ID)) {
	sw := src.bs.Words()
	if len(sw) == 0 || int64(hi) < src.off {
		return
	}
	// Last word of src to read.
	last := len(sw) - 1
	if lim := (int64(hi) - src.off) / 64; lim < int64(last) {
		last = int(lim)
	}
	// Find the true extent of src's set bits to avoid growing r for
	// trailing zero words.
	for last >= 0 && sw[last] == 0 {
		last--
	}
	first := 0
	for first <= last && sw[first] == 0 {
		first++
	}
	if first > last {
		return
	}
	r.cover(ID(src.off + int64(first)*64))
	r.cover(ID(src.off + int64(last)*64 + 63))
	dw := r.bs.Words()
	shift := (src.off - r.off) / 64
	for k := first; k <= last; k++ {
		w := sw[k]
		base := src.off + int64(k)*64
		if base+63 > int64(hi) {
			w &= (uint64(1) << uint(int64(hi)-base+1)) - 1
		}
		dk := int64(k) + shift
		nw := w &^ dw[dk]
		if nw == 0 {
			continue
		}
		dw[dk] |= nw
		for nw != 0 {
			t := bits.TrailingZeros64(nw)
			nw &= nw - 1
			fresh(ID(base + int64(t)))
		}
	}
}

func (r *row) bytes() int { return cap(r.bs.Words()) * 8 }

// Closure is the compact transitive closure of a DAG of transactions under
// inserted edges and (with RealTime) time edges, over a sliding band. See
// doc.go for the model and the invariants. It is not safe for concurrent use.
type Closure struct {
	rt        bool
	base      ID       // first ID of chunks[0]
	count     int      // IDs base..base+count-1 have slots
	chunks    []*chunk // nil once every transaction in it is evicted
	meta      []chunkMeta
	front     ID // RealTime: first bounded transaction not yet time-before the last start
	lastStart int64
	nlive     int
	nchunks   int  // chunks not freed (Chunks)
	unb       []ID // live unbounded transactions (I5)
	entries   []ID // transactions that may hold an entry proxy (I7)
	scratch   []ID
}

// New returns an empty closure.
func New(opts Options) *Closure {
	return &Closure{rt: opts.RealTime, lastStart: math.MinInt64}
}

// Len is the number of live transactions.
func (c *Closure) Len() int { return c.nlive }

// Chunks is the number of chunks of chunkSize slots held. Transactions
// that stay live while those around them are evicted hold one chunk each,
// so Chunks*chunkSize may far exceed Len; a caller that can rebuild its
// closure from the live transactions alone may do so to compact it.
func (c *Closure) Chunks() int { return c.nchunks }

// Slots live in chunks of 256 so that evicted transactions cost nothing
// once their whole chunk is gone, even while an older one stays pinned.
const (
	chunkShift = 8
	chunkSize  = 1 << chunkShift
)

type chunk struct {
	live  int
	nodes [chunkSize]node
}

// chunkMeta keeps a chunk's first and last start after the chunk is freed,
// so that binary searches over starts (I1) still work.
type chunkMeta struct{ minS, maxS int64 }

func (c *Closure) next() ID { return c.base + ID(c.count) }

// chunkLast is the last ID of id's chunk: a scan that meets a freed chunk
// resumes after it.
func (c *Closure) chunkLast(id ID) ID {
	return c.base + ((id - c.base) | (chunkSize - 1))
}

func (c *Closure) get(id ID) *node {
	if id < c.base || id >= c.next() {
		return nil
	}
	off := int(id - c.base)
	ch := c.chunks[off>>chunkShift]
	if ch == nil {
		return nil
	}
	return &ch.nodes[off&(chunkSize-1)]
}

func (c *Closure) liveNode(id ID) *node {
	n := c.get(id)
	if n == nil || !n.live() {
		return nil
	}
	return n
}

func (c *Closure) mustLive(id ID) *node {
	n := c.liveNode(id)
	if n == nil {
		panic(fmt.Sprintf("closure: t%d is not a live transaction", id))
	}
	return n
}

// LastStart is the adjusted start of the last transaction appended
// (math.MinInt64 before the first): under RealTime the next Append must
// start no earlier.
func (c *Closure) LastStart() int64 { return c.lastStart }

// Append adds a transaction; under RealTime adjStart must be >= the
// previous appended adjStart (release in start order). Returns its ID.
func (c *Closure) Append(adjStart, adjEnd int64) ID {
	if adjEnd < adjStart {
		panic(fmt.Sprintf("closure: interval [%d,%d] ends before it starts", adjStart, adjEnd))
	}
	if c.rt {
		if adjStart < c.lastStart {
			panic(fmt.Sprintf("closure: start %d after start %d (append in start order)", adjStart, c.lastStart))
		}
		if adjStart == never {
			panic("closure: adjStart must be finite")
		}
	}
	c.lastStart = adjStart
	id := c.next()
	if c.count%chunkSize == 0 {
		// The previous chunk can go if it emptied while being filled.
		if k := len(c.chunks) - 1; k >= 0 && c.chunks[k] != nil && c.chunks[k].live == 0 {
			c.chunks[k] = nil
			c.nchunks--
		}
		c.chunks = append(c.chunks, &chunk{})
		c.nchunks++
		c.meta = append(c.meta, chunkMeta{minS: adjStart})
	}
	ch := c.chunks[len(c.chunks)-1]
	n := &ch.nodes[c.count%chunkSize]
	*n = node{s: adjStart, e: adjEnd, d: never, a: adjStart, lo: -1, flags: fLive | fANP}
	ch.live++
	c.meta[len(c.meta)-1].maxS = adjStart
	c.count++
	c.nlive++
	if adjStart == adjEnd {
		n.flags |= fPoint
		n.flags &^= fANP
	}
	if !c.rt {
		return id
	}
	if adjEnd == never {
		n.flags |= fUnbounded
		c.unb = append(c.unb, id)
	} else {
		n.d = adjEnd
		if !n.point() {
			n.flags |= fDNP
		}
	}
	// I2: advance the front past transactions that are time-before every
	// later one (they ended before this start), evicted and unbounded ones.
	for c.front < id {
		f := c.get(c.front)
		if f != nil && f.live() && !f.unbounded() && f.e >= adjStart {
			break
		}
		c.front++
	}
	n.lo = c.front
	// The column of the new transaction needs no bit: x reaches it iff some
	// descendant-or-self of x precedes it in time, which d answers (I3).
	// Its own row needs bits only in the corner of a point transaction
	// preceding an earlier one that starts at the same instant (I4).
	if n.point() {
		lo := n.lo
		if lo < c.base {
			lo = c.base
		}
		for y := lo; y < id; y++ {
			ny := c.get(y)
			if ny == nil {
				y = c.chunkLast(y)
				continue
			}
			if ny.live() && !ny.unbounded() && c.aReaches(n, ny) {
				n.row.set(y)
			}
		}
		for _, y := range c.unb {
			if y != id && c.aReaches(n, c.get(y)) {
				c.addUset(id, n, y)
			}
		}
	}
	return id
}

// timeBefore is the real-time order of docs/SEMANTICS.md §1 on adjusted
// intervals: [s1,e1] finished before [s2,e2] began, two points at one
// instant being concurrent.
func timeBefore(s1, e1, s2, e2 int64) bool {
	return e1 != never && e1 <= s2 && !(e2 <= s1)
}

func (c *Closure) time(x, y *node) bool {
	return c.rt && timeBefore(x.s, x.e, y.s, y.e)
}

// dReaches: some descendant-or-self of x precedes y in time (I3).
func (c *Closure) dReaches(x, y *node) bool {
	if !c.rt || x.d == never {
		return false
	}
	return x.d < y.s || x.d == y.s && (x.flags&fDNP != 0 || !y.point())
}

// aReaches: x precedes some ancestor-or-self of y in time (I4).
func (c *Closure) aReaches(x, y *node) bool {
	if !c.rt || x.e == never {
		return false
	}
	return y.a > x.e || y.a == x.e && (y.flags&fANP != 0 || !x.point())
}

func (c *Closure) inUset(x *node, y ID) bool {
	for _, u := range x.uset() {
		if u == y {
			return true
		}
	}
	return false
}

func (c *Closure) addUset(xid ID, x *node, y ID) {
	x.ext().uset = append(x.ext().uset, y)
	ny := c.get(y).ext()
	if ny.col == nil {
		ny.col = make(map[ID]struct{})
	}
	ny.col[xid] = struct{}{}
}

// reaches answers for two live nodes.
func (c *Closure) reaches(xid ID, x *node, yid ID, y *node) bool {
	if xid == yid {
		return false
	}
	if y.unbounded() {
		return c.dReaches(x, y) || c.inUset(x, yid)
	}
	if c.rt && yid < x.lo {
		return false
	}
	return x.row.test(yid) || c.dReaches(x, y)
}

// Reaches reports whether u reaches v through inserted and time edges,
// including paths through evicted transactions. Both must be live; a
// transaction does not reach itself.
func (c *Closure) Reaches(u, v ID) bool {
	return c.reaches(u, c.mustLive(u), v, c.mustLive(v))
}

// firstStartGE is the smallest ID (>= base) whose start is >= t, or next().
// RealTime only: starts are sorted by ID. Where the answer falls in a freed
// chunk it may be off within that chunk: every ID there is evicted, and
// callers use the result only to bound scans over live transactions.
func (c *Closure) firstStartGE(t int64) ID {
	k := sort.Search(len(c.meta), func(k int) bool { return c.meta[k].maxS >= t })
	if k == len(c.meta) {
		return c.next()
	}
	first := c.base + ID(k<<chunkShift)
	ch := c.chunks[k]
	if ch == nil {
		return first
	}
	filled := min(chunkSize, c.count-k<<chunkShift)
	i := sort.Search(filled, func(i int) bool { return ch.nodes[i].s >= t })
	return first + ID(i)
}

// lastStartLE is the largest ID whose start is <= t, or base-1 (with the
// same latitude in freed chunks).
func (c *Closure) lastStartLE(t int64) ID {
	if t == never {
		return c.next() - 1
	}
	k := sort.Search(len(c.meta), func(k int) bool { return c.meta[k].minS > t }) - 1
	if k < 0 {
		return c.base - 1
	}
	first := c.base + ID(k<<chunkShift)
	filled := min(chunkSize, c.count-k<<chunkShift)
	ch := c.chunks[k]
	if ch == nil {
		return first + ID(filled) - 1
	}
	i := sort.Search(filled, func(i int) bool { return ch.nodes[i].s > t })
	return first + ID(i) - 1
}

// LiveIDs returns the live transactions in ID order.
func (c *Closure) LiveIDs() []ID {
	out := make([]ID, 0, c.nlive)
	for id := c.base; id < c.next(); id++ {
		if n := c.get(id); n != nil && n.live() {
			out = append(out, id)
		}
	}
	return out
}

// String dumps every live transaction with its interval and the live
// transactions it reaches, one per line, for datadriven tests.
func (c *Closure) String() string {
	var b strings.Builder
	ids := c.LiveIDs()
	for _, x := range ids {
		n := c.get(x)
		if n.e == never {
			fmt.Fprintf(&b, "t%d [%d,inf]", x, n.s)
		} else {
			fmt.Fprintf(&b, "t%d [%d,%d]", x, n.s, n.e)
		}
		sep := " ->"
		for _, y := range ids {
			if c.reaches(x, n, y, c.get(y)) {
				fmt.Fprintf(&b, "%s t%d", sep, y)
				sep = ""
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// residentBytes estimates the bytes held by the structure (rows, node
// slots, adjacency), for benchmarks.
func (c *Closure) residentBytes() int {
	total := cap(c.chunks)*8 + cap(c.meta)*int(unsafe.Sizeof(chunkMeta{}))
	for _, ch := range c.chunks {
		if ch != nil {
			total += int(unsafe.Sizeof(chunk{}))
		}
	}
	for id := c.base; id < c.next(); id++ {
		n := c.get(id)
		if n == nil {
			continue
		}
		total += n.row.bytes() + (cap(n.out)+cap(n.in))*int(unsafe.Sizeof(arc{}))
		if n.x != nil {
			total += int(unsafe.Sizeof(extra{})) + cap(n.x.uset)*8 + len(n.x.col)*16
		}
	}
	return total
}
