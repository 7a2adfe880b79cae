package online

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/streamcheck/streamcheck/history"
)

// spill holds the bodies of evicted transactions on disk, so that the
// evicting engine's memory is the instance, not the stream: an evicted
// body is needed again only to confirm and shrink an alert, to rebuild
// the instance after one, and for snapshots, all rare next to the steps.
// In memory an evicted transaction keeps a stub: id, session, timestamps
// and status (the taint rule and the alert latency read them), no ops.
//
// A file that is not durable (BodyFile.Durable) lives exactly as long as
// the engine, and a crash leaves nothing behind. A durable one (a
// checkpointed run's state directory) is the durable store of
// every released body: SnapshotDurable writes the bodies still in memory
// to it too and syncs it, the checkpoint records its length and tables,
// and a restart truncates it to that length and reads only the bodies
// that were in memory. Before, each body went to the spill and again to
// Pebble, and a restart read every body ever released.
type spill struct {
	// file is the body file (BodyFile: on disk, state.FileBodies; in
	// memory by default), opened says the engine started or resumed it.
	file   BodyFile
	opened bool
	w      *bufio.Writer
	end    int64 // bytes written, buffered ones included
	// durable holds, for a durable spill, the record offset plus one of
	// each body that is in memory but also has a record: written by a
	// checkpoint while it was a member, or read back by unstub. stub
	// points at that record instead of writing the body again.
	durable map[int]int64
	// saved is how many released transactions the last SnapshotDurable
	// covered: every one before it has a record.
	saved int
	// at is each released transaction's record offset plus one (0: its
	// body is in memory), by log chunk. Once the log drops a chunk (all
	// of it spilled), its offsets are written to the file too (writeOut)
	// and only where they are stays in memory, in block: 8 bytes per
	// chunk instead of per transaction, which is what a long run's memory
	// otherwise grew by. A transaction of such a chunk whose offset
	// changes afterwards (back in memory, or spilled again) is in loose.
	at    [][]int64
	block []int64 // by chunk: the offsets' block in the file, plus one; 0: not written out
	loose map[int]int64
	// looseNext is the loose map's size at which mergeLoose next looks
	// (pg30_loose.go), merged the blocks it wrote (tests).
	looseNext, merged int
	buf               []byte
	hdr               [binary.MaxVarintLen64]byte // write's scratch
	// rd holds the file from rdOff on, read ahead: passes over the bodies
	// in release order (an alert's confirmation, the replay after it,
	// snapshots) read records and offset blocks that lie mostly in file
	// order, and one read per record was most of their cost.
	rd    []byte
	rdOff int64
	// offs holds chunk offsChunk's written-out offsets (offsChunk -1:
	// none), read as a whole: reading them through rd would make a pass
	// jump between a block and the records at every body.
	offs      []int64
	offsChunk int
	// chunkAt is, by log chunk, where the file ended when the chunk's
	// first transaction was released: no record of a body of that chunk
	// or a later one lies before it. cut is where the records still
	// needed begin (retain.go), punched how much of the file before it
	// was freed.
	chunkAt      []int64
	cut, punched int64
	// floorChunk is the retention floor's chunk (writeOut).
	floorChunk int
	// crcFrom is where checksummed records begin: every record and
	// offset block written at or after it ends in the CRC-32C of its
	// bytes (crcSize), checked on every read. 0 for a file this binary
	// started; a body file restored from an older snapshot, whose
	// records have none, has its length then (its old records are read
	// as before, everything appended is checked).
	crcFrom int64
}

// crcSize is the checksum after each record and offset block.
const crcSize = 4

// crcTable is CRC-32C (Castagnoli), the checksum Pebble's blocks and
// most storage formats use; the CPU computes it (SSE 4.2, ARMv8).
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt: a record or offset block of the body file failed its
// checksum or cannot be decoded. The bytes on disk are damaged; nothing
// read from them is used (no alert is confirmed, no engine restored).
var ErrCorrupt = errors.New("engine: body file corrupt")

// name is the file, for errors.
func (s *spill) name() string {
	if s.file.Durable() {
		return s.file.Name()
	}
	return "the temporary spill file"
}

