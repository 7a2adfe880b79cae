package incremental

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/saturation"
)

// The weak levels (read-committed, read-atomic, causal) are decided by the
// polynomial back end (package saturation) rather than the SAT encoding:
// Check hands every level whose Backend is BackendPolynomial to checkWeak.
//
// saturation needs each read's source. Where prepare's tables leave one
// candidate per read (unique values, known outcomes, a known initial
// state), one saturation run decides. Otherwise every choice (a source per
// ambiguous read, a commit bit per unknown transaction that some read
// could read from, the initial value of each key under
// --initial-state unknown) is tried, up to weakMaxChoices; beyond that the
// verdict is unknown, never a guess (docs/SEMANTICS.md §1 "The weaker
// levels"). A list read's choices are its parses (listparse.go): each is
// a version of the key, read from its last appender, and orders the
// appenders it shows and every other appender after them
// (docs/SEMANTICS.md §1 "Lists at the weak levels").

// weakMaxChoices bounds the choices enumerated for one history.
const weakMaxChoices = 1 << 16

// weakMaxWork bounds choices × transactions: each choice is a full
// saturation run.
const weakMaxWork = 1 << 26

// weakMaxParses bounds the parses of one list read; a read with more
// makes the verdict unknown (a parse left out could be the one that
// explains the history).
const weakMaxParses = 256

func weakModel(lv history.Level) saturation.Model {
	switch lv {
	case history.ReadAtomic:
		return saturation.ReadAtomic
	case history.Causal:
		return saturation.Causal
	}
	return saturation.ReadCommitted
}

// weakRead is an external read with its candidate sources; it is
// p.txns[t].reads[ri] for the same t and ri (the value read is there).
// There is one per read of the history, so it is kept small: 32 bytes,
// srcs carved from a shared arena. A list read's candidates are its
// parses, kept aside (weakLists) since lists are rare.
type weakRead struct {
	srcs    []int32 // committed or unknown final writers, minus those after the reader
	key     int32
	initial bool // the initial state is a candidate
	list    bool // a list read: its choices are weakLists' parses
}

// weakLists holds the parses of each list read, by (reader, read index).
type weakLists map[[2]int32][]listParse

// choices is the number of candidates of read ri of t.
func (wl weakLists) choices(t int32, ri int, r *weakRead) int {
	if r.list {
		return len(wl[[2]int32{t, int32(ri)}])
	}
	return len(r.srcs) + b2i(r.initial)
}

// arena hands out slices carved from shared blocks: millions of slices of
// a few elements cost one allocation per block, not one each, and no
// append ever grows (and copies) them. Blocks double from 64 elements up
// to 64Ki, so that a tiny history takes a tiny block.
type arena[T any] struct{ block []T }

// take returns a slice of length n whose capacity ends at n, so that an
// append to it cannot write into its neighbour.
func (a *arena[T]) take(n int) []T {
	if n == 0 {
		return nil
	}
	if cap(a.block)-len(a.block) < n {
		a.block = make([]T, 0, max(n, min(2*cap(a.block), 1<<16), 64))
	}
	i := len(a.block)
	a.block = a.block[:i+n]
	return a.block[i : i+n : i+n]
}

// weakOutcome is one decision of a (sub)history.
type weakOutcome struct {
	verdict Verdict
	witness []int32 // Valid: a commit order, transaction indices
	// members is a violating set to shrink (Invalid): the transactions of
	// every choice's cycle, the readers and pasts that justify its forced
	// edges, or a read without any source and its possible writers.
	members []int32
	// cycle is the first choice's cycle, in h's indices (Invalid, when
	// the violation is a cycle); trivial is set when it is a read no
	// choice explains.
	cycle   []saturation.Edge
	paths   map[int32][]saturation.Edge // forced edge index -> past path
	trivial bool
	// reason says why the verdict is Unknown.
	reason string
	// tooLarge: Unknown because causal's clocks would exceed
	// saturation.MaxClockBytes (a history of many sessions and very many
	// transactions).
	tooLarge bool
	forced   int
}

// decideWeak decides p's history at p.opts.Level.
func decideWeak(ctx context.Context, p *prepared) (weakOutcome, error) {
	return decideWeakAt(ctx, p, false)
}

// warmAhead is how many transactions ahead decideWeakAt warms the
// value index for a transaction's reads (valueIndex.warm).
const warmAhead = 2

// finalIs reports whether finals (sorted by key, as ptxn's) give key k
// the final value v: ptxn.finalValue's question, searched by hand, as it
// is asked once per read and possible writer (sort.Search's closure was
// a twentieth of check --level read-atomic at one million transactions).
func finalIs(finals []keyVal, k int32, v history.Value) bool {
	lo, hi := 0, len(finals)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if finals[m].key < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(finals) && finals[lo].key == k && finals[lo].val == v
}

