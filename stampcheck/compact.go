package stampcheck

import (
	"bytes"
	"cmp"
	"hash/maphash"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// Compact is a history with commit stamps held for CheckSerial's witness
// alone (docs/SEMANTICS.md §10 "The compact path of check"): per
// transaction its id, session, times, status and stamps; per op its kind,
// dense key id and value text id (int32s; AddIDs takes the decoder's
// numbering, so a key's text is hashed once, by the decoder). About 50
// bytes a transaction and 8 an op, with no pointer for the collector to
// scan, where []history.Txn takes about 150 and 64 (BENCHMARKS.md
// "stamps4": 1.6 GB at 1M, whose first touch was most of check's time).
//
// It answers one question: does the commit-stamp witness hold? When it
// does (CheckSerial's result), the verdict is the one Check gives on the same history,
// witness order included (the differential test in compact_test.go). When
// anything else holds (an input error History.Validate would report,
// PostgreSQL's facts, a committed transaction without a stamp, a read the
// replay does not reproduce, an order the level forbids) it says why not
// and the caller checks the full history, which decides exactly what the
// stamps leave open: Compact never reports, so it can be wrong only by
// saying valid, and it says valid only where CheckSerial does.
type Compact struct {
	txns  []ctxn
	ops   [][]cop   // in chunks of opChunk (a bigger transaction: a chunk of its own); never copied to grow
	lists [][]int32 // list reads' value ids, in chunks of listChunk
	ids   idSet

	texts map[history.Value]int32 // Add's numbering (AddIDs': the caller's)
	fops  []fop                   // AddIDs' scratch
	// keyOf: per text id of a key, (dense key id + 1)<<2 | its kind so
	// far (0 undecided, kindReg, kindList: History.Validate's rule); 0
	// for a text not seen as a key. One look per op finds both.
	keyOf    []uint32
	nkeys    int32 // dense key ids given
	sessions *KeyIndex
	facts    bool
	// need: the stamps every committed transaction must carry for the
	// level's witness (Require); a missing one ends the scan early.
	need history.FactBits
	// not, when set, is why the compact form cannot vouch; Add stops
	// recording.
	not string
	// place, in a Part, is its first form's per-transaction arrays at
	// their capacity, where AddIDs places the part's own at its first
	// transaction (Part).
	place *placement
}

const (
	kindReg  = 1
	kindList = 2

	opChunk   = 1 << 16
	listShift = 20
	listChunk = 1 << listShift
)

// ctxn is one transaction in 48 bytes: its ops are ops[opChunk][opLo:
// opLo+opN] (opLo fits 16 bits: a chunk holds opChunk ops, and a
// transaction with more has a chunk of its own, from 0; only a
// transaction without ops can start at opChunk, which wraps to 0 and
// names the same empty slice).
type ctxn struct {
	start, end int64
	cts, sts   int64
	session    int32 // -1: none
	opChunk    int32
	opN        int32
	opLo       uint16
	status     history.Status
	flags      uint8 // hasTime, hasCTS, hasSTS
}

const (
	flagTime = 1 << iota
	flagCTS
	flagSTS
)

func (t *ctxn) hasTime() bool { return t.flags&flagTime != 0 }
func (t *ctxn) hasCTS() bool  { return t.flags&flagCTS != 0 }
func (t *ctxn) hasSTS() bool  { return t.flags&flagSTS != 0 }

// cop is one op in 8 bytes: the key id with the kind and the list flag
// in its low bits, and the value. Appending 16-byte ops was much of
// AddIDs' time at 1M, most of it the first write to fresh pages; half
// the bytes is half of that (BENCHMARKS.md "stamps29").
type cop struct {
	kk  uint32 // key id<<copKeyShift | kind<<1 | isList
	val int32  // the value's text id; a list read's position in lists (listAt)
}

// copKeyShift leaves room for the kind (Read, Write, Append) and the
// list flag; maxKeys is what the key id field holds.
const (
	copKeyShift = 3
	maxKeys     = 1 << (32 - copKeyShift)
)

func newCop(key int32, kind history.Kind, isList bool, val int32) cop {
	o := cop{kk: uint32(key)<<copKeyShift | uint32(kind)<<1, val: val}
	if isList {
		o.kk |= 1
	}
	return o
}

func (o cop) key() int32         { return int32(o.kk >> copKeyShift) }
func (o cop) kind() history.Kind { return history.Kind(o.kk >> 1 & 3) }
func (o cop) isList() bool       { return o.kk&1 != 0 }

// NewCompact returns an empty compact history; sizeHint is the expected
// number of transactions (0: unknown).
func NewCompact(sizeHint int) *Compact {
	c := &Compact{sessions: NewKeyIndex()}
	c.txns = make([]ctxn, 0, sizeHint)
	c.ids.init(sizeHint)
	return c
}

// Require makes a committed transaction without the stamps in need a
// refusal as it is added (the witness would be open, CheckSerial's or
// CheckSnapshot's first test): a history the stamps cannot settle is
// then handed to the full path after the first such line, not after the
// whole scan. history.HasCommitTS for the serializable levels, with
// history.HasStartTS for the snapshot family.
func (c *Compact) Require(need history.FactBits) { c.need = need }

// NullID is the text id of null in AddIDs' numbering (ingest.NullID):
// the value of a register nobody wrote.
const NullID = 0

// Add appends one transaction and its facts, numbering its keys and
// values itself (a map lookup per op: tests and small inputs; ScanNative's
// callers use AddIDs with the decoder's numbering).
func (c *Compact) Add(t *history.Txn, f history.Facts) {
	if c.texts == nil {
		c.texts = map[history.Value]int32{history.Null: NullID}
	}
	id := func(v history.Value) int32 {
		x, ok := c.texts[v]
		if !ok {
			x = int32(len(c.texts))
			c.texts[v] = x
		}
		return x
	}
	var keys, vals, lists []int32
	for _, op := range t.Ops {
		keys = append(keys, id(op.Key))
		if op.IsList {
			vals = append(vals, int32(len(lists)))
			for _, v := range op.List {
				lists = append(lists, id(v))
			}
		} else {
			vals = append(vals, id(op.Value))
		}
	}
	c.AddIDs(t, f, keys, vals, lists)
}

// AddIDs appends one transaction and its facts, copying what it keeps
// (t's ops may be a decoder's scratch). keyIDs[n] and valIDs[n] number op
// n's key and value texts (equal ids exactly for equal texts, NullID for
// null, across the whole history); a list read's valIDs[n] is the offset
// of its elements' ids in listIDs. It applies History.Validate's rules
// (unique ids, a key either a register or a list) and refuses PostgreSQL's
// facts (their check is not this replay); a refusal is final (Why).
func (c *Compact) AddIDs(t *history.Txn, f history.Facts, keyIDs, valIDs, listIDs []int32) {
	if c.not != "" {
		return
	}
	if c.place != nil {
		c.placeAt(t.Pos.Line - 1)
	}
	c.fops = flatOps(c.fops[:0], t.Ops)
	c.add(headOf(t), t.ID, f, c.fops, keyIDs, valIDs, listIDs)
}

// txnHead is what Compact keeps of a transaction besides its id and ops.
type txnHead struct {
	start, end          int64
	session             string
	status              history.Status
	hasTime, hasSession bool
}

func headOf(t *history.Txn) txnHead {
	return txnHead{start: t.Start, end: t.End, session: t.Session, status: t.Status, hasTime: t.HasTime, hasSession: t.HasSession}
}

// fop is what Compact reads of an op besides its ids: its kind, whether
// it is a list read, and the list's length.
type fop struct {
	n      int32
	kind   history.Kind
	isList bool
}

// flatOps appends ops' fops to dst.
func flatOps(dst []fop, ops []history.Op) []fop {
	for i := range ops {
		op := &ops[i]
		// A list longer than int32 counts is longer than listChunk too,
		// and refused as such (listSpace).
		dst = append(dst, fop{n: int32(min(len(op.List), math.MaxInt32)), kind: op.Kind, isList: op.IsList})
	}
	return dst
}

// add is AddIDs on the transaction's head, id and fops (Ahead's form).
func (c *Compact) add(t txnHead, id string, f history.Facts, tops []fop, keyIDs, valIDs, listIDs []int32) {
	if c.not != "" {
		return
	}
	if len(c.ids.text)+len(id) > math.MaxInt32-1 {
		c.not = "too large for int32 offsets"
		return
	}
	c.ids.add(id)
	if t.hasTime && t.end < t.start {
		c.not = "end before start (an input error)"
		return
	}
	if f.Has&(history.HasXid|history.HasSnapshot) != 0 {
		c.not = "PostgreSQL's facts"
		return
	}
	if f.Has != 0 {
		c.facts = true
	}
	if f.Has&history.HasCommitTS != 0 && t.status != history.Committed || t.status == history.Aborted && f.Has != 0 {
		c.not = "a fact on a transaction that did not commit (an input error)"
		return
	}
	if f.Has&(history.HasCommitTS|history.HasStartTS) == history.HasCommitTS|history.HasStartTS && f.StartTS > f.CommitTS {
		c.not = "start_ts after commit_ts (an input error)"
		return
	}
	if t.status == history.Committed && f.Has&c.need != c.need {
		c.not = "a committed transaction lacks a stamp the level's witness needs"
		return
	}
	ct := ctxn{start: t.start, end: t.end, cts: f.CommitTS, sts: f.StartTS, session: -1, status: t.status}
	if t.hasTime {
		ct.flags |= flagTime
	}
	if f.Has&history.HasCommitTS != 0 {
		ct.flags |= flagCTS
	}
	if f.Has&history.HasStartTS != 0 {
		ct.flags |= flagSTS
	}
	if t.hasSession {
		ct.session = c.sessions.Get(history.Value(t.session))
	}
	ops := c.opSpace(len(tops))
	lo := len(ops)
	ct.opChunk, ct.opLo, ct.opN = int32(len(c.ops)-1), uint16(lo), int32(len(tops))
	ops = ops[:lo+len(tops)]
	dst := ops[lo:]
	keyOf := c.keyOf
	for n := range tops {
		op := &tops[n]
		kid := keyIDs[n]
		if uint(kid) >= uint(len(keyOf)) {
			if kid < 0 {
				c.not = "a key numbered as a value by the decoder"
				return
			}
			keyOf = c.growKeyOf(int(kid))
		}
		// The key's entry: its dense id + 1 above the kind it is used
		// as so far (History.Validate's rule, op.KeyKind: an append or
		// a list read makes it a list, a write a register, a register
		// read decides nothing).
		e := keyOf[kid]
		if e == 0 {
			if c.nkeys == maxKeys {
				c.not = "too many keys for the compact form"
				return
			}
			c.nkeys++
			e = uint32(c.nkeys) << 2
			keyOf[kid] = e
		}
		var want uint32
		switch {
		case op.kind == history.Append || op.kind == history.Read && op.isList:
			want = kindList
		case op.kind == history.Write:
			want = kindReg
		}
		if want != 0 && e&3 != want {
			if e&3 != 0 {
				c.not = "a key used as a list and as a register (an input error)"
				return
			}
			e |= want
			keyOf[kid] = e
		}
		val := valIDs[n]
		if op.isList {
			at, ok := c.listSpace(int(op.n) + 1)
			if !ok {
				c.not = "a list read too long for the compact form"
				return
			}
			l := &c.lists[len(c.lists)-1]
			*l = append(*l, op.n)
			*l = append(*l, listIDs[val:int(val)+int(op.n)]...)
			val = at
		}
		dst[n] = newCop(int32(e>>2)-1, op.kind, op.isList, val)
	}
	c.ops[len(c.ops)-1] = ops
	c.txns = append(c.txns, ct)
}

// growKeyOf makes keyOf long enough for the decoder's id kid and returns
// it.
func (c *Compact) growKeyOf(kid int) []uint32 {
	if kid >= cap(c.keyOf) {
		c.keyOf = slices.Grow(c.keyOf, kid+1-len(c.keyOf))
	}
	c.keyOf = c.keyOf[:kid+1]
	return c.keyOf
}

// keyKinds is each key's kind by its dense id (kindReg, kindList, 0 when
// only register reads used it), from keyOf.
func (c *Compact) keyKinds() []uint8 {
	kinds := make([]uint8, c.nkeys)
	for _, e := range c.keyOf {
		if e != 0 {
			kinds[e>>2-1] = uint8(e & 3)
		}
	}
	return kinds
}

// opSpace returns the last op chunk with room for n more ops, starting a
// new one when it has not.
func (c *Compact) opSpace(n int) []cop {
	if k := len(c.ops); k > 0 && cap(c.ops[k-1])-len(c.ops[k-1]) >= n {
		return c.ops[k-1]
	}
	c.ops = append(c.ops, make([]cop, 0, max(opChunk, n)))
	return c.ops[len(c.ops)-1]
}

// listSpace makes room for a list of n ids in the last list chunk and
// returns its position (chunk<<listShift | offset).
func (c *Compact) listSpace(n int) (int32, bool) {
	if n > listChunk {
		return 0, false
	}
	k := len(c.lists)
	if k == 0 || listChunk-len(c.lists[k-1]) < n {
		if k >= math.MaxInt32>>listShift {
			return 0, false
		}
		c.lists = append(c.lists, make([]int32, 0, listChunk))
		k++
	}
	return int32((k-1)<<listShift | len(c.lists[k-1])), true
}

// listAt is the list read stored at at: its length, then its elements'
// ids.
func (c *Compact) listAt(at int32) []int32 {
	ch := c.lists[at>>listShift]
	lo := at & (listChunk - 1)
	return ch[lo+1 : lo+1+ch[lo]]
}

// Len is the number of transactions added.
func (c *Compact) Len() int { return len(c.txns) }

// Why is why the compact form cannot vouch for the history ("" while it
// can), as far as AddIDs knows: a duplicate id is found after the scan,
// by CheckSerial and CheckSnapshot (idSet.dup).
func (c *Compact) Why() string { return c.not }

func (c *Compact) opsOf(i int32) []cop {
	t := &c.txns[i]
	lo := int32(t.opLo)
	return c.ops[t.opChunk][lo : lo+t.opN]
}

// txn is the part of a history.Txn that Options.Precedes and EffectiveEnd
// read.
func (c *Compact) txn(i int32) history.Txn {
	t := &c.txns[i]
	return history.Txn{Start: t.start, End: t.end, HasTime: t.hasTime(), Status: t.status}
}

// CheckSerial is the package's CheckSerial on the compact form, at a
// serializable level (opts.Level has no snapshot semantics): the
// Witnessed result Check would give, or nil and why the full history must
// be checked. Only the witness is tried; every other outcome (open,
// contradicted, an input error) is the full path's to decide and name.
func (c *Compact) CheckSerial(opts history.Options) (*incremental.Result, string) {
	if why := c.usable(opts); why != "" {
		return nil, why
	}
	order := make([]int32, 0, len(c.txns))
	for i := range c.txns {
		t := &c.txns[i]
		if t.status != history.Committed {
			continue // aborted, or unknown and left out as CheckSerial does
		}
		if !t.hasCTS() {
			return nil, "a committed transaction has no commit_ts"
		}
		order = append(order, int32(i))
	}
	sortByStamp(order, func(i int32) int64 { return c.txns[i].cts }, func(a, b int32) int {
		ta, tb := &c.txns[a], &c.txns[b]
		return cmp.Or(cmp.Compare(ta.start, tb.start), cmp.Compare(ta.end, tb.end), cmp.Compare(a, b))
	})
	if !c.levelOrderHolds(opts, order) {
		return nil, "the stamps' order goes against the level's order"
	}
	if !c.replay(opts, order) {
		return nil, "a read the stamps' order does not reproduce"
	}
	res := &incremental.Result{Verdict: incremental.Valid, Options: opts}
	res.Stats.Txns = len(c.txns)
	// One string holds every id; the witness's are slices of it (no
	// allocation per transaction).
	all := string(c.ids.text)
	res.Witness = make([]string, len(order))
	for p, i := range order {
		lo, hi := c.ids.span(i)
		res.Witness[p] = all[lo:hi]
	}
	return res, ""
}

// usable says why the compact form cannot answer at all ("": it can):
// what it refused while reading, no transaction or no fact, and check's
// refusal of a real-time level without client times (needTime).
func (c *Compact) usable(opts history.Options) string {
	switch {
	case c.not != "":
		return c.not
	case c.ids.dup():
		c.not = "a duplicate id (an input error)"
		return c.not
	case len(c.txns) == 0:
		return "no transactions"
	case !c.facts:
		return "the history carries no database facts"
	}
	if opts.Level.RealTime() {
		for i := range c.txns {
			if !c.txns[i].hasTime() {
				return "a transaction without client time at a real-time level (an input error)"
			}
		}
	}
	return ""
}

// sessionLists lists each session's transactions in session order, as
// the package's sessions does: by start when all the session's members
// have client times (stable), input order otherwise.
func (c *Compact) sessionLists() [][]int32 {
	ns := c.sessions.Len()
	by := make([][]int32, ns)
	timed := make([]bool, ns)
	for s := range timed {
		timed[s] = true
	}
	for i := range c.txns {
		if s := c.txns[i].session; s >= 0 {
			by[s] = append(by[s], int32(i))
			timed[s] = timed[s] && c.txns[i].hasTime()
		}
	}
	for s, mem := range by {
		if timed[s] {
			// history.SessionCompare on the compact form's fields, as
			// sessions ranks the members.
			slices.SortStableFunc(mem, func(a, b int32) int {
				if r := cmp.Or(cmp.Compare(c.txns[a].start, c.txns[b].start), cmp.Compare(c.txns[a].end, c.txns[b].end)); r != 0 {
					return r
				}
				la, ha := c.ids.span(a)
				lb, hb := c.ids.span(b)
				return bytes.Compare(c.ids.text[la:ha], c.ids.text[lb:hb])
			})
		}
	}
	return by
}

// levelOrderHolds is levelOrderViolation on the compact form: session
// order (sessions in start order when all their members have times,
// input order otherwise: the package's sessions) and widened real time.
func (c *Compact) levelOrderHolds(opts history.Options, order []int32) bool {
	if !opts.Level.SessionOrder() && !opts.Level.RealTime() {
		return true // serializable: no order of the level's own
	}
	pos := make([]int32, len(c.txns))
	for i := range pos {
		pos[i] = -1
	}
	for p, i := range order {
		pos[i] = int32(p)
	}
	if opts.Level.SessionOrder() {
		for _, mem := range c.sessionLists() {
			var prev int32 = -1
			for _, i := range mem {
				if pos[i] < 0 {
					continue
				}
				if prev >= 0 && pos[prev] > pos[i] {
					return false
				}
				prev = i
			}
		}
	}
	if opts.Level.RealTime() {
		var best int32 = -1
		var tb history.Txn
		for p := len(order) - 1; p >= 0; p-- {
			j := order[p]
			tj := c.txn(j)
			if best >= 0 && opts.Precedes(&tb, &tj) {
				return false
			}
			if best < 0 || cmp.Or(cmp.Compare(opts.EffectiveEnd(&tj), opts.EffectiveEnd(&tb)), cmp.Compare(tj.Start, tb.Start)) < 0 {
				best, tb = j, tj
			}
		}
	}
	return true
}

// replay is the package's replay on the compact form, reporting only
// whether every read is reproduced.
func (c *Compact) replay(opts history.Options, order []int32) bool {
	unknownInit := opts.InitialState == history.InitialUnknown
	const null = NullID
	type state struct {
		val   int32
		list  []int32
		bound bool
	}
	kinds := c.keyKinds()
	st := make([]state, len(kinds))
	for _, ti := range order {
		for _, op := range c.opsOf(ti) {
			s := &st[op.key()]
			switch op.kind() {
			case history.Write:
				s.val, s.bound = op.val, true
				continue
			case history.Append:
				s.list = append(s.list, op.val)
				s.bound = true
				continue
			}
			if kinds[op.key()] == kindList {
				var got []int32
				switch {
				case op.isList():
					got = c.listAt(op.val)
				case op.val != null:
					return false
				}
				if unknownInit && !s.bound {
					if len(got) < len(s.list) || !slices.Equal(got[len(got)-len(s.list):], s.list) {
						return false
					}
					s.list = slices.Clone(got)
					s.bound = true
				} else if !slices.Equal(got, s.list) {
					return false
				}
				continue
			}
			if unknownInit && !s.bound {
				s.val, s.bound = op.val, true
			} else if op.val != s.val {
				return false
			}
		}
	}
	return true
}

// idSet holds every transaction's id, back to back in one byte slice,
// and finds duplicates (History.Validate's first rule) once the scan is
// over: each id's 64-bit hash is appended as it is read (a write in
// order), and dup finds the hashes met twice (twiceHashes) and compares the ids of equal ones by
// text. A table probed per id, as before, cost a cache miss per
// transaction into a table of millions of slots: half of AddIDs' samples
// in a profile of check at 1M (BENCHMARKS.md "stamps29"). The price: a duplicate is found at
// the end of the scan, not at its line, which only the refusal's cost
// sees (the full path reads the file again and names it).
type idSet struct {
	text []byte
	end  []int32  // end[i]: where txn i's id ends in text
	hash []uint64 // per txn
	seed maphash.Seed
	// checked: dup has looked at the first checked ids; found: it found
	// two equal among them.
	checked int
	found   bool
}

func (s *idSet) init(hint int) {
	s.seed = maphash.MakeSeed()
	// Room for ids of up to 8 bytes without growing (gen's and most
	// recorders' are shorter); longer ones grow the text as before.
	s.text = make([]byte, 0, 8*hint)
	s.end = make([]int32, 0, hint)
	s.hash = make([]uint64, 0, hint)
}

func (s *idSet) span(i int32) (lo, hi int32) {
	if i > 0 {
		lo = s.end[i-1]
	}
	return lo, s.end[i]
}

func (s *idSet) id(i int32) []byte {
	lo, hi := s.span(i)
	return s.text[lo:hi]
}

// add records id as the next transaction's.
func (s *idSet) add(id string) {
	s.text = append(s.text, id...)
	s.end = append(s.end, int32(len(s.text)))
	s.hash = append(s.hash, maphash.String(s.seed, id))
}

// dup reports whether two transactions have one id. Equal ids have equal
// hashes, so only ids whose hash occurs twice can be equal, and those are
// compared by text: exact whatever the hash does (a collision costs a
// map of the few ids involved, never a wrong answer).
func (s *idSet) dup() bool {
	if s.checked == len(s.hash) {
		return s.found
	}
	twice := twiceHashes(s.hash)
	s.checked, s.found = len(s.hash), false
	if len(twice) == 0 {
		return false
	}
	seen := map[string]bool{}
	for i, h := range s.hash {
		if !twice[h] {
			continue
		}
		id := string(s.id(int32(i)))
		if seen[id] {
			s.found = true
			return true
		}
		seen[id] = true
	}
	return false
}

// dupBucketBits: twiceHashes spreads the hashes over 1<<dupBucketBits
// buckets by their top bits, a table of counters that stays in the
// cache.
const dupBucketBits = 16

// twiceHashes returns the hashes that occur more than once in hs. One
// pass counts the hashes per bucket (their top dupBucketBits bits), one
// places each hash's other bits in its bucket, and each bucket, a few
// hashes long on average, is sorted on its own and read for equal
// neighbours: two hashes are equal exactly when they share a bucket and
// their other bits. Where the radix sort of every hash it replaces took
// eight passes of counting and eight of placing over the whole array,
// this takes two, and the sorting stays in the cache (docs/SEMANTICS.md
// §10 "The compact form at 1M, second pass").
func twiceHashes(hs []uint64) map[uint64]bool {
	const shift = 64 - dupBucketBits
	start := make([]int32, 1<<dupBucketBits+1)
	for _, h := range hs {
		start[h>>shift+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	at := slices.Clone(start[:1<<dupBucketBits])
	low := make([]uint64, len(hs))
	for _, h := range hs {
		b := h >> shift
		low[at[b]] = h << dupBucketBits
		at[b]++
	}
	var twice map[uint64]bool
	for b := range 1 << dupBucketBits {
		bucket := low[start[b]:start[b+1]]
		if len(bucket) < 2 {
			continue
		}
		slices.Sort(bucket)
		for i := 1; i < len(bucket); i++ {
			if bucket[i] == bucket[i-1] {
				if twice == nil {
					twice = map[uint64]bool{}
				}
				twice[uint64(b)<<shift|bucket[i]>>dupBucketBits] = true
			}
		}
	}
	return twice
}
