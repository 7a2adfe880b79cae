package sionline

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/online"
)

// The archive: the bodies of evicted members, in a body file
// (online.BodyFile: on disk in `run`), so that the engine's memory holds
// the window, the ghost and a few offsets, not the stream
// (docs/SEMANTICS.md §5 "Re-admitting a suffix of the archive").
//
// The file is a log of records: 'T' an evicted transaction (seq, flags,
// name, body in the spill codec), 'C' the later closing of an archived
// one (seq), 'G' a ghost (seq 0, then its encoding, length first: encodeGhost). The archive is a list of segments,
// oldest first; a segment is the records of some consecutive evictions,
// as byte ranges of the file, with the ghost that preceded its first
// eviction. Re-admitting the segments from j on, with segment j's ghost
// as the ghost, is a screen the eviction argument covers (the same
// induction, started at j), so a failed screen need not bring back the
// whole archive.
const (
	recTxn   = 'T'
	recClose = 'C'
	recGhost = 'G'
	recUndo  = 'U'
)

// segTxns is how many evicted transactions a segment takes before the
// next eviction opens a new one (and writes its ghost to the file): the
// finest re-admission, and one ghost written per segTxns bodies. A
// variable so that tests make segments of a few transactions.
var segTxns = 256

// writeAt is the buffered size at which records are written out.
const writeAt = 1 << 16

// segment is part of the archive: byte ranges of the file ([from, to)
// pairs, in order), the ghost before it (GhostAt, GhostLen; length 0: no
// ghost, the archive's start) and how many transactions it holds.
type segment struct {
	Ranges   []int64
	GhostAt  int64 `json:",omitempty"`
	GhostLen int64 `json:",omitempty"`
	Txns     int
	// First is the release number (seq) of the segment's first
	// transaction: segments hold increasing seqs, so the segment of an
	// archived transaction is the last one whose First is at or below
	// its seq (segmentOf). 0 in a snapshot of an earlier build: then
	// segmentOf names the newest segment, which is only less precise.
	First uint64 `json:",omitempty"`
	// Delta: the ghost before the segment is not written whole but
	// found going back from the ghost in memory (undo.go): Undo holds
	// the segment's undo records as (at, length) pairs of the file, in
	// the order written. While the segment is the last one, the
	// archive's journal holds what is not written yet.
	Delta bool    `json:",omitempty"`
	Undo  []int64 `json:",omitempty"`
}

// archive is the engine's body file and the segments in it. size is what
// was written to the file, buf what was appended after it.
type archive struct {
	file   online.BodyFile
	opened bool
	size   int64
	buf    []byte
	segs   []segment
	err    error
	// punched: the file's bytes before it were given back (Punch).
	punched int64
	// jr is the journal of the last segment when it is a Delta one
	// (undo.go); whole makes new segments carry the whole ghost, as
	// before undo records (the tests' reference path).
	jr    *journal
	whole bool
	// undone counts the ghosts found by undo records.
	undone int
}

func (a *archive) end() int64 { return a.size + int64(len(a.buf)) }

// txns is the number of transactions archived.
func (a *archive) txns() int {
	n := 0
	for _, s := range a.segs {
		n += s.Txns
	}
	return n
}

// open starts the file on first use.
func (a *archive) open() error {
	if a.opened || a.err != nil {
		return a.err
	}
	if err := a.file.Start(); err != nil {
		a.err = fmt.Errorf("sionline: archive %s: %w", a.file.Name(), err)
		return a.err
	}
	a.opened, a.size, a.buf = true, 0, a.buf[:0]
	return nil
}

// put appends one record to the last segment.
func (a *archive) put(rec []byte) {
	s := &a.segs[len(a.segs)-1]
	at := a.end()
	if n := len(s.Ranges); n > 0 && s.Ranges[n-1] == at {
		s.Ranges[n-1] = at + int64(len(rec))
	} else {
		s.Ranges = append(s.Ranges, at, at+int64(len(rec)))
	}
	a.buf = append(a.buf, rec...)
	if len(a.buf) >= writeAt {
		a.flush()
	}
}

func (a *archive) flush() {
	if a.err != nil || len(a.buf) == 0 {
		return
	}
	n, err := a.file.Write(a.buf)
	a.size += int64(n)
	if err != nil {
		a.err = fmt.Errorf("sionline: archive %s: write: %w", a.file.Name(), err)
	}
	a.buf = a.buf[:0]
}

