package incremental

import (
	"bytes"
	"context"
	"hash/maphash"
	"math"
	"time"

	"github.com/streamcheck/streamcheck/history"
)

// TimeCompact is a history with client times held for the witness from
// client time alone (docs/SEMANTICS.md §3 "T2: the compact path of check
// at the serializable levels"): the time witness's numbered form
// (timeForm: per transaction its times, status and session, per op its
// kind and the decoder's key and value numbers, 32 and 12 bytes, no
// pointer) and the transaction ids in one byte string. A 1M-transaction
// history as []history.Txn took 0.9 to 1.2 GB, and decoding it and
// numbering its keys and values again for the witness was most of the
// check (BENCHMARKS.md "check27 (issue 27)").
//
// It answers one question: does Check's witness from client time
// (timeFirst) hold on this history? When it does, Check (TimeCompact.Check)
// returns the result Check returns on the same history, witness order
// included (the differential test in internal/checkcmd). When anything
// else holds (an input error History.Validate would report, database
// facts, a list, a transaction without client time, a witness that does
// not get through) it says why not, and the caller checks the full
// history, which decides and names everything: TimeCompact never
// reports, so it can be wrong only by saying valid, and it says valid
// only where Check does.
type TimeCompact struct {
	f timeForm
	// keyOf maps the decoder's text number of a key to the form's key
	// number + 1 (0: not a key yet): the form's per-key tables are as
	// long as the keys, not the texts.
	keyOf    []int32
	sessions map[string]int32
	ids      idTable
	// not, when set, is why the compact form cannot vouch; AddIDs stops
	// recording.
	not string
	// hint sizes the tables at the first transaction kept, not in
	// NewTimeCompact: a history refused at its first line (no client
	// time, database facts) then costs no table sized for the file.
	hint int
}

// NewTimeCompact returns an empty compact history; sizeHint is the
// expected number of transactions (0: unknown).
func NewTimeCompact(sizeHint int) *TimeCompact {
	return &TimeCompact{sessions: map[string]int32{}, hint: sizeHint}
}

// grow makes the tables at the first transaction kept.
func (c *TimeCompact) grow() {
	c.f.txns = make([]twTxn, 0, c.hint)
	c.f.ops = make([]twOp, 0, 4*c.hint)
	c.ids.init(c.hint)
	c.f.idCmp = c.ids.compare
}

// compare orders ids a and b as strings.Compare orders their texts.
func (s *idTable) compare(a, b int32) int {
	la, ha := s.span(a)
	lb, hb := s.span(b)
	return bytes.Compare(s.text[la:ha], s.text[lb:hb])
}

// AddIDs appends one transaction, copying what it keeps (t's ops may be
// a decoder's scratch). keyIDs[n] and valIDs[n] number op n's key and
// value texts (ingest.ScanNative's Event: equal numbers exactly for equal
// texts, 0 for null, across the whole history). It applies
// History.Validate's rules (unique ids, end not before start; a key's
// kind cannot clash, since a list refuses) and refuses what the witness
// or Check's other paths own: database facts (the facts' path of check),
// lists, a transaction without client time. A refusal is final (Why).
func (c *TimeCompact) AddIDs(t *history.Txn, f history.Facts, keyIDs, valIDs []int32) {
	switch {
	case c.not != "":
		return
	case f.Has != 0:
		c.not = "database facts (the facts' path decides)"
		return
	case !t.HasTime:
		c.not = "a transaction without client time"
		return
	case t.End < t.Start:
		c.not = "end before start (an input error)"
		return
	case len(c.f.ops)+len(t.Ops) > math.MaxInt32 || len(c.ids.text)+len(t.ID) > math.MaxInt32:
		c.not = "too large for int32 positions"
		return
	}
	if c.ids.slots == nil {
		c.grow()
	}
	if !c.ids.add(t.ID) {
		c.not = "a duplicate id (an input error)"
		return
	}
	x := twTxn{start: t.Start, end: t.End, ops0: int32(len(c.f.ops)), opN: int32(len(t.Ops)), session: -1, status: t.Status, hasTime: true}
	if t.HasSession {
		s, ok := c.sessions[t.Session]
		if !ok {
			s = int32(len(c.sessions))
			c.sessions[t.Session] = s
		}
		x.session = s
	}
	for n, op := range t.Ops {
		if op.IsList || op.Kind == history.Append {
			c.not = "a list (the witness from client time reads registers only)"
			return
		}
		kid := keyIDs[n]
		if int(kid) >= len(c.keyOf) {
			c.keyOf = append(c.keyOf, make([]int32, int(kid)+1-len(c.keyOf))...)
		}
		k := c.keyOf[kid] - 1
		if k < 0 {
			k = c.f.nkeys
			c.f.nkeys++
			c.keyOf[kid] = k + 1
		}
		c.f.ops = append(c.f.ops, twOp{key: k, val: valIDs[n], kind: op.Kind})
	}
	c.f.txns = append(c.f.txns, x)
}