// decideWeakAt is decideWeak; sub is set for the projection step 2
// below decides, which does not recurse again.
func decideWeakAt(ctx context.Context, p *prepared, sub bool) (weakOutcome, error) {
	h := p.h
	model := weakModel(p.opts.Level)
	n := len(h.Txns)
	badInternal := make([]bool, n)
	for _, ia := range p.internal {
		if h.Txns[ia.txn].Status == history.Committed {
			return weakOutcome{verdict: Invalid, members: []int32{ia.txn}, trivial: true}, nil
		}
		badInternal[ia.txn] = true // an unknown one cannot have committed
	}
	// cand[t]: t may be a source (not dropped, internally consistent,
	// committed or unknown); allFinal[t]: t writes no key twice, so each
	// of its writes is its key's final one. Both are asked once per read
	// and possible writer; read from two flat arrays (one sequential
	// pass), where asking the transaction's records was two or three
	// cache misses each at one million transactions.
	cand := make([]bool, n)
	allFinal := make([]bool, n)
	for ti := range n {
		st := h.Txns[ti].Status
		cand[ti] = !p.txns[ti].dropped && !badInternal[ti] && (st == history.Committed || st == history.Unknown)
		writes := 0
		for _, op := range h.Txns[ti].Ops {
			if op.Kind == history.Write {
				writes++
			}
		}
		allFinal[ti] = writes == len(p.txns[ti].finals)
	}
	candidate := func(t int32) bool { return cand[t] }
	// One flat array holds every transaction's reads (their number is
	// known), and the sources of all reads share an arena: per read
	// appends were most of the memory this function took at a million
	// transactions.
	total := 0
	for ti := range n {
		if candidate(int32(ti)) {
			total += len(p.txns[ti].reads)
		}
	}
	flat := make([]weakRead, 0, total)
	var srcArena arena[int32]
	var scratch []int32
	reads := make([][]weakRead, n)
	isSource := make([]bool, n)
	lists := weakLists{}
	var one [1]int32
	for ti := range n {
		t := int32(ti)
		if ti+warmAhead < n && candidate(t+warmAhead) {
			// The index lookups of a later transaction's reads start
			// now, overlapping this one's (each is a cache miss).
			for ri := range p.txns[ti+warmAhead].reads {
				if r := &p.txns[ti+warmAhead].reads[ri]; !r.isList() {
					p.valueWriters.warm(keyVal{r.key, r.val})
				}
			}
		}
		if !candidate(t) {
			continue
		}
		first := len(flat)
		for ri := range p.txns[ti].reads {
			r := &p.txns[ti].reads[ri]
			if r.isList() {
				starts := []int{0}
				if p.opts.InitialState == history.InitialUnknown {
					starts = starts[:0]
					for j := 0; j <= len(r.lr.list); j++ {
						starts = append(starts, j)
					}
				}
				ps, cut := p.parseList(r.key, r.lr.list, starts, func(a int32) bool {
					return a != t && !p.before(t, a) && candidate(a)
				}, weakMaxParses)
				if cut {
					return weakOutcome{verdict: Unknown, reason: fmt.Sprintf(
						"a read of list %s has more than %d parses", unq(p.keys[r.key]), weakMaxParses)}, nil
				}
				if len(ps) == 0 && h.Txns[ti].Status == history.Committed {
					ws, _ := p.possibleWriters(t, r)
					return weakOutcome{verdict: Invalid, members: append([]int32{t}, ws...), trivial: true}, nil
				}
				for _, ps := range ps {
					for _, a := range ps.appenders {
						isSource[a] = true
					}
				}
				lists[[2]int32{t, int32(len(flat) - first)}] = ps
				flat = append(flat, weakRead{key: r.key, list: true})
				continue
			}
			wr := weakRead{key: r.key,
				initial: r.val == history.Null || p.opts.InitialState == history.InitialUnknown}
			scratch = scratch[:0]
			for _, w := range p.writersOfValue(r.key, r.val, &one) {
				if w == t || p.before(t, w) || !candidate(w) {
					continue
				}
				// A write of a writer that writes no key twice is final;
				// it wrote (key, value), as the index found it.
				if allFinal[w] || finalIs(p.txns[w].finals, r.key, r.val) {
					scratch = append(scratch, w)
					isSource[w] = true
				}
			}
			if len(scratch) > 0 {
				wr.srcs = srcArena.take(len(scratch))
				copy(wr.srcs, scratch)
			}
			if len(wr.srcs) == 0 && !wr.initial && h.Txns[ti].Status == history.Committed {
				// No choice explains it: garbage, G1a or G1b. Its
				// possible writers all go into the core, so that the
				// projection keeps the read.
				ws, _ := p.possibleWriters(t, r)
				return weakOutcome{verdict: Invalid, members: append([]int32{t}, ws...), trivial: true}, nil
			}
			flat = append(flat, wr)
		}
		reads[ti] = flat[first:len(flat):len(flat)]
	}
	// Choice points: unknown transactions some read could read from
	// (the others are left out: dropping a transaction nobody reads from
	// only removes constraints), then reads with more than one candidate.
	var unknowns []int32
	taken := make([]bool, n)
	for ti := range n {
		if !candidate(int32(ti)) {
			continue
		}
		if h.Txns[ti].Status == history.Committed {
			taken[ti] = true
		} else if isSource[ti] {
			unknowns = append(unknowns, int32(ti))
		}
	}
	type point struct{ t, r int32 }
	var points []point
	combos := 1 << len(unknowns)
	if len(unknowns) > 20 {
		combos = weakMaxChoices + 1
	}
	for ti := range n {
		for ri := range reads[ti] {
			if c := lists.choices(int32(ti), ri, &reads[ti][ri]); c > 1 {
				points = append(points, point{int32(ti), int32(ri)})
				combos *= c
				if combos > weakMaxChoices {
					combos = weakMaxChoices + 1
				}
			}
		}
	}
	choice := make([]int, len(points))
	// pick is the index of the candidate chosen for read ri of t.
	pick := func(t int32, ri int) (c int, ok bool) {
		switch lists.choices(t, ri, &reads[t][ri]) {
		case 0:
			return 0, false // an unknown transaction's read: it cannot have committed
		case 1:
			return 0, true
		}
		i, _ := slices.BinarySearchFunc(points, point{t, int32(ri)}, func(a, b point) int {
			if c := cmp.Compare(a.t, b.t); c != 0 {
				return c
			}
			return cmp.Compare(a.r, b.r)
		})
		return choice[i], true
	}
	// chosen is the source of that candidate (a list parse's last
	// appender), and the parse for a list read.
	chosen := func(t int32, ri int) (src int32, ps *listParse, ok bool) {
		c, ok := pick(t, ri)
		if !ok {
			return 0, nil, false
		}
		r := &reads[t][ri]
		if r.list {
			ps := &lists[[2]int32{t, int32(ri)}][c]
			if n := len(ps.appenders); n > 0 {
				return ps.appenders[n-1], ps, true
			}
			return saturation.Initial, ps, true
		}
		if c < len(r.srcs) {
			return r.srcs[c], nil, true
		}
		return saturation.Initial, nil, true
	}
	if len(points) > 0 || len(unknowns) > 0 {
		// Where sources are not determined, three steps, each exact:
		// 1. One likely choice (below); if the level holds under it, the
		//    history is valid (validity is existential).
		// 2. Otherwise the projection to that choice's cycle and the
		//    possible writers of its reads, decided by enumeration: if
		//    it violates, so does the history (the projection is sound,
		//    docs/SEMANTICS.md §3), and it is the set to shrink.
		// 3. Otherwise every choice, bounded; unknown beyond the bound.
		for i, pt := range points {
			if !reads[pt.t][pt.r].list {
				choice[i] = likelySource(p, pt.t, int(pt.r), &reads[pt.t][pt.r])
			}
		}
		for _, t := range unknowns {
			taken[t] = false
		}
		for ti := range n {
			if taken[ti] {
				takeSources(h, int32(ti), len(reads[ti]), chosen, taken)
			}
		}
		// Repair: while the cycle runs through a read with another
		// candidate, move that read to its next candidate (a bounded
		// local search; any choice it ends on is only tried, not trusted).
		pointOf := map[[2]int32]int{} // (reader, key) -> choice point
		for i, pt := range points {
			pointOf[[2]int32{pt.t, reads[pt.t][pt.r].key}] = i
		}
		tried := map[[2]int32]int{}
		for round := 0; round < 64; round++ {
			for _, t := range unknowns {
				taken[t] = false
			}
			for ti := range n {
				if h.Txns[ti].Status != history.Committed {
					continue
				}
				takeSources(h, int32(ti), len(reads[ti]), chosen, taken)
			}
			sh, idx, ok, initBad := buildWeak(p, reads, taken, chosen)
			if !ok || initBad != nil {
				break
			}
			res, err := saturation.Check(sh, model)
			if err != nil {
				return weakOutcome{verdict: Unknown, reason: err.Error(), tooLarge: errors.Is(err, saturation.ErrTooManySessions)}, nil
			}
			if res.Valid {
				w := make([]int32, len(res.Order))
				for i, v := range res.Order {
					w[i] = idx[v]
				}
				return weakOutcome{verdict: Valid, witness: w, forced: res.ForcedEdges}, nil
			}
			cyc, paths := translate(sh, model, res.Cycle, idx)
			moved := false
			for _, e := range cyc {
				var key [2]int32
				switch e.Kind {
				case saturation.WR:
					key = [2]int32{e.To, e.Key}
				case saturation.Forced, saturation.VO:
					key = [2]int32{e.Reader, e.Key}
				default:
					continue
				}
				i, ok := pointOf[key]
				if !ok || tried[key] >= 4 {
					continue
				}
				pt := points[i]
				choice[i] = (choice[i] + 1) % lists.choices(pt.t, int(pt.r), &reads[pt.t][pt.r])
				tried[key]++
				moved = true
				break
			}
			if !moved {
				if !sub {
					if out, ok := decideAround(ctx, p, cyc, paths); ok {
						return out, nil
					}
				}
				break
			}
		}
		clear(choice)
	}
	if combos > weakMaxChoices || combos*n > weakMaxWork {
		return weakOutcome{verdict: Unknown, reason: fmt.Sprintf(
			"%d unknown transactions and %d reads with more than one candidate source make more than %d choices to try",
			len(unknowns), len(points), weakMaxChoices)}, nil
	}
	var out weakOutcome
	out.verdict = Invalid
	memberSet := map[int32]bool{}
	first := true
	for u := 0; u < 1<<len(unknowns); u++ {
		for j, t := range unknowns {
			taken[t] = u&(1<<j) != 0
		}
		clear(choice)
		for {
			if ctx.Err() != nil {
				return weakOutcome{verdict: Unknown, reason: "the time budget ran out"}, nil
			}
			sh, idx, ok, initBad := buildWeak(p, reads, taken, chosen)
			if ok {
				if initBad != nil {
					// Two reads saw different initial values of one key.
					for _, t := range initBad {
						memberSet[t] = true
					}
				} else {
					res, err := saturation.Check(sh, model)
					if err != nil {
						return weakOutcome{verdict: Unknown, reason: err.Error()}, nil
					}
					if res.Valid {
						w := make([]int32, len(res.Order))
						for i, v := range res.Order {
							w[i] = idx[v]
						}
						return weakOutcome{verdict: Valid, witness: w, forced: res.ForcedEdges}, nil
					}
					cyc, paths := translate(sh, model, res.Cycle, idx)
					for _, e := range cyc {
						for _, v := range []int32{e.From, e.To, e.Reader} {
							if v >= 0 {
								memberSet[v] = true
							}
						}
					}
					for _, pth := range paths {
						for _, e := range pth {
							memberSet[e.From], memberSet[e.To] = true, true
						}
					}
					if first {
						out.cycle, out.paths, out.forced, first = cyc, paths, res.ForcedEdges, false
					}
				}
			}
			if !next(choice, points, func(pt point) int { return lists.choices(pt.t, int(pt.r), &reads[pt.t][pt.r]) }) {
				break
			}
		}
	}
	for t := range memberSet {
		out.members = append(out.members, t)
	}
	slices.Sort(out.members)
	return out, nil
}

