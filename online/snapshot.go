package online

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/streamcheck/streamcheck/history"
)

// snapshotVersion changes whenever the snapshot's meaning changes; a
// snapshot of another version is refused rather than misread, because a
// misread engine state would silently change verdicts.
const snapshotVersion = 8

// snapshotVersionNoParked is version 8 before isolated groups were parked
// out of the instance (park_group.go): its state has no Parked, which a
// version 7 reader would drop, losing the parked members for ever.
const snapshotVersionNoParked = 7

// snapshotVersionNoListInit is version 7 before list keys left under an
// unknown initial state (evict_list_init.go): its state has no InitList,
// and none is needed, since no read of a list key had left the instance
// under an unknown initial state (every list transaction stayed there).
// A version 6 reader would miss InitList in a version 7 snapshot.
const snapshotVersionNoListInit = 6

// snapshotVersionNoBackoff is version 6 before the probe back-off
// (evict_backoff.go): its instance has no back-offs, so the restored
// engine probes every member at its next step, which only keeps members
// longer than the engine that wrote it would have.
const snapshotVersionNoBackoff = 5

// snapshotVersionNoCRC is version 5 before the body file's records had
// checksums: its body file is read without them (spill.crcFrom is its
// length), and what is appended after it has them.
const snapshotVersionNoCRC = 4

// snapshotVersionNoRetention is version 4 before retention: no rewind
// points, no chunk marks, and no body gone (a gone body's table entry is
// -1, which a version 3 reader would take for a record or refuse
// obscurely).
const snapshotVersionNoRetention = 3

// snapshotVersionFlagsAsBools is version 3 with the per-transaction flags
// stored one bool each (runFlags reads both).
const snapshotVersionFlagsAsBools = 2

type onlineSnapshot struct {
	Version  int
	Options  history.Options
	Promised history.Level
	Released []history.Txn
	// Outside counts the released bodies that SnapshotBodies leaves to
	// the caller (Released is then empty).
	Outside int
	Closed  runFlags
	Quar    runFlags
	Alerts  []*Alert
	// AlertCount counts every alert raised; Alerts holds the ones the
	// engine keeps (alert_kept.go). 0: every one (taken before).
	AlertCount int      `json:",omitempty"`
	Pending    []string // ids of pending alerts, in order
	// PendingAt are the pending alerts as indexes into Alerts, in order:
	// an id named one alert only once ids named anomalies (alertid.go);
	// under the earlier ids, two alerts whose cores reused transaction
	// ids shared one, and a restart resolved a pending one to the other.
	PendingAt []int `json:",omitempty"`
	// Names are the alerts' core names by release position, in the
	// order of Alerts (absent before names were kept).
	Names       []map[string]int `json:",omitempty"`
	Steps       int
	Checks      int
	Unchecked   int
	Evict       bool
	EvictState  evictState
	Conflicts   int64
	Constraints int64
	Pruned      int64
	MaxPinned   int
	Capped      int
	// Rewinds are the rewind points, NextRewind where the next is due
	// (rewind.go; absent before rewind points).
	Rewinds    []rewindPoint `json:",omitempty"`
	NextRewind int           `json:",omitempty"`
	// InPlace is the first member quarantined in place since the last
	// replay, plus one (alert_inplace.go; 0: none).
	InPlace int `json:",omitempty"`
	// Retention's state (retain.go): the chunks' marks as varint deltas
	// of their starts and of their bytes, the bytes released, the floor,
	// and what it counted and left to set aside.
	MarkStarts, MarkBytes   []byte `json:",omitempty"`
	BodyBytes               int64  `json:",omitempty"`
	Floor, Gone             int    `json:",omitempty"`
	InexactRewind, SetAside int    `json:",omitempty"`
	Since                   int    `json:",omitempty"`
	ClosedSince             []int  `json:",omitempty"`
	BelowFloor              []int  `json:",omitempty"`
	// Spill is a durable snapshot's body file (SnapshotDurable): its
	// length and tables. Released is then empty and Outside counts the
	// bodies, all of them in the file.
	Spill *spillSnapshot `json:",omitempty"`
}

