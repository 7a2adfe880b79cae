package weakonline

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

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
// Settled transactions that stay (aborted ones, committed ones with an
// intermediate write, the waiting ones) are kept whole for the cores
// that name them, with their reads out of the instance.

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
	keys map[history.Key]*valueSet
	n    int // transactions retired
}

type valueSet struct {
	runs  [][2]int64 // disjoint, sorted, not adjacent
	other map[history.Value]struct{}
}

func newSummary() *summary { return &summary{keys: map[history.Key]*valueSet{}} }

// intOf reads v as an integer if it is one in canonical text, so that a
// run of integers stands for exactly the values that print as it.
func intOf(v history.Value) (int64, bool) {
	i, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || history.IntValue(i) != v {
		return 0, false
	}
	return i, true
}

func (s *summary) has(k history.Key, v history.Value) bool {
	if s == nil {
		return false
	}
	vs := s.keys[k]
	if vs == nil {
		return false
	}
	if i, ok := intOf(v); ok {
		j := sort.Search(len(vs.runs), func(m int) bool { return vs.runs[m][1] >= i })
		return j < len(vs.runs) && vs.runs[j][0] <= i
	}
	_, ok := vs.other[v]
	return ok
}

func (s *summary) add(k history.Key, v history.Value) {
	vs := s.keys[k]
	if vs == nil {
		vs = &valueSet{}
		s.keys[k] = vs
	}
	i, ok := intOf(v)
	if !ok {
		if vs.other == nil {
			vs.other = map[history.Value]struct{}{}
		}
		vs.other[v] = struct{}{}
		return
	}
	vs.addInt(i)
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
	N    int
	Keys map[history.Key]valueSetJSON `json:",omitempty"`
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
	for k, vs := range s.keys {
		j := valueSetJSON{Runs: vs.runs}
		for v := range vs.other {
			j.Other = append(j.Other, v)
		}
		slices.Sort(j.Other)
		out.Keys[k] = j
	}
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
		s.keys[k] = vs
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

// retirable reports whether the engine retires at its level and initial
// state: read committed only (R1), and not under an unknown initial
// state, where a read of the initial value of a key constrains every
// later read of that key's initial value (one value per key), a fact
// between a settled and a later transaction that the summary does not
// keep.
func (e *Engine) retirable() bool {
	return !e.noRetire && e.opts.Level == history.ReadCommitted && e.opts.InitialState != history.InitialUnknown
}

// maybeRetire runs a pass when the transactions held have doubled since
// the last one. Called only after a step that found the instance
// satisfiable, with no core waiting (R3).
func (e *Engine) maybeRetire() {
	if !e.retirable() || e.deferred || e.undecided || len(e.txns) < e.nextRetire {
		return
	}
	e.retire()
	e.nextRetire = max(e.retireMin, 2*len(e.txns))
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
	// readers of each (key, value), as chains through links (head: the
	// last link's index + 1): one map entry per pair and no slice per
	// pair.
	type link struct{ t, next int32 }
	var links []link
	readers := make(map[kv]int32, 2*n)
	push := func(m map[kv]int32, r kv, t int) {
		links = append(links, link{int32(t), m[r] - 1})
		m[r] = int32(len(links))
	}
	each := func(m map[kv]int32, r kv, fn func(t int32)) {
		for l := m[r] - 1; l >= 0; l = links[l].next {
			fn(links[l].t)
		}
	}
	for i := range e.txns {
		if !member(i) {
			continue
		}
		t := &e.txns[i]
		p := &parsed[i]
		if f := e.fast; f != nil && i < len(f.node) && f.node[i] {
			// The fast path parsed it at release; its reads are the
			// ones its graph keeps (a read dropped from the instance
			// stays dropped: taint and the summary only grow).
			p.finals, p.reads, p.ok = f.finals[i], f.reads[i], true
		} else {
			p.finals, p.reads, p.ok = parse(t)
		}
		if !p.ok {
			continue
		}
		for _, op := range t.Ops {
			if op.Kind != history.Read {
				for _, f := range p.finals {
					if f.k == op.Key && f.v != op.Value {
						p.inter = true
					}
				}
			}
		}
		if e.flags[i]&fSettled == 0 {
			for _, r := range p.reads {
				push(readers, r, i)
			}
		}
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
	var work []int32
	for i := range e.txns {
		if !member(i) || e.flags[i]&fSettled != 0 {
			continue
		}
		t := &e.txns[i]
		if t.Status == history.Aborted {
			continue // never a source, its reads unchecked: settled
		}
		if e.flags[i]&fClosed == 0 || t.Status == history.Unknown || !parsed[i].ok {
			unsettled[i] = true
			work = append(work, int32(i))
		}
	}
	for len(work) > 0 {
		u := work[len(work)-1]
		work = work[:len(work)-1]
		for _, w := range parsed[u].finals {
			each(readers, w, func(r int32) {
				if !unsettled[r] && candidate(int(r), u) {
					unsettled[r] = true
					work = append(work, r)
				}
			})
		}
	}
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
	keep := make([]bool, n)
	for i := range e.txns {
		keep[i] = true
		if !member(i) || unsettled[i] {
			continue
		}
		e.flags[i] |= fSettled
		t := &e.txns[i]
		p := &parsed[i]
		if t.Status != history.Committed || !p.ok || p.inter {
			continue // kept whole: a core may name it (G1a, G1b)
		}
		wait := false
		for _, w := range p.finals {
			if end, ok := firstEnd[w]; ok && t.HasTime && end <= t.Start-2*e.opts.Skew {
				wait = true
			}
		}
		if wait {
			continue
		}
		keep[i] = false
		for _, w := range p.finals {
			e.sum.add(w.k, w.v)
		}
		e.sum.n++
	}
	e.compact(keep)
}

// compact drops the transactions not kept, renumbering the rest in their
// order, and rebuilds the fast path on them.
func (e *Engine) compact(keep []bool) {
	if !slices.Contains(keep, false) {
		return
	}
	at := make([]int, len(e.txns))
	k := 0
	for i := range e.txns {
		at[i] = -1
		if keep[i] {
			at[i] = k
			e.txns[k], e.names[k], e.flags[k] = e.txns[i], e.names[i], e.flags[i]
			k++
		}
	}
	clear(e.txns[k:])
	// Fresh backing arrays, so that the retired bodies are garbage.
	e.txns = slices.Clone(e.txns[:k])
	e.names = slices.Clone(e.names[:k])
	e.flags = slices.Clone(e.flags[:k])
	for id, i := range e.index {
		if at[i] < 0 {
			delete(e.index, id)
		} else {
			e.index[id] = at[i]
		}
	}
	clear(e.byName)
	for i, name := range e.names {
		e.byName[name] = i
	}
	e.rebuild()
	if e.fast != nil && e.fast.trouble {
		// The rebuilt fast path chose otherwise than the one the last
		// witness guided (F3): the next step checks.
		e.dirty = true
	}
}