// takeSources takes as committed every unknown transaction that t's
// chosen reads read from or (a list parse) show.
func takeSources(h *history.History, t int32, nReads int, chosen func(int32, int) (int32, *listParse, bool), taken []bool) {
	for ri := range nReads {
		src, ps, ok := chosen(t, ri)
		if !ok {
			continue
		}
		if ps != nil {
			for _, a := range ps.appenders {
				if h.Txns[a].Status == history.Unknown {
					taken[a] = true
				}
			}
		} else if src >= 0 && h.Txns[src].Status == history.Unknown {
			taken[src] = true
		}
	}
}

// likelySource picks the candidate a correct database most likely served:
// a committed writer over an unknown one, and with timestamps the one that
// ended last before the reader began (else the earliest); the initial
// state when no writer ended before the reader began, except under an
// unknown initial state for a read of a value a committed candidate
// wrote (that writer first). Any pick is sound: it only decides which
// choice is tried first.
func likelySource(p *prepared, t int32, ri int, r *weakRead) int {
	h := p.h
	rt := &h.Txns[t]
	best, bestEnd := -1, int64(0)
	for i, w := range r.srcs {
		wt := &h.Txns[w]
		if wt.Status != history.Committed || !wt.HasTime || !rt.HasTime || wt.End > rt.End {
			continue
		}
		if best < 0 || wt.End > bestEnd {
			best, bestEnd = i, wt.End
		}
	}
	if best >= 0 {
		return best
	}
	// Under --initial-state unknown every read may come from the initial
	// state, but one value per key only: a read of a value a committed
	// transaction wrote takes that writer first (the initial state first
	// gave concurrent reads of one key two initial values, a choice that
	// fails, and with many such reads an unknown after the enumeration's
	// bound).
	viaInit := r.initial && (p.opts.InitialState != history.InitialUnknown || p.txns[t].reads[ri].val == history.Null)
	if viaInit {
		return len(r.srcs) // the initial state
	}
	for i, w := range r.srcs {
		if h.Txns[w].Status == history.Committed {
			return i
		}
	}
	if r.initial {
		return len(r.srcs)
	}
	return 0
}

