package incremental

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// timeWitness tries to build a witness of the strict level (real time and
// session order) without an instance, by executing the committed
// transactions serially in an order that real time mostly dictates
// (docs/SEMANTICS.md §3, "T1: a witness from client time"). It returns the
// order (transaction positions) or nil when it cannot build one: nil says
// nothing about the history, and the caller goes on to the search.
//
// The schedule: a committed transaction is due once every committed
// transaction that ends before it starts (by the level's Precedes, with
// its skew) and its committed session predecessor have run. A due
// transaction runs when each of its reads returns the version the state
// holds (its own writes first) and, for each key it writes, every
// committed reader of the version it would overwrite has run; otherwise it
// waits on that key until the key's version changes or its last reader
// runs. So every read is reproduced by construction, and the order extends
// real time and session order: it is a witness by the level's definition,
// and a replay checks it again in the tests.
//
// Registers with values unique among the committed final writes of a key,
// and the empty initial state, only: a list, a repeated value, an
// explicitly written null or an unknown initial state return nil (the
// search decides). Unknown and aborted transactions are left out of the
// order (taken as aborted); a read of a version only they wrote never
// becomes runnable, and the attempt fails.
//
// Cost: O(n log n) for the sorts and one pass over the operations with a
// hash lookup per read and write; memory a few words per operation, none
// of the solver's.
// noVersion marks an operation that neither writes a version others can
// read nor reads one (an intermediate write, an internal read).
const noVersion = int32(-1 << 31)

