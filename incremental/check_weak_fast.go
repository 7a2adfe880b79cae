package incremental

import (
	"context"
	"slices"
	"time"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/saturation"
)

// The determined fast path of the weak levels (docs/SEMANTICS.md §5 "The
// weak levels' determined fast path"). Where every read has exactly one
// possible source (no unknown outcome, no list, the empty initial state,
// no value written twice, no read of an intermediate or own or later
// write), decideWeakAt's enumeration tries exactly one choice: every
// committed transaction taken, every read from its one writer. That
// choice's saturation instance is built here straight from the history,
// without prepare's tables (key map, value index by hashed text, per-key
// writer lists, arenas of reads and finals), which were most of check's
// time at a million transactions. It answers only Valid; anything else
// (an input outside its domain, a violation, a refused clock size) is
// handed to the general path, which decides from scratch, so an invalid
// history gets the same cores and explanations as before.
//
// The instance is the one buildWeak builds for that choice, transaction
// for transaction, read for read and in the same order, so the witness
// (a topological order, which depends on the order edges were added) is
// the same one too; TestWeakFastSameAsGeneral holds it to that.

// weakFastOff, set by tests, sends every history to the general path.
var weakFastOff bool

// weakFastDenseKeys bounds the integer keys numbered by index.
const weakFastDenseKeys = 1 << 22

// weakFast numbers keys and finds each (key, value)'s writer. Keys and
// values that are canonical non-negative integers (text histories, the
// generator's counters) are found by index: a key's number in a slice,
// a value's writer in its key's slice of values, sized once all writes
// are seen, when the key's values are about as many as its writes.
// Other values, and the values of other keys, go to a map.
type weakFast struct {
	keyDense []int32 // integer key -> number + 1
	keyOther map[history.Value]int32
	nkeys    int32

	// byVal[k][v]: the writer code of integer value v of key k (nil:
	// the key's values are in other).
	byVal [][]int32
	other map[keyVal]int32
}

// intWrite is a write of an integer value, held until byVal is sized.
type intWrite struct {
	key, val, code int32
}

// A writer code: 0 none, t+1 the final write of transaction t, -(t+1)
// an intermediate one (the key written again later in t).

// parseCanon returns the value of a canonical non-negative decimal
// integer of at most nine digits (no sign, no leading zero), the text
// history.IntValue gives it.
func parseCanon(s history.Value) (int32, bool) {
	if len(s) == 0 || len(s) > 9 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	v := int32(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int32(c-'0')
	}
	return v, true
}

// key returns the number of key k, numbering it (in first-appearance
// order, as prepare does) if new.
func (f *weakFast) key(k history.Value) int32 {
	if v, ok := parseCanon(k); ok && v < weakFastDenseKeys {
		if int(v) >= len(f.keyDense) {
			f.keyDense = append(f.keyDense, make([]int32, int(v)+1-len(f.keyDense))...)
		}
		if id := f.keyDense[v]; id > 0 {
			return id - 1
		}
		f.keyDense[v] = f.nkeys + 1
	} else {
		if id, ok := f.keyOther[k]; ok {
			return id
		}
		if f.keyOther == nil {
			f.keyOther = map[history.Value]int32{}
		}
		f.keyOther[k] = f.nkeys
	}
	f.nkeys++
	return f.nkeys - 1
}

// setOther records code for (k, v) in the map and reports false if
// (k, v) was written before (a repeated value: not this path's).
func (f *weakFast) setOther(k int32, v history.Value, code int32) bool {
	kv := keyVal{k, v}
	if _, ok := f.other[kv]; ok {
		return false
	}
	if f.other == nil {
		f.other = map[keyVal]int32{}
	}
	f.other[kv] = code
	return true
}

// index files the integer writes: a key whose largest value is below
// twice its writes plus 64 gets a slice (while the slices take at most
// budget entries in all), the others go to the map. It reports false
// on a value written twice.
func (f *weakFast) index(ws []intWrite, budget int) bool {
	count := make([]int32, f.nkeys)
	top := make([]int32, f.nkeys)
	for _, w := range ws {
		count[w.key]++
		top[w.key] = max(top[w.key], w.val)
	}
	total := 0
	for k := range count {
		if count[k] > 0 && int(top[k]) < 2*int(count[k])+64 && total+int(top[k])+1 <= budget {
			total += int(top[k]) + 1
		} else {
			count[k] = 0
		}
	}
	arena := make([]int32, total)
	f.byVal = make([][]int32, f.nkeys)
	for k := range count {
		if count[k] > 0 {
			f.byVal[k], arena = arena[:top[k]+1:top[k]+1], arena[top[k]+1:]
		}
	}
	for _, w := range ws {
		if vs := f.byVal[w.key]; vs != nil {
			if vs[w.val] != 0 {
				return false
			}
			vs[w.val] = w.code
		} else if !f.setOther(w.key, history.IntValue(int64(w.val)), w.code) {
			return false
		}
	}
	return true
}