// decideAround decides the projection to a cycle's transactions, the
// readers and pasts behind its forced edges and the possible writers of
// their reads (two rounds). ok is set when that projection violates: then
// so does the history, and the outcome's members are in p's indices.
func decideAround(ctx context.Context, p *prepared, cyc []saturation.Edge, paths map[int32][]saturation.Edge) (weakOutcome, bool) {
	in := make([]bool, len(p.h.Txns))
	var members []int32
	add := func(t int32) {
		if t >= 0 && !in[t] {
			in[t] = true
			members = append(members, t)
		}
	}
	for _, e := range cyc {
		add(e.From)
		add(e.To)
		add(e.Reader)
	}
	for _, pth := range paths {
		for _, e := range pth {
			add(e.From)
			add(e.To)
		}
	}
	// The projection is sound for any set of transactions, so the
	// smallest is tried first: the cycle alone, then with the possible
	// writers of its reads, then two rounds of them. A smaller set has
	// fewer choices to enumerate; a larger one keeps more reads' sources.
	var in2 []bool
	var out weakOutcome
	found := false
	for round := range 3 {
		if round > 0 {
			for _, t := range slices.Clone(members) {
				for ri := range p.txns[t].reads {
					ws, _ := p.possibleWriters(t, &p.txns[t].reads[ri])
					for _, w := range ws {
						add(w)
					}
				}
			}
		}
		if len(members) == len(p.h.Txns) {
			break
		}
		pc := prepareLike(p, p.project(in))
		o, err := decideWeakAt(ctx, pc, true)
		if err == nil && o.verdict == Invalid {
			in2, out, found = slices.Clone(in), o, true
			break
		}
	}
	if !found {
		return weakOutcome{}, false
	}
	in = in2
	// The projection keeps the members in p's order.
	var back []int32
	for t, ok := range in {
		if ok {
			back = append(back, int32(t))
		}
	}
	res := weakOutcome{verdict: Invalid}
	for _, m := range out.members {
		res.members = append(res.members, back[m])
	}
	return res, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// next advances the odometer; false when it wraps.
func next[P any](choice []int, points []P, size func(P) int) bool {
	for i := range choice {
		choice[i]++
		if choice[i] < size(points[i]) {
			return true
		}
		choice[i] = 0
	}
	return false
}

// buildWeak builds saturation's history for one choice: the taken
// transactions, their reads with the chosen sources. ok is false when a
// read chose a transaction not taken (the choice is impossible, not a
// violation); initBad lists readers that saw two initial values of one
// key (under --initial-state unknown).
func buildWeak(p *prepared, reads [][]weakRead, taken []bool, chosen func(int32, int) (int32, *listParse, bool)) (sh *saturation.History, idx []int32, ok bool, initBad []int32) {
	h := p.h
	local := make([]int32, len(h.Txns))
	for i := range local {
		local[i] = -1
	}
	// Every per-transaction slice is carved from one flat array sized
	// in advance (the counts are known): no append grows, and a million
	// transactions cost a handful of allocations.
	n, nReads, nWrites := 0, 0, 0
	for ti := range h.Txns {
		if taken[ti] {
			n++
			nReads += len(reads[ti])
			nWrites += len(p.txns[ti].finals) + len(p.txns[ti].appends)
		}
	}
	idx = make([]int32, 0, n)
	for ti := range h.Txns {
		if taken[ti] {
			local[ti] = int32(len(idx))
			idx = append(idx, int32(ti))
		}
	}
	sh = &saturation.History{
		Session: make([]int32, n), Pos: make([]int32, n),
		Reads: make([][]saturation.Read, n), Writes: make([][]int32, n), Keys: len(p.keys),
	}
	readsFlat := make([]saturation.Read, 0, nReads)
	writesFlat := make([]int32, 0, nWrites)
	sessFlat := layoutSessions(sh, p.sessionMembers, local, make([]int32, 0, n))
	initVal := map[int32]history.Value{}
	initBy := map[int32]int32{}
	type pendingList struct {
		reader, key int32
		ps          *listParse
	}
	var pendingLists []pendingList
	for l, t := range idx {
		if p.sessionOf[t] < 0 {
			sh.Session[l], sh.Pos[l] = int32(len(sh.Sessions)), 0
			sessFlat = append(sessFlat, int32(l))
			sh.Sessions = append(sh.Sessions, sessFlat[len(sessFlat)-1:len(sessFlat):len(sessFlat)])
		}
		wFirst := len(writesFlat)
		for _, f := range p.txns[t].finals {
			writesFlat = append(writesFlat, f.key)
		}
		// An appender writes its list keys (saturation wants the keys
		// sorted; a key is a register or a list, never both).
		for _, a := range p.txns[t].appends {
			writesFlat = append(writesFlat, a.key)
		}
		sh.Writes[l] = writesFlat[wFirst:len(writesFlat):len(writesFlat)]
		if len(p.txns[t].appends) > 0 && len(p.txns[t].finals) > 0 {
			slices.Sort(sh.Writes[l])
		}
		rFirst := len(readsFlat)
		for ri, r := range reads[t] {
			src, ps, ok := chosen(t, ri)
			if !ok {
				return nil, nil, false, nil
			}
			if ps != nil {
				for _, a := range ps.appenders {
					if local[a] < 0 {
						return nil, nil, false, nil
					}
				}
				pendingLists = append(pendingLists, pendingList{reader: t, key: r.key, ps: ps})
			}
			if p.opts.InitialState == history.InitialUnknown && (src == saturation.Initial || ps != nil) {
				// A list parse starts with a prefix of the initial list,
				// which must be the same for every read of the key.
				val := p.txns[t].reads[ri].val
				if ps != nil {
					val = history.Value(joinValues(p.txns[t].reads[ri].lr.list[:ps.initLen]))
				}
				if v, seen := initVal[r.key]; seen && v != val {
					initBad = append(initBad, t, initBy[r.key])
				}
				initVal[r.key], initBy[r.key] = val, t
			}
			if src == saturation.Initial {
				readsFlat = append(readsFlat, saturation.Read{Key: r.key, From: saturation.Initial})
				continue
			}
			if local[src] < 0 {
				return nil, nil, false, nil
			}
			readsFlat = append(readsFlat, saturation.Read{Key: r.key, From: local[src]})
		}
		sh.Reads[l] = readsFlat[rFirst:len(readsFlat):len(readsFlat)]
	}
	// The version order each list parse shows: its appenders in order,
	// and its last before every other taken appender of the key (they
	// installed later versions, the reader's own included).
	for _, pl := range pendingLists {
		app := pl.ps.appenders
		for i := 0; i+1 < len(app); i++ {
			sh.Orders = append(sh.Orders, saturation.Edge{From: local[app[i]], To: local[app[i+1]], Kind: saturation.VO, Key: pl.key, Reader: local[pl.reader]})
		}
		if len(app) == 0 {
			continue // the initial version precedes every appender
		}
		last := app[len(app)-1]
		for _, a := range p.writersOf[pl.key] {
			if local[a] >= 0 && a != last && !slices.Contains(app, a) && len(p.txns[a].appendsTo(pl.key)) > 0 {
				sh.Orders = append(sh.Orders, saturation.Edge{From: local[last], To: local[a], Kind: saturation.VO, Key: pl.key, Reader: local[pl.reader]})
			}
		}
	}
	return sh, idx, true, initBad
}

// translate maps a cycle from saturation's indices to h's and recovers,
// for each forced edge, the so/wr path from its writer to its reader.
func translate(sh *saturation.History, m saturation.Model, cyc []saturation.Edge, idx []int32) ([]saturation.Edge, map[int32][]saturation.Edge) {
	mp := func(v int32) int32 {
		if v < 0 {
			return v
		}
		return idx[v]
	}
	out := make([]saturation.Edge, len(cyc))
	paths := map[int32][]saturation.Edge{}
	for i, e := range cyc {
		if e.Kind == saturation.Forced {
			var p []saturation.Edge
			for _, pe := range saturation.Path(sh, m, e.From, e.Reader) {
				pe.From, pe.To = mp(pe.From), mp(pe.To)
				p = append(p, pe)
			}
			paths[int32(i)] = p
		}
		e.From, e.To, e.Reader = mp(e.From), mp(e.To), mp(e.Reader)
		out[i] = e
	}
	return out, paths
}

// checkWeak is Check for the levels of the polynomial back end.
func checkWeak(ctx context.Context, h *history.History, opts history.Options, cfg Config) (*Result, error) {
	if res, ok := checkWeakFast(ctx, h, opts); ok {
		return res, nil // check_weak_fast.go: determined and valid
	}
	return checkWeakPrepared(ctx, prepare(h, opts), cfg, false)
}

// prepareLike prepares h as p was prepared (the online variant's flag
// carried over), for the projections the weak back end decides.
func prepareLike(p *prepared, h *history.History) *prepared {
	pc := prepare(h, p.opts)
	pc.rtReads = p.rtReads
	return pc
}

// CheckWeakOnline is Check at a weak level (read-committed, read-atomic,
// causal) under the real-time read rule the online engine checks
// (docs/SEMANTICS.md §5 "The window at the weak levels"): a transaction
// that began after a reader ended (opts.Precedes, with Δ) is never a
// possible source of its reads. Everything else is the level's own
// definition. With in non-nil, the history checked is the projection of
// h to the transactions in marks (docs/SEMANTICS.md §3), each read kept
// iff all its possible writers under that rule are in: h then holds the
// unchecked and quarantined writers too, so that a read they could
// explain is dropped, never called an anomaly. Cores name h's IDs.
func CheckWeakOnline(ctx context.Context, h *history.History, opts history.Options, cfg Config, in []bool) (*Result, error) {
	if opts.Level.Def().Backend != history.BackendPolynomial {
		return nil, fmt.Errorf("incremental: %s is not a weak level", opts.Level)
	}
	p := prepare(h, opts)
	p.rtReads = true
	if in != nil {
		p = prepareLike(p, p.project(in))
	}
	return checkWeakPrepared(ctx, p, cfg, true)
}

// checkWeakPrepared decides p and shrinks each violation to a core; with
// canonical, to the canonical core (canonicalCore), which names the
// anomaly whatever else the history holds beside it.
func checkWeakPrepared(ctx context.Context, p *prepared, cfg Config, canonical bool) (*Result, error) {
	h, opts := p.h, p.opts
	res := &Result{Options: opts}
	res.Stats.Txns = len(h.Txns)
	start := time.Now()
	for ti := range p.txns {
		res.Stats.Reads += len(p.txns[ti].reads)
	}
	out, err := decideWeak(ctx, p)
	res.Stats.SolveTime = time.Since(start)
	if err != nil {
		return nil, err
	}
	switch out.verdict {
	case Valid:
		res.Verdict = Valid
		for _, t := range out.witness {
			res.Witness = append(res.Witness, h.Txns[t].ID)
		}
		return res, nil
	case Unknown:
		// Enumeration gave up (too many sources to choose from). A
		// witness of a stronger level is a witness here too, so the SAT
		// engine is asked for one before answering unknown, unless that
		// search is hopeless (strongerWorthTrying).
		if !strongerWorthTrying(out, h) {
			res.Verdict = Unknown
			res.Stats.TimedOutAny = true
			return res, nil
		}
		if w, ok := strongerWitness(ctx, h, opts, cfg, p.rtReads); ok {
			res.Verdict = Valid
			res.Witness = w
			res.Stats.SolveTime = time.Since(start)
			return res, nil
		}
		res.Verdict = Unknown
		res.Stats.TimedOutAny = true
		return res, nil
	}
	res.Verdict = Invalid
	maxA := max(1, cfg.MaxAnomalies)
	coreStart := time.Now()
	defer func() { res.Stats.CoreTime = time.Since(coreStart) }()
	if canonical {
		as, err := canonicalAnomalies(ctx, p, out, maxA, &res.Stats)
		if err != nil {
			return nil, err
		}
		res.Anomalies = as
		return res, nil
	}
	cur := h
	curP := p
	for len(res.Anomalies) < maxA {
		core, err := shrinkWeak(ctx, curP, out.members, &res.Stats)
		if err != nil {
			return nil, err
		}
		if core == nil {
			break
		}
		res.Anomalies = append(res.Anomalies, describeWeak(ctx, curP, core))
		// Project the core out and look again (docs/SEMANTICS.md §3).
		in := make([]bool, len(cur.Txns))
		for i := range in {
			in[i] = true
		}
		for _, t := range core {
			in[t] = false
		}
		cur = curP.project(in)
		curP = prepareLike(curP, cur)
		if out, err = decideWeak(ctx, curP); err != nil || out.verdict != Invalid {
			break
		}
	}
	return res, nil
}

// sortByContent sorts transactions of h into content order
// (contentCompare: start, end, id, then the body; ties by index), the
// order canonical cores are defined in.
func sortByContent(h *history.History, order []int32) {
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := contentCompare(&h.Txns[a], &h.Txns[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

// violatesWeak reports whether the projection of p's history to in
// violates the level.
func violatesWeak(ctx context.Context, p *prepared, in []bool) bool {
	pc := prepareLike(p, p.project(in))
	out, err := decideWeak(ctx, pc)
	return err == nil && out.verdict == Invalid
}

// shrinkWeak turns a violating set into a subset-minimal core under the
// projection, trying members latest first by content (as shrink does).
// The set from decideWeak violates on its own in the common case; where
// it does not (a choice's cycle missed a possible writer the projection
// needs), possible writers of its members' reads are added, and failing
// that the whole history is shrunk.
func shrinkWeak(ctx context.Context, p *prepared, members []int32, st *Stats) ([]int32, error) {
	h := p.h
	in := make([]bool, len(h.Txns))
	for _, t := range members {
		in[t] = true
	}
	st.CoreChecks++
	if !violatesWeak(ctx, p, in) {
		for _, t := range members {
			for ri := range p.txns[t].reads {
				ws, _ := p.possibleWriters(t, &p.txns[t].reads[ri])
				for _, w := range ws {
					in[w] = true
				}
			}
		}
		st.CoreChecks++
		if !violatesWeak(ctx, p, in) {
			for i := range in {
				in[i] = true
			}
		}
	}
	var order []int32
	for t, ok := range in {
		if ok {
			order = append(order, int32(t))
		}
	}
	sortByContent(h, order)
	for i := len(order) - 1; i >= 0; i-- {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t := order[i]
		in[t] = false
		st.CoreChecks++
		if !violatesWeak(ctx, p, in) {
			in[t] = true
		}
	}
	var core []int32
	for t, ok := range in {
		if ok {
			core = append(core, int32(t))
		}
	}
	return core, nil
}

// canonicalAnomalies is checkWeakPrepared's loop of anomalies with
// canonical cores (docs/SEMANTICS.md §5 "Canonical cores at the weak
// levels"): the first core is the canonical core of p's history, each
// next one that of the history without the cores before it, as deleting
// and looking again would find them, out being the decision of the whole
// history (Invalid). The canonical core of a set, with the transactions
// in content order (contentCompare: start, end, id, then the body), is
// its violating subset that is least when sets are compared by their
// greatest differing member, the one deleting members latest first
// leaves. It depends only on which transactions the history holds and
// what they say, never on the violating set the decision happened to
// report, so a writer retired (in no minimal core, R3) or kept, an
// arrival order or a batch size that changes that set leaves it alone.
//
// A minimal core is connected through keys and sessions (§5 "Canonical
// cores searched in their component", weak33), so the canonical core of
// a set is the least of the canonical cores of its parts in the
// components of p's history (weakComponents), and deleting a core
// changes only its own component's. Each violating component is found
// once (the history without the components already searched, decided:
// invalid, its violating set shrunk to a core, whose component is next),
// its canonical core searched among its own transactions (canonicalIn);
// the least of those is reported, and its component alone searched
// again.
func canonicalAnomalies(ctx context.Context, p *prepared, out weakOutcome, maxA int, st *Stats) ([]Anomaly, error) {
	h := p.h
	n := len(h.Txns)
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	sortByContent(h, order)
	rank := make([]int, n)
	for r, t := range order {
		rank[t] = r
	}
	comp := weakComponents(p)
	removed := make([]bool, n)   // in a core reported
	searched := map[int32]bool{} // components whose canonical core is known (or that do not violate)
	found := map[int32][]int32{} // component -> its canonical core among the transactions not removed
	mask := make([]bool, n)
	gaveUp := false // a decision gave up: weak32's search decides
	// decideMask decides p's history projected to mask; back maps the
	// projection's indices to p's.
	decideMask := func() (*prepared, []int32, weakOutcome, bool) {
		var back []int32
		for t, ok := range mask {
			if ok {
				back = append(back, int32(t))
			}
		}
		if len(back) == 0 {
			return nil, nil, weakOutcome{}, false
		}
		pc := prepareLike(p, p.project(mask))
		o, err := decideWeak(ctx, pc)
		if err != nil || o.verdict == Unknown {
			gaveUp = true
		}
		return pc, back, o, err == nil
	}
	// coreOf shrinks the violating set o.members of pc (p projected to
	// back) to a core, in p's indices.
	coreOf := func(pc *prepared, back []int32, o weakOutcome) ([]int32, error) {
		core, err := shrinkWeak(ctx, pc, o.members, st)
		if err != nil || core == nil {
			return nil, err
		}
		if back != nil {
			for i, t := range core {
				core[i] = back[t]
			}
		}
		return core, nil
	}
	// search sets found[k] to the canonical core of component k among
	// the transactions not removed, guess a core among them (the search
	// starts from it), or deletes it when canonicalIn finds none.
	search := func(k int32, guess []int32) error {
		var seq []int32
		for _, t := range order {
			if comp[t] == k && !removed[t] {
				seq = append(seq, t)
			}
		}
		c, err := canonicalIn(ctx, p, seq, guess, st, &gaveUp)
		if err != nil {
			return err
		}
		if c == nil {
			delete(found, k)
		} else {
			found[k] = c
		}
		searched[k] = true
		return nil
	}
	// Find every violating component: the history without those
	// searched, decided until it is valid. Where any decision gives up
	// (unknown), the whole check is weak32's search over the whole
	// instance (canonicalAnomaliesWhole): whether a set is decided
	// depends on the heuristics' path, so a component alone can give up
	// where the instance was decided.
	for pc, back, o, ok := p, []int32(nil), out, true; ; {
		if gaveUp {
			return canonicalAnomaliesWhole(ctx, p, out, maxA, st)
		}
		if !ok || o.verdict != Invalid {
			break
		}
		core, err := coreOf(pc, back, o)
		if err != nil {
			return nil, err
		}
		if core == nil {
			break
		}
		k := comp[core[0]]
		for _, t := range core {
			if comp[t] != k {
				// A core across components (it cannot be one, §5):
				// search the whole rest as one.
				k = -1
			}
		}
		if k < 0 {
			var seq []int32
			for _, t := range order {
				if !searched[comp[t]] {
					seq = append(seq, t)
				}
			}
			c, err := canonicalIn(ctx, p, seq, core, st, &gaveUp)
			if err != nil {
				return nil, err
			}
			k = comp[c[0]]
			found[k], searched[k] = c, true
		} else if err := search(k, core); err != nil {
			return nil, err
		}
		for t := range mask {
			mask[t] = !searched[comp[t]]
		}
		pc, back, o, ok = decideMask()
	}
	var as []Anomaly
	for len(as) < maxA && len(found) > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The least of the components' cores: they are disjoint, so the
		// one with the least greatest member.
		best, bestTop := int32(-1), 0
		for k, c := range found {
			top := 0
			for _, t := range c {
				top = max(top, rank[t])
			}
			if best < 0 || top < bestTop {
				best, bestTop = k, top
			}
		}
		c := found[best]
		as = append(as, describeWeak(ctx, p, c))
		for _, t := range c {
			removed[t] = true
		}
		delete(found, best)
		if len(as) == maxA {
			break
		}
		// That component again, without the core.
		for t := range mask {
			mask[t] = comp[t] == best && !removed[t]
		}
		pc, back, o, ok := decideMask()
		if !ok || o.verdict != Invalid {
			continue
		}
		core, err := coreOf(pc, back, o)
		if err != nil {
			return nil, err
		}
		if core == nil {
			continue
		}
		if err := search(best, core); err != nil {
			return nil, err
		}
	}
	if gaveUp {
		return canonicalAnomaliesWhole(ctx, p, out, maxA, st)
	}
	return as, nil
}

// canonicalAnomaliesWhole is the anomaly loop of weak32: each core
// shrunk, made canonical by the search over the whole instance
// (canonicalCoreWhole), projected out, and the rest decided again.
func canonicalAnomaliesWhole(ctx context.Context, p *prepared, out weakOutcome, maxA int, st *Stats) ([]Anomaly, error) {
	var as []Anomaly
	curP := p
	for len(as) < maxA {
		core, err := shrinkWeak(ctx, curP, out.members, st)
		if err != nil {
			return nil, err
		}
		if core != nil {
			if core, err = canonicalCoreWhole(ctx, curP, core, st, nil); err != nil {
				return nil, err
			}
		}
		if core == nil {
			break
		}
		as = append(as, describeWeak(ctx, curP, core))
		in := make([]bool, len(curP.h.Txns))
		for i := range in {
			in[i] = true
		}
		for _, t := range core {
			in[t] = false
		}
		curP = prepareLike(curP, curP.project(in))
		if out, err = decideWeak(ctx, curP); err != nil || out.verdict != Invalid {
			break
		}
	}
	return as, nil
}

// weakComponents labels each transaction of p's history with its
// component under "touches a key the other touches (a read, a write or
// an append, any status) or is in its session": a transaction's label is
// its component's root.
func weakComponents(p *prepared) []int32 {
	n := len(p.h.Txns)
	parent := make([]int32, n+len(p.keys)+len(p.sessionMembers))
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(x int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int32) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[ra] = rb
		}
	}
	for t := range n {
		for ri := range p.txns[t].reads {
			union(int32(t), int32(n)+p.txns[t].reads[ri].key)
		}
		if s := p.sessionOf[t]; s >= 0 {
			union(int32(t), int32(n+len(p.keys))+s)
		}
	}
	for k, ws := range p.writersOf {
		for _, w := range ws {
			union(w, int32(n+k))
		}
	}
	comp := make([]int32, n)
	for t := range n {
		comp[t] = find(int32(t))
	}
	return comp
}

// canonicalIn is the canonical core of the set seq, which violates
// (transactions of p's history in content order): violation is monotone
// in the set projected to (a read is kept only when all its possible
// writers are in, and a consistent commit order of a set orders every
// subset), so its greatest member is the last x in seq whose prefix up
// to x, with the members already found above it, violates; a search
// downward from the greatest member of core (when given: a violating
// subset of seq, so the canonical core is no greater) finds each, a
// doubling step and then bisection, some log₂(distance) projections
// each; once the members found violate alone, the search stops. A last
// deletion pass over the result keeps it minimal even were monotonicity
// ever to fail; were it to fail so that the members found do not
// violate, core (a core) is returned.
func canonicalIn(ctx context.Context, p *prepared, seq []int32, core []int32, st *Stats, unk *bool) ([]int32, error) {
	return canonicalSearch(ctx, p, seq, core, st, unk, false)
}

// canonicalSearch is canonicalIn, or with whole weak32's search over
// the whole instance (canonicalCoreWhole): that one never asks whether
// the members found violate alone, and notes a give-up in its deletion
// pass too, so that the fallback makes exactly weak32's checks.
func canonicalSearch(ctx context.Context, p *prepared, seq []int32, core []int32, st *Stats, unk *bool, whole bool) ([]int32, error) {
	n := len(p.h.Txns)
	pos := make([]int, n)
	for i, t := range seq {
		pos[t] = i
	}
	// hi: seq[:hi] together with fixed violates; fixed's members all
	// come at or after hi.
	hi := len(seq)
	if core != nil {
		hi = 0
		for _, t := range core {
			hi = max(hi, pos[t]+1)
		}
	}
	var fixed []int32
	in := make([]bool, n)
	violates := func(k int) bool {
		clear(in)
		for _, t := range seq[:k] {
			in[t] = true
		}
		for _, t := range fixed {
			in[t] = true
		}
		st.CoreChecks++
		return violatesNoted(ctx, p, in, unk)
	}
	// guess: core's members by position, greatest first; while fixed is
	// core's members above hi (agree), the next member is most often
	// core's next one, g: seq[:pos(g)+1] ∪ fixed holds core and
	// violates, and one check of seq[:pos(g)] ∪ fixed confirms g.
	guess := slices.Clone(core)
	slices.SortFunc(guess, func(a, b int32) int { return cmp.Compare(pos[b], pos[a]) })
	agree := core != nil
	verified := false // fixed's last violation was seen, not inferred
	alone := true     // fixed alone may violate (not yet asked)
	for hi > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(fixed) > 0 && !whole {
			// The members found may violate alone: then no more.
			if violates(0) {
				hi, verified = 0, true
				break
			}
			alone = false
		}
		// The least k with seq[:k] ∪ fixed violating: seq[k-1] is the
		// next member.
		ok, bad := hi, -1 // seq[:ok] violates; seq[:bad] does not (-1: not yet known)
		okSeen := verified
		if agree {
			for len(guess) > 0 && pos[guess[0]] >= hi {
				guess = guess[1:]
			}
			if len(guess) > 0 {
				g := pos[guess[0]]
				if violates(g) {
					ok, okSeen = g, true
				} else {
					ok, bad, okSeen = g+1, g, false // core ⊆ seq[:g+1] ∪ fixed
				}
			}
		}
		// Step down from ok by doubling distances until a prefix no
		// longer violates, then bisect.
		for d := 1; bad < 0; d *= 2 {
			k := max(ok-d, 0)
			if k == 0 && !alone {
				bad = 0
			} else if violates(k) {
				ok, okSeen = k, true
				if k == 0 {
					break
				}
			} else {
				bad = k
			}
		}
		if bad < 0 {
			hi, verified = 0, true // fixed alone violates
			break
		}
		for ok-bad > 1 {
			mid := bad + (ok-bad)/2
			if violates(mid) {
				ok, okSeen = mid, true
			} else {
				bad = mid
			}
		}
		agree = agree && len(guess) > 0 && seq[ok-1] == guess[0]
		fixed = append(fixed, seq[ok-1])
		hi, verified = ok-1, okSeen && ok-1 == 0
	}
	if !verified && !violates(0) {
		// Monotonicity failed (it cannot, as argued above): the core
		// given is a core.
		return core, nil // nil when none was given
	}
	// fixed is in decreasing content order; the deletion pass goes
	// latest first. Only weak32's search notes its give-ups there.
	var delNote *bool
	if whole {
		delNote = unk
	}
	clear(in)
	for _, t := range fixed {
		in[t] = true
	}
	for _, t := range fixed {
		in[t] = false
		st.CoreChecks++
		if !violatesNoted(ctx, p, in, delNote) {
			in[t] = true
		}
	}
	out := make([]int32, 0, len(fixed))
	for t, ok := range in {
		if ok {
			out = append(out, int32(t))
		}
	}
	return out, nil
}