// corrupt is the error for damage found at off.
func (s *spill) corrupt(what string, off int64, why string) error {
	return fmt.Errorf("%w: %s: %s at byte offset %d: %s", ErrCorrupt, s.name(), what, off, why)
}

// readAhead is how much of the file one read brings into rd.
const readAhead = 256 << 10

// view returns up to n bytes of the file at off (fewer only at its end),
// from rd when it holds them. The bytes are valid until the next view; the
// file is only ever appended to, so what rd holds never goes stale. The
// caller has flushed the writer.
func (s *spill) view(off int64, n int) ([]byte, error) {
	if off >= s.rdOff && off+int64(n) <= s.rdOff+int64(len(s.rd)) {
		return s.rd[off-s.rdOff : off-s.rdOff+int64(n)], nil
	}
	size := max(n, readAhead)
	if cap(s.rd) < size {
		s.rd = make([]byte, size)
	}
	m, err := s.file.ReadAt(s.rd[:size], off)
	s.rd, s.rdOff = s.rd[:m], off
	if m == 0 {
		return nil, err
	}
	return s.rd[:min(m, n)], nil
}

func (s *spill) open() error {
	if err := s.file.Start(); err != nil {
		if s.file.Durable() {
			return fmt.Errorf("engine: body file: %w", err)
		}
		return fmt.Errorf("engine: spill file for evicted bodies: %w", err)
	}
	s.opened, s.w = true, bufio.NewWriterSize(s.file, 1<<20)
	return nil
}

// reopen opens a durable spill as a checkpoint left it: end bytes, the
// rest (written after that checkpoint) cut off.
func (s *spill) reopen(end int64) error {
	if err := s.file.Resume(end); err != nil {
		return fmt.Errorf("engine: body file of the checkpoint: %w", err)
	}
	s.opened, s.w, s.end = true, bufio.NewWriterSize(s.file, 1<<20), end
	return nil
}

func (s *spill) spilled(i int) bool {
	c := i >> logChunkBits
	switch {
	case c >= len(s.at):
		return false
	case s.at[c] != nil:
		return s.at[c][i&(logChunkSize-1)] != 0
	}
	if off, ok := s.loose[i]; ok {
		return off != 0
	}
	return s.block[c] != 0
}

// isGone reports whether spilled body i is past retention (retain.go).
func (s *spill) isGone(i int) bool {
	c := i >> logChunkBits
	switch {
	case c >= len(s.at):
		return false
	case s.at[c] != nil:
		return s.at[c][i&(logChunkSize-1)] == goneOff
	}
	if off, ok := s.loose[i]; ok {
		return off == goneOff
	}
	return s.block[c] == goneOff
}

// errGone is a spilled body retention deleted; Online.body names it.
var errGone = errors.New("body past retention")

// setAt records record i's offset plus one (0: in memory again).
func (s *spill) setAt(i int, off int64) {
	c := i >> logChunkBits
	for len(s.at) <= c {
		s.at = append(s.at, make([]int64, logChunkSize))
		s.block = append(s.block, 0)
	}
	if s.at[c] != nil {
		s.at[c][i&(logChunkSize-1)] = off
		return
	}
	if s.loose == nil {
		s.loose = map[int]int64{}
	}
	s.loose[i] = off
}

// offset is record i's offset in the file; i must be spilled.
func (s *spill) offset(i int) (int64, error) {
	if s.isGone(i) {
		return 0, errGone
	}
	c := i >> logChunkBits
	if s.at[c] != nil {
		return s.at[c][i&(logChunkSize-1)] - 1, nil
	}
	if off, ok := s.loose[i]; ok {
		return off - 1, nil
	}
	if err := s.w.Flush(); err != nil {
		return 0, fmt.Errorf("engine: reading a spilled body: %w", err)
	}
	if s.offs == nil || s.offsChunk != c {
		if s.offs == nil {
			s.offs = make([]int64, logChunkSize)
		}
		s.offsChunk = -1 // until read whole
		if err := s.readOffsets(c, s.offs); err != nil {
			return 0, err
		}
		s.offsChunk = c
	}
	return s.offs[i&(logChunkSize-1)] - 1, nil
}

