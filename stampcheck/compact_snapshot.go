package stampcheck

import (
	"cmp"
	"slices"
	"strings"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/incremental"
)

// CheckSnapshot is CheckSnapshotLevel's witness on the compact form, at a
// snapshot level with its rules (RulesFor): the Valid result, begins and
// commits in stamp order, that CheckSnapshotLevel gives when every
// committed transaction has both stamps and the one-pass replay (stream)
// and the level's rules (checkRules) hold; nil and why not otherwise,
// and the caller checks the full history. The steps are analyze's in
// stamps mode, on text ids.
func (c *Compact) CheckSnapshot(opts history.Options, rules SnapshotRules) (*incremental.Result, string) {
	if why := c.usable(opts); why != "" {
		return nil, why
	}
	var committed []int32
	for i := range c.txns {
		t := &c.txns[i]
		if t.status != history.Committed {
			continue
		}
		if !t.hasCTS() || !t.hasSTS() {
			return nil, "a committed transaction lacks start_ts or commit_ts"
		}
		committed = append(committed, int32(i))
	}
	// stampOrders: by commit stamp, ties by effective end, start, index;
	// by start stamp, ties by index.
	byCommit, byStart := slices.Clone(committed), committed
	sortByStamp(byCommit, func(i int32) int64 { return c.txns[i].cts }, func(x, y int32) int {
		tx, ty := c.txn(x), c.txn(y)
		return cmp.Or(cmp.Compare(opts.EffectiveEnd(&tx), opts.EffectiveEnd(&ty)), cmp.Compare(tx.Start, ty.Start), cmp.Compare(x, y))
	})
	sortByStamp(byStart, func(i int32) int64 { return c.txns[i].sts }, nil)
	if !c.stream(opts, byCommit, byStart) {
		return nil, "a read or a first-committer pair the stamps do not explain"
	}
	if !c.rulesHold(opts, rules, committed) {
		return nil, "the stamps go against the level's rules"
	}
	res := &incremental.Result{Verdict: incremental.Valid, Options: opts}
	res.Stats.Txns = len(c.txns)
	// Every entry is written into one text and the witness slices it: a
	// string per entry ("begin "+id) was an allocation per begin and per
	// commit, a tenth of the snapshot check at 1M. The merge of begins
	// and commits runs twice, to write the text and then to slice it,
	// where a table of the entries' ends cost 16 bytes an entry.
	merge := func(entry func(word string, i int32)) {
		b := 0
		for _, x := range byCommit {
			for b < len(byStart) && c.txns[byStart[b]].sts <= c.txns[x].cts {
				entry("begin ", byStart[b])
				b++
			}
			entry("commit ", x)
		}
	}
	var text strings.Builder
	text.Grow(len(byCommit)*len("begin commit ") + 2*len(c.ids.text))
	n := 0
	merge(func(word string, i int32) {
		text.WriteString(word)
		text.Write(c.ids.id(i))
		n++
	})
	all := text.String()
	res.Witness = make([]string, n)
	k, lo := 0, 0
	merge(func(word string, i int32) {
		a, b := c.ids.span(i)
		hi := lo + len(word) + int(b-a)
		res.Witness[k], k, lo = all[lo:hi], k+1, hi
	})
	return res, ""
}

// compactOwn is one key a transaction has written so far (ownWrite on
// ids).
type compactOwn struct {
	k    int32
	reg  bool
	val  int32
	apps []int32
}

