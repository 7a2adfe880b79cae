package oracle

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Check decides by brute force whether h satisfies opts.Level
// (Serializable, StrongSessionSerializable or StrictSerializable;
// docs/SEMANTICS.md §4). On valid it returns a witness: the ids of the committed
// transactions, and of the unknown ones taken as committed, in serial
// order. It returns an error for other levels, for invalid input, for a
// real-time level without timestamps, and for histories with more than
// MaxTxns committed or writing unknown transactions.
func Check(h *history.History, opts history.Options) (valid bool, witness []string, err error) {
	if err := checkInput(h, opts); err != nil {
		return false, nil, err
	}
	if isWeak(opts.Level) {
		return checkWeakLevel(h, opts) // weak.go
	}
	if opts.Level.BeginCommit() {
		return checkSI(h, opts) // si.go: begin and commit events
	}
	s := newSearch(h, opts)
	if len(s.cand) > MaxTxns {
		return false, nil, fmt.Errorf("%w: %d candidate transactions (max %d)", ErrTooLarge, len(s.cand), MaxTxns)
	}
	order, ok := s.run()
	if !ok {
		return false, nil, nil
	}
	witness = make([]string, len(order))
	for i, c := range order {
		witness[i] = h.Txns[s.cand[c].idx].ID
	}
	return true, witness, nil
}

// cop is a compiled micro-op: keys and values interned to small integers.
type cop struct {
	kind history.Kind
	key  int
	val  int   // register value read or written, element appended
	seq  []int // list read (also for a Null scalar read of a list key)
}

type ctxn struct {
	idx     int  // index in h.Txns
	unknown bool // may be left out of the order
	ops     []cop
	preds   uint // candidates that must come before this one (bitmask)
}

// search is one brute-force run. Candidates are the committed
// transactions and the unknown ones that write (write-free unknown ones are
// dropped: docs/SEMANTICS.md §2); aborted transactions take no part at all.
type search struct {
	opts  history.Options
	cand  []ctxn
	keys  int
	lists []bool // per key: list key
	null  int    // interned id of history.Null

	// Per run (one subset of unknown transactions).
	subset uint
	order  []int
	failed map[string]bool // (placed set, state) pairs known to lead nowhere
	buf    []byte
}

func newSearch(h *history.History, opts history.Options) *search {
	s := &search{opts: opts}
	keyID := map[history.Key]int{}
	valID := map[history.Value]int{history.Null: 0}
	intern := func(v history.Value) int {
		id, ok := valID[v]
		if !ok {
			id = len(valID)
			valID[v] = id
		}
		return id
	}
	listKeys := h.ListKeys()
	key := func(k history.Key) int {
		id, ok := keyID[k]
		if !ok {
			id = len(keyID)
			keyID[k] = id
			s.lists = append(s.lists, listKeys[k])
		}
		return id
	}
	rank := sessionRanks(h)
	var idx []int
	for i := range h.Txns {
		t := &h.Txns[i]
		if t.Status == history.Committed || (t.Status == history.Unknown && t.Writes()) {
			idx = append(idx, i)
		}
	}
	// Trying transactions in start order first finds the witness of a
	// valid history sooner; it changes nothing else.
	sort.SliceStable(idx, func(a, b int) bool {
		ta, tb := &h.Txns[idx[a]], &h.Txns[idx[b]]
		return ta.HasTime && tb.HasTime && ta.Start < tb.Start
	})
	for _, i := range idx {
		t := &h.Txns[i]
		c := ctxn{idx: i, unknown: t.Status == history.Unknown}
		for _, op := range t.Ops {
			k := key(op.Key)
			o := cop{kind: op.Kind, key: k}
			switch {
			case op.Kind == history.Read && s.lists[k]:
				for _, e := range readsList(op) {
					o.seq = append(o.seq, intern(e))
				}
			default:
				o.val = intern(op.Value)
			}
			c.ops = append(c.ops, o)
		}
		s.cand = append(s.cand, c)
	}
	s.keys = len(keyID)
	for a := range s.cand {
		for b := range s.cand {
			if mustPrecede(h, &s.opts, rank, s.cand[b].idx, s.cand[a].idx) {
				s.cand[a].preds |= 1 << b
			}
		}
	}
	return s
}