// evict archives xs, the ghost before them being g (nil: none): into the
// last segment while it holds fewer than segTxns, else into a new one
// whose ghost is written first.
func (a *archive) evict(xs []*tx, g *ghost) error {
	if err := a.open(); err != nil {
		return err
	}
	if n := len(a.segs); n == 0 || a.segs[n-1].Txns >= segTxns {
		if n > 0 && a.segs[n-1].Delta && a.jr != nil {
			// The last segment's journal becomes its undo record,
			// in its own ranges, before the next one opens.
			b := encodeJournal(a.jr)
			rec := append([]byte{recUndo, 0}, binary.AppendUvarint(nil, uint64(len(b)))...)
			s := &a.segs[n-1]
			s.Undo = append(s.Undo, a.end()+int64(len(rec)), int64(len(b)))
			a.put(append(rec, b...))
		}
		a.jr = nil
		a.segs = append(a.segs, segment{})
		if len(xs) > 0 {
			a.segs[len(a.segs)-1].First = xs[0].Seq
		}
		a.thin()
		if !a.whole {
			// The ghost before it is what undo records give back
			// (undo.go), from a journal that starts now.
			a.segs[len(a.segs)-1].Delta = true
			a.jr = newJournal(g)
		} else if g != nil {
			b := encodeGhost(g)
			rec := append([]byte{recGhost, 0}, binary.AppendUvarint(nil, uint64(len(b)))...)
			s := &a.segs[len(a.segs)-1]
			s.GhostAt, s.GhostLen = a.end()+int64(len(rec)), int64(len(b))
			a.put(append(rec, b...))
		}
	}
	var rec []byte
	for _, x := range xs {
		rec = append(rec[:0], recTxn)
		rec = binary.AppendUvarint(rec, x.Seq)
		rec = append(rec, x.Fl)
		rec = binary.AppendUvarint(rec, uint64(len(x.Name)))
		rec = append(rec, x.Name...)
		body := online.AppendTxnRecord(nil, &x.T)
		rec = binary.AppendUvarint(rec, uint64(len(body)))
		a.put(append(rec, body...))
	}
	a.segs[len(a.segs)-1].Txns += len(xs)
	return a.err
}

// thin merges segments so that no three of a size class
// (bits.Len(Txns/segTxns)) follow one another, the newest the smallest.
// That is O(log n) segments only where neighbours share a class; chunks
// that alternate between two classes never merge, and the count grows
// with the archive (docs/SEMANTICS.md §5 "Re-admitting a suffix of the
// archive"). Merging drops the later one's ghost;
// which boundaries survive is precision (how much a re-admission
// brings back), never exactness.
func (a *archive) thin() {
	class := func(s *segment) int { return bits.Len(uint(s.Txns / segTxns)) }
	for i := len(a.segs) - 2; i >= 2; i-- {
		s := a.segs
		if class(&s[i]) == class(&s[i-1]) && class(&s[i-1]) == class(&s[i-2]) {
			r := s[i-1].Ranges
			if n := len(s[i-2].Ranges); n > 0 && len(r) > 0 && s[i-2].Ranges[n-1] == r[0] {
				s[i-2].Ranges[n-1], r = r[1], r[2:]
			}
			s[i-2].Ranges = append(s[i-2].Ranges, r...)
			s[i-2].Txns += s[i-1].Txns
			if s[i-2].Delta {
				// Undone newest first: the later segment's records,
				// then the earlier's, give the earlier's ghost.
				s[i-2].Undo = append(s[i-2].Undo, s[i-1].Undo...)
			}
			a.segs = append(s[:i-1], s[i:]...)
			i = len(a.segs) - 1
		}
	}
}

// segmentOf is the segment that holds the archived transaction seq
// (see segment.First), or -1 when the archive is empty.
func (a *archive) segmentOf(seq uint64) int {
	for j := len(a.segs) - 1; j >= 0; j-- {
		if a.segs[j].First <= seq {
			return j
		}
	}
	return len(a.segs) - 1
}

// closed records the closing of an archived transaction.
func (a *archive) closed(seq uint64) {
	a.put(binary.AppendUvarint([]byte{recClose}, seq))
}

var errArchive = errors.New("sionline: corrupt archive")

