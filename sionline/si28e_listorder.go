package sionline

import (
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// The witness's list orders by value (docs/SEMANTICS.md §5 "Two
// appenders no read has ordered: the witness follows their values").
//
// Two committed appenders u and v of a list key k, consecutive on k in
// the witness (u's commit first), with v's first value on k the smaller
// integer (intLess), and no transaction of the screen reading k after
// u's commit: nothing in the screen orders them, the witness (the
// search's, or the sweep's where its value rule did not apply) chose u
// first, and the ghost would keep that order for every later reader.
// The stream's values usually say the other (BENCHMARKS.md, si28e: 29
// appends against the values at 100K, each a later failed screen).
// repairListOrder moves v's begin and commit to just before u's begin
// when that keeps every constraint of the screen (movable), or else u's
// to just after v's commit (movableAfter): the ghost then keeps v's
// element before u's. Precision only: the result is a
// completion of the same screen, as the witness was.

// NoListRepair turns the repair off (the tests' model to compare).
var NoListRepair = false

// maxListRepairs bounds the moves per witness (each is a linear pass).
const maxListRepairs = 64

// repairListOrder returns the witness with appenders moved as the
// comment above says, or witness itself when nothing moves. byName
// maps the names of the screen the witness completes to their
// transactions.
func (e *Engine) repairListOrder(byName map[string]*history.Txn, witness []string) []string {
	if NoListRepair || len(witness) == 0 {
		return witness
	}
	out := witness
	for n := 0; n < maxListRepairs; n++ {
		u, v, after, ok := e.listPairAgainstValues(out, byName)
		if !ok {
			break
		}
		next, moved := move(out, u, v, after)
		if !moved {
			break
		}
		out = next
	}
	return out
}

// firstAppend is t's first value appended to k.
func firstAppend(t *history.Txn, k history.Key) (history.Value, bool) {
	for _, op := range t.Ops {
		if op.Kind == history.Append && op.Key == k {
			return op.Value, true
		}
	}
	return "", false
}

// listPairAgainstValues finds the first pair (u, v) of consecutive
// committed appenders of a list key k in the witness, u first, with v's
// first value the smaller integer, no begin of a reader of k after u's
// commit, and v movable before u.
func (e *Engine) listPairAgainstValues(witness []string, byName map[string]*history.Txn) (u, v string, after, ok bool) {
	type app struct {
		name string
		at   int
	}
	type cand struct {
		u, v string
		k    history.Key
		cu   int
	}
	// First the commits alone (most witnesses have no pair against the
	// values, and then nothing else is looked at).
	var last map[history.Key]app // the last appender committed so far
	var cands []cand
	for p, ev := range witness {
		name, isCommit := strings.CutPrefix(ev, "commit ")
		if !isCommit {
			continue
		}
		t := byName[name]
		if t == nil {
			continue
		}
		for _, op := range t.Ops {
			if op.Kind != history.Append {
				continue
			}
			if last == nil {
				last = map[history.Key]app{}
			}
			if prev, seen := last[op.Key]; seen && prev.name != name {
				pt := byName[prev.name]
				if pv, ok1 := firstAppend(pt, op.Key); ok1 && intLess(op.Value, pv) && t.Status == history.Committed && pt.Status == history.Committed {
					cands = append(cands, cand{prev.name, name, op.Key, prev.at})
				}
			}
			last[op.Key] = app{name, p}
		}
	}
	if len(cands) == 0 {
		return "", "", false, false
	}
	// The last begin of a reader of each candidate's key.
	lastRead := map[history.Key]int{}
	for _, c := range cands {
		lastRead[c.k] = -1
	}
	for p, ev := range witness {
		name, isBegin := strings.CutPrefix(ev, "begin ")
		if !isBegin {
			continue
		}
		if t := byName[name]; t != nil {
			for _, op := range t.Ops {
				if _, want := lastRead[op.Key]; want && op.Kind == history.Read {
					lastRead[op.Key] = p
				}
			}
		}
	}
	for _, c := range cands {
		if lastRead[c.k] > c.cu {
			continue // a reader saw u's element: the order is decided
		}
		if e.movable(witness, byName, c.u, c.v, c.k) {
			return c.u, c.v, false, true
		}
		if e.movableAfter(witness, byName, c.u, c.v, c.k) {
			return c.u, c.v, true, true
		}
	}
	return "", "", false, false
}

// mustPrecede says whether x's commit must precede y's begin in every
// completion: real time, or x earlier in y's session.
func (e *Engine) mustPrecede(x, y *history.Txn) bool {
	if e.opts.Precedes(x, y) {
		return true
	}
	return x.HasSession && y.HasSession && x.Session == y.Session && x.Start <= y.Start
}

// movable says whether moving v's begin and commit to just before u's
// begin leaves a completion of the screen (docs/SEMANTICS.md §5, the
// section named above): over the events from u's begin to v's commit,
// no commit is of a transaction that must precede v, writes a key v
// reads, or writes a key v writes (u's append to k aside); no begin
// (u's included) is of a transaction that reads a key v writes; and no
// transaction open across u's begin writes a key v writes.
func (e *Engine) movable(witness []string, byName map[string]*history.Txn, u, v string, k history.Key) bool {
	tv := byName[v]
	if tv == nil || byName[u] == nil {
		return false
	}
	reads, writes := keySets(tv)
	from, to, began := span(witness, u, v)
	if from < 0 || to < from {
		return false
	}
	for p := from; p < to; p++ {
		ev := witness[p]
		sp := strings.IndexByte(ev, ' ')
		name := ev[sp+1:]
		if name == v {
			continue
		}
		x := byName[name]
		if x == nil {
			return false
		}
		if ev[:sp] == "begin" {
			for _, op := range x.Ops {
				if op.Kind == history.Read && writes[op.Key] {
					return false
				}
			}
			continue
		}
		if e.mustPrecede(x, tv) {
			return false
		}
		for _, op := range x.Ops {
			if op.Kind == history.Read {
				continue
			}
			if reads[op.Key] || (writes[op.Key] && (name != u || op.Key != k)) {
				return false
			}
		}
	}
	// Open across u's begin: begun before it, committed after it.
	return !openWriter(witness, byName, began, from, v, writes)
}

// movableAfter is movable's mirror: whether moving u's begin and
// commit to just after v's commit leaves a completion of the screen.
// Over the events after u's begin up to v's commit (u's own aside): no
// commit writes a key u reads, or a key u writes (v's append to k
// aside); no begin is of a transaction that reads a key u writes, or
// that u must precede; and no transaction open across v's commit
// writes a key u writes.
func (e *Engine) movableAfter(witness []string, byName map[string]*history.Txn, u, v string, k history.Key) bool {
	tu := byName[u]
	if tu == nil || byName[v] == nil {
		return false
	}
	reads, writes := keySets(tu)
	from, to, began := span(witness, u, v)
	if from < 0 || to < from {
		return false
	}
	for p := from + 1; p <= to; p++ {
		ev := witness[p]
		sp := strings.IndexByte(ev, ' ')
		name := ev[sp+1:]
		if name == u {
			continue
		}
		x := byName[name]
		if x == nil {
			return false
		}
		if ev[:sp] == "begin" {
			if e.mustPrecede(tu, x) {
				return false
			}
			for _, op := range x.Ops {
				if op.Kind == history.Read && writes[op.Key] {
					return false
				}
			}
			continue
		}
		for _, op := range x.Ops {
			if op.Kind == history.Read {
				continue
			}
			if reads[op.Key] || (writes[op.Key] && (name != v || op.Key != k)) {
				return false
			}
		}
	}
	// Open across v's commit: begun at or before it, committed after it.
	return !openWriter(witness, byName, began, to, u, writes)
}

// keySets returns the keys t reads and the keys it writes (appends
// included).
func keySets(t *history.Txn) (reads, writes map[history.Key]bool) {
	reads, writes = map[history.Key]bool{}, map[history.Key]bool{}
	for _, op := range t.Ops {
		if op.Kind == history.Read {
			reads[op.Key] = true
		} else {
			writes[op.Key] = true
		}
	}
	return reads, writes
}

// span returns the witness positions of u's begin (from) and v's commit
// (to), -1 where absent, and every transaction's begin position.
func span(witness []string, u, v string) (from, to int, began map[string]int) {
	from, to = -1, -1
	began = map[string]int{}
	for p, ev := range witness {
		sp := strings.IndexByte(ev, ' ')
		name := ev[sp+1:]
		if ev[:sp] == "begin" {
			began[name] = p
			if name == u {
				from = p
			}
		} else if name == v {
			to = p
		}
	}
	return from, to, began
}

// openWriter reports whether a transaction other than skip that began
// before position at commits after it and writes a key in writes: one
// open across at, which a move to at would put on the wrong side of.
func openWriter(witness []string, byName map[string]*history.Txn, began map[string]int, at int, skip string, writes map[history.Key]bool) bool {
	for p := at + 1; p < len(witness); p++ {
		ev := witness[p]
		sp := strings.IndexByte(ev, ' ')
		name := ev[sp+1:]
		if ev[:sp] != "commit" || name == skip {
			continue
		}
		if b, ok := began[name]; ok && b < at {
			for _, op := range byName[name].Ops {
				if op.Kind != history.Read && writes[op.Key] {
					return true
				}
			}
		}
	}
	return false
}

// move moves v's begin and commit to just before u's begin, or (after)
// u's begin and commit to just after v's commit.
func move(witness []string, u, v string, after bool) ([]string, bool) {
	out := make([]string, 0, len(witness))
	bu, cu := "begin "+u, "commit "+u
	bv, cv := "begin "+v, "commit "+v
	done := false
	for _, ev := range witness {
		switch {
		case !after && ev == bu:
			out = append(out, bv, cv, ev)
			done = true
		case !after && (ev == bv || ev == cv):
		case after && ev == cv:
			out = append(out, ev, bu, cu)
			done = true
		case after && (ev == bu || ev == cu):
		default:
			out = append(out, ev)
		}
	}
	return out, done
}