// run tries every subset of unknown candidates taken as committed.
func (s *search) run() ([]int, bool) {
	var unknown []int
	var committed uint
	for i, c := range s.cand {
		if c.unknown {
			unknown = append(unknown, i)
		} else {
			committed |= 1 << i
		}
	}
	for m := 0; m < 1<<len(unknown); m++ {
		s.subset = committed
		for j, i := range unknown {
			if m&(1<<j) != 0 {
				s.subset |= 1 << i
			}
		}
		s.order = s.order[:0]
		s.failed = map[string]bool{}
		if s.dfs(0, newState(s.keys)) {
			return append([]int(nil), s.order...), true
		}
	}
	return nil, false
}

// dfs extends the serial order one transaction at a time, replaying as it
// goes, so that a read that cannot be reproduced cuts off every order with
// the same prefix. Whether the rest can be completed depends only on which
// transactions are placed and on the state they left (values, bound
// initial values), so failed pairs are remembered.
func (s *search) dfs(placed uint, st *state) bool {
	if placed == s.subset {
		return true
	}
	memo := s.memoKey(placed, st)
	if s.failed[memo] {
		return false
	}
	for i := range s.cand {
		bit := uint(1) << i
		if s.subset&bit == 0 || placed&bit != 0 {
			continue
		}
		if s.cand[i].preds&s.subset&^placed != 0 {
			continue
		}
		next := st.clone()
		if !s.apply(&s.cand[i], next) {
			continue
		}
		s.order = append(s.order, i)
		if s.dfs(placed|bit, next) {
			return true
		}
		s.order = s.order[:len(s.order)-1]
	}
	s.failed[memo] = true
	return false
}

// state is the database between two transactions of a serial order.
type state struct {
	reg     []int   // register value id, or -1 for the initial value
	regInit []int   // InitialUnknown: the bound initial value, or -1
	app     [][]int // list keys: elements appended so far
	lInit   [][]int // InitialUnknown: the bound initial list
	lBound  []bool
}

func newState(keys int) *state {
	st := &state{
		reg:     make([]int, keys),
		regInit: make([]int, keys),
		app:     make([][]int, keys),
		lInit:   make([][]int, keys),
		lBound:  make([]bool, keys),
	}
	for k := range keys {
		st.reg[k], st.regInit[k] = -1, -1
	}
	return st
}

// clone copies the slices that apply mutates in place; appended lists are
// copied on write by apply, so sharing them is safe.
func (st *state) clone() *state {
	return &state{
		reg:     append([]int(nil), st.reg...),
		regInit: append([]int(nil), st.regInit...),
		app:     append([][]int(nil), st.app...),
		lInit:   append([][]int(nil), st.lInit...),
		lBound:  append([]bool(nil), st.lBound...),
	}
}

// apply runs one transaction on st, own writes visible, and reports
// whether every read returned what the history says it returned.
func (s *search) apply(c *ctxn, st *state) bool {
	unknownInit := s.opts.InitialState == history.InitialUnknown
	for i := range c.ops {
		o := &c.ops[i]
		switch {
		case o.kind == history.Write:
			st.reg[o.key] = o.val
		case o.kind == history.Append:
			a := st.app[o.key]
			st.app[o.key] = append(a[:len(a):len(a)], o.val)
		case s.lists[o.key]:
			a := st.app[o.key]
			switch {
			case !unknownInit:
				if !equalInts(o.seq, a) {
					return false
				}
			case st.lBound[o.key]:
				init := st.lInit[o.key]
				if len(o.seq) != len(init)+len(a) || !equalInts(o.seq[:len(init)], init) || !equalInts(o.seq[len(init):], a) {
					return false
				}
			default:
				// The first read of the unknown initial list fixes it.
				if len(o.seq) < len(a) || !equalInts(o.seq[len(o.seq)-len(a):], a) {
					return false
				}
				st.lInit[o.key] = o.seq[:len(o.seq)-len(a)]
				st.lBound[o.key] = true
			}
		default:
			cur := st.reg[o.key]
			switch {
			case cur >= 0:
				if o.val != cur {
					return false
				}
			case !unknownInit:
				if o.val != s.null {
					return false
				}
			case st.regInit[o.key] >= 0:
				if o.val != st.regInit[o.key] {
					return false
				}
			default:
				// The first read of the unknown initial value fixes it.
				st.regInit[o.key] = o.val
			}
		}
	}
	return true
}

func (s *search) memoKey(placed uint, st *state) string {
	b := s.buf[:0]
	b = fmt.Appendf(b, "%x|", placed)
	for k := range s.keys {
		b = fmt.Appendf(b, "%d,%d,%t,%v,%v;", st.reg[k], st.regInit[k], st.lBound[k], st.app[k], st.lInit[k])
	}
	s.buf = b
	return string(b)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// formatOrder renders a serial order for error messages.
func formatOrder(order []string) string { return strings.Join(order, " ") }
