package sionline

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// The bounded window at strong snapshot isolation (docs/SEMANTICS.md §5
// "Eviction at strong snapshot isolation: a sealed prefix and one ghost").
//
// A step whose screen (the held members, the ghost, and the reads of
// unknown-outcome members whose client interval has closed) is valid
// evicts a sealed prefix X of the members: every member outside X, and
// every transaction still to come, begins after every member of X ended
// (E1: both nodes of X are settled). X leaves for the archive, and the
// ghost, one committed writer that precedes every member in real time,
// takes over from it: per key, the value of the last version X (with the
// ghost before it) leaves (E2: the set of live versions collapsed to one
// by the liveness rules, or X is shortened until it does), and under an
// unknown initial state the initial value X's reads fixed. A probe, a
// read-only transaction after all of I = {ghost} ∪ X that reads those
// values, must be satisfiable with I: some completion of I leaves exactly
// them (E4: what the future can see of I, with nothing else carried).

// maxShrink bounds how often one step shortens X (each try is a linear
// pass).
const maxShrink = 6

// ghostName names the ghost in the screen; it is never a member's name
// (add gives names of released IDs, "unchecked:" ones, or ID@start).
const ghostName = "sionline:ghost"

// ghost is what the evicted transactions leave (docs/SEMANTICS.md §5,
// E2 and E4): per register key the value its last version holds; per list
// key the elements appended after the initial list, in list order; and
// under an unknown initial state the initial value or list of a key,
// when an evicted read fixed it (a list's pin may hold appends a covering
// read saw: only the whole list is ever seen again). Time is the ghost's start and end: at or before every
// evicted member's start, so it precedes every member in real time.
type ghost struct {
	Reg  map[history.Key]history.Value
	List map[history.Key][]history.Value
	Pin  map[history.Key]history.Op
	Time int64
	// Comp are the in-doubt writers that left undecided (companion.go):
	// each may commit after the ghost, before every member.
	Comp []companion `json:",omitempty"`
	// jr is the archive's journal when this is the engine's ghost
	// (undo.go): touch records a key's entry before it changes.
	jr *journal
}

// txn is the ghost as a transaction of the screen: the pins read first
// (the reads of the initial state), then the appends and the last
// versions written. Keys in sorted order: the screen's encoding does not
// depend on map order. With on non-nil, only the keys on holds: the
// screen leaves out the ghost's ops on keys no transaction of it
// touches (docs/SEMANTICS.md §5 "The ghost in the screen: only the keys
// the window touches").
func (g *ghost) txn(on map[history.Key]bool) history.Txn {
	t := history.Txn{ID: ghostName, Start: g.Time, End: g.Time, HasTime: true, Status: history.Committed}
	// The keys in order: the window's keys the ghost holds when on is
	// given (a step costs the window, not the ghost, which grows with
	// the stream's keys), else all of the ghost's. Either way the ops
	// come out in the same order: pins, appends, writes, each by key.
	var keys []history.Key
	if on == nil {
		keys = sortedKeys(g.Pin)
		keys = append(keys, sortedKeys(g.List)...)
		keys = append(keys, sortedKeys(g.Reg)...)
		slices.Sort(keys)
		keys = slices.Compact(keys)
	} else {
		for k := range on {
			_, p := g.Pin[k]
			_, l := g.List[k]
			_, r := g.Reg[k]
			if p || l || r {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
	}
	for _, k := range keys {
		if op, ok := g.Pin[k]; ok {
			t.Ops = append(t.Ops, op)
		}
	}
	for _, k := range keys {
		for _, v := range g.List[k] {
			t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: k, Value: v})
		}
	}
	for _, k := range keys {
		if v, ok := g.Reg[k]; ok {
			t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: k, Value: v})
		}
	}
	return t
}

