package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// Cobra's client logs (DBCobra/CobraBench writes them, DBCobra/CobraVerifier
// reads them in AbstractVerifier.ExtractClientLogFromStream): one binary
// file per client, T<n>.log, a sequence of records, all integers 8-byte
// big-endian (Java's DataOutputStream):
//
//	'S' txnid                          start of a transaction      9 bytes
//	'W' writeid keyhash valhash        a write                    25 bytes
//	'R' writer_txnid writeid keyhash valhash   a read             33 bytes
//	'C' txnid                          commit                      9 bytes
//
// Only committed transactions are logged ('A' never appears). A read names
// the write it observed by its write id (unique per write, Cobra's
// guarantee) and that write's transaction; a read of the initial value or
// of an absent key names the pseudo transaction 0xbebeebee (init) or
// 0xdeadbeef (null) and the same write id. The verifier's TIME_ORDER_ON
// variant adds an 8-byte timestamp after S and C; it is off by default and
// in every published log, and it is not read here (a log written with it
// fails with an error at its first record).
const (
	cobraInitID   = 0xbebeebee
	cobraNullID   = 0xdeadbeef
	cobraGCTrue   = 0x23332333
	cobraGCFalse  = 0x66666666
	cobraStartLen = 9
	cobraWriteLen = 25
	cobraReadLen  = 33
)

// cobraRead remembers a read's named writer for the check after all logs
// are read.
type cobraRead struct {
	writerTxn, writeID int64
	txn                int // index in the history
	pos                history.Pos
}

// cobraDecoder accumulates the transactions of all of a directory's logs.
type cobraDecoder struct {
	h      history.History
	st     *Stats
	reads  []cobraRead
	writer map[int64]int // write id -> index of its transaction
}

// readCobraDir reads a directory of Cobra client logs: every regular file
// whose name ends in ".log", as Cobra does, one session per file named by
// the file name without ".log". Files are read in name order (T2 before
// T10), so input order is deterministic.
func readCobraDir(dir string, st *Stats) (*history.History, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".log") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, &history.Error{Pos: history.Pos{Source: dir}, Err: errors.New("cannot tell the format: a directory is read as Cobra client logs (*.log), and it has none")}
	}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	d := &cobraDecoder{st: st, writer: make(map[int64]int)}
	for _, n := range names {
		path := filepath.Join(dir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := d.log(b, path, strings.TrimSuffix(n, ".log")); err != nil {
			return nil, err
		}
	}
	return d.finish()
}

// readCobraLog reads one Cobra client log given as a file: one session,
// named by the file's base name without ".log".
func readCobraLog(b []byte, source string, st *Stats) (*history.History, error) {
	d := &cobraDecoder{st: st, writer: make(map[int64]int)}
	if err := d.log(b, source, strings.TrimSuffix(filepath.Base(source), ".log")); err != nil {
		return nil, err
	}
	return d.finish()
}