// stream is the package's stream on the compact form: begins and commits
// in stamp order, each read against the latest committed state with the
// reader's own writes on top, first committer wins at each commit.
func (c *Compact) stream(opts history.Options, byCommit, byStart []int32) bool {
	kinds := c.keyKinds()
	nk := len(kinds)
	last := make([]int32, nk)
	for k := range last {
		last[k] = -1
	}
	val := make([]int32, nk) // NullID
	apps := make([][]int32, nk)
	unknownInit := opts.InitialState == history.InitialUnknown
	var bound []bool
	var initReg []int32
	var initList [][]int32
	if unknownInit {
		bound, initReg, initList = make([]bool, nk), make([]int32, nk), make([][]int32, nk)
	}
	// own holds the reader's writes so far, one entry per key; ownOf[k]
	// is 1 + the entry of key k when ownBy[k] is the reader (ti + 1), so
	// a key's entry is found in one look whatever the transaction's size.
	// Entries keep their appends' arrays from one reader to the next (no
	// allocation per append).
	var own []compactOwn
	ownOf, ownBy := make([]int32, nk), make([]int32, nk)
	var reader int32
	find := func(k int32) *compactOwn {
		if ownBy[k] == reader {
			return &own[ownOf[k]-1]
		}
		return nil
	}
	add := func(k int32) *compactOwn {
		if len(own) < cap(own) {
			own = own[:len(own)+1]
		} else {
			own = append(own, compactOwn{})
		}
		w := &own[len(own)-1]
		w.k, w.reg, w.val, w.apps = k, false, 0, w.apps[:0]
		ownOf[k], ownBy[k] = int32(len(own)), reader
		return w
	}
	begin := func(ti int32) bool {
		own, reader = own[:0], ti+1
		for _, op := range c.opsOf(ti) {
			k := op.key()
			switch op.kind() {
			case history.Write:
				w := find(k)
				if w == nil {
					w = add(k)
				}
				w.reg, w.val = true, op.val
				continue
			case history.Append:
				w := find(k)
				if w == nil {
					w = add(k)
				}
				w.apps = append(w.apps, op.val)
				continue
			}
			mine := find(k)
			if kinds[k] == kindList {
				var got []int32
				switch {
				case op.isList():
					got = c.listAt(op.val)
				case op.val != NullID:
					return false
				}
				var tail []int32
				if mine != nil {
					tail = mine.apps
				}
				snap := apps[k]
				switch {
				case !unknownInit:
					if !equalConcatIDs(got, nil, snap, tail) {
						return false
					}
				case bound[k]:
					if !equalConcatIDs(got, initList[k], snap, tail) {
						return false
					}
				default:
					n := len(snap) + len(tail)
					if len(got) < n || !equalConcatIDs(got[len(got)-n:], nil, snap, tail) {
						return false
					}
					initList[k], bound[k] = slices.Clone(got[:len(got)-n]), true
				}
				continue
			}
			switch {
			case mine != nil && mine.reg:
				if op.val != mine.val {
					return false
				}
			case last[k] >= 0 || !unknownInit:
				if op.val != val[k] {
					return false
				}
			case bound[k]:
				if op.val != initReg[k] {
					return false
				}
			default:
				initReg[k], bound[k] = op.val, true
			}
		}
		return true
	}
	// lastCTS[k] is last[k]'s commit stamp, kept beside it: the previous
	// writer's transaction, anywhere in the history, is not read again.
	lastCTS := make([]int64, nk)
	commit := func(ti int32) bool {
		sts, cts := c.txns[ti].sts, c.txns[ti].cts
		for _, op := range c.opsOf(ti) {
			if op.kind() == history.Read {
				continue
			}
			k := op.key()
			if p := last[k]; p != ti {
				if p >= 0 && lastCTS[k] >= sts {
					return false // first committer wins
				}
				last[k], lastCTS[k] = ti, cts
			}
			if op.kind() == history.Write {
				val[k] = op.val
			} else {
				apps[k] = append(apps[k], op.val)
			}
		}
		return true
	}
	b := 0
	for _, x := range byCommit {
		cts := c.txns[x].cts
		for b < len(byStart) && c.txns[byStart[b]].sts <= cts {
			if !begin(byStart[b]) {
				return false
			}
			b++
		}
		if !commit(x) {
			return false
		}
	}
	return true
}

func equalConcatIDs(got, a, b, c []int32) bool {
	if len(got) != len(a)+len(b)+len(c) {
		return false
	}
	return slices.Equal(got[:len(a)], a) && slices.Equal(got[len(a):len(a)+len(b)], b) && slices.Equal(got[len(a)+len(b):], c)
}

// rulesHold is checkRules in stamps mode on the compact form: each
// committed member of a session sees the previous committed one
// (commit_ts below its start_ts), and no real-time inversion
// (realTimeInversion) against start_ts (strong SI) or commit_ts (GSI).
func (c *Compact) rulesHold(opts history.Options, rules SnapshotRules, committed []int32) bool {
	if rules.Session {
		for _, mem := range c.sessionLists() {
			var prev int32 = -1
			for _, i := range mem {
				if c.txns[i].status != history.Committed {
					continue
				}
				if prev >= 0 && !(c.txns[prev].cts < c.txns[i].sts) {
					return false
				}
				prev = i
			}
		}
	}
	if rules.RealTime || rules.CommitRealTime {
		need := func(b int32) int64 { return c.txns[b].sts }
		if !rules.RealTime {
			need = func(b int32) int64 { return c.txns[b].cts + 1 }
		}
		byCommit := slices.Clone(committed)
		slices.SortFunc(byCommit, func(x, y int32) int { return cmp.Compare(c.txns[y].cts, c.txns[x].cts) })
		byNeed := slices.Clone(committed)
		slices.SortFunc(byNeed, func(x, y int32) int { return cmp.Compare(need(y), need(x)) })
		var best int32 = -1
		var tb history.Txn
		p := 0
		for _, b := range byNeed {
			for p < len(byCommit) && c.txns[byCommit[p]].cts >= need(b) {
				x := byCommit[p]
				tx := c.txn(x)
				if best < 0 || cmp.Or(cmp.Compare(opts.EffectiveEnd(&tx), opts.EffectiveEnd(&tb)), cmp.Compare(tx.Start, tb.Start)) < 0 {
					best, tb = x, tx
				}
				p++
			}
			if best >= 0 {
				tbb := c.txn(b)
				if opts.Precedes(&tb, &tbb) {
					return false
				}
			}
		}
	}
	return true
}