// Len is the number of transactions added.
func (c *TimeCompact) Len() int { return len(c.f.txns) }

// Why is why the compact form cannot vouch for the history ("" while it
// can).
func (c *TimeCompact) Why() string { return c.not }

// Check is Check on the compact form when its witness from client time
// holds: the Valid result Check returns on the same history with cfg, or
// nil and why the full history must be checked.
func (c *TimeCompact) Check(ctx context.Context, opts history.Options, cfg Config) (*Result, string) {
	switch {
	case c.not != "":
		return nil, c.not
	case len(c.f.txns) == 0:
		return nil, "no transactions"
	case !opts.Level.Supported() || opts.Level.Def().Backend == history.BackendPolynomial || opts.Level == history.PL2Plus:
		return nil, "a level the witness from client time does not serve"
	case !timeFirstApplies(opts, cfg):
		return nil, "the witness from client time is off at this level"
	}
	c.f.nsessions = int32(len(c.sessions))
	t0 := time.Now()
	sopts := strictOf(opts)
	// timeFirst's probe, on the form's prefix.
	if len(c.f.txns) > 4*timeProbe && c.f.prefix(timeProbe).witness(ctx, sopts) == nil {
		return nil, "the witness from client time fails on the first transactions"
	}
	order := c.f.witness(ctx, sopts)
	if order == nil {
		return nil, "the witness from client time does not get through"
	}
	res := &Result{Options: opts}
	res.Stats.Txns = len(c.f.txns)
	// One string holds every id; the witness's are slices of it (no
	// allocation per transaction).
	all := string(c.ids.text)
	timeValid(res, order, time.Since(t0), func(t int32) string {
		lo, hi := c.ids.span(t)
		return all[lo:hi]
	})
	return res, ""
}

// idTable holds the transaction ids, in order, in one byte slice, and
// finds a repeated one (History.Validate's first rule) by an
// open-addressing table of numbers hashed once each: a map of strings
// was an allocation and a string hash per transaction.
type idTable struct {
	text []byte
	ends []int32 // id i is text[ends[i-1]:ends[i]] (0 for i = 0)
	// slots: a 32-bit hash and id+1 (0: empty), at most half full.
	slots []idSlot
	seed  maphash.Seed
}

type idSlot struct {
	h  uint32
	id int32
}

func (s *idTable) init(hint int) {
	s.seed = maphash.MakeSeed()
	s.ends = make([]int32, 0, hint)
	s.text = make([]byte, 0, 16*hint)
	size := 1 << 10
	for size < 2*hint {
		size <<= 1
	}
	s.slots = make([]idSlot, size)
}

func (s *idTable) span(i int32) (lo, hi int32) {
	if i > 0 {
		lo = s.ends[i-1]
	}
	return lo, s.ends[i]
}

// add appends id; false when it is there already (nothing added). The
// caller keeps the text within int32 offsets.
func (s *idTable) add(id string) bool {
	h := uint32(maphash.String(s.seed, id))
	mask := len(s.slots) - 1
	i := int(h) & mask
	for ; s.slots[i].id != 0; i = (i + 1) & mask {
		if e := s.slots[i]; e.h == h {
			lo, hi := s.span(e.id - 1)
			if string(s.text[lo:hi]) == id {
				return false
			}
		}
	}
	s.text = append(s.text, id...)
	s.ends = append(s.ends, int32(len(s.text)))
	s.slots[i] = idSlot{h: h, id: int32(len(s.ends))}
	if 2*len(s.ends) > len(s.slots) {
		s.grow()
	}
	return true
}

// grow doubles the table, placing the entries by their kept hashes.
func (s *idTable) grow() {
	old := s.slots
	s.slots = make([]idSlot, 2*len(old))
	mask := len(s.slots) - 1
	for _, e := range old {
		if e.id == 0 {
			continue
		}
		i := int(e.h) & mask
		for s.slots[i].id != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = e
	}
}
