package sionline

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// In-doubt writers that leave undecided: the ghost's companions
// (docs/SEMANTICS.md §5 "An in-doubt writer leaves undecided: the
// ghost's companions").
//
// An evicted transaction u whose outcome is unknown and which the
// witness left uncommitted used to leave only its absence: the ghost
// kept the version before u's, and a later read of u's version (u did
// commit) contradicted the choice, failed the screen and brought the
// archive segments since u back (BENCHMARKS.md, siflake and si28: about
// 80 of the 105 re-admissions of the 20K read-modify-write stream, and a
// third of its CPU). When committing u as well is a completion of what
// leaves (u's reads see the versions at a point of the witness, and
// nothing after that point touches a key u writes), u leaves as a
// companion of the ghost: an unknown-outcome transaction of the screen
// that writes u's last versions, after the ghost and before every member
// in real time. A completion of the next screen that commits it is one
// in which u committed; one that does not, one in which it did not.

// NoCompanions turns companions off (the naive model the tests compare
// against: every in-doubt writer takes the witness's choice).
var NoCompanions = false

// NoUnknownInitCompanions makes no companion under an unknown initial
// state, as before the rule that allows them there (the tests' naive
// model to compare against).
var NoUnknownInitCompanions = false

// NoInitialRefusal is the naive rule under an unknown initial state
// (tests only): a candidate's read of an initial value compared with
// null and of an initial list with the empty one, as under an empty
// initial state, instead of refusing the candidate.
var NoInitialRefusal = false

// NoOverwrite turns off the rule that lets a companion outlive an
// overwrite of one of its versions (overwritten): the rule before it,
// against which the tests compare.
var NoOverwrite = false

// NoDeadAtBirth refuses a companion candidate whenever a member touching
// a key it writes has an event after its point's bound, as before
// docs/SEMANTICS.md §5 "A version overwritten before anyone reads it
// does not keep an in-doubt writer in (si31)" (the tests compare).
var NoDeadAtBirth = false