// describeWeak explains a core: a read no choice explains (garbage, G1a,
// G1b, internal) in the words of the SAT engine's special anomalies, or
// the cycle of the level's graph, each step with its evidence.
func describeWeak(ctx context.Context, p *prepared, core []int32) Anomaly {
	h := p.h
	in := make([]bool, len(h.Txns))
	a := Anomaly{}
	for _, t := range core {
		in[t] = true
		a.Core = append(a.Core, h.Txns[t].ID)
	}
	hc := p.project(in)
	pc := prepareLike(p, hc)
	out, err := decideWeak(ctx, pc)
	if err == nil && out.trivial {
		if name, text := specialAnomaly(ctx, pc); name != "" {
			a.Type, a.Class, a.Text = name, name, text
			return a
		}
	}
	if err != nil || len(out.cycle) == 0 {
		a.Type, a.Class = "cycle", "cycle"
		a.Text = []string{fmt.Sprintf("No commit order of these transactions satisfies %s under any choice of read-from source and commit.", p.opts.Level)}
		return a
	}
	lv := p.opts.Level
	hasSO, forced, transitive, onlyVO := false, false, false, true
	for i, e := range out.cycle {
		s := weakStep(pc, e, out.paths[int32(i)])
		a.Cycle = append(a.Cycle, s)
		onlyVO = onlyVO && e.Kind == saturation.VO
		switch e.Kind {
		case saturation.SO:
			hasSO = true
		case saturation.Forced:
			forced = true
			if len(out.paths[int32(i)]) > 1 {
				transitive = true
			}
		}
	}
	switch {
	case forced && transitive && lv == history.Causal:
		a.Type = history.CausalityViolation
	case forced:
		a.Type = history.FracturedRead
	case hasSO:
		a.Type = history.G1c + history.ProcessSuffix
	case onlyVO:
		// Version orders alone: two reads of one key whose lists are
		// not prefixes of each other are named as at the strong levels
		// (describe.go); orders shown across keys are a G0.
		if name, text := specialAnomaly(ctx, pc); name == history.IncompatibleOrder {
			a.Type, a.Class, a.Text, a.Cycle = name, name, text, nil
			return a
		}
		a.Type = history.G0
	default:
		a.Type = history.G1c
	}
	a.Class = a.Type
	for _, s := range a.Cycle {
		a.Text = append(a.Text, s.Why+".")
	}
	a.Text = append(a.Text, "That closes the cycle "+cycleString(a.Cycle)+", which "+lv.String()+" forbids.")
	return a
}

