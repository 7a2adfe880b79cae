package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/streamcheck/streamcheck/history"
)

// dbcop's history.bincode (amnore/dbcop src/db/history.rs, struct History,
// written by bincode 1.3's serialize_into; read the same way by PolySI's
// DBCopHistoryLoader and by Plume and VeriStrong): bincode's default
// encoding, little-endian, usize and lengths as 8 bytes, bool as one byte
// 0 or 1, a String as its length and UTF-8 bytes, a struct as its fields in
// order, a Vec as its length and elements:
//
//	params  HistParams  id n_node n_variable n_transaction n_event  5 x u64
//	info    String
//	start   DateTime<Local>   chrono's serde form, an RFC 3339 String
//	end     DateTime<Local>
//	data    Vec<Session>      Session = Vec<Transaction>
//	  Transaction: events Vec<Event>, success bool
//	  Event: write bool, variable usize, value usize, success bool
//
// Meaning (dbcop's verifier and its clients): every key holds 0 before any
// write, and written values start at 1; an event with success false was
// not executed (a read's value is then meaningless); a transaction with
// success false did not commit.
const dbcopHeaderLen = 5 * 8

// dbcopEventLen is an event's size: two bools and two u64.
const dbcopEventLen = 1 + 8 + 8 + 1

// DBCopInfo is the info string convert writes.
const DBCopInfo = "streamcheck convert"

type dbcopReader struct {
	b      []byte
	off    int
	source string
	// sess, txn and ev locate the element being read (-1: not inside
	// one); field names are built from them only for an error, so that
	// reading costs no allocation per event.
	sess, txn, ev int
}

func (r *dbcopReader) fail(field string, err error) error {
	return &history.Error{Pos: history.Pos{Source: r.source, Offset: int64(r.off)}, Field: r.field(field), Err: err}
}

// field names a part of the element being read: data[s][t].events[e].write.
func (r *dbcopReader) field(part string) string {
	switch {
	case r.ev >= 0:
		return fmt.Sprintf("data[%d][%d].events[%d]%s", r.sess, r.txn, r.ev, part)
	case r.txn >= 0:
		return fmt.Sprintf("data[%d][%d]%s", r.sess, r.txn, part)
	case r.sess >= 0:
		return fmt.Sprintf("data[%d]%s", r.sess, part)
	}
	return part
}

func (r *dbcopReader) u64(field string) (uint64, error) {
	if len(r.b)-r.off < 8 {
		return 0, r.fail(field, fmt.Errorf("input ends inside an 8-byte integer (%d bytes left)", len(r.b)-r.off))
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v, nil
}

func (r *dbcopReader) boolean(field string) (bool, error) {
	if r.off >= len(r.b) {
		return false, r.fail(field, errors.New("input ends before a bool"))
	}
	c := r.b[r.off]
	if c > 1 {
		return false, r.fail(field, fmt.Errorf("bool byte 0x%02x, want 0 or 1", c))
	}
	r.off++
	return c == 1, nil
}

// count reads a Vec length and bounds it by what the remaining input can
// hold (each element at least min bytes), so a corrupt length cannot make
// the decoder allocate without bound.
func (r *dbcopReader) count(field string, min int) (int, error) {
	n, err := r.u64(field)
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)-r.off)/uint64(min) {
		r.off -= 8
		return 0, r.fail(field, fmt.Errorf("length %d does not fit in the %d bytes left (at least %d bytes an element): the input is cut off or corrupt", n, len(r.b)-r.off-8, min))
	}
	return int(n), nil
}

func (r *dbcopReader) str(field string) (string, error) {
	n, err := r.count(field, 1)
	if err != nil {
		return "", err
	}
	s := r.b[r.off : r.off+n]
	if !utf8.Valid(s) {
		return "", r.fail(field, errors.New("string is not valid UTF-8"))
	}
	r.off += n
	return string(s), nil
}

// looksDBCop reports whether head starts like a dbcop history: the header,
// an info string that fits, and a start time that begins with a year.
func looksDBCop(head []byte) bool {
	r := &dbcopReader{b: head, off: dbcopHeaderLen, sess: -1, txn: -1, ev: -1}
	if len(head) < dbcopHeaderLen+8 {
		return false
	}
	if _, err := r.str("info"); err != nil {
		return false
	}
	start, err := r.str("start")
	if err != nil || len(start) < 5 {
		return false
	}
	for _, c := range start[:4] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return start[4] == '-'
}

// dbcopValue maps a dbcop integer onto the model. In a read, 0 is the
// implicit initial value, the model's initial state (null).
func dbcopInt(v uint64) (history.Value, error) {
	if v > math.MaxInt64 {
		return "", fmt.Errorf("value %d is beyond int64", v)
	}
	return history.IntValue(int64(v)), nil
}