// readmit takes segments j.. out of the archive: their transactions, with
// the closings recorded after them applied, in archive order; the ghost
// before segment j; and the seqs of closings that name transactions of
// earlier segments (the caller records them again: they stay archived).
//
// cur is the ghost in memory (the one after the last segment): a Delta
// segment's ghost is found from it by undo records (undo.go), in place,
// once every record has been read and decoded.
func (a *archive) readmit(j int, cur *ghost) (out []tx, g *ghost, others []uint64, err error) {
	if a.err != nil {
		return nil, nil, nil, a.err
	}
	a.flush()
	if a.err != nil {
		return nil, nil, nil, a.err
	}
	s := a.segs[j]
	if s.Delta {
		// The journal, then each segment's records newest first, from
		// the last segment back to j.
		if a.jr == nil || !a.segs[len(a.segs)-1].Delta {
			return nil, nil, nil, fmt.Errorf("%w: %s: segment %d has no journal to undo from", errArchive, a.file.Name(), j)
		}
		jrs := []*journal{a.jr}
		for t := len(a.segs) - 1; t >= j; t-- {
			u := a.segs[t].Undo
			if !a.segs[t].Delta || len(u)%2 != 0 {
				return nil, nil, nil, fmt.Errorf("%w: %s: segment %d's undo records", errArchive, a.file.Name(), t)
			}
			for r := len(u) - 2; r >= 0; r -= 2 {
				if u[r+1] < 0 || u[r+1] > 1<<30 {
					return nil, nil, nil, fmt.Errorf("%w: %s: an undo record of %d bytes", errArchive, a.file.Name(), u[r+1])
				}
				b := make([]byte, u[r+1])
				if _, err := a.file.ReadAt(b, u[r]); err != nil {
					return nil, nil, nil, fmt.Errorf("%w: %s: undo record: %v", errArchive, a.file.Name(), err)
				}
				jr, err := decodeJournal(b)
				if err != nil {
					return nil, nil, nil, fmt.Errorf("%w: %s: %v", errArchive, a.file.Name(), err)
				}
				jrs = append(jrs, jr)
			}
		}
		defer func() {
			if err != nil {
				return
			}
			// Applied only now that every record decoded: cur is the
			// engine's ghost, changed in place.
			g = cur
			if g == nil {
				g = newGhost()
			}
			g.jr = nil
			a.undone++
			for _, jr := range jrs {
				if g == nil {
					g = newGhost() // a record of no ghost, and older ones after it
				}
				g = jr.undo(g)
			}
			a.jr = nil
			if j > 0 && a.segs[j-1].Delta {
				// Segment j-1 is the last again: its journal starts
				// at the ghost before segment j (its records on file
				// stay, older).
				a.jr = newJournal(g)
			}
		}()
	} else if s.GhostLen > 0 {
		b := make([]byte, s.GhostLen)
		if _, err := a.file.ReadAt(b, s.GhostAt); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %s: ghost: %v", errArchive, a.file.Name(), err)
		}
		if g, err = decodeGhost(b); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: %s: ghost: %v", errArchive, a.file.Name(), err)
		}
	}
	at := map[uint64]int{}
	for _, s := range a.segs[j:] {
		for r := 0; r+1 < len(s.Ranges); r += 2 {
			rd := bufio.NewReader(io.NewSectionReader(a.file, s.Ranges[r], s.Ranges[r+1]-s.Ranges[r]))
			if out, others, err = decodeRecords(rd, out, at, others); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: %w", a.file.Name(), err)
			}
		}
	}
	a.segs = a.segs[:j]
	// The last segment now (if any) is j-1: a Delta one gets its new
	// journal in the deferred undo above; any other has none.
	a.jr = nil
	return out, g, others, nil
}

