package weakonline

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Retirement at read committed (doc.go R1-R5; docs/SEMANTICS.md §5
// "Retirement at read committed").
//
// A pass runs after a step that found the instance satisfiable (the fast
// path vouched, or the exact check said valid), once the transactions
// held have doubled since the last pass. It computes the settled
// transactions: closed members every possible writer of whose reads is
// settled too (a greatest fixpoint: unsettledness flows from the open,
// the unknown and the internally inconsistent along read candidacy). A
// settled committed transaction whose writes are all final leaves the
// engine, its (key, value) pairs go to the value summary, unless some
// unsettled reader of one of its values ended before it began (it is no
// possible writer of that read, and the summary keeps no times: it waits).
// A settled aborted transaction, or committed one with an intermediate
// write, retires with its body encoded (R6): a later read of such a
// value is G1a or G1b, and the core names the writer. Settled
// transactions that stay (the waiting ones) have their reads out of the
// instance.

// retireFloor is the number of transactions held below which no pass
// runs: a pass costs the transactions held, so passes at doublings cost
// O(1) per transaction.
const retireFloor = 1 << 14

// summary is what retired transactions leave behind at read committed:
// for each key, the values their committed final writes wrote. A later
// read of such a value has a source no constraint can rule out (R2), so
// it leaves the instance. Integer values (the usual counters) are kept
// as runs, so that a key written 1, 2, 3, ... costs one run.
type summary struct {
	// kt numbers the engine's keys (keys.go); the summary owns it, as it
	// outlives every fast path (a rebuild makes a new one with the same
	// table), and a restore numbers the keys afresh from its names.
	kt   *keyTable
	keys []*valueSet // by key number (nil: none retired)
	n    int         // transactions retired
	// dirty: the values in keys that no retired committed final write
	// wrote, only aborted or intermediate ones (a read of one is G1a or
	// G1b, with its writer in the core), and the bodies (indices into
	// bodies) that wrote each.
	dirty  map[kv][]int32
	bodies [][]byte
}

type valueSet struct {
	runs  [][2]int64 // disjoint, sorted, not adjacent
	other map[history.Value]struct{}
	// ndirty counts the key's entries in summary.dirty.
	ndirty int
}

func newSummary() *summary {
	return &summary{kt: newKeyTable(), dirty: map[kv][]int32{}}
}

// body is a retired aborted transaction, or committed one with an
// intermediate write, as the summary keeps it: encoded (a fraction of
// its size held), decoded when a core may need it (R6).
type body struct {
	Name string
	Txn  history.Txn
}

// set is key number k's value set (nil: none).
func (s *summary) set(k int32) *valueSet {
	if int(k) < len(s.keys) {
		return s.keys[k]
	}
	return nil
}

// valuesOf is key k's value set, by name (nil: none).
func (s *summary) valuesOf(k history.Key) *valueSet {
	if i, ok := s.kt.ids[k]; ok {
		return s.set(i)
	}
	return nil
}

// has reports whether (k, v) has a retired source nothing rules out.
func (s *summary) has(k history.Key, v history.Value) bool {
	if s == nil {
		return false
	}
	vs := s.valuesOf(k)
	if vs == nil || !vs.contains(v) {
		return false
	}
	if vs.ndirty == 0 {
		return true
	}
	// A dirty value was numbered when it was recorded: one without a
	// number is not dirty.
	r, ok := s.kt.lookup(k, v)
	_, d := s.dirty[r]
	return !ok || !d
}

// hasKV is has for a numbered pair. It is on every closed read's path:
// a slice index and, for an integer value, a search of the key's runs;
// the dirty map is asked only for a key with a dirty value.
func (s *summary) hasKV(r kv) bool {
	if s == nil {
		return false
	}
	vs := s.set(r.k)
	if vs == nil || !vs.containsKV(r, s.kt) {
		return false
	}
	if vs.ndirty == 0 {
		return true
	}
	_, d := s.dirty[r]
	return !d
}

// addDirty records that body b wrote (k, v) as an aborted or
// intermediate write; nothing to record if a committed final write of
// it is retired already (a read of it has a free source).
func (s *summary) addDirty(k history.Key, v history.Value, b int32) {
	r := s.kt.pair(k, v)
	if s.hasKV(r) {
		return
	}
	s.addKV(r)
	bs, seen := s.dirty[r]
	if !seen {
		s.keys[r.k].ndirty++
	}
	if !slices.Contains(bs, b) {
		s.dirty[r] = append(bs, b)
	}
}

// addFinal records a retired committed final write of (k, v).
func (s *summary) addFinal(k history.Key, v history.Value) {
	s.addFinalKV(s.kt.pair(k, v))
}

func (s *summary) addFinalKV(r kv) {
	s.addKV(r)
	if _, seen := s.dirty[r]; seen {
		delete(s.dirty, r)
		s.keys[r.k].ndirty--
	}
}

// intOf reads v as an integer if it is one in canonical text (no sign
// but a leading '-', no leading zero, not "-0"), so that a run of
// integers stands for exactly the values that print as it. It is on
// every op's path: no allocation.
func intOf(v history.Value) (int64, bool) {
	d := string(v)
	if d == "" || d == "-" || d == "-0" || len(d) > 20 {
		return 0, false
	}
	neg := d[0] == '-'
	if neg {
		d = d[1:]
	}
	if len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(string(v), 10, 64)
	return i, err == nil
}

// contains reports whether v is in the set.
func (vs *valueSet) contains(v history.Value) bool {
	if i, ok := intOf(v); ok {
		return vs.containsInt(i)
	}
	_, ok := vs.other[v]
	return ok
}

// containsKV is contains for a numbered pair's value.
func (vs *valueSet) containsKV(r kv, kt *keyTable) bool {
	if r.str == 0 {
		return vs.containsInt(r.n)
	}
	_, ok := vs.other[kt.valNames[r.n]]
	return ok
}

// containsInt is on every closed read's path. Counters grow, so a value
// read is mostly in the last run or past it: that is asked first, then
// the runs are searched (by hand: sort.Search's closure was a tenth of
// run --level read-committed's profile).
func (vs *valueSet) containsInt(i int64) bool {
	n := len(vs.runs)
	if n == 0 {
		return false
	}
	if last := vs.runs[n-1]; i >= last[0] {
		return i <= last[1]
	}
	// The first run that ends at or after i, among runs[:n-1].
	lo, hi := 0, n-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if vs.runs[m][1] < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < n-1 && vs.runs[lo][0] <= i
}

func (s *summary) add(k history.Key, v history.Value) {
	s.addKV(s.kt.pair(k, v))
}

// addKV adds r's value to its key's set, making the set on first use.
func (s *summary) addKV(r kv) {
	for int(r.k) >= len(s.keys) {
		s.keys = append(s.keys, nil)
	}
	vs := s.keys[r.k]
	if vs == nil {
		vs = &valueSet{}
		s.keys[r.k] = vs
	}
	if r.str != 0 {
		if vs.other == nil {
			vs.other = map[history.Value]struct{}{}
		}
		vs.other[s.kt.valNames[r.n]] = struct{}{}
		return
	}
	vs.addInt(r.n)
}

// addInt inserts i, merging it with the runs it touches. Counters mostly
// grow, so the common case extends the last run.
func (vs *valueSet) addInt(i int64) {
	// j: the first run that ends at or after i-1, the one i may fall
	// into or extend (or the place to insert a run of its own).
	j := sort.Search(len(vs.runs), func(m int) bool {
		return i == math.MinInt64 || vs.runs[m][1] >= i-1
	})
	switch {
	case j < len(vs.runs) && vs.runs[j][0] <= i && i <= vs.runs[j][1]:
		return // already there
	case j < len(vs.runs) && i != math.MinInt64 && vs.runs[j][1] == i-1:
		vs.runs[j][1] = i
		if j+1 < len(vs.runs) && vs.runs[j+1][0] == i+1 {
			vs.runs[j][1] = vs.runs[j+1][1]
			vs.runs = slices.Delete(vs.runs, j+1, j+2)
		}
	case j < len(vs.runs) && i != math.MaxInt64 && vs.runs[j][0] == i+1:
		vs.runs[j][0] = i
	default:
		vs.runs = slices.Insert(vs.runs, j, [2]int64{i, i})
	}
}

// summaryJSON is the summary in a snapshot: per key its runs and its
// other values (R5: Snapshot/Restore round-trip it).
type summaryJSON struct {
	N      int
	Keys   map[history.Key]valueSetJSON `json:",omitempty"`
	Dirty  []dirtyJSON                  `json:",omitempty"`
	Bodies [][]byte                     `json:",omitempty"`
}

type dirtyJSON struct {
	K, V   history.Value
	Bodies []int32
}

type valueSetJSON struct {
	Runs  [][2]int64      `json:",omitempty"`
	Other []history.Value `json:",omitempty"`
}

func (s *summary) encode() *summaryJSON {
	if s == nil {
		return nil
	}
	out := &summaryJSON{N: s.n, Keys: make(map[history.Key]valueSetJSON, len(s.keys))}
	for i, vs := range s.keys {
		if vs == nil {
			continue
		}
		k := s.kt.names[i]
		j := valueSetJSON{Runs: vs.runs}
		for v := range vs.other {
			j.Other = append(j.Other, v)
		}
		slices.Sort(j.Other)
		out.Keys[k] = j
	}
	for r, bs := range s.dirty {
		out.Dirty = append(out.Dirty, dirtyJSON{s.kt.names[r.k], s.kt.value(r), bs})
	}
	slices.SortFunc(out.Dirty, func(a, b dirtyJSON) int {
		if a.K != b.K {
			return strings.Compare(string(a.K), string(b.K))
		}
		return strings.Compare(string(a.V), string(b.V))
	})
	out.Bodies = s.bodies
	return out
}

func decodeSummary(j *summaryJSON) (*summary, error) {
	s := newSummary()
	if j == nil {
		return s, nil
	}
	s.n = j.N
	for k, vj := range j.Keys {
		vs := &valueSet{}
		for _, r := range vj.Runs {
			if r[0] > r[1] {
				return nil, fmt.Errorf("%w: key %s: run [%d, %d]", ErrCorrupt, k, r[0], r[1])
			}
			vs.addRun(r[0], r[1])
		}
		for _, v := range vj.Other {
			if vs.other == nil {
				vs.other = map[history.Value]struct{}{}
			}
			vs.other[v] = struct{}{}
		}
		i := s.kt.id(k)
		for int(i) >= len(s.keys) {
			s.keys = append(s.keys, nil)
		}
		s.keys[i] = vs
	}
	s.bodies = j.Bodies
	for _, d := range j.Dirty {
		for _, b := range d.Bodies {
			if b < 0 || int(b) >= len(s.bodies) {
				return nil, fmt.Errorf("%w: body %d of %d", ErrCorrupt, b, len(s.bodies))
			}
		}
		r := s.kt.pair(d.K, d.V)
		vs := s.set(r.k)
		if vs == nil || !vs.containsKV(r, s.kt) {
			return nil, fmt.Errorf("%w: dirty value %s=%s not in the summary", ErrCorrupt, d.K, d.V)
		}
		if _, seen := s.dirty[r]; !seen {
			vs.ndirty++
		}
		s.dirty[r] = d.Bodies
	}
	return s, nil
}

// addRun inserts [lo, hi] whole, merging what it overlaps or touches
// (a snapshot's runs are disjoint and sorted; merging rather than
// trusting that costs nothing).
func (vs *valueSet) addRun(lo, hi int64) {
	var out [][2]int64
	placed := false
	for _, r := range vs.runs {
		switch {
		case r[1] < lo && r[1]+1 != lo:
			out = append(out, r)
		case r[0] > hi && r[0]-1 != hi:
			if !placed {
				out = append(out, [2]int64{lo, hi})
				placed = true
			}
			out = append(out, r)
		default:
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
	}
	if !placed {
		out = append(out, [2]int64{lo, hi})
	}
	vs.runs = out
}

// retirable reports whether the engine retires at its level: read
// committed only (R1). At read atomic and causal a read arbitrarily late
// can make any committed writer a member of every core of a violation
// (docs/SEMANTICS.md §5 "Retirement at read atomic and causal"): nothing
// retires there. Under an unknown initial state a pass also needs the
// fast path's graph as the witness it reads the initial state's uses
// from (R7, maybeRetire).
func (e *Engine) retirable() bool {
	return !e.noRetire && (e.opts.Level == history.ReadCommitted || e.naiveRetire)
}

// maybeRetire runs a pass when the transactions held have doubled since
// the last one. Called only after a step that found the instance
// satisfiable, with no core waiting (R3).
func (e *Engine) maybeRetire() {
	if e.opts.Level == history.Causal && !e.noRetire && !e.naiveRetire {
		e.maybeRetireCausal()
		return
	}
	if !e.retirable() || e.deferred || e.undecided || len(e.txns) < e.nextRetire {
		return
	}
	if e.opts.InitialState == history.InitialUnknown && (e.fast == nil || e.fast.trouble) && !e.naiveInit {
		// R7: which reads take the initial state is read off the fast
		// path's acyclic graph, the witness of the instance; without
		// one no pass runs (the next step that has one tries again).
		return
	}
	if len(e.txns) >= retireFloor {
		lists := 0
		for _, fl := range e.flags {
			if fl&fList != 0 {
				lists++
			}
		}
		if 2*lists > len(e.txns) {
			// More than half of what is held has a list op and stays
			// (R8); on gen's list streams what it wrote unsettles
			// nearly everything else, and a pass (hash maps of every
			// held read) found nothing to retire while its garbage
			// raised the peak heap by a fifth. Skipped, like a pass
			// that let none go; memory only: no pass is needed for
			// exactness.
			e.spillAll = true
			e.nextRetire = max(e.retireMin, 4*len(e.txns))
			return
		}
	}
	before := e.sum.n
	e.retire()
	e.nextRetire = max(e.retireMin, 2*len(e.txns))
	if e.sum.n == before && len(e.txns) >= retireFloor {
		// Nothing left (on a list stream most members are held, R8):
		// the next pass waits for eight times as many, so that passes
		// that find nothing cost O(1) per transaction at an eighth of
		// the rate (at four times, gen's stream with one list key in a
		// hundred still paid a third more CPU than main, which runs no
		// pass there). Which transactions retire, and when, only
		// decides memory: any pass is exact (the tests' passes at every
		// doubling, below the floor, keep the schedule they had).
		e.nextRetire = max(e.retireMin, 8*len(e.txns))
	}
}

// retire is one pass (R1-R4).
func (e *Engine) retire() {
	n := len(e.txns)
	member := func(i int) bool { return e.flags[i]&(fUnchecked|fQuarantined) == 0 }
	parsed := make([]struct {
		finals, reads []kv
		ok            bool
		inter         bool // a write that is not its key's final one
	}, n)
	for i := range e.txns {
		if !member(i) {
			continue
		}
		p := &parsed[i]
		if f := e.fast; f != nil && i < len(f.node) && f.node[i] && f.usable[i] {
			// The fast path parsed it at release; its reads are the
			// ones its graph keeps (a read dropped from the instance
			// stays dropped: taint and the summary only grow). A list
			// member's finals hold its register writes and a mark per
			// list key it appends to. Not an unknown the graph made
			// unusable: the graph dropped the read no writer explains,
			// which the instance keeps (guarded by its commit), and R4
			// must see it (docs/SEMANTICS.md §5 "An unknown's
			// unexplained read holds its later writers").
			p.finals, p.reads, p.ok = f.nl(int(i)).finals, f.nl(int(i)).reads, true
		} else {
			// The graph does not hold it (aborted, unknown and not
			// chosen, inconsistent, or no fast path): its ops, read
			// back if they went to the body file (R8). A list member's
			// are parsed with the list ops: its register writes must
			// still unsettle their readers.
			whole, err := e.txn(i)
			if err != nil {
				// Without its writes no reader of them can be
				// settled soundly: no pass (the step reports it).
				e.readErr = err
				return
			}
			if e.flags[i]&fList != 0 {
				p.finals, p.reads, _, _, p.ok = parseLists(&whole, e.sum.kt, true)
			} else {
				p.finals, p.reads, p.ok = parse(&whole, e.sum.kt)
			}
		}
		if !p.ok {
			continue
		}
		// From the ops when it was added (its body may be in the body
		// file now).
		p.inter = e.flags[i]&fInter != 0
	}
	// candidate: w may be the source of i's read (§5's real-time read
	// rule; check_weak's candidate set, with intermediate writes of
	// committed transactions counted as well, which only unsettles more).
	candidate := func(i int, w int32) bool {
		if int(w) == i {
			return false
		}
		rt, wt := &e.txns[i], &e.txns[w]
		return !(rt.HasTime && wt.HasTime && e.opts.Precedes(rt, wt))
	}
	unsettled := make([]bool, n)
	// pin: under an unknown initial state, the members whose reads the
	// witness takes from the initial state, each one a read nothing else
	// can explain (R7): settled for the propagation, but held, their
	// reads in the instance.
	pin := e.initPins(member, func(w int) ([]kv, bool) {
		// A parsed transaction without an intermediate write wrote
		// exactly its finals' pairs: those, without hashing its ops.
		p := &parsed[w]
		return p.finals, member(w) && p.ok && !p.inter
	})
	var work []int32
	ps := PassStats{Held: n}
	for i := range e.txns {
		if !member(i) {
			ps.Outside++
			continue
		}
		if e.flags[i]&fSettled != 0 {
			continue
		}
		t := &e.txns[i]
		if e.flags[i]&fList != 0 {
			// R8: a member with a list op is held (its appends' places
			// in the version order and its list reads' versions are
			// facts no summary keeps), aborted ones too (a late read of
			// an aborted append is a G1a naming it); what it wrote
			// unsettles its readers like an open writer's.
			ps.List++
			unsettled[i] = true
			work = append(work, int32(i))
			continue
		}
		if t.Status == history.Aborted && e.flags[i]&fClosed != 0 {
			// Never a source, its reads unchecked: settled, once closed
			// (R2). An open one stays: retired, a core naming it brought
			// it back closed (revive), and the alert fired before the
			// window closed it, where the keeping engine waits (W4;
			// docs/SEMANTICS.md §5 "An aborted transaction settles once
			// closed").
			continue
		}
		if e.flags[i]&fClosed == 0 || t.Status == history.Unknown || !parsed[i].ok || pin[i] == pinUnforced {
			switch {
			case e.flags[i]&fClosed == 0:
				ps.Open++
			case t.Status == history.Unknown:
				ps.Unknown++
			case !parsed[i].ok:
				ps.Unparsed++
			default:
				ps.InitUnforced++
			}
			unsettled[i] = true
			work = append(work, int32(i))
		}
	}
	seeds := len(work)
	// reader: a member whose reads can be unsettled (parsed, not
	// settled by an earlier pass).
	reader := func(i int) bool {
		return member(i) && parsed[i].ok && e.flags[i]&fSettled == 0
	}
	if naiveSettle || settleCompare {
		want := slices.Clone(unsettled)
		settleByReaders(len(e.txns), reader, func(i int) []kv { return parsed[i].reads }, func(i int) []kv { return parsed[i].finals }, candidate, want, slices.Clone(work))
		if naiveSettle {
			unsettled = want
		} else {
			settleByScans(len(e.txns), reader, func(i int) []kv { return parsed[i].reads }, func(i int) []kv { return parsed[i].finals }, candidate, unsettled, work)
			if !slices.Equal(unsettled, want) {
				panic("weakonline: the settle by scans differs from the settle by readers")
			}
		}
	} else {
		settleByScans(len(e.txns), reader, func(i int) []kv { return parsed[i].reads }, func(i int) []kv { return parsed[i].finals }, candidate, unsettled, work)
	}
	work = nil
	// Reads the instance drops (a possible writer outside it, a
	// wildcard dead letter of their key) are not special-cased: counting
	// their candidates only unsettles more.
	// firstEnd[(k, v)]: the earliest effective end of an unsettled
	// reader of (k, v) with times; a writer that began 2Δ after it is no
	// possible writer of that read, so it cannot enter the summary yet
	// (R4).
	firstEnd := map[kv]int64{}
	for i := range e.txns {
		if !unsettled[i] || !e.txns[i].HasTime {
			continue
		}
		end := e.opts.EffectiveEnd(&e.txns[i])
		for _, r := range parsed[i].reads {
			if old, ok := firstEnd[r]; !ok || end < old {
				firstEnd[r] = end
			}
		}
	}
	for i := range e.txns {
		if unsettled[i] {
			ps.Unsettled++
		}
		if member(i) && !unsettled[i] && pin[i] == pinForced {
			ps.Pins++
		}
	}
	ps.Unsettled -= seeds
	keep := make([]bool, n)
	retiredBody := make([]int32, n)
	defer func() {
		for i := range keep {
			if !keep[i] {
				ps.Retired++
			}
		}
		ps.Waiting = n - ps.Retired - ps.Outside - ps.List - ps.Open - ps.Unknown - ps.Unparsed - ps.InitUnforced - ps.Unsettled - ps.Pins
		e.lastPass = ps
	}()
	var leave []int
	for i := range e.txns {
		retiredBody[i] = -1
		keep[i] = true
		if !member(i) || unsettled[i] || pin[i] == pinForced {
			continue
		}
		e.flags[i] |= fSettled
		t := &e.txns[i]
		p := &parsed[i]
		if !p.ok || t.Status == history.Unknown {
			continue
		}
		wait := false
		for _, w := range p.finals {
			if end, ok := firstEnd[w]; ok && t.HasTime && end <= t.Start-2*e.opts.Skew && t.Status == history.Committed {
				wait = true
			}
		}
		if wait {
			continue
		}
		leave = append(leave, i)
	}
	e.spillAll = len(leave)*16 < n
	if e.spillAll {
		// Too few leave to pay for the compaction (the fast path is
		// rebuilt from every held body, read back from the body file):
		// they stay, settled (their reads out, as a waiting writer's
		// under R4), and leave at a later pass. On list streams most
		// of what is held stays (R8), and passes that retired a few
		// each doubled run's CPU.
		leave = nil
	}
	for _, i := range leave {
		t := &e.txns[i]
		p := &parsed[i]
		keep[i] = false
		e.sum.n++
		if t.Status == history.Committed {
			for _, w := range p.finals {
				e.sum.addFinalKV(w)
			}
			if !p.inter {
				continue
			}
		}
		// Aborted, or with an intermediate write: its body goes to the
		// summary, for the G1a or G1b core a later read may need (R6),
		// read back whole if it went to the body file.
		whole, err := e.txn(i)
		if err != nil {
			panic(fmt.Sprintf("weakonline: reading back a retiring body: %v", err))
		}
		t = &whole
		b := e.blob[i]
		if b < 0 {
			enc, err := json.Marshal(body{e.names[i], *t})
			if err != nil {
				panic(fmt.Sprintf("weakonline: encoding a retired body: %v", err))
			}
			b = int32(len(e.sum.bodies))
			e.sum.bodies = append(e.sum.bodies, enc)
		}
		retiredBody[i] = b
		for _, op := range t.Ops {
			if op.Kind != history.Read && (t.Status == history.Aborted || !slices.Contains(p.finals, e.sum.kt.pair(op.Key, op.Value))) {
				e.sum.addDirty(op.Key, op.Value, b)
			}
		}
	}
	e.compact(keep, retiredBody)
	// What this pass found unsettled is likely to stay a while (R8: on
	// list streams nearly everything): its body goes to the body file,
	// as a list member's does when it closes.
	for i := range e.txns {
		if e.flags[i]&(fClosed|fSettled) == fClosed {
			e.spill(i)
		}
	}
}

// PassStats count what the last retirement pass held and why (a
// transaction counted once, under the first reason that applies), for
// the measurements in BENCHMARKS.md: nothing decides on them.
type PassStats struct {
	Held    int // transactions held when the pass began
	Outside int // quarantined or unchecked: never retired
	List    int // a list op: held (R8), a seed of unsettledness
	// Seeds of unsettledness: open, unknown outcome, not parsed
	// (internally inconsistent), a read of the initial state another
	// transaction wrote the value of (R7).
	Open, Unknown, Unparsed, InitUnforced int
	Unsettled                             int // unsettled through a read's candidate
	Pins                                  int // forced reads of the initial state (R7)
	// Waiting: settled and held (R4's writers, unknown or inconsistent
	// settled ones, settled ones already flagged); Retired this pass.
	Waiting, Retired int
}

// LastPass is what the last retirement pass held and why (zero before
// the first).
func (e *Engine) LastPass() PassStats { return e.lastPass }

// A member's uses of the unknown initial state, as a pass sees them (R7).
const (
	pinNone     uint8 = iota // no read takes the initial state
	pinForced                // each read that does has no other possible writer
	pinUnforced              // some read that does has another possible writer
)

// initPins classes each closed member under an unknown initial state by
// the reads the fast path's graph (the witness of the instance the pass
// follows) takes from the initial state (R7; docs/SEMANTICS.md §5
// "Retirement under an unknown initial state"). A register read is
// forced when no transaction the engine knows of, of any status, held or
// in the summary, other than the reader, wrote its (key, value): no
// later instance gives it another source (a closed read's candidates are
// all released, W1), so every witness of every later instance takes it
// from the initial state, and a member whose such reads are all forced
// ties the key's initial value the same way in every one. A list read
// that takes an initial list is never counted forced (its reader has a
// list op, and is held anyway: R8). Nil (all pinNone) under an empty initial
// state.
//
// written(w) is w's final writes, and whether they are every (key,
// value) it wrote (else its ops are read).
func (e *Engine) initPins(member func(int) bool, written func(w int) ([]kv, bool)) []uint8 {
	if e.opts.InitialState != history.InitialUnknown || e.naiveInit {
		return make([]uint8, len(e.txns))
	}
	pin := make([]uint8, len(e.txns))
	f := e.fast
	// writer[(k, v)] for each pair a member's read takes from the
	// initial state: its one writer (-1: none seen), -2 for two or more.
	writer := map[kv]int32{}
	for i := range e.txns {
		if !member(i) || e.flags[i]&(fClosed|fSettled) != fClosed || i >= f.nls.n {
			continue
		}
		for _, r := range f.nl(int(i)).initReads {
			if r.str == listFinal {
				pin[i] = pinUnforced
				continue
			}
			writer[r] = -1
		}
	}
	if len(writer) == 0 {
		return pin
	}
	note := func(r kv, w int) {
		switch x, seen := writer[r]; {
		case !seen || x == int32(w):
		case x == -1:
			writer[r] = int32(w)
		default:
			writer[r] = -2
		}
	}
	for w := range e.txns {
		if finals, all := written(w); all {
			for _, r := range finals {
				note(r, w)
			}
			continue
		}
		// Whole: a list member's ops may be in the body file (R8).
		t, err := e.txn(w)
		if err != nil {
			// Who else wrote what it wrote is unknown: every read of
			// the initial state counts as unforced (its reader stays).
			for r := range writer {
				writer[r] = -2
			}
			continue
		}
		for _, op := range t.Ops {
			if op.Kind == history.Read {
				continue
			}
			if r, ok := e.sum.kt.lookup(op.Key, op.Value); ok {
				note(r, w)
			}
		}
	}
	for i := range e.txns {
		if !member(i) || e.flags[i]&(fClosed|fSettled) != fClosed || i >= f.nls.n || pin[i] == pinUnforced {
			continue
		}
		for _, r := range f.nl(int(i)).initReads {
			x := writer[r]
			if (x != -1 && x != int32(i)) || e.sum.set(r.k).holds(r, e.sum.kt) {
				pin[i] = pinUnforced
				break
			}
			pin[i] = pinForced
		}
	}
	return pin
}

// holds reports whether the set holds r's value, dirty or not (nil: no).
func (vs *valueSet) holds(r kv, kt *keyTable) bool {
	return vs != nil && vs.containsKV(r, kt)
}

// compact drops the transactions not kept, renumbering the rest in their
// order, and drops them from the fast path (compactInPlace; a rebuild on
// the rest where that does not apply).
func (e *Engine) compact(keep []bool, bodies []int32) {
	if !slices.Contains(keep, false) {
		return
	}
	at := make([]int, len(e.txns))
	oldNames := slices.Clone(e.names)
	k := 0
	for i := range e.txns {
		at[i] = -1
		if keep[i] {
			at[i] = k
			e.txns[k], e.names[k], e.flags[k], e.blob[k] = e.txns[i], e.names[i], e.flags[i], e.blob[i]
			k++
		}
	}
	clear(e.txns[k:])
	// Fresh backing arrays, so that the retired bodies are garbage, with
	// room for what comes before the next pass (maybeRetire: when the
	// transactions held have doubled): a clone of exactly k grew again by
	// a quarter at a time, e.txns' appends a sixth of the bytes run
	// --level read-committed allocated.
	room := max(2*k, 16)
	e.txns = append(make([]history.Txn, 0, room), e.txns[:k]...)
	e.names = append(make([]string, 0, room), e.names[:k]...)
	e.flags = append(make([]uint8, 0, room), e.flags[:k]...)
	e.recount()
	e.blob = append(make([]int32, 0, room), e.blob[:k]...)
	if st := e.store; st != nil {
		// The held list members' bodies may be in the body file (R8):
		// each mark follows its transaction.
		j := 0
		for i := range keep {
			if keep[i] {
				st.off[j], st.n[j] = st.off[i], st.n[i]
				j++
			}
		}
		st.off, st.n = st.off[:k], st.n[:k]
	}
	for id, sl := range e.ids {
		if !sl.hasNewest {
			continue
		}
		if at[sl.newest] < 0 {
			sl.hasNewest = false
			if !sl.hasName {
				delete(e.ids, id)
				continue
			}
		} else {
			sl.newest = int32(at[sl.newest])
		}
		e.ids[id] = sl
	}
	// A retired name is free again, unless its body is kept: then it
	// names the body (a negative index), as the keeping engine would.
	for i, name := range oldNames {
		switch {
		case at[i] >= 0:
			e.setName(name, at[i])
		case bodies[i] >= 0:
			e.setName(name, -1-int(bodies[i]))
		default:
			e.dropName(name)
		}
	}
	if e.fast != nil && !naiveCompact && e.fast.compactInPlace(at, k) {
		e.compacted++
	} else {
		e.rebuild()
	}
	if e.fast != nil && e.fast.trouble {
		// The rebuilt fast path chose otherwise than the one the last
		// witness guided (F3): the next step checks.
		e.dirty = true
	}
}

// revive brings retired body b back into the engine (a core names it,
// R6), settled and closed as it left, and returns its index.
func (e *Engine) revive(b int32) (int, error) {
	var bd body
	if err := json.Unmarshal(e.sum.bodies[b], &bd); err != nil {
		return 0, fmt.Errorf("%w: body %d: %v", ErrCorrupt, b, err)
	}
	i := len(e.txns)
	e.txns = append(e.txns, bd.Txn)
	e.names = append(e.names, bd.Name)
	e.flags = append(e.flags, fClosed|fSettled)
	e.countFlags(fClosed|fSettled, 1)
	e.blob = append(e.blob, b)
	if st := e.store; st != nil {
		st.off, st.n = append(st.off, -1), append(st.n, 0)
	}
	e.setName(bd.Name, i)
	if e.fast != nil {
		e.fast.release(i, &e.txns[i])
	}
	return i, nil
}

// bodiesRead are the retired bodies an instance must hold: those that
// wrote, as an aborted or intermediate write, a value a closed
// unsettled member reads (kept, not dropped), so that the check sees the
// G1a or G1b a keeping engine would (R6), decoded, with their names.
func (e *Engine) bodiesRead(wildAll bool, wildKeys map[history.Key]bool) ([]history.Txn, []int32, error) {
	if len(e.sum.dirty) == 0 {
		return nil, nil, nil
	}
	var out []history.Txn
	var ids []int32
	seen := map[int32]bool{}
	for _, b := range e.blob {
		if b >= 0 {
			seen[b] = true // revived: in e.txns already
		}
	}
	for i := range e.txns {
		if e.flags[i]&(fUnchecked|fQuarantined|fSettled|fClosed) != fClosed {
			continue
		}
		// Whole, read back if spilled: once a list op stopped the
		// passes, closed bodies go to the body file (B1), and a read of
		// a dirty value retired before then must still find its body
		// (e.txns[i].Ops was nil there: the G1a became a garbage read,
		// TestDirtyReadAfterSpill).
		t, err := e.txn(i)
		if err != nil {
			return nil, nil, err
		}
		for _, op := range t.Ops {
			if op.Kind != history.Read || wildAll || wildKeys[op.Key] {
				continue
			}
			r, ok := e.sum.kt.lookup(op.Key, op.Value)
			if !ok {
				continue
			}
			for _, b := range e.sum.dirty[r] {
				if seen[b] {
					continue
				}
				seen[b] = true
				var bd body
				if err := json.Unmarshal(e.sum.bodies[b], &bd); err != nil {
					return nil, nil, fmt.Errorf("%w: body %d: %v", ErrCorrupt, b, err)
				}
				bd.Txn.ID = bd.Name
				out = append(out, bd.Txn)
				ids = append(ids, b)
			}
		}
	}
	return out, ids, nil
}

// naiveSettle makes a pass find the unsettled by a map of every held
// read (settleByReaders), as before settleByScans; settleCompare runs
// both and panics when they differ (the tests set it).
var naiveSettle, settleCompare bool

// settleByReaders marks unsettled (from the seeds in work, marked
// already) every reader some read of which an unsettled transaction's
// write is a candidate of, transitively: a map from each held read's
// (key, value) to its readers, walked from each unsettled writer's
// final writes.
func settleByReaders(n int, reader func(int) bool, reads, finals func(int) []kv, candidate func(int, int32) bool, unsettled []bool, work []int32) {
	// readers of each (key, value), as chains through links (head: the
	// last link's index + 1): one map entry per pair and no slice per
	// pair.
	type link struct{ t, next int32 }
	var links []link
	readers := make(map[kv]int32, 2*n)
	for i := range n {
		if !reader(i) {
			continue
		}
		for _, r := range reads(i) {
			links = append(links, link{int32(i), readers[r] - 1})
			readers[r] = int32(len(links))
		}
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		for _, w := range finals(int(u)) {
			for l := readers[w] - 1; l >= 0; l = links[l].next {
				if r := links[l].t; !unsettled[r] && candidate(int(r), u) {
					unsettled[r] = true
					work = append(work, r)
				}
			}
		}
	}
}

// settleScanRounds bounds settleByScans' scans before it hands the rest
// to settleByReaders (a long chain of readers would cost a scan each).
const settleScanRounds = 4

// settleByScans is settleByReaders' result found the other way round
// (docs/SEMANTICS.md §5 "A pass finds the unsettled by scans"): a map
// of the values the unsettled wrote (a handful: the open transactions'
// and what they unsettle), and scans of the held readers against it
// until one marks nothing, each reader marked adding its own writes at
// once. Both compute the least set holding the seeds and every reader
// of a value an unsettled transaction wrote, when it is a candidate of
// that read; building the map of every held read was the largest part
// of a pass on u300k.
func settleByScans(n int, reader func(int) bool, reads, finals func(int) []kv, candidate func(int, int32) bool, unsettled []bool, work []int32) {
	type link struct{ t, next int32 }
	var links []link
	bad := map[kv]int32{}
	wrote := func(u int32) {
		for _, w := range finals(int(u)) {
			links = append(links, link{u, bad[w] - 1})
			bad[w] = int32(len(links))
		}
	}
	for _, u := range work {
		wrote(u)
	}
	for round := 0; len(bad) > 0; round++ {
		if round == settleScanRounds {
			var all []int32
			for i := range n {
				if unsettled[i] {
					all = append(all, int32(i))
				}
			}
			settleByReaders(n, reader, reads, finals, candidate, unsettled, all)
			return
		}
		marked := false
		for i := range n {
			if unsettled[i] || !reader(i) {
				continue
			}
		scan:
			for _, r := range reads(i) {
				for l := bad[r] - 1; l >= 0; l = links[l].next {
					if candidate(i, links[l].t) {
						unsettled[i], marked = true, true
						wrote(int32(i))
						break scan
					}
				}
			}
		}
		if !marked {
			return
		}
	}
}