// weakStep is one step of a weak level's cycle in the words of explain.go.
func weakStep(p *prepared, e saturation.Edge, past []saturation.Edge) Step {
	h := p.h
	id := func(t int32) string {
		if t == saturation.Initial {
			return "initial"
		}
		return h.Txns[t].ID
	}
	key := ""
	if e.Key >= 0 {
		key = unq(p.keys[e.Key])
	}
	s := Step{From: id(e.From), To: id(e.To), Key: key}
	switch e.Kind {
	case saturation.SO:
		s.Kind = kindSO.String()
		s.Why = fmt.Sprintf("%s came before %s in session %s, so %s process-> %s", s.From, s.To, h.Txns[e.From].Session, s.From, s.To)
	case saturation.WR:
		v, _ := p.txns[e.From].finalValue(e.Key)
		s.Kind = kindWR.String()
		s.Why = fmt.Sprintf("%s read %s=%s written by %s, so %s wr-> %s", s.To, key, v, s.From, s.From, s.To)
	case saturation.Forced:
		s.Kind = kindWW.String()
		src := s.To + "'s version"
		if e.To == saturation.Initial {
			src = "the initial version"
		}
		var via []string
		for _, pe := range past {
			via = append(via, fmt.Sprintf("%s %s-> %s", id(pe.From), map[saturation.EdgeKind]string{saturation.SO: "process", saturation.WR: "wr"}[pe.Kind], id(pe.To)))
		}
		s.Why = fmt.Sprintf("%s read %s of %s although %s, which wrote %s, precedes it (%s), so %s's %s comes first: %s ww-> %s",
			id(e.Reader), src, key, s.From, key, strings.Join(via, ", "), s.From, key, s.From, s.To)
	case saturation.VO:
		s.Kind = kindWW.String()
		list := ""
		for _, r := range p.txns[e.Reader].reads {
			if r.key == e.Key && r.isList() {
				list = joinValues(r.lr.full)
				break
			}
		}
		s.Why = fmt.Sprintf("%s read %s as %s, a version that has %s's appends and not %s's after them, so %s ww-> %s",
			id(e.Reader), key, list, s.From, s.To, s.From, s.To)
		if e.To != saturation.Initial && len(p.txns[e.To].appendsTo(e.Key)) > 0 && listShows(p, e.Reader, e.Key, e.To) {
			s.Why = fmt.Sprintf("%s read %s as %s, which shows %s's appends before %s's, so %s ww-> %s",
				id(e.Reader), key, list, s.From, s.To, s.From, s.To)
		}
	case saturation.InitialFirst:
		s.Kind = "initial"
		s.Why = fmt.Sprintf("the initial version of every key comes before %s's, so initial-> %s", s.To, s.To)
	}
	return s
}