// writeOut moves chunk c's offsets to the file: the log dropped the
// chunk, every transaction of it is spilled.
func (s *spill) writeOut(c int) error {
	if c >= len(s.at) || s.at[c] == nil {
		return nil
	}
	if c < s.floorChunk {
		// Below the retention floor the block could lie where the file
		// is cut: the few bodies not gone are held loose.
		for k, off := range s.at[c] {
			if off != goneOff {
				if s.loose == nil {
					s.loose = map[int]int64{}
				}
				s.loose[c<<logChunkBits+k] = off
			}
		}
		s.block[c], s.at[c] = goneOff, nil
		return nil
	}
	if err := s.writeOffsets(c, s.at[c], "spilling"); err != nil {
		return err
	}
	s.at[c] = nil
	return nil
}

// writeOffsets appends an offsets block for chunk c (with its checksum,
// once the file has them) and points the chunk at it; what names the
// caller in an error.
func (s *spill) writeOffsets(c int, offs []int64, what string) error {
	var b [8*logChunkSize + crcSize]byte
	for k, off := range offs {
		binary.LittleEndian.PutUint64(b[8*k:], uint64(off))
	}
	n := 8 * logChunkSize
	if s.end >= s.crcFrom {
		binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crcTable))
		n += crcSize
	}
	if _, err := s.w.Write(b[:n]); err != nil {
		return fmt.Errorf("engine: %s offsets: %w", what, err)
	}
	s.block[c] = s.end + 1
	s.end += int64(n)
	return nil
}

// readOffsets reads chunk c's written-out offset block into offs,
// checking its checksum where it has one.
func (s *spill) readOffsets(c int, offs []int64) error {
	var b [8*logChunkSize + crcSize]byte
	at, n := s.block[c]-1, 8*logChunkSize
	if at >= s.crcFrom {
		n += crcSize
	}
	if at < 0 || at+int64(n) > s.end {
		return s.corrupt(fmt.Sprintf("offsets of chunk %d", c), at, "beyond the file's end")
	}
	if _, err := s.file.ReadAt(b[:n], at); err != nil {
		return fmt.Errorf("engine: reading the offsets of chunk %d: %w", c, err)
	}
	if n > 8*logChunkSize {
		m := 8 * logChunkSize
		if got, want := crc32.Checksum(b[:m], crcTable), binary.LittleEndian.Uint32(b[m:]); got != want {
			return s.corrupt(fmt.Sprintf("offsets of chunk %d", c), at, fmt.Sprintf("checksum %08x, recorded %08x", got, want))
		}
	}
	for k := range offs {
		offs[k] = int64(binary.LittleEndian.Uint64(b[8*k:]))
	}
	return nil
}

// put writes t's body as record i.
func (s *spill) put(i int, t *history.Txn) error {
	s.buf = appendTxn(s.buf[:0], t)
	return s.putRaw(i, s.buf)
}

// putRaw spills record b (appendTxn's encoding) as transaction i's.
func (s *spill) putRaw(i int, b []byte) error {
	off, err := s.write(b)
	if err != nil {
		return err
	}
	s.setAt(i, off+1)
	return nil
}

// write appends record b and returns its offset: its length, b, and
// (at or after crcFrom) the CRC-32C of both.
func (s *spill) write(b []byte) (int64, error) {
	// The length and the checksum are built in the spill's own array: a
	// local one escaped through the writer's interface, two allocations
	// per record.
	n := &s.hdr
	k := binary.PutUvarint(n[:], uint64(len(b)))
	if _, err := s.w.Write(n[:k]); err != nil {
		return 0, fmt.Errorf("engine: spilling a body: %w", err)
	}
	if _, err := s.w.Write(b); err != nil {
		return 0, fmt.Errorf("engine: spilling a body: %w", err)
	}
	off := s.end
	s.end += int64(k + len(b))
	if off >= s.crcFrom {
		c := s.hdr[:crcSize]
		binary.LittleEndian.PutUint32(c, crc32.Update(crc32.Checksum(n[:k], crcTable), crcTable, b))
		if _, err := s.w.Write(c); err != nil {
			return 0, fmt.Errorf("engine: spilling a body: %w", err)
		}
		s.end += crcSize
	}
	return off, nil
}