// log decodes the records of one client's log.
func (d *cobraDecoder) log(b []byte, source, session string) error {
	cur := -1 // index of the open transaction
	var curID int64
	off := 0
	errAt := func(at int, field string, err error) error {
		p := history.Pos{Source: source, Offset: int64(at)}
		id := ""
		if cur >= 0 {
			id = d.h.Txns[cur].ID
		}
		return &history.Error{Pos: p, ID: id, Field: field, Err: err}
	}
	need := func(n int, what string) error {
		if len(b)-off < n {
			return errAt(off, what, fmt.Errorf("record cut off: %d bytes left, a %s record is %d", len(b)-off, what, n))
		}
		return nil
	}
	u64 := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[off+1+8*i:])) }
	for off < len(b) {
		d.st.Records++
		switch tag := b[off]; tag {
		case 'S':
			if err := need(cobraStartLen, "S"); err != nil {
				return err
			}
			if cur >= 0 {
				return errAt(off, "S", fmt.Errorf("transaction %d starts before transaction %s commits", u64(0), d.h.Txns[cur].ID))
			}
			curID = u64(0)
			d.h.Txns = append(d.h.Txns, history.Txn{
				ID: strconv.FormatInt(curID, 10), Session: session, HasSession: true,
				Status: history.Committed, Pos: history.Pos{Source: source, Offset: int64(off)},
			})
			cur = len(d.h.Txns) - 1
			off += cobraStartLen
		case 'C':
			if err := need(cobraStartLen, "C"); err != nil {
				return err
			}
			if cur < 0 {
				return errAt(off, "C", errors.New("commit with no open transaction"))
			}
			if id := u64(0); id != curID {
				return errAt(off, "C", fmt.Errorf("commit of transaction %d, but transaction %d is open", id, curID))
			}
			d.st.Txns++
			cur = -1
			off += cobraStartLen
		case 'W':
			if err := need(cobraWriteLen, "W"); err != nil {
				return err
			}
			if cur < 0 {
				return errAt(off, "W", errors.New("write outside a transaction"))
			}
			wid, key := u64(0), u64(1)
			if j, dup := d.writer[wid]; dup {
				return errAt(off, "W.writeid", fmt.Errorf("write id %d is written twice (first by transaction %s): Cobra's write ids are unique", wid, d.h.Txns[j].ID))
			}
			d.writer[wid] = cur
			t := &d.h.Txns[cur]
			t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: history.IntValue(key), Value: history.IntValue(wid)})
			off += cobraWriteLen
		case 'R':
			if err := need(cobraReadLen, "R"); err != nil {
				return err
			}
			if cur < 0 {
				return errAt(off, "R", errors.New("read outside a transaction"))
			}
			wtxn, wid, key := u64(0), u64(1), u64(2)
			v := history.IntValue(wid)
			switch {
			case (wtxn == cobraInitID || wtxn == cobraNullID) && (wid == cobraInitID || wid == cobraNullID):
				// The initial value, or the key was absent: the model's
				// initial state (docs/SEMANTICS.md §1).
				v = history.Null
			case wtxn == cobraInitID && (wid == cobraGCTrue || wid == cobraGCFalse):
				return errAt(off, "R.writeid", errors.New("a garbage-collection read (Cobra's online verifier) has no meaning offline"))
			case wtxn == cobraInitID || wtxn == cobraNullID:
				return errAt(off, "R.writeid", fmt.Errorf("read of the initial pseudo transaction with write id %d, want 0x%x or 0x%x", wid, cobraInitID, cobraNullID))
			default:
				d.reads = append(d.reads, cobraRead{writerTxn: wtxn, writeID: wid, txn: cur, pos: history.Pos{Source: source, Offset: int64(off)}})
			}
			t := &d.h.Txns[cur]
			t.Ops = append(t.Ops, history.Op{Kind: history.Read, Key: history.IntValue(key), Value: v})
			off += cobraReadLen
		case 'A':
			return errAt(off, "A", errors.New("abort record: Cobra logs only committed transactions"))
		default:
			return errAt(off, "tag", fmt.Errorf("unknown record %s, want 'S', 'W', 'R' or 'C' (a log written with TIME_ORDER_ON is not supported)", describeByte(tag)))
		}
	}
	if cur >= 0 {
		return &history.Error{Pos: d.h.Txns[cur].Pos, ID: d.h.Txns[cur].ID, Field: "C", Err: errors.New("transaction has no commit record: the log is cut off")}
	}
	return nil
}

// finish checks that every read's named writer transaction is the one
// that wrote its write id. A read of a write id that nobody wrote is left
// to the checker: it is an anomaly of the database, not of the log.
func (d *cobraDecoder) finish() (*history.History, error) {
	for _, r := range d.reads {
		j, ok := d.writer[r.writeID]
		if !ok {
			continue
		}
		if w := d.h.Txns[j].ID; w != strconv.FormatInt(r.writerTxn, 10) {
			return nil, &history.Error{Pos: r.pos, ID: d.h.Txns[r.txn].ID, Field: "R.writer_txnid",
				Err: fmt.Errorf("the read names writer transaction %d, but write id %d belongs to transaction %s", r.writerTxn, r.writeID, w)}
		}
	}
	d.reads = nil
	return &d.h, nil
}

// naturalLess orders names with their digit runs compared as numbers, so
// T2.log comes before T10.log.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitRun(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