// listShows reports whether some list read of k by reader holds every
// element t appends to k (as a run), for the wording of a VO step.
func listShows(p *prepared, reader, k, t int32) bool {
	app := p.txns[t].appendsTo(k)
	for _, r := range p.txns[reader].reads {
		if r.key != k || !r.isList() {
			continue
		}
		for i := 0; i+len(app) <= len(r.lr.list); i++ {
			if equalValues(r.lr.list[i:i+len(app)], app) {
				return true
			}
		}
	}
	return false
}

// strongerLevel is the SAT engine's level just above lv in the lattice
// (history/lattice.go): Adya's read committed has no session order and
// sits below serializable; read atomic and causal (Cerone et al.) take
// session order and sit below strong session serializable.
func strongerLevel(lv history.Level) history.Level {
	if lv == history.ReadCommitted {
		return history.Serializable
	}
	return history.StrongSessionSerializable
}

// strongerWorthTrying says whether an Unknown weak outcome should ask
// the SAT engine for a stronger level's witness. Not when causal's clocks
// were refused for size on a history without client time on every
// transaction: such a history has hundreds of thousands of transactions
// over a thousand sessions or more, and the serializable search without
// the witness from client time has no bound on it (AWDIT's generated 1M
// with 1,000 sessions grew past 3 GB without an answer before the clocks
// narrowed; BENCHMARKS.md "weak26", session 20). With client time the
// witness from it is linear, so it is still asked.
func strongerWorthTrying(out weakOutcome, h *history.History) bool {
	if !out.tooLarge {
		return true
	}
	for i := range h.Txns {
		if !h.Txns[i].HasTime {
			return false
		}
	}
	return true
}