func timeWitness(ctx context.Context, h *history.History, opts history.Options) []int32 {
	if opts.InitialState != history.InitialEmpty || opts.Level.BeginCommit() {
		return nil
	}
	n := len(h.Txns)
	// Operations of committed transactions get global slots: opBase[t] +
	// i. Keys are numbered as met.
	opBase := make([]int32, n+1)
	committed := 0
	ops := 0
	for ti := range h.Txns {
		t := &h.Txns[ti]
		opBase[ti] = int32(ops)
		if t.Status != history.Committed {
			continue
		}
		if !t.HasTime {
			return nil
		}
		committed++
		ops += len(t.Ops)
	}
	opBase[n] = int32(ops)
	keyIndex := make(map[history.Value]int32, 1024)
	var keys []history.Value
	opKey := make([]int32, ops)
	writes := 0
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status != history.Committed {
			continue
		}
		base := opBase[ti]
		for oi := range t.Ops {
			op := &t.Ops[oi]
			if op.Kind == history.Append || op.IsList || (op.Kind == history.Write && op.Value == history.Null) {
				return nil
			}
			k, ok := keyIndex[op.Key]
			if !ok {
				k = int32(len(keys))
				keyIndex[op.Key] = k
				keys = append(keys, op.Key)
			}
			opKey[base+int32(oi)] = k
			if op.Kind == history.Write {
				writes++
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	// finalWrite reports whether op oi of t is its last write of the key:
	// the version other transactions can read.
	finalWrite := func(ti int32, oi int) bool {
		t := &h.Txns[ti]
		k := opKey[opBase[ti]+int32(oi)]
		for j := oi + 1; j < len(t.Ops); j++ {
			if t.Ops[j].Kind == history.Write && opKey[opBase[ti]+int32(j)] == k {
				return false
			}
		}
		return true
	}
	vi := newValueIndex(writes, &keys, func(t, i int32) *history.Op { return &h.Txns[t].Ops[i] })
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status != history.Committed {
			continue
		}
		for oi := range t.Ops {
			if t.Ops[oi].Kind == history.Write && finalWrite(int32(ti), oi) {
				vi.add(keyVal{key: opKey[opBase[ti]+int32(oi)], val: t.Ops[oi].Value}, int32(ti), int32(oi))
			}
		}
	}
	// A version is a value of a key, named by the slot of the final write
	// of its first committed writer (in transaction order), or -1-k for
	// key k's initial version; with repeated values a version has several
	// writers, and a read of it may follow any of them.
	var one [1]int32
	version := func(k int32, v history.Value) int32 {
		if v == history.Null {
			return -1 - k
		}
		ws := vi.get(keyVal{key: k, val: v}, &one)
		if len(ws) == 0 {
			return noVersion
		}
		w := ws[0]
		for j := len(h.Txns[w].Ops) - 1; j >= 0; j-- {
			if wo := &h.Txns[w].Ops[j]; wo.Kind == history.Write && opKey[opBase[w]+int32(j)] == k {
				return opBase[w] + int32(j)
			}
		}
		return noVersion
	}
	// ver[slot] is the version an operation writes (a final write) or
	// must see (an external read: one before the transaction's own write
	// of the key), noVersion otherwise. left counts the committed readers
	// of each version that have not run (each transaction once per
	// version), writersLeft its committed writers that have not run
	// (indexed like left: by the version's slot, or by key for the
	// initial version, which has none).
	ver := make([]int32, ops)
	left := make([]int32, ops)
	// firstEnd is the earliest end of a version's readers: of two
	// writers of a key due at once, the one whose version is read first
	// (or never) goes first.
	firstEnd := make([]int64, ops)
	for i := range firstEnd {
		firstEnd[i] = math.MinInt64
	}
	writersLeft := make([]int32, ops)
	initLeft := make([]int32, len(keys))
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status != history.Committed {
			continue
		}
		base := opBase[ti]
		for oi := range t.Ops {
			op := &t.Ops[oi]
			s := base + int32(oi)
			k := opKey[s]
			ver[s] = noVersion
			if op.Kind == history.Write {
				if finalWrite(int32(ti), oi) {
					ver[s] = version(k, op.Value)
					writersLeft[ver[s]]++
				}
				continue
			}
			own, earlier := int32(-1), false
			for j := oi - 1; j >= 0; j-- {
				if opKey[base+int32(j)] != k {
					continue
				}
				if t.Ops[j].Kind == history.Write {
					own = int32(j)
					break
				}
				earlier = true // an earlier read of the same version
			}
			if own >= 0 {
				// Internal: it must return the transaction's own write,
				// whatever the order; if it does not, the transaction
				// cannot commit and the search names it.
				if t.Ops[own].Value != op.Value {
					return nil
				}
				continue
			}
			v := version(k, op.Value)
			if v == noVersion {
				return nil // no committed writer: the search names it
			}
			ver[s] = v
			if earlier {
				continue
			}
			if v < 0 {
				initLeft[-1-v]++
			} else {
				if left[v] == 0 || t.End < firstEnd[v] {
					firstEnd[v] = t.End
				}
				left[v]++
			}
		}
	}
	if ctx.Err() != nil {
		return nil
	}

	// Real time: byEnd holds the committed transactions by end; t is due
	// by time once the first need[t] of them have run, need[t] being the
	// number that end at or before t's start less twice the skew (an
	// over-approximation of Precedes, which only delays t).
	byEnd := make([]int32, 0, committed)
	for ti := range h.Txns {
		if h.Txns[ti].Status == history.Committed {
			byEnd = append(byEnd, int32(ti))
		}
	}
	byStart := slices.Clone(byEnd)
	slices.SortFunc(byEnd, func(a, b int32) int { return cmp.Compare(h.Txns[a].End, h.Txns[b].End) })
	slices.SortFunc(byStart, func(a, b int32) int { return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start) })
	need := make([]int32, n)
	{
		j := 0
		for _, t := range byStart {
			lim := h.Txns[t].Start - 2*opts.Skew
			for j < len(byEnd) && h.Txns[byEnd[j]].End <= lim {
				j++
			}
			need[t] = int32(j)
		}
	}
	// Session order: each committed transaction waits for the committed
	// member before it (members sorted as prepare ranks them: by start,
	// then position); next is the inverse.
	prev := make([]int32, n)
	next := make([]int32, n)
	for i := range prev {
		prev[i], next[i] = -1, -1
	}
	if opts.Level.SessionOrder() {
		sessions := map[string][]int32{}
		for ti := range h.Txns {
			t := &h.Txns[ti]
			if t.HasSession {
				sessions[t.Session] = append(sessions[t.Session], int32(ti))
			}
		}
		for _, members := range sessions {
			slices.SortStableFunc(members, func(a, b int32) int {
				if h.Txns[a].Start != h.Txns[b].Start {
					return cmp.Compare(h.Txns[a].Start, h.Txns[b].Start)
				}
				return cmp.Compare(a, b)
			})
			last := int32(-1)
			for _, t := range members {
				if h.Txns[t].Status != history.Committed {
					continue
				}
				prev[t] = last
				if last >= 0 {
					next[last] = t
				}
				last = t
			}
		}
	}

	// The schedule.
	cur := make([]int32, len(keys)) // the version each key holds
	for k := range cur {
		cur[k] = -1 - int32(k)
	}
	// holds says whether t overwriting key k's current version must
	// wait: readers of it have not run and no other writer of it is left
	// to give them the version again.
	holds := func(ti int32, k int32) bool {
		v := cur[k]
		c := int32(0)
		if v < 0 {
			c = initLeft[-1-v]
		} else if writersLeft[v] == 0 {
			c = left[v]
		}
		if c == 0 {
			return false
		}
		// t itself may be one of them: its external read of k saw cur[k]
		// (checked before).
		base := opBase[ti]
		for j := range h.Txns[ti].Ops {
			if s := base + int32(j); opKey[s] == k && h.Txns[ti].Ops[j].Kind == history.Read && ver[s] == v {
				c--
				break
			}
		}
		return c > 0
	}
	valWait := make([][]int32, len(keys))  // wait for the key's version to change
	safeWait := make([][]int32, len(keys)) // wait for its version's readers
	ran := make([]bool, n)
	dueWriters := make([][]int32, len(keys)) // due writers of each key, some ran
	writeVersion := func(u, k int32) int32 {
		for j := len(h.Txns[u].Ops) - 1; j >= 0; j-- {
			if s := opBase[u] + int32(j); h.Txns[u].Ops[j].Kind == history.Write && opKey[s] == k {
				return ver[s]
			}
		}
		return noVersion
	}
	timeDue := make([]bool, n)
	order := make([]int32, 0, committed)
	var work []int32
	wake := func(list *[]int32) {
		work = append(work, *list...)
		*list = (*list)[:0]
	}
	// readsMatch says whether u's reads see the current versions.
	readsMatch := func(u int32) bool {
		for oi, op := range h.Txns[u].Ops {
			s := opBase[u] + int32(oi)
			if v := ver[s]; op.Kind == history.Read && v != noVersion && cur[opKey[s]] != v {
				return false
			}
		}
		return true
	}
	// yields says whether t, about to write version v of key k, lets
	// another due writer of k go first: one whose version is read earlier
	// (or never). A choice of order only: it never makes a read pass.
	yields := func(ti, k, v int32) bool {
		ws := dueWriters[k][:0]
		defer func() { dueWriters[k] = ws }()
		yield := false
		for _, u := range dueWriters[k] {
			if ran[u] {
				continue
			}
			ws = append(ws, u)
			if u == ti || yield {
				continue
			}
			if uv := writeVersion(u, k); uv >= 0 && (v < 0 || firstEnd[uv] < firstEnd[v]) && readsMatch(u) {
				yield = true
			}
		}
		return yield
	}
	// runs says whether t can run now, and if not parks it.
	runs := func(ti int32) bool {
		t := &h.Txns[ti]
		base := opBase[ti]
		for oi := range t.Ops {
			s := base + int32(oi)
			if v := ver[s]; t.Ops[oi].Kind == history.Read && v != noVersion && cur[opKey[s]] != v {
				valWait[opKey[s]] = append(valWait[opKey[s]], ti)
				return false
			}
		}
		for oi := range t.Ops {
			s := base + int32(oi)
			if t.Ops[oi].Kind == history.Write && ver[s] != noVersion && (holds(ti, opKey[s]) || yields(ti, opKey[s], ver[s])) {
				safeWait[opKey[s]] = append(safeWait[opKey[s]], ti)
				return false
			}
		}
		return true
	}
	run := func(ti int32) {
		t := &h.Txns[ti]
		base := opBase[ti]
		ran[ti] = true
		order = append(order, ti)
		for oi := range t.Ops {
			s := base + int32(oi)
			k, v := opKey[s], ver[s]
			if t.Ops[oi].Kind != history.Read || v == noVersion {
				continue
			}
			counted := true // once per version: the first read of it
			for j := 0; j < oi; j++ {
				if opKey[base+int32(j)] == k {
					counted = false
					break
				}
			}
			if !counted {
				continue
			}
			c := &initLeft[k]
			if v >= 0 {
				c = &left[v]
			}
			// A waiting writer may be the last reader itself (holds).
			if *c--; *c <= 1 && cur[k] == v {
				wake(&safeWait[k])
			}
		}
		for oi := range t.Ops {
			s := base + int32(oi)
			if t.Ops[oi].Kind == history.Write && ver[s] != noVersion {
				k := opKey[s]
				cur[k] = ver[s]
				writersLeft[ver[s]]--
				wake(&valWait[k])
				wake(&safeWait[k])
			}
		}
		if nx := next[ti]; nx >= 0 && timeDue[nx] {
			work = append(work, nx)
		}
	}
	due := func(ti int32) bool { return timeDue[ti] && (prev[ti] < 0 || ran[prev[ti]]) }
	done, sp := 0, 0 // prefix of byEnd that has run; next of byStart
	for steps := 0; ; steps++ {
		if steps&4095 == 0 && ctx.Err() != nil {
			return nil
		}
		for done < len(byEnd) && ran[byEnd[done]] {
			done++
		}
		for sp < len(byStart) && need[byStart[sp]] <= int32(done) {
			t := byStart[sp]
			timeDue[t] = true
			for oi, op := range h.Txns[t].Ops {
				if s := opBase[t] + int32(oi); op.Kind == history.Write && ver[s] != noVersion {
					dueWriters[opKey[s]] = append(dueWriters[opKey[s]], t)
				}
			}
			if due(t) {
				work = append(work, t)
			}
			sp++
		}
		if len(work) == 0 {
			break
		}
		ti := work[len(work)-1]
		work = work[:len(work)-1]
		if ran[ti] || !due(ti) || !runs(ti) {
			continue
		}
		run(ti)
	}
	if len(order) != committed {
		if twDebug != nil {
			twDebug(fmt.Sprintf("ran %d of %d; done %d sp %d", len(order), committed, done, sp))
			twDebug(fmt.Sprintf("byStart[sp] %s need %d; byEnd[done] %s ran %v", h.Txns[byStart[sp]].ID, need[byStart[sp]], h.Txns[byEnd[done]].ID, ran[byEnd[done]]))
			for _, t := range byStart[:sp] {
				if !ran[t] {
					twDebug(fmt.Sprintf("unran %s timeDue %v prev %d need %d", h.Txns[t].ID, timeDue[t], prev[t], need[t]))
				}
			}
			for k := range valWait {
				for _, t := range valWait[k] {
					twDebug(fmt.Sprintf("valwait %s on %s cur %d", h.Txns[t].ID, keys[k], cur[k]))
				}
				for _, t := range safeWait[k] {
					twDebug(fmt.Sprintf("safewait %s on %s cur %d left %d", h.Txns[t].ID, keys[k], cur[k], left[max(cur[k], 0)]))
				}
			}
		}
		return nil
	}
	return order
}

var twDebug func(string)