// writer returns the writer code of (k, v), 0 when none.
func (f *weakFast) writer(k int32, v history.Value) int32 {
	if n, ok := parseCanon(v); ok && f.byVal[k] != nil {
		if int(n) < len(f.byVal[k]) {
			return f.byVal[k][n]
		}
		return 0
	}
	if f.other == nil {
		return 0
	}
	return f.other[keyVal{k, v}]
}

// checkWeakFast decides h on the determined fast path; ok is false when
// the general path must decide (outside the path's domain, or not
// Valid).
func checkWeakFast(ctx context.Context, h *history.History, opts history.Options) (res *Result, ok bool) {
	if weakFastOff || opts.InitialState != history.InitialEmpty || opts.Level.RealTime() {
		return nil, false
	}
	start := time.Now()
	n := len(h.Txns)
	ops := 0
	for ti := range h.Txns {
		ops += len(h.Txns[ti].Ops)
	}
	f := &weakFast{}
	// Pass 1: number keys, record every write's writer code, and each
	// transaction's final writes (keys sorted, no repeats). A key's
	// last write in the transaction so far is lastOp[k] (its integer
	// write ints[lastInt[k]], or -1) while wstamp[k] == t+1.
	writeStart := make([]int32, n+1)
	writesFlat := make([]int32, 0, ops/2)
	ints := make([]intWrite, 0, ops/2)
	var wstamp, lastOp, lastInt []int32
	for ti := range h.Txns {
		t := &h.Txns[ti]
		if t.Status == history.Unknown {
			return nil, false
		}
		writeStart[ti] = int32(len(writesFlat))
		for oi := range t.Ops {
			op := &t.Ops[oi]
			if op.Kind == history.Append || op.IsList {
				return nil, false
			}
			k := f.key(op.Key)
			if int(k) >= len(wstamp) {
				wstamp = append(wstamp, make([]int32, int(k)+1-len(wstamp))...)
				lastOp = append(lastOp, make([]int32, int(k)+1-len(lastOp))...)
				lastInt = append(lastInt, make([]int32, int(k)+1-len(lastInt))...)
			}
			if op.Kind != history.Write {
				continue
			}
			if op.Value == history.Null {
				return nil, false // a write of null: the initial state is a second candidate
			}
			if wstamp[k] == int32(ti)+1 {
				// Written again: the earlier write is intermediate,
				// unless it wrote the same value (a repeated value).
				prev := t.Ops[lastOp[k]].Value
				if prev == op.Value {
					return nil, false
				}
				if i := lastInt[k]; i >= 0 {
					ints[i].code = -ints[i].code
				} else {
					kv := keyVal{k, prev}
					f.other[kv] = -f.other[kv]
				}
			} else {
				wstamp[k] = int32(ti) + 1
				writesFlat = append(writesFlat, k)
			}
			lastOp[k] = int32(oi)
			if v, ok := parseCanon(op.Value); ok {
				lastInt[k] = int32(len(ints))
				ints = append(ints, intWrite{k, v, int32(ti) + 1})
			} else {
				lastInt[k] = -1
				if !f.setOther(k, op.Value, int32(ti)+1) {
					return nil, false
				}
			}
		}
		ws := writesFlat[writeStart[ti]:]
		if len(ws) > 12 {
			slices.Sort(ws)
		} else {
			for i := 1; i < len(ws); i++ {
				for j := i; j > 0 && ws[j] < ws[j-1]; j-- {
					ws[j], ws[j-1] = ws[j-1], ws[j]
				}
			}
		}
		if ti%4096 == 0 && ctx.Err() != nil {
			return nil, false
		}
	}
	writeStart[n] = int32(len(writesFlat))
	if !f.index(ints, 2*ops+1<<16) {
		return nil, false
	}
	ints = nil
	// Sessions as rankSessions orders them: by first appearance, each
	// ranked by start time and then input order (stable).
	sessionOf := make([]int32, n)
	rank := make([]int32, n)
	index := map[string]int32{}
	var members [][]int32
	timed := false
	for ti := range h.Txns {
		t := &h.Txns[ti]
		sessionOf[ti] = -1
		if !t.HasSession {
			continue
		}
		timed = timed || t.HasTime
		si, ok := index[t.Session]
		if !ok {
			si = int32(len(members))
			index[t.Session] = si
			members = append(members, nil)
		}
		members[si] = append(members[si], int32(ti))
	}
	for si, ms := range members {
		if timed {
			slices.SortStableFunc(ms, bySessionRank(h))
		}
		for r, ti := range ms {
			sessionOf[ti], rank[ti] = int32(si), int32(r)
		}
	}
	sessionOrder := opts.Level.SessionOrder()
	// local numbers the committed transactions, the ones taken.
	local := make([]int32, n)
	taken := 0
	for ti := range h.Txns {
		local[ti] = -1
		if h.Txns[ti].Status == history.Committed {
			local[ti] = int32(taken)
			taken++
		}
	}
	// Pass 2: each transaction's external reads, deduplicated per (key,
	// value) as prepare does, each with its one source. An aborted
	// transaction's reads are counted (Stats.Reads) and not resolved.
	sh := &saturation.History{
		Session: make([]int32, taken), Pos: make([]int32, taken),
		Reads: make([][]saturation.Read, taken), Writes: make([][]int32, taken), Keys: int(f.nkeys),
	}
	readsFlat := make([]saturation.Read, 0, ops/2)
	type ext struct {
		key int32
		val history.Value
	}
	var seen []ext
	nreads := 0
	// own[k] == t+1: t wrote k before this op; its last write is
	// lastOp[k].
	own := wstamp
	clear(own)
	for ti := range h.Txns {
		t := &h.Txns[ti]
		seen = seen[:0]
		l := local[ti]
		first := len(readsFlat)
		for oi := range t.Ops {
			op := &t.Ops[oi]
			k := f.key(op.Key)
			if op.Kind == history.Write {
				own[k], lastOp[k] = int32(ti)+1, int32(oi)
				continue
			}
			if own[k] == int32(ti)+1 {
				if t.Ops[lastOp[k]].Value != op.Value {
					return nil, false // an internal anomaly
				}
				continue
			}
			dup := false
			for _, e := range seen {
				if e.key == k && e.val == op.Value {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			seen = append(seen, ext{k, op.Value})
			nreads++
			if l < 0 {
				continue
			}
			if op.Value == history.Null {
				readsFlat = append(readsFlat, saturation.Read{Key: k, From: saturation.Initial})
				continue
			}
			c := f.writer(k, op.Value)
			if c <= 0 {
				return nil, false // no writer, or an intermediate one
			}
			w := c - 1
			if w == int32(ti) || local[w] < 0 {
				return nil, false // its own later write, or an aborted writer's
			}
			if sessionOrder && sessionOf[w] >= 0 && sessionOf[w] == sessionOf[ti] && rank[w] > rank[ti] {
				return nil, false // a later transaction of its session
			}
			readsFlat = append(readsFlat, saturation.Read{Key: k, From: local[w]})
		}
		if l >= 0 {
			sh.Reads[l] = readsFlat[first:len(readsFlat):len(readsFlat)]
			sh.Writes[l] = writesFlat[writeStart[ti]:writeStart[ti+1]:writeStart[ti+1]]
		}
		if ti%4096 == 0 && ctx.Err() != nil {
			return nil, false
		}
	}
	// Sessions as buildWeak lays them out: the named ones in order, then
	// one of its own for each committed transaction without a session.
	sessFlat := layoutSessions(sh, members, local, make([]int32, 0, taken))
	idx := make([]int32, 0, taken)
	for ti := range h.Txns {
		if local[ti] >= 0 {
			idx = append(idx, int32(ti))
		}
	}
	for l, t := range idx {
		if sessionOf[t] < 0 {
			sh.Session[l], sh.Pos[l] = int32(len(sh.Sessions)), 0
			sessFlat = append(sessFlat, int32(l))
			sh.Sessions = append(sh.Sessions, sessFlat[len(sessFlat)-1:len(sessFlat):len(sessFlat)])
		}
	}
	sat, err := saturation.Check(sh, weakModel(opts.Level))
	if err != nil || !sat.Valid {
		return nil, false
	}
	res = &Result{Options: opts, Verdict: Valid}
	res.Stats.Txns = n
	res.Stats.Reads = nreads
	res.Witness = make([]string, len(sat.Order))
	for i, v := range sat.Order {
		res.Witness[i] = h.Txns[idx[v]].ID
	}
	res.Stats.SolveTime = time.Since(start)
	return res, true
}