// get reads record i back.
func (s *spill) get(i int) (history.Txn, error) {
	b, err := s.record(i)
	if err != nil {
		return history.Txn{}, err
	}
	t, err := decodeTxn(b)
	if err != nil {
		// A record that passed its checksum (or has none) but does not
		// decode is damage too.
		off, _ := s.offset(i)
		return t, s.corrupt(fmt.Sprintf("body %d", i), off, err.Error())
	}
	return t, nil
}

// record returns record i's bytes, valid until the next read.
func (s *spill) record(i int) ([]byte, error) {
	// offset flushes before it reads the file, recordAt before it reads
	// the record.
	off, err := s.offset(i)
	if err != nil {
		return nil, err
	}
	return s.recordAt(off, i)
}

// recordAt returns the bytes of record i, which begins at off, valid
// until the next read.
func (s *spill) recordAt(off int64, i int) ([]byte, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("engine: reading a spilled body: %w", err)
	}
	what := fmt.Sprintf("record %d", i)
	if off < 0 || off >= s.end {
		return nil, s.corrupt(what, off, fmt.Sprintf("beyond the file's end (%d bytes)", s.end))
	}
	head, err := s.view(off, binary.MaxVarintLen64)
	if len(head) == 0 {
		return nil, fmt.Errorf("engine: reading spilled body %d: %v", i, err)
	}
	size, k := binary.Uvarint(head)
	sum := uint64(0)
	if off >= s.crcFrom {
		sum = crcSize
	}
	if k <= 0 || size > uint64(s.end-off) || uint64(k)+size+sum > uint64(s.end-off) {
		return nil, s.corrupt(what, off, "bad length")
	}
	// The length's bytes, before the next view reuses its buffer.
	var hdr [binary.MaxVarintLen64]byte
	copy(hdr[:], head[:k])
	b, err := s.view(off+int64(k), int(size+sum))
	if len(b) < int(size+sum) {
		return nil, fmt.Errorf("engine: reading spilled body %d: %v", i, err)
	}
	if sum > 0 {
		got := crc32.Update(crc32.Checksum(hdr[:k], crcTable), crcTable, b[:size])
		if want := binary.LittleEndian.Uint32(b[size:]); got != want {
			return nil, s.corrupt(what, off, fmt.Sprintf("checksum %08x, recorded %08x", got, want))
		}
	}
	return b[:size], nil
}

// stubOf is what stays in memory of an evicted transaction. Its strings
// are copies: a decoder's strings may share a larger buffer, which a stub
// would keep alive.
func stubOf(t *history.Txn) history.Txn {
	return history.Txn{ID: strings.Clone(t.ID), Session: strings.Clone(t.Session), HasSession: t.HasSession, Start: t.Start, End: t.End, HasTime: t.HasTime, Status: t.Status}
}

// stub moves released transaction i's body to the spill once it has left
// the instance for good: evicted, or quarantined, not a ghost (a
// quarantined one's stub stays in memory past its chunk's drop:
// txnLog.keep).
func (o *Online) stub(i int) error {
	if !o.spill.opened || o.spill.spilled(i) || o.ev.Member.get(i) && !o.ev.tailOnly(i) {
		return nil
	}
	if off, ok := o.spill.durable[i]; ok {
		// Its record is in the file already.
		delete(o.spill.durable, i)
		o.spill.setAt(i, off)
	} else if err := o.spill.put(i, o.log.at(i)); err != nil {
		return err
	}
	if i < o.floor {
		// Kept when the floor passed it, in memory; the next advance
		// decides whether it goes.
		o.belowFloor = append(o.belowFloor, i)
	}
	// Out of the index too (find scans the stubs): its entry, and the
	// decoder's id bytes it kept alive, were most of an evicted
	// transaction's memory after the body.
	if id := o.log.at(i).ID; o.index[id] == i {
		delete(o.index, id)
		o.keepGone(id, i) // close_gone.go
	}
	if c := o.log.markSpilled(i, stubOf(o.log.at(i))); c >= 0 {
		if err := o.writeOutChunk(c); err != nil {
			return err
		}
	}
	return o.spill.mergeLoose()
}