// readDBCop decodes a whole dbcop history. Sessions are named 1, 2, ... in
// file order (dbcop names none; PolySI numbers them the same way) and a
// transaction's id is "<session>-<position>", 1-based. An event with
// success false is set aside (Stats.SetAside). A committed transaction
// whose every event writes 0 is the initial state written out by a
// converter (AWDIT's to_dbcop_history, PolySI's dumper include one); it is
// set aside too. Any other write of 0 is an error: it could not be told
// from the initial value.
func readDBCop(all []byte, source string, st *Stats) (*history.History, error) {
	r := &dbcopReader{b: all, source: source, sess: -1, txn: -1, ev: -1}
	for _, f := range [...]string{"params.id", "params.n_node", "params.n_variable", "params.n_transaction", "params.n_event"} {
		if _, err := r.u64(f); err != nil {
			return nil, err
		}
	}
	for _, f := range [...]string{"info", "start", "end"} {
		if _, err := r.str(f); err != nil {
			return nil, err
		}
	}
	nsess, err := r.count("data", 8)
	r.sess = -1
	if err != nil {
		return nil, err
	}
	h := &history.History{}
	for s := 1; s <= nsess; s++ {
		r.sess, r.txn, r.ev = s-1, -1, -1
		ntxn, err := r.count("", 9)
		if err != nil {
			return nil, err
		}
		session := strconv.Itoa(s)
		for i := 1; i <= ntxn; i++ {
			r.txn, r.ev = i-1, -1
			t := history.Txn{ID: session + "-" + strconv.Itoa(i), Session: session, HasSession: true,
				Pos: history.Pos{Source: source, Offset: int64(r.off)}}
			nev, err := r.count(".events", dbcopEventLen)
			if err != nil {
				return nil, err
			}
			t.Ops = make([]history.Op, 0, nev)
			zeroWrites := 0
			for e := 0; e < nev; e++ {
				r.ev = e
				at := r.off
				write, err := r.boolean(".write")
				if err != nil {
					return nil, err
				}
				variable, err := r.u64(".variable")
				if err != nil {
					return nil, err
				}
				value, err := r.u64(".value")
				if err != nil {
					return nil, err
				}
				ok, err := r.boolean(".success")
				if err != nil {
					return nil, err
				}
				st.Records++
				if !ok {
					st.SetAside++
					continue
				}
				key, err := dbcopInt(variable)
				if err != nil {
					r.off = at
					return nil, r.fail(".variable", err)
				}
				v, err := dbcopInt(value)
				if err != nil {
					r.off = at
					return nil, r.fail(".value", err)
				}
				op := history.Op{Kind: history.Read, Key: key, Value: v}
				switch {
				case write && value == 0:
					zeroWrites++
					op.Kind = history.Write
				case write:
					op.Kind = history.Write
				case value == 0:
					op.Value = history.Null
				}
				t.Ops = append(t.Ops, op)
			}
			r.ev = -1
			committed, err := r.boolean(".success")
			if err != nil {
				return nil, err
			}
			if !committed {
				t.Status = history.Aborted
			}
			if zeroWrites > 0 {
				if zeroWrites == len(t.Ops) && committed {
					st.SetAside++
					continue
				}
				return nil, &history.Error{Pos: t.Pos, ID: t.ID, Field: r.field(".events"), Err: errors.New("a write of 0 cannot be told from dbcop's implicit initial value 0")}
			}
			h.Txns = append(h.Txns, t)
			st.Txns++
		}
	}
	r.sess, r.txn, r.ev = -1, -1, -1
	if r.off != len(all) {
		return nil, r.fail("data", fmt.Errorf("%d bytes after the history", len(all)-r.off))
	}
	return h, nil
}

// AppendDBCop appends h as a dbcop history.bincode. It fails, naming the
// transaction and operation, on what dbcop cannot say: lists, values other
// than non-negative integers, the value 0 (dbcop's initial value; a read
// of null is written as 0), unknown outcomes. Keys are kept when all are
// non-negative integers, else renamed (peerKeys). Ids, session names and
// timestamps are not kept; sessions keep their order.
func AppendDBCop(dst []byte, h *history.History) ([]byte, error) {
	sessions := peerSessions(h)
	keys := peerKeys(h)
	nev := 0
	type ev struct {
		write    bool
		key, val uint64
	}
	evs := make([][]ev, len(h.Txns))
	idx := make(map[*history.Txn]int, len(h.Txns))
	for i := range h.Txns {
		t := &h.Txns[i]
		idx[t] = i
		if t.Status == history.Unknown {
			return nil, cannotSay("dbcop", t, "status", "has no unknown outcome")
		}
		for j := range t.Ops {
			k, v, err := peerOp("dbcop", t, j, keys)
			if err != nil {
				return nil, err
			}
			evs[i] = append(evs[i], ev{t.Ops[j].Kind == history.Write, k, v})
		}
		nev += len(t.Ops)
	}
	u64 := func(v uint64) { dst = binary.LittleEndian.AppendUint64(dst, v) }
	str := func(s string) { u64(uint64(len(s))); dst = append(dst, s...) }
	boolean := func(b bool) {
		if b {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	u64(0)
	u64(uint64(len(sessions)))
	u64(uint64(len(keys)))
	u64(uint64(len(h.Txns)))
	u64(uint64(nev))
	str(DBCopInfo)
	// No time is recorded: the epoch, in chrono's RFC 3339 form.
	str("1970-01-01T00:00:00+00:00")
	str("1970-01-01T00:00:00+00:00")
	u64(uint64(len(sessions)))
	for _, s := range sessions {
		u64(uint64(len(s)))
		for _, t := range s {
			e := evs[idx[t]]
			u64(uint64(len(e)))
			for _, x := range e {
				boolean(x.write)
				u64(x.key)
				u64(x.val)
				boolean(true)
			}
			boolean(t.Status == history.Committed)
		}
	}
	return dst, nil
}