// overwritten returns, among the register keys that the companions
// comps write and that chunk xs touches (touched), those whose first
// access by a member of xs in the witness is the commit of a write: no
// member of xs reads the key from outside before that commit (an
// external read is at its reader's begin; a member with no begin in the
// witness counts as reading first). A key a member appends to or reads
// as a list is never one.
func overwritten(e *Engine, comps []companion, xs []int, witness []string, touched map[history.Key]bool) map[history.Key]bool {
	want := map[history.Key]bool{}
	for _, c := range comps {
		for _, op := range c.Writes {
			if op.Kind == history.Write && touched[op.Key] {
				want[op.Key] = true
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	// Per member of xs touching a wanted key: whether it reads it from
	// outside (its first op on the key a read), writes it, or uses it as
	// a list.
	type use struct{ read, write bool }
	uses := map[string]map[history.Key]use{}
	bad := map[history.Key]bool{}
	for _, i := range xs {
		x := &e.txs[i]
		var m map[history.Key]use
		for _, op := range x.T.Ops {
			if !want[op.Key] {
				continue
			}
			if op.IsList || op.Kind == history.Append || (op.Kind != history.Read && op.Kind != history.Write) {
				bad[op.Key] = true
				continue
			}
			if m == nil {
				m = map[history.Key]use{}
			}
			u, seen := m[op.Key]
			if op.Kind == history.Read && !seen {
				u.read = true
			}
			if op.Kind == history.Write {
				u.write = true
			}
			m[op.Key] = u
		}
		if m != nil {
			uses[x.Name] = m
		}
	}
	over := map[history.Key]bool{}
	began := map[string]bool{}
	for _, ev := range witness {
		commit := strings.HasPrefix(ev, "commit ")
		name := ev[strings.IndexByte(ev, ' ')+1:]
		m, ok := uses[name]
		if !ok {
			continue
		}
		if !commit {
			began[name] = true
			for k, u := range m {
				if u.read && !over[k] {
					bad[k] = true // read before any overwrite
				}
			}
			continue
		}
		for k, u := range m {
			if u.write && !bad[k] {
				over[k] = true
			}
		}
	}
	// A reader with no begin in the witness (not ordered) counts as a
	// read before every overwrite.
	for name, m := range uses {
		if began[name] {
			continue
		}
		for k, u := range m {
			if u.read {
				bad[k] = true
			}
		}
	}
	for k := range bad {
		delete(over, k)
	}
	return over
}

// NoSi33Touch counts every member of a chunk as touching a carried
// companion's keys, the aborted ones and the in-doubt ones the witness
// left uncommitted included, as before docs/SEMANTICS.md §5 "A
// companion's version the chunk already holds (si33)" (K7d; the tests
// compare).
var NoSi33Touch = false

// NoSameVersion turns off K7e (the same section): a carried companion
// whose version of a touched register key is the one the ghost held
// before the chunk is dropped, as before (the tests compare).
var NoSameVersion = false

// sameVersions returns the register keys on which a companion of g
// writes the version g itself holds: the value g.Reg has for the key
// (not a pin). g is the ghost before a chunk replays into it.
func sameVersions(g *ghost) map[history.Key]bool {
	var out map[history.Key]bool
	for _, c := range g.Comp {
		for _, op := range c.Writes {
			if op.Kind != history.Write {
				continue
			}
			if v, ok := g.Reg[op.Key]; ok && v == op.Value {
				if out == nil {
					out = map[history.Key]bool{}
				}
				out[op.Key] = true
			}
		}
	}
	return out
}

// What K7e says of a key in same that the chunk touches (sameHeld).
const (
	sameNone uint8 = iota // a member uses it as a list or otherwise: K7e says nothing
	sameKept              // read as a register, written by no member the witness commits
	sameDead              // read and written as a register; a member the witness commits writes it
)

// sameHeld classifies the keys of same that the members in (those the
// witness commits) touch: each op on them a register read or write, and
// whether one of them writes it.
func sameHeld(e *Engine, same map[history.Key]bool, in []int, touched map[history.Key]bool) map[history.Key]uint8 {
	out := map[history.Key]uint8{}
	for k := range same {
		if touched[k] {
			out[k] = sameKept
		}
	}
	bad := map[history.Key]bool{}
	for _, i := range in {
		for _, op := range e.txs[i].T.Ops {
			if _, ok := out[op.Key]; !ok {
				continue
			}
			switch {
			case op.IsList || (op.Kind != history.Read && op.Kind != history.Write):
				bad[op.Key] = true
			case op.Kind == history.Write:
				out[op.Key] = sameDead
			}
		}
	}
	for k := range bad {
		out[k] = sameNone
	}
	return out
}

// compPrefix begins every companion's name in the screen; no member's
// name begins with it (add names members by released IDs, "unchecked:"
// ones, or ID@start).
const compPrefix = "sionline:companion:"

// companion is an in-doubt writer that left undecided. Writes are its
// last register writes, one per key, by key; Keys every key it read or
// wrote, by key (companions' Keys are pairwise disjoint: each one's
// commit changes no read of another, so any set of them may commit).
type companion struct {
	Name   string
	Writes []history.Op
	Keys   []history.Key
	// pins are the initial values the candidate's reads fixed (an
	// unknown initial state): they join the ghost's pins when it leaves
	// as a companion. Not kept after that (not encoded).
	pins []history.Op
	// why names the condition that refused a candidate (newCompanion's
	// false), for traceCompanion. Not encoded.
	why string
}

func isCompanion(name string) bool { return strings.HasPrefix(name, compPrefix) }

// companionTimes gives the screen's ghost time and the companions' time
// when the ghost g has companions and times leave room: the ghost ends
// 2Δ before the companions begin, and a companion's effective end (its
// end plus the in-doubt bound D) is the ghost's own time T, at or before
// every member's start (W3). ok is false when D is unbounded or the
// arithmetic would leave int64: the screen then carries no companion
// (each taken as not committed: a stronger screen).
func (e *Engine) companionTimes(g *ghost) (gt, ct int64, ok bool) {
	d, s := e.opts.InDoubt, e.opts.Skew
	if g == nil || len(g.Comp) == 0 || d < 0 || s < 0 || d > math.MaxInt64/4 || s > math.MaxInt64/16 {
		return 0, 0, false
	}
	if g.Time < math.MinInt64/2+d+4*s+2 {
		return 0, 0, false
	}
	ct = g.Time - d - 2*s
	return ct - 2*s - 1, ct, true
}

// companionTxns returns the companions of the screen: those writing a
// key in on (nil: every one). A companion writing no key of the screen
// constrains nothing but itself and is left out (not committed). Each
// is unknown, at time ct, with its writes.
func companionTxns(g *ghost, on map[history.Key]bool, ct int64) []history.Txn {
	var out []history.Txn
	for _, c := range g.Comp {
		use := on == nil
		for _, op := range c.Writes {
			use = use || on[op.Key]
		}
		if use {
			out = append(out, history.Txn{ID: c.Name, Start: ct, End: ct, HasTime: true, Status: history.Unknown, Ops: c.Writes})
		}
	}
	return out
}

// companionsAllowed says whether this engine makes companions: an empty
// initial state (so a read of a key no one wrote is of null, and no pin
// is involved) or an unknown one (a candidate that reads an initial
// value or list is then refused: newCompanion, docs/SEMANTICS.md §5
// "Companions under an unknown initial state"), a bounded in-doubt
// time, and a screen on members alone (no projection).
func (e *Engine) companionsAllowed() bool {
	init := e.opts.InitialState == history.InitialEmpty || (e.opts.InitialState == history.InitialUnknown && !NoUnknownInitCompanions)
	return !NoCompanions && init && e.opts.InDoubt >= 0 && e.allMembers()
}

// committedIn returns the names the witness commits.
func committedIn(witness []string) map[string]bool {
	out := map[string]bool{}
	for _, ev := range witness {
		if name, ok := strings.CutPrefix(ev, "commit "); ok {
			out[name] = true
		}
	}
	return out
}

// absorb applies to g, at the start of an eviction, the companions the
// witness committed (they commit after the ghost and before every
// member: their versions are what the members saw), and drops them.
func absorb(g *ghost, committed map[string]bool) {
	if len(g.Comp) == 0 {
		return
	}
	var kept []companion
	for _, c := range g.Comp {
		if !committed[c.Name] {
			kept = append(kept, c)
			continue
		}
		for _, op := range c.Writes {
			g.touch(op.Key)
			if op.Kind == history.Append {
				// A copy: g's lists may be shared with another ghost.
				l := g.List[op.Key]
				g.List[op.Key] = append(l[:len(l):len(l)], op.Value)
				continue
			}
			g.Reg[op.Key] = op.Value
			delete(g.Pin, op.Key)
		}
	}
	g.Comp = kept
}

// candidateKeys returns g's versions, before chunk xs replays into it,
// on the keys of the chunk's in-doubt members the witness left
// uncommitted (the candidates of newCompanion): the state their point
// is computed from. Lists are shared, not copied: replayInto copies a
// list before it appends to one it does not own, and appends to one it
// owns only beyond the length held here.
func (e *Engine) candidateKeys(g *ghost, xs []int, committed map[string]bool) *ghost {
	pre := &ghost{Reg: map[history.Key]history.Value{}, List: map[history.Key][]history.Value{}, Pin: map[history.Key]history.Op{}}
	for _, i := range xs {
		x := &e.txs[i]
		if x.T.Status != history.Unknown || committed[x.Name] {
			continue
		}
		for _, op := range x.T.Ops {
			if v, ok := g.Reg[op.Key]; ok {
				pre.Reg[op.Key] = v
			}
			if l, ok := g.List[op.Key]; ok {
				pre.List[op.Key] = l
			}
			if p, ok := g.Pin[op.Key]; ok {
				pre.Pin[op.Key] = p
			}
		}
	}
	return pre
}

// companionsAfter updates g's companions after chunk xs left with the
// witness (pre: the ghost's versions before the chunk on the
// candidates' keys, candidateKeys): a companion carried from before
// whose written keys xs touches is dropped (taken as not committed, the witness's choice),
// and each in-doubt member of xs that the witness left uncommitted and
// that may commit at a point of the witness becomes one (newCompanion).
// g is the ghost after the chunk. Keys stay pairwise disjoint; a
// candidate that would share one stays out. create false makes none
// (companionsAllowed does not hold).
func (e *Engine) companionsAfter(g, pre *ghost, same map[history.Key]bool, xs []int, witness []string, committed map[string]bool, create bool) {
	// Only the members the witness commits touch a carried companion's
	// keys: an aborted member, or an in-doubt one left uncommitted, is
	// no transaction of the completion built for the chunk
	// (docs/SEMANTICS.md §5 "A companion's version the chunk already
	// holds (si33)", K7d).
	in := xs
	if !NoSi33Touch {
		in = make([]int, 0, len(xs))
		for _, i := range xs {
			if committed[e.txs[i].Name] {
				in = append(in, i)
			}
		}
	}
	touched := map[history.Key]bool{}
	for _, i := range in {
		for _, op := range e.txs[i].T.Ops {
			touched[op.Key] = true
		}
	}
	var over map[history.Key]bool
	if !NoOverwrite {
		over = overwritten(e, g.Comp, in, witness, touched)
	}
	var held map[history.Key]uint8
	if !NoSameVersion && len(same) > 0 {
		held = sameHeld(e, same, in, touched)
	}
	used := map[history.Key]bool{}
	var kept []companion
	for _, c := range g.Comp {
		// A register version of c that a member of the chunk overwrote
		// before any member read it is dead: c's commit where it stands
		// (before the chunk) changes no read of the chunk there, and the
		// ghost after it holds the overwriting version either way
		// (docs/SEMANTICS.md §5 "A companion outlives the overwrites of
		// its versions"). Any other touch drops c.
		// K7e (si33): a register version of c that the ghost held
		// before the chunk is read the same whether c committed before
		// the chunk or not; it dies when a member the witness commits
		// writes the key, and c keeps it otherwise.
		dies := func(op history.Op) bool {
			return over[op.Key] || (op.Kind == history.Write && same[op.Key] && held[op.Key] == sameDead)
		}
		drop, dead := false, 0
		for _, op := range c.Writes {
			switch {
			case !touched[op.Key]:
			case dies(op):
				dead++
			case op.Kind == history.Write && same[op.Key] && held[op.Key] == sameKept:
			default:
				drop = true
			}
		}
		if drop || dead == len(c.Writes) {
			if traceCompanion != nil {
				traceCompanion("dropped (K7)", c.Writes)
			}
			continue
		}
		if dead > 0 {
			c.Writes = slices.DeleteFunc(slices.Clone(c.Writes), dies)
		}
		kept = append(kept, c)
		for _, k := range c.Keys {
			used[k] = true
		}
	}
	g.Comp = kept
	if !create {
		return
	}
	for _, i := range xs {
		x := &e.txs[i]
		if x.T.Status != history.Unknown || committed[x.Name] {
			continue
		}
		c, ok := e.newCompanion(x, g, pre, xs, witness)
		if !ok {
			if traceCompanion != nil {
				traceCompanion("refused: "+c.why, x.T.Ops)
			}
			continue
		}
		free := true
		for _, k := range c.Keys {
			free = free && !used[k]
		}
		if !free {
			if traceCompanion != nil {
				traceCompanion("refused: keys (K5)", x.T.Ops)
			}
			continue
		}
		for _, k := range c.Keys {
			used[k] = true
		}
		for _, p := range c.pins {
			g.touch(p.Key)
			g.Pin[p.Key] = p
		}
		c.pins = nil
		g.Comp = append(g.Comp, c)
		e.companions++
	}
}

// newCompanion says whether u, an in-doubt member of chunk xs that the
// witness left uncommitted, may leave as a companion of g (the ghost
// after the chunk; pre holds the ghost's versions before it on u's
// keys), and builds it. u may commit at a point of the witness (between
// two of its events, its begin and commit adjacent there) when
//
//   - no member of xs that u precedes (real time or session order)
//     begins before the point;
//   - no member of xs that u follows (real time or session order) has
//     an event after the point (checked, not assumed: a session
//     predecessor may overlap a real-time successor);
//   - no event of xs after the point belongs to a member touching a key
//     u writes or appends to, so that the chunk's final state with u
//     committed at the point is g with u's writes and appends;
//   - u's ops, run in order from the state at the point (pre, then the
//     commits of xs before the point, in witness order) with its own
//     writes and appends visible to its later reads, read what they
//     read.
//
// The first three bound the point to an interval [lo, hi] of the
// witness; the last is tried at lo and after each commit up to hi.
// Then the chunk's witness with u's begin and commit at the point is a
// completion of {ghost} ∪ xs: u's reads hold by the last condition, no
// two writers of a key overlap (u's events are adjacent, and nothing
// after them touches its written keys), and real time and session order
// hold by the first two. Register and list keys (a key used both ways,
// or against g's use of it, is refused), no null written, times known.
func (e *Engine) newCompanion(u *tx, g, pre *ghost, xs []int, witness []string) (companion, bool) {
	t := &u.T
	unknownInit := e.opts.InitialState == history.InitialUnknown
	if !t.HasTime {
		return companion{why: "time"}, false
	}
	keys := map[history.Key]bool{}
	for _, op := range t.Ops {
		if op.Key == "" {
			return companion{why: "key"}, false
		}
		keys[op.Key] = true
	}
	// Members of the chunk, by name; u's successors and predecessors
	// among them; members touching a key u writes.
	in := make(map[string]int, len(xs))
	for _, i := range xs {
		in[e.txs[i].Name] = i
	}
	written := map[history.Key]bool{}
	for _, op := range t.Ops {
		if op.Kind != history.Read {
			written[op.Key] = true
		}
	}
	succ := map[string]bool{}
	pred := map[string]bool{}
	touch := map[string]bool{}
	for _, i := range xs {
		x := &e.txs[i]
		if x == u {
			continue
		}
		sameSess := t.HasSession && x.T.HasSession && x.T.Session == t.Session
		if e.opts.Precedes(t, &x.T) || (sameSess && x.Seq > u.Seq) {
			succ[x.Name] = true
		}
		if e.opts.Precedes(&x.T, t) || (sameSess && x.Seq < u.Seq) {
			pred[x.Name] = true
		}
		for _, op := range x.T.Ops {
			if written[op.Key] {
				touch[x.Name] = true
				break
			}
		}
	}
	// bounds says whether witness event ev bounds the point from below:
	// any event of a predecessor or of a member touching a key u writes.
	bounds := func(ev string) bool {
		_, name, ok := strings.Cut(ev, " ")
		return ok && (pred[name] || touch[name])
	}
	// The point may be anywhere in [lo, hi]: hi is the first begin of a
	// successor; lo follows every event of a predecessor and of a
	// member touching a key u writes.
	hi := len(witness)
	for n, ev := range witness {
		if name, ok := strings.CutPrefix(ev, "begin "); ok && succ[name] {
			hi = n
			break
		}
	}
	lo := 0
	for n, ev := range witness[:hi] {
		if bounds(ev) {
			lo = n + 1
		}
	}
	// Events that bound the point after hi: refused, unless each belongs
	// to a member with no such event before hi and the key is dead
	// there (deadAfter).
	var dead map[history.Key]bool
	for _, ev := range witness[hi:] {
		if bounds(ev) {
			if NoDeadAtBirth {
				return companion{why: "after-successor"}, false
			}
			var ok bool
			if dead, ok = e.deadAfter(t, in, witness, hi, bounds, pred, written); !ok {
				return companion{why: "after-successor"}, false
			}
			break
		}
	}
	for _, op := range t.Ops {
		l := op.IsList || op.Kind == history.Append
		if _, gl := g.List[op.Key]; gl && !l {
			return companion{why: "use"}, false
		}
		if _, gr := g.Reg[op.Key]; gr && l {
			return companion{why: "use"}, false
		}
		if p, ok := g.Pin[op.Key]; ok && (!unknownInit || p.IsList != l) {
			return companion{why: "use"}, false
		}
		if p, ok := pre.Pin[op.Key]; ok && (!unknownInit || p.IsList != l) {
			return companion{why: "use"}, false
		}
		if op.Kind == history.Write && op.Value == history.Null {
			return companion{why: "use"}, false
		}
		if op.Kind != history.Write && op.Kind != history.Append && op.Kind != history.Read {
			return companion{why: "use"}, false
		}
	}
	isList := map[history.Key]bool{}
	for _, op := range t.Ops {
		l := op.IsList || op.Kind == history.Append
		if was, seen := isList[op.Key]; seen && was != l {
			return companion{why: "use"}, false
		}
		isList[op.Key] = l
	}
	// The state on u's keys: pre, then the chunk's commits in witness
	// order (apply), up to the point.
	reg := map[history.Key]history.Value{}
	list := map[history.Key][]history.Value{}
	for k := range keys {
		if v, ok := pre.Reg[k]; ok {
			reg[k] = v
		}
		if l, ok := pre.List[k]; ok {
			list[k] = l
		}
	}
	apply := func(ev string) {
		name, ok := strings.CutPrefix(ev, "commit ")
		if !ok {
			return
		}
		i, ok := in[name]
		if !ok {
			return
		}
		for _, op := range e.txs[i].T.Ops {
			if !keys[op.Key] {
				continue
			}
			switch op.Kind {
			case history.Write:
				reg[op.Key] = op.Value
			case history.Append:
				l := list[op.Key]
				list[op.Key] = append(l[:len(l):len(l)], op.Value)
			}
		}
	}
	// reads runs u's ops from the state: whether each read sees what it
	// read (u's own writes and appends visible to its later reads).
	//
	// Under an unknown initial state a read that sees the initial value
	// or list (a register no version holds at the point; a list's
	// prefix before the appends) reads the ghost's pin when there is
	// one (before the chunk or after it: one initial value per key);
	// otherwise it fixes the initial value (fresh), and u leaves only
	// with that fix added to the ghost's pins: the screens after it
	// carry u's writes, not its reads, so the fix must be the ghost's
	// (docs/SEMANTICS.md §5 "Companions under an unknown initial
	// state").
	pinOf := func(k history.Key) (history.Op, bool) {
		if p, ok := pre.Pin[k]; ok {
			return p, true
		}
		p, ok := g.Pin[k]
		return p, ok
	}
	// A fresh fix only on a key no other member of the screen touches:
	// a member's read of the key's initial value in the witness may have
	// been pinned and then unpinned by a later write in the same chunk,
	// and a member of a later chunk of the same witness (or one still
	// held) may have read another initial value there; u's fix must
	// contradict neither (docs/SEMANTICS.md §5 "A companion's fix must
	// hold for the whole witness (si32)"). Asked only for a fresh fix (a
	// scan of the screen's ops: no set built per candidate).
	chunkTouches := func(k history.Key) bool {
		for i := range e.txs {
			if &e.txs[i] == u {
				continue
			}
			for _, op := range e.txs[i].T.Ops {
				if op.Key == k {
					return true
				}
			}
		}
		return false
	}
	fresh := map[history.Key]history.Op{}
	own := map[history.Key]history.Value{}
	apps := map[history.Key][]history.Value{}
	failed := "" // which read refused, the last time reads ran (traceCompanion)
	reads := func() bool {
		clear(own)
		clear(apps)
		clear(fresh)
		for _, op := range t.Ops {
			switch op.Kind {
			case history.Write:
				own[op.Key] = op.Value
			case history.Append:
				apps[op.Key] = append(apps[op.Key], op.Value)
			case history.Read:
				if op.IsList {
					l := list[op.Key]
					if unknownInit && !NoInitialRefusal {
						// The initial prefix: the pin's, a fix made by
						// an earlier read of u, or this read's.
						p, ok := pinOf(op.Key)
						if !ok {
							p, ok = fresh[op.Key]
						}
						if !ok {
							n := len(op.List) - len(l) - len(apps[op.Key])
							if n < 0 || chunkTouches(op.Key) {
								failed = "fresh fix on a touched list"
								return false
							}
							p = history.Op{Kind: history.Read, Key: op.Key, IsList: true, List: slices.Clone(op.List[:n])}
							fresh[op.Key] = p
						}
						l = append(slices.Clone(p.List), l...)
					}
					if !hasPrefix(op.List, l) || !slices.Equal(op.List[len(l):], apps[op.Key]) {
						failed = "list"
						return false
					}
					continue
				}
				cur, ok := own[op.Key]
				if !ok {
					if cur, ok = reg[op.Key]; !ok {
						cur = history.Null
						if unknownInit && !NoInitialRefusal {
							// The initial value: the pin's, a fix made
							// by an earlier read of u, or this read's.
							p, ok := pinOf(op.Key)
							if !ok {
								p, ok = fresh[op.Key]
							}
							if !ok {
								if chunkTouches(op.Key) {
									failed = "fresh fix on a touched key"
									return false
								}
								p = history.Op{Kind: history.Read, Key: op.Key, Value: op.Value}
								fresh[op.Key] = p
							}
							cur = p.Value
						}
					}
				}
				if op.Value != cur {
					failed = "value"
					return false
				}
			}
		}
		return true
	}
	for _, ev := range witness[:lo] {
		apply(ev)
	}
	found := reads()
	for n := lo; n < hi && !found; n++ {
		apply(witness[n])
		found = strings.HasPrefix(witness[n], "commit ") && reads()
	}
	if !found {
		return companion{why: "reads: " + failed}, false
	}
	if len(written) == 0 {
		return companion{why: "no-write"}, false
	}
	// The initial values u's reads fixed become the ghost's pins (the
	// caller keeps u only if its keys are free; fixes of a refused
	// candidate are not made: pins is returned for the caller).
	c := companion{Name: compPrefix + strconv.FormatUint(u.Seq, 10)}
	for _, p := range fresh {
		c.pins = append(c.pins, p)
	}
	slices.SortFunc(c.pins, func(a, b history.Op) int { return strings.Compare(string(a.Key), string(b.Key)) })
	for k := range keys {
		c.Keys = append(c.Keys, k)
	}
	slices.Sort(c.Keys)
	for _, k := range c.Keys {
		if v, ok := own[k]; ok && !dead[k] {
			c.Writes = append(c.Writes, history.Op{Kind: history.Write, Key: k, Value: v})
		}
		for _, v := range apps[k] {
			c.Writes = append(c.Writes, history.Op{Kind: history.Append, Key: k, Value: v})
		}
	}
	if len(c.Writes) == 0 {
		return companion{why: "all-dead"}, false // every version dead: nothing to carry
	}
	return c, true
}

// deadAfter is newCompanion's rule for witness events after hi (the
// first begin of a successor of u) that bound u's point
// (docs/SEMANTICS.md §5 "A version overwritten before anyone reads it
// does not keep an in-doubt writer in (si31)"): each belongs to a member
// m of the chunk with no bounding event before hi (so the point, which
// lies before hi, precedes every event of m), and from hi on, in
// witness order, the first access to each key u writes that such
// members touch is the commit of a register write of it: no begin of a
// member reading the key from outside (its first op on the key a read)
// comes before that commit, no member uses the key as a list, and u
// writes it as a register. Those keys are dead: with u committed at the
// point, every member after it reads the overwriting version or a later
// one, and the chunk's final state on them is g's, as without u. It
// returns them, or false when the rule does not hold. in maps the
// chunk's members' names to their index.
func (e *Engine) deadAfter(u *history.Txn, in map[string]int, witness []string, hi int, bounds func(string) bool, pred map[string]bool, written map[history.Key]bool) (map[history.Key]bool, bool) {
	reg := map[history.Key]bool{}
	for _, op := range u.Ops {
		if written[op.Key] {
			reg[op.Key] = op.Kind == history.Write && !op.IsList
		}
	}
	for _, op := range u.Ops {
		if written[op.Key] && (op.Kind == history.Append || op.IsList) {
			reg[op.Key] = false
		}
	}
	early := map[string]bool{}
	for _, ev := range witness[:hi] {
		if bounds(ev) {
			_, name, _ := strings.Cut(ev, " ")
			early[name] = true
		}
	}
	type use struct{ readFirst, write bool }
	uses := func(name string) (map[history.Key]use, bool) {
		i, ok := in[name]
		if !ok {
			return nil, false
		}
		m := &e.txs[i]
		out := map[history.Key]use{}
		for _, op := range m.T.Ops {
			if !written[op.Key] {
				continue
			}
			if op.IsList || op.Kind == history.Append || !reg[op.Key] {
				return nil, false
			}
			x, seen := out[op.Key]
			if !seen && op.Kind == history.Read {
				x.readFirst = true
			}
			if op.Kind == history.Write {
				x.write = true
			}
			out[op.Key] = x
		}
		return out, true
	}
	dead := map[history.Key]bool{}
	began := map[string]bool{}
	for _, ev := range witness[hi:] {
		if !bounds(ev) {
			continue
		}
		kind, name, _ := strings.Cut(ev, " ")
		if pred[name] || early[name] {
			return nil, false
		}
		m, ok := uses(name)
		if !ok {
			return nil, false
		}
		if kind == "begin" {
			began[name] = true
			for k, x := range m {
				if x.readFirst && !dead[k] {
					return nil, false // reads k before any overwrite
				}
			}
			continue
		}
		if !began[name] {
			return nil, false // no begin in the witness: not known to follow the point
		}
		for k, x := range m {
			if x.write {
				dead[k] = true
			}
		}
	}
	return dead, true
}