// writeOutChunk writes out the offsets of chunk c, which the log dropped
// (spill.writeOut). A sparse chunk's bodies still in memory (held loose
// by the log) keep an offset of their own, 0, so that spilled does not
// take them for the block's (SEMANTICS §5 "Sparse log chunks").
func (o *Online) writeOutChunk(c int) error {
	sp := &o.spill
	if c >= len(sp.at) || sp.at[c] == nil {
		return nil
	}
	var held []int
	for k, off := range sp.at[c] {
		if i := c<<logChunkBits + k; off == 0 && i < o.log.len() {
			held = append(held, i)
		}
	}
	err := sp.writeOut(c)
	if sp.at[c] == nil {
		for _, i := range held {
			sp.setAt(i, 0)
		}
	}
	return err
}

// appendLog releases t into the log. A chunk the log drops on the way has
// its offsets written out; should that fail, they stay in memory and the
// failure is kept like any spill failure (SpillError).
func (o *Online) appendLog(t history.Txn) int {
	o.mark(o.log.len(), &t)
	i, dropped := o.log.append(t)
	if dropped >= 0 && o.spillErr == nil {
		o.spillErr = o.writeOutChunk(dropped)
	}
	o.indexWrites(i, t.Ops)
	return i
}

// body returns released transaction i with its ops, from the spill if
// it was evicted.
func (o *Online) body(i int) (history.Txn, error) {
	if !o.spill.spilled(i) {
		return *o.log.at(i), nil
	}
	t, err := o.spill.get(i)
	if errors.Is(err, errGone) {
		err = o.goneError(i)
	}
	return t, err
}

// unstub brings i's body back into memory (it rejoins the instance).
func (o *Online) unstub(i int) error {
	if !o.spill.spilled(i) {
		return nil
	}
	t, err := o.body(i)
	if err != nil {
		return err
	}
	if o.spill.file.Durable() {
		// The record stays valid: a checkpoint need not write it again.
		off, err := o.spill.offset(i)
		if err != nil {
			return err
		}
		if o.spill.durable == nil {
			o.spill.durable = map[int]int64{}
		}
		o.spill.durable[i] = off + 1
	}
	o.log.markUnspilled(i)
	o.log.put(i, t)
	o.spill.setAt(i, 0)
	if j, ok := o.index[t.ID]; !ok || j < i {
		o.index[t.ID] = i // the newest with its ID (the index's rule)
	}
	return nil
}

// bodies returns every released transaction with its ops: the history
// alerts are confirmed on.
func (o *Online) bodies() ([]history.Txn, error) {
	out := make([]history.Txn, o.log.len())
	for i := range out {
		t, err := o.body(i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// spillBody stubs i once evicted. A spill that cannot be opened or
// written leaves the body in memory: memory grows, the check stays exact
// (spillErr says why, once).
func (o *Online) spillBody(i int) {
	if !o.evicting || o.spillErr != nil {
		return
	}
	if !o.spill.opened {
		if o.spillErr = o.spill.open(); o.spillErr != nil {
			return
		}
	}
	o.spillErr = o.stub(i)
}

// spillQuarantined moves the bodies of the quarantined transactions at
// that left the instance to the spill: set aside by --max-pinned or
// quarantined in a core, a body in memory was what the cap left of its
// memory (about 4.5 KB each on mixed streams) and what a storm's memory
// grew by. A quarantined ghost stays a member (alert_inplace.go), with
// its body. So does one that is not time-closed, until Close: a spilled
// body leaves the ID index (stub), and Close finds transactions by it,
// so an open member of an alert, spilled, never closed, and its alert
// stayed pending for ever, never shrunk again (O5).
func (o *Online) spillQuarantined(at []int) {
	for _, i := range at {
		if o.quar.get(i) && !o.ev.Member.get(i) && o.closed.get(i) {
			o.spillBody(i)
		}
	}
}

// SpillError reports why evicted bodies stay in memory, if a spill
// failed.
func (o *Online) SpillError() error { return o.spillErr }