// decodeRecords appends the transactions of the records rd holds to out
// (at maps a seq to its place there), applying their closings; a closing
// of a transaction not in out is appended to others.
func decodeRecords(rd *bufio.Reader, out []tx, at map[uint64]int, others []uint64) ([]tx, []uint64, error) {
	var scratch []byte
	bytesOf := func() ([]byte, error) {
		n, err := binary.ReadUvarint(rd)
		if err != nil || n > 1<<30 {
			return nil, errArchive
		}
		if uint64(cap(scratch)) < n {
			scratch = make([]byte, n)
		}
		scratch = scratch[:n]
		if _, err := io.ReadFull(rd, scratch); err != nil {
			return nil, errArchive
		}
		return scratch, nil
	}
	for {
		kind, err := rd.ReadByte()
		if err == io.EOF {
			return out, others, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errArchive, err)
		}
		seq, err := binary.ReadUvarint(rd)
		if err != nil {
			return nil, nil, errArchive
		}
		switch kind {
		case recClose:
			if i, ok := at[seq]; ok {
				out[i].Fl |= fClosed
			} else {
				others = append(others, seq)
			}
		case recGhost, recUndo:
			if _, err := bytesOf(); err != nil {
				return nil, nil, err
			}
		case recTxn:
			fl, err := rd.ReadByte()
			if err != nil {
				return nil, nil, errArchive
			}
			name, err := bytesOf()
			if err != nil {
				return nil, nil, err
			}
			x := tx{Name: string(name), Fl: fl, Seq: seq}
			body, err := bytesOf()
			if err != nil {
				return nil, nil, err
			}
			if x.T, err = online.DecodeTxnRecord(body); err != nil {
				return nil, nil, fmt.Errorf("%w: %v", errArchive, err)
			}
			at[seq] = len(out)
			out = append(out, x)
		default:
			return nil, nil, errArchive
		}
	}
}

// bytes is every record and ghost of the archive, for a snapshot that
// carries them (the file is not durable): the file from the first byte a
// segment names.
func (a *archive) bytes() (from int64, b []byte, err error) {
	if len(a.segs) == 0 {
		return 0, nil, a.err
	}
	a.flush()
	if a.err != nil {
		return 0, nil, a.err
	}
	from = a.segs[0].Ranges[0]
	b = make([]byte, a.size-from)
	if _, err := a.file.ReadAt(b, from); err != nil && !(errors.Is(err, io.EOF) && len(b) == 0) {
		return 0, nil, fmt.Errorf("sionline: archive %s: %w", a.file.Name(), err)
	}
	return from, b, nil
}

// ghostCodec is the first byte of a ghost record's body in the spill
// codec: the ghost as one transaction (as ghost.txn: pins as reads,
// appends, writes), which decodes back to the same
// ghost. Earlier files hold the ghost's JSON, which starts with '{' and
// still decodes. The spill codec costs a fraction of JSON's reflection
// and map-key sorting; a ghost is written at every segment a step opens
// and read at every re-admission, and it holds every key the stream
// wrote.
const ghostCodec = 1

// encodeGhost writes the ops in map order, not sorted: decoding does not depend on the
// order across keys (a list's appends stay in order), and sorting every
// key the stream wrote at every segment cost more than the rest of the
// write. So the bytes of two runs may differ; the ghost they decode to
// does not.
func encodeGhost(g *ghost) []byte {
	t := history.Txn{ID: ghostName, Start: g.Time, End: g.Time, HasTime: true, Status: history.Committed,
		Ops: make([]history.Op, 0, len(g.Pin)+len(g.List)+len(g.Reg))}
	for _, op := range g.Pin {
		t.Ops = append(t.Ops, op)
	}
	for k, l := range g.List {
		for _, v := range l {
			t.Ops = append(t.Ops, history.Op{Kind: history.Append, Key: k, Value: v})
		}
	}
	for k, v := range g.Reg {
		t.Ops = append(t.Ops, history.Op{Kind: history.Write, Key: k, Value: v})
	}
	if len(g.Comp) == 0 {
		return online.AppendTxnRecord([]byte{ghostCodec}, &t)
	}
	// With companions (companion.go): codec 2, the ghost's record and
	// each companion's, each with its length; a companion's record
	// holds its writes and, as reads, the keys it only read.
	rec := online.AppendTxnRecord(nil, &t)
	out := binary.AppendUvarint([]byte{ghostCodecComp}, uint64(len(rec)))
	out = append(out, rec...)
	out = binary.AppendUvarint(out, uint64(len(g.Comp)))
	for _, c := range g.Comp {
		rec = appendCompanion(rec[:0], c)
		out = binary.AppendUvarint(out, uint64(len(rec)))
		out = append(out, rec...)
	}
	return out
}

// appendCompanion appends c's record: a transaction with its writes and,
// as reads, the keys it only read.
func appendCompanion(b []byte, c companion) []byte {
	ct := history.Txn{ID: c.Name, Status: history.Unknown, Ops: slices.Clone(c.Writes)}
	for _, k := range c.Keys {
		if !slices.ContainsFunc(c.Writes, func(op history.Op) bool { return op.Key == k }) {
			ct.Ops = append(ct.Ops, history.Op{Kind: history.Read, Key: k, Value: history.Null})
		}
	}
	return online.AppendTxnRecord(b, &ct)
}