// strongerWitness asks the SAT engine whether h satisfies the stronger
// level; a serial order that does is a commit order for lv as well: in a
// serial order every read reads the last earlier write of its key, so
// wr and (for read atomic and causal) session order follow it, and any
// writer of x that precedes a reader of x precedes the version read
// (docs/SEMANTICS.md §1 "The weaker levels"). It only ever turns unknown
// into valid; a violation of the stronger level proves nothing here.
func strongerWitness(ctx context.Context, h *history.History, opts history.Options, cfg Config, rtReads bool) ([]string, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	so := opts
	so.Level = strongerLevel(opts.Level)
	if rtReads {
		// The online variant also wants no read from a transaction that
		// began after the reader ended: a strict serial order has it (a
		// reader before its writer in real time would be before it in
		// the order, and so could not read it).
		so.Level = history.StrictSerializable
	}
	r, err := Check(ctx, h, so, Config{MaxAnomalies: 1})
	if err != nil || r.Verdict != Valid {
		return nil, false
	}
	return r.Witness, true
}

// layoutSessions lays out sh's sessions from members (by session, in rank
// order, as positions of the history): each member kept by local (its
// local index, or -1) joins its session's slice of sessFlat, carved so
// that no append runs into the next, and gets its session and position;
// an empty session is left out. The general path and the fast path
// (check_weak_fast.go) share it, so that both give saturation the same
// input. It returns sessFlat.
func layoutSessions(sh *saturation.History, members [][]int32, local []int32, sessFlat []int32) []int32 {
	for _, ms := range members {
		first := len(sessFlat)
		for _, t := range ms {
			if l := local[t]; l >= 0 {
				sh.Session[l], sh.Pos[l] = int32(len(sh.Sessions)), int32(len(sessFlat)-first)
				sessFlat = append(sessFlat, l)
			}
		}
		if len(sessFlat) > first {
			sh.Sessions = append(sh.Sessions, sessFlat[first:len(sessFlat):len(sessFlat)])
		}
	}
	return sessFlat
}

// violatesNoted is violatesWeak, and sets *unk when the decision gave up
// (unknown: more choices than the bound, or a list read with too many
// parses). Whether a set is decided depends on the heuristics' path
// (the likely choice's cycle, the projection around it), not only on
// its choices, so a smaller set can give up where a larger one was
// decided: the searches note it.
func violatesNoted(ctx context.Context, p *prepared, in []bool, unk *bool) bool {
	out, err := decideWeak(ctx, prepareLike(p, p.project(in)))
	if err == nil && out.verdict == Unknown && unk != nil {
		*unk = true
	}
	return err == nil && out.verdict == Invalid
}

// canonicalCoreWhole is weak32's search, over the whole instance: the
// component search falls back to it (canonicalAnomalies) where a
// decision gives up; unk is set when one of its own does.
//
// canonicalCoreWhole turns core, a minimal core of p's history, into the
// canonical core of the history (docs/SEMANTICS.md §5 "Canonical cores
// at the weak levels"): with the transactions in content order
// (contentCompare: start, end, id, then the body), the violating subset
// that is least when sets are compared by their greatest differing
// member, the one deleting members latest first from the whole history
// leaves. It depends only on which transactions the history holds and
// what they say, never on the violating set the decision happened to
// report, so a writer retired (in no minimal core, R3) or kept, an
// arrival order or a batch size that changes that set leaves it alone.
//
// Violation is monotone in the set projected to (a read is kept only
// when all its possible writers are in, and a consistent commit order of
// a set orders every subset), so the canonical core's greatest member is
// the last x in content order whose prefix up to x, with the members
// already found above it, violates; a search downward from the greatest
// member of core (the canonical core is no greater) finds each, a
// doubling step and then bisection, some log₂(distance) projections
// each. A last deletion pass over the result keeps it minimal even were
// monotonicity ever to fail.
func canonicalCoreWhole(ctx context.Context, p *prepared, core []int32, st *Stats, unk *bool) ([]int32, error) {
	order := make([]int32, len(p.h.Txns))
	for i := range order {
		order[i] = int32(i)
	}
	sortByContent(p.h, order)
	return canonicalSearch(ctx, p, order, core, st, unk, true)
}