// spillSnapshot is the durable spill as a checkpoint leaves it; the
// offsets are spill's (record offset plus one, 0: in memory).
type spillSnapshot struct {
	End   int64
	Saved int
	// Block is spill.block: a dropped chunk's offsets are in the file.
	Block []int64
	// At holds the live chunks' offsets (spill.at) that are not 0, a
	// live chunk not in At having every body in memory; Loose and Durable
	// are spill.loose and spill.durable. Each is a list of (position,
	// offset) pairs (appendPairs): as JSON maps they were 44% of a
	// snapshot at 200K transactions, encoded on the loop.
	At      map[int][]byte
	Loose   []byte
	Durable []byte
	// Indexed are the release positions in the ID index (Close finds by
	// ID), as varint deltas; the IDs are the bodies'.
	Indexed []byte
	// ChunkAt is spill.chunkAt as varint deltas, Cut spill.cut.
	ChunkAt []byte `json:",omitempty"`
	Cut     int64  `json:",omitempty"`
	// CRCFrom is spill.crcFrom: records before it have no checksum
	// (written by a binary before version 5).
	CRCFrom int64 `json:",omitempty"`
	// Index is the write index's runs (writeidx.go W3; absent: off).
	Index *widxSnapshot `json:",omitempty"`
}

// Snapshot returns the whole engine state as deterministic bytes, so that a
// checkpoint restored with RestoreOnline continues exactly as if the run had
// not stopped. The bytes are opaque to callers.
func (o *Online) Snapshot() ([]byte, error) {
	s := o.snapshot()
	var err error
	if s.Released, err = o.bodies(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// SnapshotBodies is Snapshot without the released bodies, which most of
// a snapshot is: the caller stores each body once (run: one Pebble key
// per released transaction) instead of rewriting all of them at every
// checkpoint. bodies are the encoded bodies released from index from on;
// RestoreOnlineBodies takes all of them back.
func (o *Online) SnapshotBodies(from int) (snap []byte, bodies [][]byte, err error) {
	if from < 0 || from > o.log.len() {
		return nil, nil, fmt.Errorf("engine snapshot: bodies from %d of %d", from, o.log.len())
	}
	s := o.snapshot()
	s.Released, s.Outside = nil, o.log.len()
	if snap, err = json.Marshal(s); err != nil {
		return nil, nil, err
	}
	bodies = make([][]byte, o.log.len()-from)
	type spilledAt struct {
		i   int
		off int64
	}
	var spilled []spilledAt
	for i := from; i < o.log.len(); i++ {
		if !o.spill.spilled(i) {
			bodies[i-from] = appendTxn([]byte{bodyCodec}, o.log.at(i))
			continue
		}
		off, err := o.spill.offset(i)
		if err != nil {
			return nil, nil, err
		}
		spilled = append(spilled, spilledAt{i, off})
	}
	// Read in file order: the spill holds bodies in eviction order, not
	// release order, and read in release order its read-ahead window
	// missed so often that copying the bodies was most of a checkpoint's
	// hold on the loop (1.3 s of preads over a 500K run).
	slices.SortFunc(spilled, func(a, b spilledAt) int { return cmp.Compare(a.off, b.off) })
	for _, s := range spilled {
		// Already in the record format: copied, not decoded.
		b, err := o.spill.recordAt(s.off, s.i)
		if err != nil {
			return nil, nil, err
		}
		bodies[s.i-from] = append([]byte{bodyCodec}, b...)
	}
	return snap, bodies, nil
}

// SnapshotDurable is SnapshotBodies for an engine whose spill is a
// durable file (OnlineConfig.Bodies): the bodies still in memory that
// have no record are written to the file, whose length and tables go in
// the snapshot, so no body is handed to the caller. sync makes the file
// durable up to that length; call it (from any goroutine: the engine may
// go on appending meanwhile) before storing the snapshot.
// RestoreOnlineAt reads it back.
func (o *Online) SnapshotDurable() (snap []byte, sync func() error, err error) {
	sp := &o.spill
	if !sp.file.Durable() {
		return nil, nil, fmt.Errorf("engine snapshot: the spill is not a durable file")
	}
	if o.spillErr != nil {
		return nil, nil, fmt.Errorf("engine snapshot: body file: %w", o.spillErr)
	}
	if !sp.opened {
		if o.spillErr = sp.open(); o.spillErr != nil {
			return nil, nil, o.spillErr
		}
	}
	n := o.log.len()
	for i := sp.saved; i < n; i++ {
		if sp.spilled(i) {
			continue
		}
		if _, ok := sp.durable[i]; ok {
			continue
		}
		sp.buf = appendTxn(sp.buf[:0], o.log.at(i))
		off, err := sp.write(sp.buf)
		if err != nil {
			o.spillErr = err
			return nil, nil, err
		}
		if sp.durable == nil {
			sp.durable = map[int]int64{}
		}
		sp.durable[i] = off + 1
	}
	sp.saved = n
	if err := o.writeRewinds(); err != nil { // rewind_copy.go: records of the points taken since
		o.spillErr = err
		return nil, nil, err
	}
	if err := sp.w.Flush(); err != nil {
		o.spillErr = fmt.Errorf("engine: body file: %w", err)
		return nil, nil, o.spillErr
	}
	s := o.snapshot()
	s.Outside = n
	ss := &spillSnapshot{End: sp.end, Saved: sp.saved, Block: sp.block, At: map[int][]byte{},
		Loose: appendPairs(nil, sp.loose), Durable: appendPairs(nil, sp.durable)}
	for c, at := range sp.at {
		// Mostly neighbours a record apart: two or three bytes each.
		var w pairWriter
		for k, off := range at {
			if off != 0 {
				w.add(k, off)
			}
		}
		if w.b != nil {
			ss.At[c] = w.b
		}
	}
	indexed := make([]int64, 0, len(o.index))
	for _, i := range o.index {
		indexed = append(indexed, int64(i))
	}
	slices.Sort(indexed)
	ss.Indexed = appendDeltas(nil, indexed)
	ss.ChunkAt, ss.Cut = appendDeltas(nil, sp.chunkAt), sp.cut
	ss.CRCFrom = sp.crcFrom
	ss.Index = o.widx.snapshot()
	s.Spill = ss
	s.Rewinds = o.snapshotRewinds(true)
	if snap, err = json.Marshal(s); err != nil {
		return nil, nil, err
	}
	return snap, sp.file.Sync, nil
}

// appendDeltas appends vs as zigzag varints of the differences between
// neighbours.
func appendDeltas(b []byte, vs []int64) []byte {
	var prev int64
	for _, v := range vs {
		b = binary.AppendVarint(b, v-prev)
		prev = v
	}
	return b
}

// pairWriter appends (position, value) pairs in position order, as
// varints of the differences from the pair before; readPairs reads them.
type pairWriter struct {
	b []byte
	k int
	v int64
}

func (w *pairWriter) add(k int, v int64) {
	w.b = binary.AppendUvarint(w.b, uint64(k-w.k))
	w.b = binary.AppendVarint(w.b, v-w.v)
	w.k, w.v = k, v
}

// appendPairs is m's pairs through a pairWriter.
func appendPairs(b []byte, m map[int]int64) []byte {
	w := pairWriter{b: b}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.add(k, m[k])
	}
	return w.b
}

// readPairs reads what appendPairs wrote; pair is given each in turn.
func readPairs(b []byte, pair func(k int, v int64) error) error {
	var k int
	var v int64
	for len(b) > 0 {
		dk, n := binary.Uvarint(b)
		if n <= 0 || dk > math.MaxInt32 {
			return fmt.Errorf("bad varint")
		}
		b = b[n:]
		dv, n := binary.Varint(b)
		if n <= 0 {
			return fmt.Errorf("bad varint")
		}
		b = b[n:]
		k, v = k+int(dk), v+dv
		if err := pair(k, v); err != nil {
			return err
		}
	}
	return nil
}

// readDeltas reads the values appendDeltas wrote.
func readDeltas(b []byte) ([]int64, error) {
	var vs []int64
	var prev int64
	for len(b) > 0 {
		d, k := binary.Varint(b)
		if k <= 0 {
			return nil, fmt.Errorf("bad varint after %d values", len(vs))
		}
		prev += d
		vs = append(vs, prev)
		b = b[k:]
	}
	return vs, nil
}

// restoreDurable puts back the body file and the bodies that were in
// memory when SnapshotDurable took s: the evicted ones stay in the file
// (the stubs of a live chunk are read from it), so a restart reads what
// the engine held, not every body released.
func (o *Online) restoreDurable(ss *spillSnapshot, n int, version int) error {
	sp := &o.spill
	sp.crcFrom = ss.CRCFrom
	if version <= snapshotVersionNoCRC {
		// Its records have no checksums; what this engine appends has.
		sp.crcFrom = ss.End
	}
	if sp.crcFrom < 0 || sp.crcFrom > ss.End {
		return fmt.Errorf("checksums from byte %d of a body file of %d", sp.crcFrom, ss.End)
	}
	if err := sp.reopen(ss.End); err != nil {
		return err
	}
	sp.block, sp.saved, sp.cut = ss.Block, ss.Saved, ss.Cut
	chunkAt, err := readDeltas(ss.ChunkAt)
	if err != nil {
		return fmt.Errorf("chunk offsets: %w", err)
	}
	sp.chunkAt = chunkAt
	for len(sp.chunkAt) < (n+logChunkSize-1)>>logChunkBits {
		// Taken before chunkAt was kept: no record is before 0.
		sp.chunkAt = append(sp.chunkAt, 0)
	}
	if sp.saved != n {
		return fmt.Errorf("body file covers %d transactions, the snapshot %d", sp.saved, n)
	}
	inRange := func(what string, m *map[int]int64) func(int, int64) error {
		return func(i int, off int64) error {
			if i >= n || off < goneOff || off > ss.End {
				return fmt.Errorf("%s: body %d at offset %d (%d released, %d bytes)", what, i, off-1, n, ss.End)
			}
			if *m == nil {
				*m = map[int]int64{}
			}
			(*m)[i] = off
			return nil
		}
	}
	if err := readPairs(ss.Loose, inRange("loose offsets", &sp.loose)); err != nil {
		return err
	}
	if err := readPairs(ss.Durable, inRange("in-memory bodies", &sp.durable)); err != nil {
		return err
	}
	sp.at = make([][]int64, len(sp.block))
	for c := range sp.at {
		if sp.block[c] != 0 {
			continue
		}
		at := make([]int64, logChunkSize)
		sp.at[c] = at
		if b, ok := ss.At[c]; ok {
			err := readPairs(b, func(k int, off int64) error {
				if k >= logChunkSize || off == 0 || off < goneOff || off > ss.End {
					return fmt.Errorf("position %d, offset %d", k, off-1)
				}
				at[k] = off
				return nil
			})
			if err != nil {
				return fmt.Errorf("offsets of chunk %d: %w", c, err)
			}
		}
	}
	for c := range ss.At {
		if c < 0 || c >= len(sp.at) || sp.at[c] == nil {
			return fmt.Errorf("offsets of chunk %d, which is not live", c)
		}
	}
	read := func(i int, off int64) ([]byte, error) {
		if off <= 0 || off > ss.End {
			return nil, fmt.Errorf("body %d at offset %d of %d", i, off-1, ss.End)
		}
		return sp.recordAt(off-1, i)
	}
	inMemory := func(i int) (history.Txn, error) {
		b, err := read(i, sp.durable[i])
		if err != nil {
			return history.Txn{}, err
		}
		t, err := decodeTxn(b)
		if err != nil {
			return t, sp.corrupt(fmt.Sprintf("body %d", i), sp.durable[i]-1, err.Error())
		}
		return t, nil
	}
	chunks := (n + logChunkSize - 1) >> logChunkBits
	l := &o.log
	l.n, l.chunks, l.spilled = n, make([][]history.Txn, chunks), make([]int32, chunks)
	for c := range chunks {
		if c < len(sp.block) && sp.block[c] != 0 {
			if c == chunks-1 {
				return fmt.Errorf("the last chunk is written out")
			}
			l.spilled[c] = logChunkSize
			continue
		}
		txns := make([]history.Txn, logChunkSize)
		for k := range logChunkSize {
			i := c<<logChunkBits + k
			if i >= n {
				break
			}
			var err error
			if c < len(sp.at) && sp.at[c][k] == goneOff {
				// Past retention: its stub went with it.
				l.spilled[c]++
				continue
			} else if c < len(sp.at) && sp.at[c][k] > 0 {
				var b []byte
				if b, err = read(i, sp.at[c][k]); err == nil {
					if txns[k], err = decodeStub(b); err != nil {
						err = sp.corrupt(fmt.Sprintf("body %d", i), sp.at[c][k]-1, err.Error())
					}
				}
				l.spilled[c]++
			} else {
				txns[k], err = inMemory(i)
			}
			if err != nil {
				return fmt.Errorf("body %d: %w", i, err)
			}
		}
		l.chunks[c] = txns
	}
	for i, off := range sp.loose {
		c := i >> logChunkBits
		if i < 0 || i >= n || l.chunks[c] != nil {
			return fmt.Errorf("loose offset of %d, in no written-out chunk", i)
		}
		if off != 0 {
			continue
		}
		t, err := inMemory(i)
		if err != nil {
			return fmt.Errorf("body %d: %w", i, err)
		}
		l.put(i, t)
		l.spilled[c]--
	}
	// Quarantined stubs outlive their chunk (txnLog.keep): read back,
	// or empty for a body past retention, as the running engine left it
	// (zeroStub).
	for c := range chunks {
		if l.chunks[c] != nil {
			continue
		}
		for i := c << logChunkBits; i < min(n, (c+1)<<logChunkBits); i++ {
			if !o.quar.get(i) || !o.taintHolds(i) || l.inMemory(i) {
				continue
			}
			var t history.Txn
			if !sp.isGone(i) {
				off, err := sp.offset(i)
				if err != nil {
					return fmt.Errorf("quarantined body %d: %w", i, err)
				}
				b, err := read(i, off+1)
				if err == nil {
					if t, err = decodeStub(b); err != nil {
						err = sp.corrupt(fmt.Sprintf("body %d", i), off, err.Error())
					}
				}
				if err != nil {
					return fmt.Errorf("body %d: %w", i, err)
				}
			}
			l.put(i, t)
		}
	}
	indexed, err := readDeltas(ss.Indexed)
	if err != nil {
		return fmt.Errorf("ID index: %w", err)
	}
	for _, v := range indexed {
		i := int(v)
		if i < 0 || i >= n || !l.inMemory(i) || sp.spilled(i) {
			return fmt.Errorf("ID index names %d, not in memory", i)
		}
		o.index[l.at(i).ID] = i
	}
	return nil
}

// bodyCodec is the first byte of a body SnapshotBodies encodes: then the
// spill's record format (spillcodec.go). A body stored as JSON, as
// before, begins with '{'. JSON was most of a checkpoint's time and
// bytes: some 850 bytes per body against about 150.
const bodyCodec = 1

// decodeBody reads a body SnapshotBodies encoded, or one stored as JSON.
func decodeBody(b []byte) (history.Txn, error) {
	if len(b) > 0 && b[0] == bodyCodec {
		return decodeTxn(b[1:])
	}
	var t history.Txn
	err := json.Unmarshal(b, &t)
	return t, err
}

// RestoreOnlineBodies is RestoreOnline for a SnapshotBodies snapshot and
// every body released before it, in release order.
func RestoreOnlineBodies(opts history.Options, snap []byte, bodies [][]byte) (*Online, error) {
	return restoreOnline(opts, snap, bodies)
}

// restoreSpilled releases body b (SnapshotBodies' encoding) as the next
// of n transactions straight into the spill, as add and then stub would,
// when it belongs there (evicted, not quarantined): the record is copied,
// not decoded and encoded again, and only its stub is read. Restoring 2M
// bodies took 4.3 s, 2.4 s of it decoding and re-encoding them. It
// returns false, having released nothing, for a body add must take.
func (o *Online) restoreSpilled(n int, b []byte) (bool, error) {
	i := o.log.len()
	if i >= n || len(b) == 0 || b[0] != bodyCodec || !o.evicting || o.spillErr != nil || o.ev.Member.get(i) || o.quar.get(i) {
		return false, nil
	}
	if !o.spill.opened {
		if o.spillErr = o.spill.open(); o.spillErr != nil {
			return false, nil
		}
	}
	stub, err := decodeStub(b[1:])
	if err != nil {
		return false, fmt.Errorf("engine snapshot: released body %d: %w", i, err)
	}
	var ops []history.Op
	if o.widx.on {
		// The write index needs its writes, which the stub has not.
		t, err := decodeTxn(b[1:])
		if err != nil {
			return false, fmt.Errorf("engine snapshot: released body %d: %w", i, err)
		}
		ops = t.Ops
	}
	if o.spillErr = o.spill.putRaw(i, b[1:]); o.spillErr != nil {
		// add keeps it in memory, as a failed spill does.
		return false, nil
	}
	o.widx.add(i, ops)
	o.appendLog(stub)
	// add's entry, which stub removes: the index holds no spilled
	// transaction, nor, with a reused ID, the older use it replaced.
	delete(o.index, stub.ID)
	if c := o.log.markSpilled(i, stub); c >= 0 && o.spillErr == nil {
		o.spillErr = o.writeOutChunk(c)
	}
	return true, nil
}

func (o *Online) snapshot() *onlineSnapshot {
	s := onlineSnapshot{
		Version: snapshotVersion, Options: o.opts, Promised: o.promised,
		Closed: o.closed, Quar: o.quar, Alerts: o.alerts, AlertCount: o.alertCount,
		Steps: o.steps, Checks: o.checks, Unchecked: o.unchecked,
		Conflicts: o.conflicts, Constraints: o.constraints, Pruned: o.pruned,
		Evict: o.evicting, EvictState: o.ev, MaxPinned: o.maxPinned, Capped: o.capped,
		Rewinds: o.snapshotRewinds(false), NextRewind: o.nextRewind, InPlace: o.inPlace,
		BodyBytes: o.bodyBytes, Floor: o.floor, Gone: o.goneCount,
		InexactRewind: o.inexactRewinds, SetAside: o.setAsideCount, Since: o.since, ClosedSince: o.closedSince, BelowFloor: o.belowFloor,
	}
	starts := make([]int64, len(o.marks))
	bytes := make([]int64, len(o.marks))
	for c, m := range o.marks {
		starts[c], bytes[c] = m.Start, m.Bytes
	}
	s.MarkStarts, s.MarkBytes = appendDeltas(nil, starts), appendDeltas(nil, bytes)
	for _, a := range o.alerts {
		s.Names = append(s.Names, a.names)
	}
	at := make(map[*Alert]int, len(o.alerts))
	for k, a := range o.alerts {
		at[a] = k
	}
	for _, a := range o.pending {
		s.Pending = append(s.Pending, a.ID)
		s.PendingAt = append(s.PendingAt, at[a])
	}
	return &s
}

// RestoreOnline rebuilds an engine from a Snapshot. opts must be the
// options the snapshot was taken under: a checkpoint taken with another
// skew, horizon or initial state would continue a different check.
func RestoreOnline(opts history.Options, snap []byte) (*Online, error) {
	return restoreOnline(opts, snap, nil)
}

func restoreOnline(opts history.Options, snap []byte, bodies [][]byte) (*Online, error) {
	return RestoreOnlineEach(opts, snap, func(body func([]byte) error) error {
		for _, b := range bodies {
			if err := body(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// RestoreOnlineEach is RestoreOnlineBodies with the bodies handed over one
// at a time, in index order, by each: a restart then holds in memory only
// what the running engine held, the evicted bodies going straight back to
// the spill, instead of every body ever released (and its encoding) at
// once.
func RestoreOnlineEach(opts history.Options, snap []byte, each func(body func([]byte) error) error) (*Online, error) {
	return RestoreOnlineAt(opts, nil, snap, each)
}

// RestoreOnlineAt restores any snapshot into an engine whose spill is the
// body file bodies (OnlineConfig.Bodies; nil for one in memory): a
// SnapshotDurable snapshot from that file, which must be durable, cut back
// to the snapshot's length (each is not called); an older one from the
// bodies each hands over, as RestoreOnlineEach, the evicted ones going to
// bodies, started afresh.
func RestoreOnlineAt(opts history.Options, bodies BodyFile, snap []byte, each func(body func([]byte) error) error) (*Online, error) {
	var s onlineSnapshot
	if err := json.Unmarshal(snap, &s); err != nil {
		return nil, fmt.Errorf("engine snapshot: %w", err)
	}
	if s.Version != snapshotVersion && s.Version != snapshotVersionNoParked && s.Version != snapshotVersionNoListInit && s.Version != snapshotVersionNoBackoff && s.Version != snapshotVersionNoCRC && s.Version != snapshotVersionNoRetention && s.Version != snapshotVersionFlagsAsBools {
		return nil, fmt.Errorf("engine snapshot: version %d, this build reads version %d", s.Version, snapshotVersion)
	}
	want := NewOnline(opts)
	if s.Options != want.opts || s.Promised != want.promised {
		return nil, fmt.Errorf("engine snapshot: taken with options %+v (promised %s), restored with %+v (promised %s)", s.Options, s.Promised, want.opts, want.promised)
	}
	n := len(s.Released)
	if s.Outside > 0 {
		n = s.Outside
	}
	if s.Closed.len() != n || s.Quar.len() != n {
		return nil, fmt.Errorf("engine snapshot: %d transactions but %d closed and %d quarantine flags", n, s.Closed.len(), s.Quar.len())
	}
	o := want
	o.closed, o.quar = s.Closed, s.Quar
	o.alerts, o.steps, o.checks, o.unchecked = s.Alerts, s.Steps, s.Checks, s.Unchecked
	o.alertCount = max(s.AlertCount, len(s.Alerts))
	o.evicting, o.ev = s.Evict, s.EvictState
	o.wild = countWild(o.ev.Taint)
	o.taintedWriters() // storm_taint.go: before the log, whose stubs it keeps
	o.maxPinned, o.capped = s.MaxPinned, s.Capped
	o.conflicts, o.constraints, o.pruned = s.Conflicts, s.Constraints, s.Pruned
	o.rewinds, o.nextRewind, o.inPlace = s.Rewinds, s.NextRewind, s.InPlace
	if o.nextRewind == 0 {
		// Taken before rewind points: the next is due where a run from
		// the start would take it.
		o.nextRewind = (n/rewindEvery + 1) * rewindEvery
	}
	for k, p := range o.rewinds {
		if p.Pos < 0 || p.Pos > n || (k > 0 && p.Pos <= o.rewinds[k-1].Pos) {
			return nil, fmt.Errorf("engine snapshot: rewind point at %d of %d released", p.Pos, n)
		}
	}
	marks, err := restoreMarks(&s, n)
	if err != nil {
		return nil, err
	}
	o.floor, o.goneCount = s.Floor, s.Gone
	o.inexactRewinds, o.since, o.closedSince = s.InexactRewind, s.Since, s.ClosedSince
	o.setAsideCount = s.SetAside
	o.belowFloor, o.spill.floorChunk = s.BelowFloor, s.Floor>>logChunkBits
	if o.floor < 0 || o.floor > n || o.floor&(logChunkSize-1) != 0 || o.since < 0 || o.since > n {
		return nil, fmt.Errorf("engine snapshot: retention floor %d, step start %d, of %d released", o.floor, o.since, n)
	}
	if s.Names != nil && len(s.Names) != len(o.alerts) {
		return nil, fmt.Errorf("engine snapshot: %d alerts but names for %d", len(o.alerts), len(s.Names))
	}
	for k, names := range s.Names {
		for name, i := range names {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("engine snapshot: alert member %q at %d of %d released", name, i, n)
			}
		}
		o.alerts[k].names = names
	}
	if o.ev.Member.len() != n {
		return nil, fmt.Errorf("engine snapshot: %d transactions but %d instance flags", n, o.ev.Member.len())
	}
	fixMaps(&o.ev)
	o.spill.file = bodiesOrMem(bodies)
	if s.Spill != nil {
		if s.Outside != n || len(s.Released) > 0 {
			return nil, fmt.Errorf("engine snapshot: a body file's snapshot with bodies of its own")
		}
		if !o.spill.file.Durable() {
			return nil, fmt.Errorf("engine snapshot: its bodies are in a file, and none was given")
		}
		if err := o.restoreDurable(s.Spill, n, s.Version); err != nil {
			return nil, fmt.Errorf("engine snapshot: %w", err)
		}
		if err := o.readRewinds(s.Spill.End); err != nil {
			return nil, fmt.Errorf("engine snapshot: %w", err)
		}
		if err := o.restoreIndex(s.Spill.Index, n); err != nil {
			return nil, fmt.Errorf("engine snapshot: %w", err)
		}
		if marks != nil {
			o.marks, o.bodyBytes = marks, s.BodyBytes
		} else {
			o.unmarked(n)
		}
		return o.restoreAlerts(&s)
	}
	// Every body is released again below, which indexes it (W3).
	o.widx.on = o.evicting
	add := func(t history.Txn) error {
		i := o.log.len()
		if i == n {
			return fmt.Errorf("engine snapshot: more than the %d released bodies it counts", n)
		}
		// A reused ID (window W5): the index keeps the newest.
		o.index[t.ID] = o.appendLog(t)
		if !o.ev.Member.get(i) && (!o.quar.get(i) || o.closed.get(i)) {
			// Evicted bodies go back to the spill, as if evicted here;
			// a quarantined one that is open waits for Close
			// (spillQuarantined).
			o.spillBody(i)
		}
		return nil
	}
	if s.Outside == 0 {
		for _, t := range s.Released {
			if err := add(t); err != nil {
				return nil, err
			}
		}
		// Bodies stored apart for a snapshot that holds its own.
		err := each(func([]byte) error {
			return fmt.Errorf("engine snapshot: 0 released bodies stored apart, more given")
		})
		if err != nil {
			return nil, err
		}
	} else {
		err := each(func(b []byte) error {
			if ok, err := o.restoreSpilled(n, b); ok || err != nil {
				return err
			}
			t, err := decodeBody(b)
			if err != nil {
				return fmt.Errorf("engine snapshot: released body %d: %w", o.log.len(), err)
			}
			return add(t)
		})
		if err != nil {
			return nil, err
		}
	}
	if o.log.len() != n {
		return nil, fmt.Errorf("engine snapshot: %d released bodies stored apart, %d given", n, o.log.len())
	}
	if marks != nil {
		// The releases above marked the chunks again, from stubs where a
		// body went straight to the spill: the snapshot's marks are the
		// running engine's.
		o.marks, o.bodyBytes = marks, s.BodyBytes
	}
	return o.restoreAlerts(&s)
}

// restoreAlerts links the restored alerts to their members and the
// pending ones, once the bodies are back.
func (o *Online) restoreAlerts(s *onlineSnapshot) (*Online, error) {
	o.restoreGone() // close_gone.go
	byID := map[string]*Alert{}
	for _, a := range o.alerts {
		byID[a.ID] = a
		if s.Names == nil {
			// Taken before cores' names were kept, when IDs were unique:
			// each name is the first (only) use of its ID.
			a.names = map[string]int{}
			for _, id := range a.Core {
				if i, ok := o.find(id); ok {
					a.names[id] = i
				}
			}
		}
	}
	if len(s.PendingAt) > 0 {
		if len(s.PendingAt) != len(s.Pending) {
			return nil, fmt.Errorf("engine snapshot: %d pending alerts by index, %d by id", len(s.PendingAt), len(s.Pending))
		}
		for k, i := range s.PendingAt {
			if i < 0 || i >= len(o.alerts) || o.alerts[i].ID != s.Pending[k] {
				return nil, fmt.Errorf("engine snapshot: pending alert %s at %d of %d alerts", s.Pending[k], i, len(o.alerts))
			}
			o.pending = append(o.pending, o.alerts[i])
		}
		return o, nil
	}
	for _, id := range s.Pending {
		a, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("engine snapshot: pending alert %s is not among the alerts", id)
		}
		o.pending = append(o.pending, a)
	}
	return o, nil
}

// BodyFileSize is the size of the spill file, buffered bytes included (0
// before it is opened).
func (o *Online) BodyFileSize() int64 { return o.spill.end }

// restoreMarks reads a snapshot's chunk marks (nil if it has none).
func restoreMarks(s *onlineSnapshot, n int) ([]chunkMark, error) {
	if s.MarkStarts == nil {
		return nil, nil
	}
	starts, err := readDeltas(s.MarkStarts)
	if err != nil {
		return nil, fmt.Errorf("engine snapshot: chunk marks: %w", err)
	}
	bytes, err := readDeltas(s.MarkBytes)
	if err != nil {
		return nil, fmt.Errorf("engine snapshot: chunk marks: %w", err)
	}
	if len(starts) != len(bytes) || len(starts) != (n+logChunkSize-1)>>logChunkBits {
		return nil, fmt.Errorf("engine snapshot: %d and %d chunk marks for %d released", len(starts), len(bytes), n)
	}
	marks := make([]chunkMark, len(starts))
	for c := range marks {
		marks[c] = chunkMark{Start: starts[c], Bytes: bytes[c]}
	}
	return marks, nil
}

// unmarked gives an engine restored from a body file taken before chunk
// marks were kept a mark for each chunk: as if released at the restore,
// the newest start, with no bytes before it, so that retention counts
// their age from now and their bytes as all released after them.
func (o *Online) unmarked(n int) {
	o.marks = make([]chunkMark, (n+logChunkSize-1)>>logChunkBits)
	for c := range o.marks {
		o.marks[c] = chunkMark{Start: o.lastStart()}
	}
	o.bodyBytes = 0
}