// decodeCompanion reads what appendCompanion wrote.
func decodeCompanion(rec []byte) (companion, error) {
	t, err := online.DecodeTxnRecord(rec)
	if err != nil {
		return companion{}, err
	}
	c := companion{Name: t.ID}
	for _, op := range t.Ops {
		if op.Kind != history.Read {
			c.Writes = append(c.Writes, op)
		}
		c.Keys = append(c.Keys, op.Key)
	}
	slices.Sort(c.Keys)
	c.Keys = slices.Compact(c.Keys)
	return c, nil
}

// ghostCodecComp marks a ghost with companions.
const ghostCodecComp = 2

// decodeCompGhost decodes a codec 2 ghost (encodeGhost).
func decodeCompGhost(b []byte) (*ghost, error) {
	next := func() ([]byte, error) {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return nil, fmt.Errorf("ghost: a record's length")
		}
		rec := b[w : w+int(n)]
		b = b[w+int(n):]
		return rec, nil
	}
	rec, err := next()
	if err != nil {
		return nil, err
	}
	g, err := decodeGhost(append([]byte{ghostCodec}, rec...))
	if err != nil {
		return nil, err
	}
	n, w := binary.Uvarint(b)
	if w <= 0 {
		return nil, fmt.Errorf("ghost: the companions' count")
	}
	b = b[w:]
	for range n {
		rec, err := next()
		if err != nil {
			return nil, err
		}
		c, err := decodeCompanion(rec)
		if err != nil {
			return nil, err
		}
		g.Comp = append(g.Comp, c)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("ghost: %d bytes after the companions", len(b))
	}
	return g, nil
}

func decodeGhost(b []byte) (*ghost, error) {
	if len(b) > 0 && b[0] == ghostCodecComp {
		return decodeCompGhost(b[1:])
	}
	if len(b) == 0 || b[0] != ghostCodec {
		g := &ghost{}
		if err := json.Unmarshal(b, g); err != nil {
			return nil, err
		}
		g.fill()
		return g, nil
	}
	t, err := online.DecodeTxnRecord(b[1:])
	if err != nil {
		return nil, err
	}
	g := newGhost()
	g.Time = t.Start
	for _, op := range t.Ops {
		switch op.Kind {
		case history.Read:
			g.Pin[op.Key] = op
		case history.Append:
			g.List[op.Key] = append(g.List[op.Key], op.Value)
		case history.Write:
			g.Reg[op.Key] = op.Value
		default:
			return nil, fmt.Errorf("ghost op %s", op)
		}
	}
	return g, nil
}

// fill gives a decoded ghost the maps JSON leaves nil.
func (g *ghost) fill() {
	if g.Reg == nil {
		g.Reg = map[history.Key]history.Value{}
	}
	if g.List == nil {
		g.List = map[history.Key][]history.Value{}
	}
	if g.Pin == nil {
		g.Pin = map[history.Key]history.Op{}
	}
}

// Punch is what the run command calls as it takes a checkpoint: a
// function to run once that checkpoint is durable, which frees the body
// file's bytes before the first byte any segment names. Those are
// archive records no longer in it: what a reset brought back (all of it
// after a full one) and re-evicted further on. The checkpoint just taken
// names only segments from there on, and a restart resumes from it, so
// nothing freed is read again (docs/SEMANTICS.md §5 "Trimming the
// archive's body file"). Only a durable file: a temporary one starts
// again at a full reset (readmit) and is gone with the engine.
func (e *Engine) Punch() func() error {
	a := &e.arch
	if !a.opened || !a.file.Durable() || a.err != nil {
		return func() error { return nil }
	}
	cut := a.end()
	if len(a.segs) > 0 && len(a.segs[0].Ranges) > 0 {
		cut = a.segs[0].Ranges[0]
	}
	if cut <= a.punched || cut > a.size {
		return func() error { return nil }
	}
	a.punched = cut
	f := a.file
	return func() error {
		if err := f.Punch(cut); err != nil {
			return fmt.Errorf("sionline: freeing %d bytes of the archive %s: %w", cut, f.Name(), err)
		}
		return nil
	}
}