func sortedKeys[V any](m map[history.Key]V) []history.Key {
	ks := make([]history.Key, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (g *ghost) clone() *ghost {
	c := &ghost{Reg: make(map[history.Key]history.Value, len(g.Reg)), List: make(map[history.Key][]history.Value, len(g.List)),
		Pin: make(map[history.Key]history.Op, len(g.Pin)), Time: g.Time, Comp: slices.Clone(g.Comp)}
	for k, v := range g.Reg {
		c.Reg[k] = v
	}
	for k, v := range g.List {
		c.List[k] = v
	}
	for k, v := range g.Pin {
		c.Pin[k] = v
	}
	return c
}

// evicting says whether this engine evicts: at a level whose real time
// orders a finished commit before a later begin (strong SI, checked for
// Adya SI and strong session SI too). Under GSI every version ever
// committed stays visible to a future read-only snapshot (E3), so nothing
// is evicted there.
func (e *Engine) evicting() bool { return e.opts.Level.SnapshotRealTime() }

// readsClosed says whether member x's reads are in the screen: it is
// time-closed, or its outcome is unknown and its client interval has
// closed (every transaction still to come starts after lastStart). The
// second puts an in-doubt reader's reads in the screen before `check`
// would count them (its commit may come as late as e + D, and a writer
// released until then may be its source): a stronger screen, never a
// weaker one.
func (e *Engine) readsClosed(x *tx) bool {
	if x.Fl&fClosed != 0 {
		return true
	}
	t := &x.T
	return t.Status == history.Unknown && t.HasTime && e.lastStart != math.MinInt64 && t.End <= e.lastStart-2*e.opts.Skew
}

// view is one member of X as the screen saw it: its projected ops (reads
// the projection dropped are no constraint), per key its external read
// (the first op on the key, when a read) and its last write or appends.
type view struct {
	t      *history.Txn
	status history.Status
	start  int64
	end    int64
	sess   string
	hasSes bool
	// kEnd: for an unknown outcome, the end of the earliest committed
	// later member of its session in X (its commit precedes that one's
	// begin, and so whatever that one precedes), or MaxInt64.
	kEnd    int64
	reads   map[history.Key]history.Op
	writes  map[history.Key]history.Value
	appends map[history.Key][]history.Value
}

// before says that a's commit precedes b's begin in every completion in
// which a commits: real time, or through a committed later member of a's
// session that is b or precedes b in real time.
func (e *Engine) before(a, b *view) bool {
	if a == b {
		return false
	}
	if e.opts.Precedes(a.t, b.t) {
		return true
	}
	if a.kEnd == math.MaxInt64 {
		return false
	}
	if b.status == history.Committed && b.hasSes && a.hasSes && b.sess == a.sess && b.start > a.start {
		return true
	}
	return a.kEnd <= b.start-2*e.opts.Skew
}

// evict runs after a valid screen h whose completion is witness (begin
// and commit events in an order every constraint of h allows): it finds
// the longest sealed prefix X, in start order, whose members have their
// reads in the screen and whose events all precede every other member's
// in the witness, shortened before any key whose last version the
// liveness rules leave open (while the window is small enough to wait),
// and moves X to the archive with the ghost the witness gives
// (docs/SEMANTICS.md §5 "Eviction at strong snapshot isolation").
func (e *Engine) evict(h *history.History, witness []string) error {
	var mem []int
	for i := range e.txs {
		if e.txs[i].Fl&(fUnchecked|fQuarantined) == 0 {
			mem = append(mem, i)
		}
	}
	if len(mem) == 0 || len(witness) == 0 {
		return nil
	}
	// open[p]: the earliest start of a member of mem[p:] whose reads are
	// not in the screen yet; ok[p]: mem[:p] may go as far as time goes.
	open := make([]int64, len(mem)+1)
	open[len(mem)] = math.MaxInt64
	for p := len(mem) - 1; p >= 0; p-- {
		open[p] = open[p+1]
		if x := &e.txs[mem[p]]; !e.readsClosed(x) {
			open[p] = min(open[p], x.T.Start)
		}
	}
	ok := make([]bool, len(mem)+1)
	limit, end := 0, int64(math.MinInt64)
	for p := 1; p <= len(mem); p++ {
		x := &e.txs[mem[p-1]]
		if !x.T.HasTime || !e.readsClosed(x) {
			break
		}
		end = max(end, x.T.End)
		if (open[p] == math.MaxInt64 || end <= open[p]-2*e.opts.Skew) && (p == len(mem) || e.txs[mem[p]].T.Start > x.T.Start) {
			ok[p], limit = true, p
		}
	}
	if limit == 0 {
		return nil
	}
	byName := make(map[string]*history.Txn, len(h.Txns))
	for i := range h.Txns {
		byName[h.Txns[i].ID] = &h.Txns[i]
	}
	// Concurrent appenders no read has ordered follow their values
	// (si28e_listorder.go): another completion of the same screen.
	if w := e.repairListOrder(byName, witness); &w[0] != &witness[0] {
		witness = w
		e.listRepairs++
		if serialCheck != nil {
			serialCheck(e.instance(true), e.opts, witness)
		}
	}
	index := make(map[string]int, len(mem))
	for n, i := range mem {
		index[e.txs[i].Name] = n
	}
	sealed := sealedPrefixes(witness, index, limit, byName)
	cut := func(p int) bool { return ok[p] && sealed[p] }
	below := func(p int) int {
		for ; p > 0 && !cut(p); p-- {
		}
		return p
	}
	limit = below(limit)
	for try := 0; try < maxShrink && limit > 0; try++ {
		// Precision, not exactness: wait for keys whose last version
		// the liveness rules leave open, and for keys where they
		// disagree with the witness (a rule too bold: counted); but
		// not for a member more than WaitWindow members back, whose
		// undecided keys take the witness's choice (force). The
		// witness's ghost is compared only when no member is forced:
		// with force > 0 summarize looks at the newest members' keys
		// alone and gives no ghost.
		force := max(0, len(mem)-WaitWindow)
		if force < limit {
			d, firstOpen, err := e.summarize(mem[:limit], byName, force)
			if err != nil {
				return err
			}
			if firstOpen >= 0 {
				limit = below(firstOpen)
				continue
			}
			if force == 0 && !agrees(d, e.replayOn(e.ghost, mem[:limit], byName, witness, e.agreeKeys(mem[:limit], byName))) {
				e.probeFails++
				return nil
			}
		}
		return e.archiveChunks(mem, chunkBounds(limit, cut), byName, witness)
	}
	return nil
}

// chunkBounds cuts the sealed prefix of limit members into chunks, each
// evicted as if by its own step (docs/SEMANTICS.md §5 "One witness,
// several evictions"): the bounds, increasing, the last limit. Going
// back from limit the chunks take segTxns, segTxns, 2·segTxns,
// 2·segTxns, 4·segTxns, ... members (the sizes thin keeps), a bound moved
// down to the nearest p where cut(p) holds (p may end a sealed prefix);
// the newest chunks, whose witness choices a later read is likeliest to
// contradict, are the smallest.
func chunkBounds(limit int, cut func(p int) bool) []int {
	bounds := []int{limit}
	size := segTxns
	for hi, n := limit, 1; ; n++ {
		p := hi - size
		for ; p >= segTxns && !cut(p); p-- {
		}
		if p < segTxns {
			break
		}
		bounds = append(bounds, p)
		hi = p
		if n%2 == 0 {
			size *= 2
		}
	}
	slices.Reverse(bounds)
	return bounds
}

// archiveChunks evicts mem[:bounds[len(bounds)-1]] chunk by chunk: chunk
// c (mem[bounds[c-1]:bounds[c]]) with the ghost the witness replayed over
// the ghost before it and the chunk gives, each chunk opening a segment
// of its own once the last one is full (archive.evict), so that a
// re-admission can start at any of them; the last ghost becomes the
// ghost. The ghost itself is replayed chunk after chunk, in place: the
// archive writes the ghost before a chunk as it takes the chunk, so no
// chunk's ghost needs a copy of its own, and the ghost grows with the
// stream's keys. (An archive error after the first chunk leaves the
// ghost ahead of e.txs: the engine is then broken, and every later step
// returns that error.)
func (e *Engine) archiveChunks(mem []int, bounds []int, byName map[string]*history.Txn, witness []string) error {
	g, first := e.ghost, e.ghost
	if g == nil {
		g = newGhost()
	}
	owned := map[history.Key]bool{}
	gone := map[int]bool{}
	// The companions the witness committed join the ghost's state
	// before the first chunk (they commit after the ghost and before
	// every member); the others stay, or go, chunk by chunk
	// (companion.go).
	var committed map[string]bool
	// Whether companions may be made is decided once, on the screen the
	// witness is of: the ghost's companions change chunk by chunk, and
	// with them which unchecked writers the screen would leave out
	// (screenOut).
	allowed := e.companionsAllowed()
	if len(g.Comp) > 0 || allowed {
		committed = committedIn(witness)
	}
	from, n := 0, 0
	for c, b := range bounds {
		xs := mem[from:b]
		out := make([]*tx, len(xs))
		for k, i := range xs {
			x := &e.txs[i]
			out[k] = x
			gone[i] = true
			if x.Fl&fClosed == 0 {
				e.pendingClose[x.T.ID] = x.Seq
			}
			e.writes.add(&x.T, x.Seq)
		}
		before := g
		if c == 0 {
			before = first // nil when nothing was evicted before
		}
		e.arch.whole = e.whole
		if err := e.arch.evict(out, before); err != nil {
			if c > 0 {
				e.broken = err // the ghost is ahead of e.txs: no step may use it
			}
			return err
		}
		g.jr = e.arch.jr // a new segment starts a new journal
		if c == 0 {
			absorb(g, committed)
		}
		var pre *ghost
		create := committed != nil && allowed
		if create {
			pre = e.candidateKeys(g, xs, committed)
		}
		var same map[history.Key]bool
		if committed != nil {
			same = sameVersions(g)
		}
		e.replayInto(g, owned, xs, byName, witness)
		if committed != nil {
			e.companionsAfter(g, pre, same, xs, witness, committed, create)
		}
		n += len(xs)
		from = b
	}
	kept := e.txs[:0]
	for i := range e.txs {
		if !gone[i] {
			kept = append(kept, e.txs[i])
		}
	}
	clear(e.txs[len(kept):])
	e.txs = kept
	e.evicted += n
	e.ghost = g
	e.reindex()
	return nil
}

// sealedPrefixes says, for every p from 0 to n, whether the witness,
// with the events of X_p = {ghost} ∪ the first p members (index: a
// member's position in start order) moved before every other event
// (each part in its own order), is still a completion of the screen.
// Only two things can break (docs/SEMANTICS.md §5 "Eviction at strong
// snapshot isolation", (c)): a read of X_p that saw a version written
// outside it (its source would move after it), and a read outside X_p
// that began before a commit of X_p on its key (that commit would move
// before it and could change what it saw). Real time and session order
// cannot: X_p is closed downwards in start order. Writers of a key
// overlap no more than before. Each break rules out an interval of p: a
// read by member m that saw w's version, p in (m, w]; a commit by c on a
// key that members up to r began reading before it, p in (c, r]. One
// pass over the witness finds them all (per key the last writer and the
// latest reader begun so far), so every prefix is judged at once
// (docs/SEMANTICS.md §5 "One witness, several evictions").
func sealedPrefixes(witness []string, index map[string]int, n int, byName map[string]*history.Txn) []bool {
	pos := func(name string) int {
		if name == ghostName || isCompanion(name) {
			return -1 // in every X_p (a companion commits right after the ghost)
		}
		if k, ok := index[name]; ok {
			return k
		}
		return math.MaxInt // not a member: in no X_p
	}
	bad := make([]int, n+2) // a difference array over p
	mark := func(lo, hi int) {
		lo, hi = lo+1, min(hi, n)
		if lo <= hi {
			bad[lo]++
			bad[hi+1]--
		}
	}
	lastWriter := map[history.Key]int{}
	lastReader := map[history.Key]int{}
	// maxWriter: per key, the largest position among its writers so far
	// (the third kind of interval, §5 "A version order the chunks keep
	// (si32)").
	maxWriter := map[history.Key]int{}
	for _, ev := range witness {
		sp := strings.IndexByte(ev, ' ')
		name := ev[sp+1:]
		t := byName[name]
		if t == nil {
			continue
		}
		k := pos(name)
		if ev[:sp] == "begin" {
			if k < 0 {
				continue // the ghost's pins: it begins before everything
			}
			fs := newFirsts(t.Ops)
			for j, op := range t.Ops {
				if op.Kind == history.Read && externalRead(t.Ops, j, fs) {
					if w, ok := lastWriter[op.Key]; ok && w > k {
						mark(k, w)
					}
					if w, ok := lastWriter[op.Key]; ok && !NoWriterOrder {
						// A read of w's version after a writer d of the key
						// that X_p leaves out: with w in X_p and the reader
						// not, moving X_p first puts d's version last.
						if d := maxWriter[op.Key]; d > w {
							mark(w, min(k, d))
						}
					}
					if r, ok := lastReader[op.Key]; !ok || k > r {
						lastReader[op.Key] = k
					}
				}
			}
			continue
		}
		for _, op := range t.Ops {
			if op.Kind == history.Read {
				continue
			}
			if r, ok := lastReader[op.Key]; ok && k >= 0 && r > k {
				mark(k, r)
			}
			lastWriter[op.Key] = k
			if d, ok := maxWriter[op.Key]; !ok || k > d {
				maxWriter[op.Key] = k
			}
		}
	}
	sealed := make([]bool, n+1)
	for p, d := 0, 0; p <= n; p++ {
		d += bad[p]
		sealed[p] = d == 0
	}
	return sealed
}

// WaitWindow is how many of the newest members an eviction waits for:
// a key whose last version the liveness rules leave open holds X back
// when one of its writers is among the newest WaitWindow members; an
// older one's keys take the witness's choice. Exact still (the screen
// is stronger than A_t), but a later read that contradicts a choice
// makes the screen fail and the step re-admit the segments since it
// (docs/SEMANTICS.md §5 "A witness choice the stream contradicts").
// Small, because a step costs the window: 128 made issue 28's 5K and
// 20K read-modify-write streams fastest of 128, 512 and 4096
// (BENCHMARKS.md, sireset).
var WaitWindow = 128

// replay runs the witness over I = {ghost} ∪ X: the last register
// version and the appends per key, and, under an unknown initial state,
// the initial value each read of I saw before any write of its key (the
// pins). The result is the ghost after X; before is left as it was.
func (e *Engine) replay(before *ghost, xs []int, byName map[string]*history.Txn, witness []string) *ghost {
	return e.replayOn(before, xs, byName, witness, nil)
}

// replayOn is replay with before's entries taken only on the keys on
// holds (nil: all of them): a ghost that agrees compares on those keys
// alone. on must hold every key xs touches and every key a companion of
// before writes (agreeKeys), the only keys replay changes; off them the
// whole replay is before's entry, as is the whole summary (summarize),
// so agrees answers as on the whole ghosts (docs/SEMANTICS.md §5 "The
// ghost costs what changes, not the stream").
func (e *Engine) replayOn(before *ghost, xs []int, byName map[string]*history.Txn, witness []string, on map[history.Key]bool) *ghost {
	g := newGhost()
	if before != nil && on != nil {
		g = before.restrict(on)
		absorb(g, committedIn(witness))
	} else if before != nil {
		// Its state, not its events: the ghost before a chunk other than
		// the first, or after a reset, has no events in the witness
		// (docs/SEMANTICS.md §5 "One witness, several evictions"); the
		// screen's own ghost commits before every member (W3), so
		// starting from its state is replaying its events first.
		g = before.clone()
		absorb(g, committedIn(witness))
	}
	e.replayInto(g, map[history.Key]bool{}, xs, byName, witness)
	return g
}

// agreeKeys is the set of keys on which summarize's ghost and the
// witness's replay over members xs can differ from the ghost (replayOn):
// every key a member of xs touches, and every key a companion of the
// ghost writes (absorb). nil when the engine compares whole ghosts
// (e.whole, the path the tests hold this one to).
func (e *Engine) agreeKeys(xs []int, byName map[string]*history.Txn) map[history.Key]bool {
	if e.whole {
		return nil
	}
	on := map[history.Key]bool{}
	for _, i := range xs {
		if t := byName[e.txs[i].Name]; t != nil {
			for _, op := range t.Ops {
				on[op.Key] = true
			}
		}
	}
	if e.ghost != nil {
		for _, c := range e.ghost.Comp {
			for _, op := range c.Writes {
				on[op.Key] = true
			}
		}
	}
	return on
}

// restrict is a copy of g's entries on the keys on holds (lists shared,
// as clone shares them), with its time and companions.
func (g *ghost) restrict(on map[history.Key]bool) *ghost {
	c := newGhost()
	c.Time, c.Comp = g.Time, slices.Clone(g.Comp)
	for k := range on {
		if v, ok := g.Reg[k]; ok {
			c.Reg[k] = v
		}
		if l, ok := g.List[k]; ok {
			c.List[k] = l
		}
		if p, ok := g.Pin[k]; ok {
			c.Pin[k] = p
		}
	}
	return c
}

func newGhost() *ghost {
	return &ghost{Reg: map[history.Key]history.Value{}, List: map[history.Key][]history.Value{}, Pin: map[history.Key]history.Op{}, Time: math.MaxInt64}
}

// replayInto is replay on g itself. g's lists may be shared with
// another ghost (clone copies the maps, not the lists): a list is copied
// before its first append here, and owned records which ones g owns.
func (e *Engine) replayInto(g *ghost, owned map[history.Key]bool, xs []int, byName map[string]*history.Txn, witness []string) {
	in := make(map[string]*history.Txn, len(xs))
	for _, i := range xs {
		t := byName[e.txs[i].Name]
		in[t.ID] = t
		g.Time = min(g.Time, t.Start)
	}
	unknownInit := e.opts.InitialState == history.InitialUnknown
	for _, ev := range witness {
		sp := strings.IndexByte(ev, ' ')
		t := in[ev[sp+1:]]
		if t == nil {
			continue
		}
		if ev[:sp] == "begin" {
			if !unknownInit {
				continue
			}
			fs := newFirsts(t.Ops)
			for j, op := range t.Ops {
				if op.Kind != history.Read {
					continue
				}
				own, ok := 0, fs.first(j)
				if !ok && op.IsList && !NoAppendedReadPin {
					// A list read after the transaction's own appends
					// (and nothing else on the key before it) shows the
					// initial list too (docs/SEMANTICS.md §5 "A list read
					// after its own appends fixes the initial list
					// (si31)").
					ok = true
					for _, q := range t.Ops[:j] {
						if q.Key == op.Key {
							ok = ok && q.Kind == history.Append
							own++
						}
					}
				}
				if !ok {
					continue
				}
				_, w := g.Reg[op.Key]
				_, p := g.Pin[op.Key]
				if !w && !p {
					g.touch(op.Key)
					if op.IsList {
						l := g.List[op.Key]
						if len(op.List) >= len(l)+own {
							op.List = slices.Clone(op.List[:len(op.List)-len(l)-own])
						}
					}
					g.Pin[op.Key] = op
				}
			}
			continue
		}
		for _, op := range t.Ops {
			switch op.Kind {
			case history.Write:
				g.touch(op.Key)
				g.Reg[op.Key] = op.Value
				delete(g.Pin, op.Key)
			case history.Append:
				g.touch(op.Key)
				if !owned[op.Key] {
					g.List[op.Key] = slices.Clone(g.List[op.Key])
					owned[op.Key] = true
				}
				g.List[op.Key] = append(g.List[op.Key], op.Value)
			}
		}
	}
}

// agrees says whether the liveness rules' ghost d gives every key the
// last version the witness's ghost g gives it (the whole list for a
// list; a pin only where d has one).
func agrees(d, g *ghost) bool {
	whole := func(x *ghost, k history.Key) []history.Value {
		var l []history.Value
		if p, ok := x.Pin[k]; ok {
			l = append(l, p.List...)
		}
		return append(l, x.List[k]...)
	}
	for k, v := range d.Reg {
		if g.Reg[k] != v {
			return false
		}
	}
	for k := range d.List {
		if !slices.Equal(whole(d, k), whole(g, k)) {
			return false
		}
	}
	for k, p := range d.Pin {
		if q, ok := g.Pin[k]; ok && !p.IsList && q.Value != p.Value {
			return false
		}
	}
	return true
}

// summarizeEveryKey makes summarize look at every key whatever force is,
// as before it looked at the newest members' keys only: the reference
// TestSummarizeNewestKeys holds the restricted one to.
var summarizeEveryKey = false

// NoAppendedReadPin pins an unknown initial list only from a list read
// that is its transaction's first op on the key, as before
// docs/SEMANTICS.md §5 "A list read after its own appends fixes the
// initial list (si31)" (the tests compare).
var NoAppendedReadPin = false

// summarize computes the ghost that {current ghost} ∪ X leaves, X being
// the members xs, or the position in xs of the earliest member writing a
// key whose last version is not decided (firstOpen >= 0), members
// before position force not counted (their keys take the witness's
// choice). With force > 0 only firstOpen is wanted: only the keys a
// member from force on touches can open (open counts no earlier one),
// and each key is decided on its own, so the others are not looked at
// and the ghost returned is nil. The step then costs the newest
// members, not X (which after a reset is the whole stream).
func (e *Engine) summarize(xs []int, byName map[string]*history.Txn, force int) (*ghost, int, error) {
	var only map[history.Key]bool // nil: every key
	if force > 0 && !summarizeEveryKey {
		only = map[history.Key]bool{}
		for _, i := range xs[min(force, len(xs)):] {
			t := byName[e.txs[i].Name]
			if t == nil {
				return nil, 0, fmt.Errorf("sionline: member %q is not in the screen", e.txs[i].Name)
			}
			for _, op := range t.Ops {
				only[op.Key] = true
			}
		}
	}
	touches := func(t *history.Txn) bool {
		if only == nil {
			return true
		}
		for _, op := range t.Ops {
			if only[op.Key] {
				return true
			}
		}
		return false
	}
	vs := make([]view, len(xs))
	for j, i := range xs {
		x := &e.txs[i]
		t := byName[x.Name]
		if t == nil {
			return nil, 0, fmt.Errorf("sionline: member %q is not in the screen", x.Name)
		}
		v := view{t: t, status: t.Status, start: t.Start, end: t.End, sess: t.Session, hasSes: t.HasSession, kEnd: math.MaxInt64}
		if touches(t) {
			v.reads, v.writes, v.appends = map[history.Key]history.Op{}, map[history.Key]history.Value{}, map[history.Key][]history.Value{}
			fs := newFirsts(t.Ops)
			for q, op := range t.Ops {
				switch op.Kind {
				case history.Read:
					if fs.first(q) {
						v.reads[op.Key] = op
					}
				case history.Write:
					v.writes[op.Key] = op.Value
				case history.Append:
					v.appends[op.Key] = append(v.appends[op.Key], op.Value)
				}
			}
		}
		vs[j] = v
	}
	// Session successors of unknown outcomes (every member counts: the
	// successor need not touch the key).
	bySess := map[string][]int{}
	for j := range vs {
		if vs[j].hasSes {
			bySess[vs[j].sess] = append(bySess[vs[j].sess], j)
		}
	}
	for j := range vs {
		if vs[j].status != history.Unknown || !vs[j].hasSes || vs[j].reads == nil {
			continue
		}
		for _, k := range bySess[vs[j].sess] {
			if vs[k].status == history.Committed && vs[k].start > vs[j].start {
				vs[j].kEnd = min(vs[j].kEnd, vs[k].end)
			}
		}
	}
	type keyUse struct{ writers, appenders, readers []int }
	keys := map[history.Key]*keyUse{}
	use := func(k history.Key) *keyUse {
		u := keys[k]
		if u == nil {
			u = &keyUse{}
			keys[k] = u
		}
		return u
	}
	looked := func(k history.Key) bool { return only == nil || only[k] }
	for j := range vs {
		if vs[j].status == history.Aborted {
			continue // no node: writes nothing, its reads order nothing
		}
		for k := range vs[j].writes {
			if looked(k) {
				use(k).writers = append(use(k).writers, j)
			}
		}
		for k := range vs[j].appends {
			if looked(k) {
				use(k).appenders = append(use(k).appenders, j)
			}
		}
		for k := range vs[j].reads {
			if looked(k) {
				use(k).readers = append(use(k).readers, j)
			}
		}
	}
	g := &ghost{Reg: map[history.Key]history.Value{}, List: map[history.Key][]history.Value{}, Pin: map[history.Key]history.Op{}, Time: math.MaxInt64}
	switch {
	case e.ghost != nil && only == nil:
		// The ghost's entries on the keys the comparison with the
		// witness's replay looks at (agreeKeys, replayOn): off them the
		// summary is the ghost's entry, and so is the replay.
		if on := e.agreeKeys(xs, byName); on != nil {
			g = e.ghost.restrict(on)
		} else {
			g = e.ghost.clone()
		}
	case e.ghost != nil:
		// The ghost's entries on the keys looked at: each key's
		// decision reads and writes only its own.
		for k := range keys {
			if v, ok := e.ghost.Reg[k]; ok {
				g.Reg[k] = v
			}
			if l, ok := e.ghost.List[k]; ok {
				g.List[k] = l
			}
			if p, ok := e.ghost.Pin[k]; ok {
				g.Pin[k] = p
			}
		}
	}
	for _, j := range vs {
		g.Time = min(g.Time, j.start)
	}
	firstOpen := -1
	open := func(js []int) {
		for _, j := range js {
			if j >= force && (firstOpen < 0 || j < firstOpen) {
				firstOpen = j
			}
		}
	}
	unknownInit := e.opts.InitialState == history.InitialUnknown
	for _, k := range sortedKeys(keys) {
		u := keys[k]
		switch {
		case len(u.appenders) > 0:
			pin, l, ok := e.lastList(vs, u.appenders, u.readers, k, g)
			if !ok {
				open(u.appenders)
				continue
			}
			g.List[k] = l
			if pin != nil {
				g.Pin[k] = *pin
			} else {
				delete(g.Pin, k)
			}
		case len(u.writers) > 0:
			v, ok := e.lastRegister(vs, u.writers, u.readers, k, g)
			if !ok {
				open(u.writers)
				continue
			}
			g.Reg[k] = v
			delete(g.Pin, k)
		case unknownInit:
			// Read, never written by X: if no evicted writer wrote it
			// either, X's reads read the initial value, which the
			// ghost must fix (a read by a committed member first).
			if _, w := g.Reg[k]; w {
				continue
			}
			if _, w := g.Pin[k]; w {
				continue
			}
			best := -1
			for _, j := range u.readers {
				if best < 0 || (vs[j].status == history.Committed && vs[best].status != history.Committed) {
					best = j
				}
			}
			pin := vs[best].reads[k]
			if l, w := g.List[k]; w {
				// The read saw the initial list, then the ghost's
				// appends: the pin is what comes before them.
				if !pin.IsList || len(pin.List) < len(l) || !slices.Equal(pin.List[len(pin.List)-len(l):], l) {
					open(u.readers)
					continue
				}
				pin.List = slices.Clone(pin.List[:len(pin.List)-len(l)])
			}
			g.Pin[k] = pin
		}
	}
	if only != nil {
		return nil, firstOpen, nil // a ghost of the keys looked at only: no use
	}
	return g, firstOpen, nil
}

// lastRegister decides the value of k's last version after {ghost} ∪ X:
// the one candidate (the ghost's version, or a writer's last write) that
// no liveness rule proves overwritten, when it is committed.
func (e *Engine) lastRegister(vs []view, writers, readers []int, k history.Key, g *ghost) (history.Value, bool) {
	gv, hasGhost := g.Reg[k]
	committed := func(j int) bool { return vs[j].status == history.Committed }
	// The ghost's version is overwritten by any committed writer (all of
	// X follows it), or seen overwritten by a committed reader of another
	// value.
	ghostLive := hasGhost
	for _, j := range writers {
		ghostLive = ghostLive && !committed(j)
	}
	for _, j := range readers {
		if committed(j) && (!hasGhost || vs[j].reads[k].Value != gv) {
			ghostLive = false
		}
	}
	// A read's sole possible source among the candidates (D3 needs it).
	sources := map[history.Value][]int{}
	for _, j := range writers {
		sources[vs[j].writes[k]] = append(sources[vs[j].writes[k]], j)
	}
	initCanBe := func(v history.Value) bool {
		if hasGhost {
			return false // the ghost's version follows the initial one
		}
		return e.opts.InitialState == history.InitialUnknown || v == history.Null
	}
	live := -1
	nLive := 0
	if ghostLive {
		nLive++
	}
	for _, w := range writers {
		v := vs[w].writes[k]
		dead := false
		for _, t := range writers {
			if t != w && committed(t) && e.before(&vs[w], &vs[t]) {
				dead = true // D1: a committed writer that follows it
				break
			}
		}
		for _, t := range readers {
			if dead {
				break
			}
			if t == w || !committed(t) {
				continue
			}
			r := vs[t].reads[k]
			if e.before(&vs[w], &vs[t]) && r.Value != v {
				dead = true // D2: a committed reader after it saw another value
			}
			// D3: a committed writer whose read of k has w as its only
			// possible source writes a later version.
			if _, wr := vs[t].writes[k]; wr && !dead {
				src := sources[r.Value]
				if len(src) == 1 && src[0] == w && !(hasGhost && gv == r.Value) && !initCanBe(r.Value) {
					dead = true
				}
			}
		}
		if !dead {
			nLive++
			live = w
		}
	}
	switch {
	case nLive != 1:
		return "", false
	case ghostLive:
		return gv, true
	case committed(live):
		return vs[live].writes[k], true
	}
	return "", false
}

// lastList decides k's list after {ghost} ∪ X, as the ghost holds it
// (pin, appends): a committed member that appends nothing to k and read
// k after every appender of X saw it whole (under an unknown initial
// state that list becomes the pin, else the appends); or the committed
// appenders follow one another, and their appends go after the ghost's,
// when the list before them is known or no read of I saw it.
func (e *Engine) lastList(vs []view, appenders, readers []int, k history.Key, g *ghost) (pin *history.Op, appends []history.Value, ok bool) {
	unknownInit := e.opts.InitialState == history.InitialUnknown
	for _, r := range readers {
		if vs[r].status != history.Committed || len(vs[r].appends[k]) > 0 || !vs[r].reads[k].IsList {
			continue
		}
		all := true
		for _, a := range appenders {
			all = all && e.before(&vs[a], &vs[r])
		}
		if all {
			l := vs[r].reads[k].List
			if unknownInit {
				op := vs[r].reads[k]
				return &op, nil, true
			}
			return nil, l, true
		}
	}
	var p *history.Op
	if op, pinned := g.Pin[k]; pinned {
		p = &op
	} else if unknownInit && len(readers) > 0 {
		return nil, nil, false // a read saw an initial list the ghost does not fix
	}
	chain := slices.Clone(appenders)
	slices.SortFunc(chain, func(a, b int) int {
		switch {
		case vs[a].start < vs[b].start:
			return -1
		case vs[a].start > vs[b].start:
			return 1
		}
		return a - b
	})
	out := slices.Clone(g.List[k])
	for n, a := range chain {
		if vs[a].status != history.Committed || (n > 0 && !e.before(&vs[chain[n-1]], &vs[a])) {
			return nil, nil, false
		}
		out = append(out, vs[a].appends[k]...)
	}
	return p, out, true
}

// reindex rebuilds byName and newest after e.txs changed. newest keeps,
// per ID, the newest holder: an ID whose newest transaction left keeps
// only its pending closing (pendingClose).
func (e *Engine) reindex() {
	clear(e.byName)
	clear(e.newest)
	for i := range e.txs {
		x := &e.txs[i]
		e.byName[x.Name] = i
		if x.Fl&fUnchecked == 0 {
			if _, p := e.pendingClose[x.T.ID]; p && e.pendingSeq(x.T.ID) > x.Seq {
				continue
			}
			e.newest[x.T.ID] = i
		}
	}
}

func (e *Engine) pendingSeq(id string) uint64 { return e.pendingClose[id] }

// closeArchived records the closing of an archived transaction.
func (e *Engine) closeArchived(id string) bool {
	seq, ok := e.pendingClose[id]
	if !ok {
		return false
	}
	e.arch.closed(seq)
	delete(e.pendingClose, id)
	return true
}

// readmit brings the archive's segments from j on back into the window
// and makes the ghost before segment j the ghost (j = 0: every archived
// transaction back, no ghost, a full reset): docs/SEMANTICS.md §5
// "Re-admitting a suffix of the archive". The screen that follows is
// one the eviction argument covers, so a valid one proves A_t valid as
// the screen before the evictions it undid would have.
func (e *Engine) readmit(j int) error {
	back, g, others, err := e.arch.readmit(j, e.ghost)
	if err != nil {
		return err
	}
	if j == 0 && len(others) > 0 {
		return fmt.Errorf("%w: a closing of seq %d, which was never archived", errArchive, others[0])
	}
	for _, seq := range others {
		// A closing of a transaction that stays archived (an earlier
		// segment): recorded again, in the segment now last.
		e.arch.closed(seq)
	}
	if j == 0 && !e.arch.file.Durable() && e.arch.err == nil {
		// Nothing archived is left and no checkpoint names the file's
		// bytes: start it again rather than let resets grow it.
		e.arch.opened = false
	}
	e.readmitted += len(back)
	in := make(map[uint64]bool, len(back))
	for i := range back {
		in[back[i].Seq] = true
	}
	for id, seq := range e.pendingClose {
		if in[seq] {
			delete(e.pendingClose, id)
		}
	}
	all := append(back, e.txs...)
	slices.SortStableFunc(all, func(a, b tx) int { return cmp.Compare(a.Seq, b.Seq) })
	// Names: an ID reused while its first holder was archived may have
	// taken the same name; the later one is renamed as add would have.
	seen := make(map[string]bool, len(all))
	for i := range all {
		for n := 0; seen[all[i].Name]; n++ {
			all[i].Name = all[i].T.ID + "#" + fmt.Sprint(all[i].Seq) + primes(n)
		}
		seen[all[i].Name] = true
	}
	e.txs, e.ghost = all, g
	if g != nil {
		g.jr = e.arch.jr
	}
	if j == 0 {
		e.resets++
		e.writes.reset()
	}
	e.reindex()
	e.dirty = true
	return nil
}

// reset puts every archived transaction back and drops the ghost: the
// full instance A_t is what decides a step whose screen is not valid
// (docs/SEMANTICS.md §5), and quarantine works on bodies.
func (e *Engine) reset() error {
	if e.ghost == nil && len(e.arch.segs) == 0 {
		return nil
	}
	return e.readmit(0)
}

func sortedIDs(m map[string]uint64) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
