package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// FormatVersion is the layout this package writes and reads (FORMAT.md).
// Bump it on any change a previous version would misread.
const FormatVersion uint32 = 4

// formatBodiesInPebble is version 3 before the engine's bodies moved to
// their own file (BodyFile): its checkpoints keep them under r/. This
// binary reads it, and marks the directory version 4 when it opens it, so
// that an earlier binary, which would look for every body under r/,
// refuses the directory instead.
const formatBodiesInPebble uint32 = 2

// formatBodiesNoCRC is version 4 before the body file's records had
// checksums. This binary reads its body file as it is (the engine
// snapshot says where checksummed records begin) and marks the directory
// version 4 when it opens it: a version 3 binary would read the records
// appended since with their checksums as part of the next record, and
// refuses the directory instead ("written by a newer streamcheck").
const formatBodiesNoCRC uint32 = 3

// bodyFileName is the engine's body file in the directory (FORMAT.md).
const bodyFileName = "streamcheck-bodies"

var (
	// ErrFormat: the directory holds a format this binary cannot read.
	ErrFormat = errors.New("state: unsupported format")
	// ErrLocked: another process has the directory open.
	ErrLocked = errors.New("state: directory in use by another process")
	// ErrSource: the directory checkpoints a different source.
	ErrSource = errors.New("state: directory belongs to another source")
	// ErrCorrupt: Pebble found damaged data in the directory (a block
	// whose checksum does not match, a table it cannot decode). The
	// error is a *CorruptError naming what.
	ErrCorrupt = errors.New("state: data corrupt")
)

// CorruptError is damage Pebble found in a state directory, in a read,
// a write or in the background (compactions, table statistics).
type CorruptError struct {
	Dir string
	// Files are the damaged files Pebble named (tables, blob files).
	Files []string
	// Op is what the store was doing when it saw the damage.
	Op  string
	Err error
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "state: %s is damaged", e.Dir)
	if len(e.Files) > 0 {
		fmt.Fprintf(&b, ": Pebble file %s", strings.Join(e.Files, ", "))
	}
	if e.Op != "" {
		fmt.Fprintf(&b, " (found while %s)", e.Op)
	}
	if e.Err != nil {
		msg, _, _ := strings.Cut(e.Err.Error(), "\n")
		fmt.Fprintf(&b, ": %s", msg)
	}
	return b.String()
}

// Unwrap makes errors.Is find ErrCorrupt, and pebble.IsCorruptionError
// Pebble's mark.
func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// damage collects the files Pebble reported corrupt (its DataCorruption
// event, which may come from a background goroutine).
type damage struct {
	mu    sync.Mutex
	files []string
	first error
}

func (d *damage) note(info pebble.DataCorruptionInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.files, info.Path) {
		d.files = append(d.files, info.Path)
	}
	if d.first == nil {
		d.first = info.Details
	}
}

// seen returns the files reported so far and the first report's error.
func (d *damage) seen() ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.files), d.first
}

// ErrBodyGone is returned by Body for a body that was deleted by the
// retention bound (or never stored).
type ErrBodyGone struct {
	ID string
	// Cutoff is the event time of the newest body retention deleted:
	// bodies at or before it may be gone (math.MinInt64 if none was).
	Cutoff int64
}

func (e *ErrBodyGone) Error() string {
	return fmt.Sprintf("state: body of %s is gone (retention deleted bodies up to event time %d, or it was never evicted)", e.ID, e.Cutoff)
}

// Retention bounds the evicted bodies kept. Zero fields are unbounded.
type Retention struct {
	// MaxAge: a body whose event time lies more than MaxAge before the
	// newest stored body's is deleted (event time, so a replay deletes
	// the same bodies).
	MaxAge int64
	// MaxBytes: the oldest bodies are deleted until the stored bodies
	// total at most MaxBytes.
	MaxBytes int64
}

// Options configure Open.
type Options struct {
	// FS is the filesystem; nil is the real one (tests use
	// vfs.NewCrashableMem).
	FS vfs.FS
	// Logger receives Pebble's messages; nil discards them.
	Logger *slog.Logger
	// Retention bounds evicted bodies.
	Retention Retention
	// Source names what the directory checkpoints (for example
	// "kafka:txns" or a file path). The first Open records it; a later
	// Open with a different non-empty Source fails with ErrSource, since
	// its offsets would mean nothing.
	Source string

	_ struct{}
}

// Store is an open state directory.
type Store struct {
	db   *pebble.DB
	dir  string
	opts Options
	// dmg is the damage Pebble reported; once any is, every operation
	// fails with it (a store that read one bad block may hold others).
	dmg *damage
	// outMu orders outbox read-modify-writes (Put's sequence, Done).
	outMu sync.Mutex
	// seq is the last checkpoint's sequence number once Save has read or
	// written it: a Get per checkpoint reached into sstables full of
	// bodies, a fifth of a checkpoint's time.
	seq      uint64
	seqKnown bool
}

// Keys, as drawn in FORMAT.md: every kind is one contiguous range.
var (
	keyFormat  = []byte("m/format")
	keySource  = []byte("m/source")
	keySeq     = []byte("c/seq")
	keyEngine  = []byte("c/engine")
	keyWindow  = []byte("c/window")
	keyRunner  = []byte("c/runner")
	prefOff    = []byte("c/off/")
	prefCnt    = []byte("c/cnt/")
	prefAlert  = []byte("a/")
	prefOutbox = []byte("x/")
	prefBodyT  = []byte("t/")
	prefBodyI  = []byte("i/")
	prefRel    = []byte("r/")
	prefIDs    = []byte("w/ids/")
	keyBytes   = []byte("b/bytes")
	keyCutoff  = []byte("b/cutoff")
	keyOutSeq  = []byte("o/seq")
)

// pebbleLogger routes Pebble's messages to slog (Pebble would print to
// stderr otherwise).
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

// Fatalf must not return (Pebble's contract); a panic lets the process
// die with the message while deferred cleanups still run.
func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble")
	panic("pebble: " + msg)
}

// Open opens (creating if needed) the state directory dir.
func Open(dir string, opts Options) (*Store, error) {
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state: create %s: %w", dir, err)
	}
	// A directory with files but no Pebble database is not ours; Pebble
	// would happily create one among them.
	popts := &pebble.Options{FS: fs, Logger: pebbleLogger{lg}, FormatMajorVersion: pebble.FormatValueSeparation}
	// Pebble's default answer to a corrupt file is its logger's Fatalf,
	// which panics, on whatever goroutine found it (often a background
	// one, where nothing can recover): the run died with a goroutine
	// dump. The damage is recorded instead, and the store's next
	// operation returns it as a *CorruptError.
	dmg := &damage{}
	popts.EventListener = &pebble.EventListener{
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			lg.Error("state directory: Pebble found damaged data", "file", info.Path, "err", info.Details)
			dmg.note(info)
		},
	}
	popts.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		// Most bytes are released bodies, one value of some hundred KB per
		// checkpoint, written once and read only on restart. In the LSM
		// every compaction rewrote (and snappy re-encoded) them: about 1.5 s
		// of CPU per 500K transactions, on the core the loop shares with
		// the fetchers. In blob files they stay where they were written.
		return pebble.ValueSeparationPolicy{Enabled: true, MinimumSize: 4 << 10, MaxBlobReferenceDepth: 10,
			RewriteMinimumAge: time.Minute, TargetGarbageRatio: 0.5}
	}
	// MinLZ where Pebble has it fast (amd64): the same CPU as the default
	// snappy, 12% less disk (1M blindw-rw: 101 MB, snappy 115 MB, none
	// 228 MB).
	popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionFastest })
	db, err := openPebble(dir, popts)
	if err != nil {
		// Another process: flock's EAGAIN; this process: Pebble's own
		// registry, which has no sentinel.
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EWOULDBLOCK) ||
			strings.Contains(err.Error(), "lock held by current process") {
			return nil, fmt.Errorf("%w: %s is locked (is another streamcheck run using it?)", ErrLocked, dir)
		}
		if pebble.IsCorruptionError(err) {
			files, _ := dmg.seen()
			return nil, &CorruptError{Dir: dir, Files: files, Op: "opening it", Err: err}
		}
		return nil, fmt.Errorf("state: open %s: %w", dir, err)
	}
	s := &Store{db: db, dir: dir, opts: opts, dmg: dmg}
	if err := s.checkFormat(); err != nil {
		err = s.guardErr("opening it", err)
		db.Close()
		return nil, err
	}
	return s, nil
}

// openPebble is pebble.Open with a corruption panic turned into its
// error: Pebble returns most corruption as errors, but the state
// boundary does not count on it.
func openPebble(dir string, popts *pebble.Options) (db *pebble.DB, err error) {
	defer recoverCorrupt(&err)
	return pebble.Open(dir, popts)
}

// recoverCorrupt turns a panic whose value is a Pebble corruption error
// into that error; any other panic goes on.
func recoverCorrupt(err *error) {
	if r := recover(); r != nil {
		if e, ok := r.(error); ok && pebble.IsCorruptionError(e) {
			*err = e
			return
		}
		panic(r)
	}
}

// guard is deferred by the store's operations: a Pebble corruption
// panic becomes an error, and a corruption error, or damage Pebble
// reported in the background, becomes a *CorruptError naming the files.
func (s *Store) guard(op string, err *error) {
	if r := recover(); r != nil {
		e, ok := r.(error)
		if !ok || !pebble.IsCorruptionError(e) {
			panic(r)
		}
		*err = e
	}
	*err = s.guardErr(op, *err)
}

func (s *Store) guardErr(op string, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return err
	}
	files, first := s.dmg.seen()
	switch {
	case err != nil && pebble.IsCorruptionError(err):
		return &CorruptError{Dir: s.dir, Files: files, Op: op, Err: err}
	case len(files) > 0:
		// Found in the background: this operation may have succeeded,
		// but the directory is not to be trusted any more.
		return &CorruptError{Dir: s.dir, Files: files, Op: op, Err: errors.Join(first, err)}
	}
	return err
}

// checkFormat enforces S2 and records or compares the source.
func (s *Store) checkFormat() error {
	v, ok, err := s.get(keyFormat)
	if err != nil {
		return err
	}
	if !ok {
		empty, err := s.empty()
		if err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: %s holds data without a streamcheck format version (not a streamcheck state directory?)", ErrFormat, s.dir)
		}
		b := s.db.NewBatch()
		b.Set(keyFormat, binary.BigEndian.AppendUint32(nil, FormatVersion), nil)
		if s.opts.Source != "" {
			b.Set(keySource, []byte(s.opts.Source), nil)
		}
		return b.Commit(pebble.Sync)
	}
	if len(v) != 4 {
		return fmt.Errorf("%w: %s: format key of %d bytes (want 4)", ErrFormat, s.dir, len(v))
	}
	got := binary.BigEndian.Uint32(v)
	if got == formatBodiesInPebble || got == formatBodiesNoCRC {
		if err := s.db.Set(keyFormat, binary.BigEndian.AppendUint32(nil, FormatVersion), pebble.Sync); err != nil {
			return fmt.Errorf("state: marking %s format version %d: %w", s.dir, FormatVersion, err)
		}
		got = FormatVersion
	}
	if got != FormatVersion {
		newer := ""
		if got > FormatVersion {
			newer = " (written by a newer streamcheck; upgrade this binary)"
		}
		return fmt.Errorf("%w: %s has state format version %d, this binary reads version %d%s", ErrFormat, s.dir, got, FormatVersion, newer)
	}
	if s.opts.Source == "" {
		return nil
	}
	src, ok, err := s.get(keySource)
	if err != nil {
		return err
	}
	switch {
	case !ok:
		return s.db.Set(keySource, []byte(s.opts.Source), pebble.Sync)
	case string(src) != s.opts.Source:
		return fmt.Errorf("%w: %s checkpoints %q, not %q (use another state directory)", ErrSource, s.dir, src, s.opts.Source)
	}
	return nil
}

func (s *Store) empty() (bool, error) {
	it, err := s.db.NewIter(nil)
	if err != nil {
		return false, err
	}
	defer it.Close()
	return !it.First(), it.Error()
}

// BodyFile is where the engine keeps the bodies of the transactions it
// released (online.OnlineConfig.Bodies, as FileBodies): inside the locked
// directory, and synced by the engine before each checkpoint that
// counts on it.
func (s *Store) BodyFile() string { return filepath.Join(s.dir, bodyFileName) }

// Close closes the store; it releases the directory lock.
func (s *Store) Close() error { return s.db.Close() }

// DB exposes the Pebble handle for tests and diagnostics.
func (s *Store) DB() *pebble.DB { return s.db }

func (s *Store) get(k []byte) ([]byte, bool, error) {
	v, c, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("state: read %q: %w", k, err)
	}
	out := bytes.Clone(v)
	c.Close()
	return out, true, nil
}

// Checkpoint is everything `run` needs to resume as if it had not stopped.
type Checkpoint struct {
	// Seq numbers checkpoints from 1; Save assigns it.
	Seq uint64
	// Offsets[p] is the next offset to read from partition p.
	Offsets []int64
	// Engine, Window and Runner are the snapshots of the engine, the
	// window and the run loop, opaque here.
	Engine, Window, Runner []byte
	// Counters are totals as of the checkpoint (for example "accepted",
	// "dead-letters"), so a restart continues counting from them.
	Counters map[string]uint64
	// Released are the engine's released bodies from index ReleasedFrom
	// on (online.Online.SnapshotBodies). Save writes each once, so a
	// checkpoint costs the bodies released since the last one, not all;
	// Load returns every stored body, from index 0. An engine that keeps
	// its bodies in BodyFile hands over none.
	Released     [][]byte
	ReleasedFrom int
	// DropReleased deletes every body stored under r/: the engine was
	// restored from them and keeps its bodies in BodyFile since.
	DropReleased bool
	// WindowIDs are the window's IDs seen since the last checkpoint
	// (window.Window.SnapshotApart), stored once each like Released; Load
	// returns all of them, in order.
	WindowIDs []byte
}

// Body is an evicted transaction's body, stored until retention deletes
// it.
type Body struct {
	ID string
	// Time is its event time (end), which retention orders by.
	Time int64
	Data []byte
}

// Save writes a checkpoint, the ids of alerts emitted since the last one
// and newly evicted bodies, in one synced batch (S1), and applies the
// retention bound in the same batch. It sets c.Seq.
func (s *Store) Save(c *Checkpoint, alertIDs []string, bodies []Body) (err error) {
	defer s.guard("writing a checkpoint", &err)
	if !s.seqKnown {
		prev, _, err := s.get(keySeq)
		if err != nil {
			return err
		}
		if len(prev) == 8 {
			s.seq = binary.BigEndian.Uint64(prev)
		}
		s.seqKnown = true
	}
	c.Seq = s.seq + 1
	b := s.db.NewBatch()
	defer b.Close()
	seq := binary.BigEndian.AppendUint64(nil, c.Seq)
	b.Set(keySeq, seq, nil)
	b.Set(keyEngine, c.Engine, nil)
	b.Set(keyWindow, c.Window, nil)
	b.Set(keyRunner, c.Runner, nil)
	// Partitions that vanished must not linger with stale offsets.
	b.DeleteRange(prefOff, prefixEnd(prefOff), nil)
	for p, off := range c.Offsets {
		b.Set(offKey(p), binary.BigEndian.AppendUint64(nil, uint64(off)), nil)
	}
	b.DeleteRange(prefCnt, prefixEnd(prefCnt), nil)
	for name, v := range c.Counters {
		b.Set(append(bytes.Clone(prefCnt), name...), binary.BigEndian.AppendUint64(nil, v), nil)
	}
	for _, id := range alertIDs {
		b.Set(append(bytes.Clone(prefAlert), id...), seq, nil)
	}
	if c.DropReleased {
		b.DeleteRange(prefRel, prefixEnd(prefRel), nil)
	}
	if len(c.Released) > 0 {
		b.Set(relKey(c.ReleasedFrom), appendRun(nil, c.Released), nil)
	}
	if len(c.WindowIDs) > 0 {
		b.Set(binary.BigEndian.AppendUint64(bytes.Clone(prefIDs), c.Seq), c.WindowIDs, nil)
	}
	if err := s.addBodies(b, bodies); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("state: checkpoint %d: %w", c.Seq, err)
	}
	s.seq = c.Seq
	return nil
}

func relKey(i int) []byte { return binary.BigEndian.AppendUint64(bytes.Clone(prefRel), uint64(i)) }

func offKey(p int) []byte { return binary.BigEndian.AppendUint32(bytes.Clone(prefOff), uint32(p)) }

// prefixEnd is the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	e := bytes.Clone(p)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] < 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

// Load returns the last durable checkpoint, or ok=false if none was
// saved, with every released body in memory (LoadHeader and EachReleased
// read them one at a time).
func (s *Store) Load() (c *Checkpoint, ok bool, err error) {
	return s.load(true)
}

// LoadHeader is Load without the released bodies; EachReleased reads them.
func (s *Store) LoadHeader() (c *Checkpoint, ok bool, err error) {
	return s.load(false)
}

// EachReleased hands the released bodies of the last checkpoint to fn in
// index order; b is valid only during the call. Called after LoadHeader
// and before the next Save, it sees the same checkpoint.
func (s *Store) EachReleased(fn func(b []byte) error) (err error) {
	defer s.guard("reading the checkpoint's released bodies", &err)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefRel, UpperBound: prefixEnd(prefRel)})
	if err != nil {
		return err
	}
	return eachReleased(it, fn)
}

func eachReleased(it *pebble.Iterator, fn func(b []byte) error) error {
	n := uint64(0)
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()[len(prefRel):]
		if len(k) != 8 || binary.BigEndian.Uint64(k) != n {
			it.Close()
			return fmt.Errorf("%w: released body %q out of sequence (have %d)", ErrFormat, it.Key(), n)
		}
		v := it.Value()
		if len(v) == 0 || v[0] != bodyRun {
			// One body per key, as format 2 first wrote them.
			if err := fn(v); err != nil {
				it.Close()
				return err
			}
			n++
			continue
		}
		for v = v[1:]; len(v) > 0; n++ {
			l, w := binary.Uvarint(v)
			if w <= 0 || l > uint64(len(v)-w) {
				it.Close()
				return fmt.Errorf("%w: released bodies at %q cut short", ErrFormat, it.Key())
			}
			if err := fn(v[w : w+int(l)]); err != nil {
				it.Close()
				return err
			}
			v = v[w+int(l):]
		}
	}
	return it.Close()
}

// bodyRun is the first byte of an r/ value holding the run of bodies one
// checkpoint released (each a uvarint length, then the body), the form
// written now: one key per body cost Pebble a key's work per transaction
// in every flush and compaction. A value of one body (the older form)
// never starts with it: engine bodies begin with 0x01 or '{'.
const bodyRun = 0x02

func appendRun(dst []byte, bodies [][]byte) []byte {
	n := 1
	for _, b := range bodies {
		n += binary.MaxVarintLen64 + len(b)
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, bodyRun)
	for _, b := range bodies {
		dst = binary.AppendUvarint(dst, uint64(len(b)))
		dst = append(dst, b...)
	}
	return dst
}

func (s *Store) load(bodies bool) (c *Checkpoint, ok bool, err error) {
	defer s.guard("reading the checkpoint", &err)
	seq, ok, err := s.get(keySeq)
	if err != nil || !ok {
		return nil, false, err
	}
	if len(seq) != 8 {
		return nil, false, fmt.Errorf("%w: checkpoint sequence of %d bytes", ErrFormat, len(seq))
	}
	snap := s.db.NewSnapshot() // one consistent view of the batch
	defer snap.Close()
	c = &Checkpoint{Seq: binary.BigEndian.Uint64(seq), Counters: map[string]uint64{}}
	for _, f := range []struct {
		k   []byte
		dst *[]byte
	}{{keyEngine, &c.Engine}, {keyWindow, &c.Window}, {keyRunner, &c.Runner}} {
		v, cl, err := snap.Get(f.k)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		*f.dst = bytes.Clone(v)
		cl.Close()
	}
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: prefIDs, UpperBound: prefixEnd(prefIDs)})
	if err != nil {
		return nil, false, err
	}
	for it.First(); it.Valid(); it.Next() {
		c.WindowIDs = append(c.WindowIDs, it.Value()...)
	}
	if err := it.Close(); err != nil {
		return nil, false, err
	}
	it, err = snap.NewIter(&pebble.IterOptions{LowerBound: prefOff, UpperBound: prefixEnd(prefOff)})
	if err != nil {
		return nil, false, err
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()[len(prefOff):]
		if len(k) != 4 || len(it.Value()) != 8 {
			it.Close()
			return nil, false, fmt.Errorf("%w: offset entry %q", ErrFormat, it.Key())
		}
		p := int(binary.BigEndian.Uint32(k))
		for len(c.Offsets) <= p {
			c.Offsets = append(c.Offsets, 0)
		}
		c.Offsets[p] = int64(binary.BigEndian.Uint64(it.Value()))
	}
	if err := it.Close(); err != nil {
		return nil, false, err
	}
	it, err = snap.NewIter(&pebble.IterOptions{LowerBound: prefCnt, UpperBound: prefixEnd(prefCnt)})
	if err != nil {
		return nil, false, err
	}
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) != 8 {
			it.Close()
			return nil, false, fmt.Errorf("%w: counter entry %q", ErrFormat, it.Key())
		}
		c.Counters[string(it.Key()[len(prefCnt):])] = binary.BigEndian.Uint64(it.Value())
	}
	if err := it.Close(); err != nil {
		return nil, false, err
	}
	if !bodies {
		return c, true, nil
	}
	it, err = snap.NewIter(&pebble.IterOptions{LowerBound: prefRel, UpperBound: prefixEnd(prefRel)})
	if err != nil {
		return nil, false, err
	}
	err = eachReleased(it, func(b []byte) error {
		c.Released = append(c.Released, bytes.Clone(b))
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return c, true, nil
}

// AlertEmitted reports whether a checkpoint recorded alert id as emitted.
func (s *Store) AlertEmitted(id string) (ok bool, err error) {
	defer s.guard("reading the emitted alerts", &err)
	_, ok, err = s.get(append(bytes.Clone(prefAlert), id...))
	return ok, err
}

// AlertIDs lists the ids of emitted alerts, sorted.
func (s *Store) AlertIDs() (ids []string, err error) {
	defer s.guard("reading the emitted alerts", &err)
	err = s.scan(prefAlert, func(k, _ []byte) error {
		ids = append(ids, string(k))
		return nil
	})
	return ids, err
}

// scan calls f with every key (without the prefix) and value under pre.
func (s *Store) scan(pre []byte, f func(k, v []byte) error) error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: pre, UpperBound: prefixEnd(pre)})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		if err := f(it.Key()[len(pre):], it.Value()); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// OutboxEntry is an alert some sink has not yet acknowledged.
type OutboxEntry struct {
	ID      string
	Payload []byte
	// Sinks still owed the alert.
	Sinks []string
}

// Put records an alert for delivery to sinks (S4), and its id as emitted
// (AlertEmitted), in one synced batch: a run replaying the stream after a
// crash knows the alert is already on its way. Putting an id again
// replaces its entry, which moves to the end of Pending's order and owes
// delivery to exactly the given sinks again (alerts.Outbox's contract).
func (s *Store) Put(id string, payload []byte, sinks []string) (err error) {
	defer s.guard("writing the alert outbox", &err)
	if id == "" {
		return errors.New("state: outbox put: empty id")
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	b := s.db.NewBatch()
	defer b.Close()
	seq, _, err := s.get(keySeq)
	if err != nil {
		return err
	}
	b.Set(append(bytes.Clone(prefAlert), id...), seq, nil)
	if len(sinks) > 0 {
		n, err := s.u64(keyOutSeq)
		if err != nil {
			return err
		}
		n++
		b.Set(keyOutSeq, binary.BigEndian.AppendUint64(nil, n), nil)
		sinks = slices.Compact(slices.Sorted(slices.Values(sinks)))
		b.Set(outboxKey(id), encodeOutbox(n, payload, sinks), nil)
	}
	return b.Commit(pebble.Sync)
}

// Done acknowledges the delivery of alert id to sink; once every sink has
// acknowledged it, the entry goes. Unknown ids and sinks are not an error
// (a redelivery after a restart may acknowledge twice).
func (s *Store) Done(id, sink string) (err error) {
	defer s.guard("writing the alert outbox", &err)
	s.outMu.Lock()
	defer s.outMu.Unlock()
	v, ok, err := s.get(outboxKey(id))
	if err != nil || !ok {
		return err
	}
	n, payload, sinks, err := decodeOutbox(v)
	if err != nil {
		return fmt.Errorf("state: outbox entry %s: %w", id, err)
	}
	keep := slices.DeleteFunc(sinks, func(x string) bool { return x == sink })
	if len(keep) == 0 {
		return s.db.Delete(outboxKey(id), pebble.Sync)
	}
	return s.db.Set(outboxKey(id), encodeOutbox(n, payload, keep), pebble.Sync)
}

// Pending lists the outbox, oldest Put first.
func (s *Store) Pending() (_ []OutboxEntry, err error) {
	defer s.guard("reading the alert outbox", &err)
	type entry struct {
		n uint64
		e OutboxEntry
	}
	var all []entry
	err = s.scan(prefOutbox, func(k, v []byte) error {
		n, payload, sinks, err := decodeOutbox(v)
		if err != nil {
			return fmt.Errorf("state: outbox entry %s: %w", k, err)
		}
		all = append(all, entry{n, OutboxEntry{ID: string(k), Payload: payload, Sinks: sinks}})
		return nil
	})
	sort.Slice(all, func(i, j int) bool { return all[i].n < all[j].n })
	out := make([]OutboxEntry, len(all))
	for i := range all {
		out[i] = all[i].e
	}
	return out, err
}

func outboxKey(id string) []byte { return append(bytes.Clone(prefOutbox), id...) }

// encodeOutbox: uvarint put sequence, uvarint sink count, each sink as
// uvarint length + bytes, then the payload.
func encodeOutbox(n uint64, payload []byte, sinks []string) []byte {
	b := binary.AppendUvarint(nil, n)
	b = binary.AppendUvarint(b, uint64(len(sinks)))
	for _, x := range sinks {
		b = binary.AppendUvarint(b, uint64(len(x)))
		b = append(b, x...)
	}
	return append(b, payload...)
}

func decodeOutbox(v []byte) (uint64, []byte, []string, error) {
	seq, k := binary.Uvarint(v)
	if k <= 0 {
		return 0, nil, nil, errors.New("bad sequence number")
	}
	v = v[k:]
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)) {
		return 0, nil, nil, errors.New("bad sink count")
	}
	v = v[k:]
	sinks := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(v)
		if k <= 0 || l > uint64(len(v)-k) {
			return 0, nil, nil, errors.New("bad sink name")
		}
		sinks = append(sinks, string(v[k:k+int(l)]))
		v = v[k+int(l):]
	}
	return seq, bytes.Clone(v), sinks, nil
}

func bodyTKey(t int64, id string) []byte {
	return append(append(bytes.Clone(prefBodyT), encodeTime(t)...), id...)
}

// addBodies stores bodies and deletes what retention no longer allows,
// in batch b.
func (s *Store) addBodies(b *pebble.Batch, bodies []Body) error {
	total, err := s.u64(keyBytes)
	if err != nil {
		return err
	}
	if len(bodies) == 0 && total == 0 {
		return nil
	}
	// Bodies are deleted in time order, so newest is the largest time
	// stored or added.
	newest := int64(-1 << 63)
	added := map[string]bool{}
	for _, bd := range bodies {
		if ok, err := s.hasBody(bd.ID); err != nil {
			return err
		} else if ok || added[bd.ID] {
			continue // evicted once; a replay after a crash adds it again
		}
		added[bd.ID] = true
		b.Set(bodyTKey(bd.Time, bd.ID), bd.Data, nil)
		b.Set(append(bytes.Clone(prefBodyI), bd.ID...), encodeTime(bd.Time), nil)
		total += uint64(len(bd.Data))
		newest = max(newest, bd.Time)
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefBodyT, UpperBound: prefixEnd(prefBodyT)})
	if err != nil {
		return err
	}
	if it.Last() {
		newest = max(newest, decodeTime(it.Key()[len(prefBodyT):]))
	}
	// Candidates for deletion in time order: stored ones, then the ones
	// this batch adds (sorted), merged by time.
	fresh := make([]Body, 0, len(bodies))
	for _, bd := range bodies {
		if added[bd.ID] {
			fresh = append(fresh, bd)
		}
	}
	sort.Slice(fresh, func(i, j int) bool {
		if fresh[i].Time != fresh[j].Time {
			return fresh[i].Time < fresh[j].Time
		}
		return fresh[i].ID < fresh[j].ID
	})
	r := s.opts.Retention
	over := func(t int64) bool {
		return (r.MaxAge > 0 && newest-t > r.MaxAge) || (r.MaxBytes > 0 && total > uint64(r.MaxBytes))
	}
	deleted, last := false, int64(0)
	valid := it.First()
	for valid || len(fresh) > 0 {
		var t int64
		var id string
		var size int
		var tk []byte
		stored := valid && (len(fresh) == 0 || bytes.Compare(it.Key(), bodyTKey(fresh[0].Time, fresh[0].ID)) < 0)
		if stored {
			tk = bytes.Clone(it.Key())
			t = decodeTime(tk[len(prefBodyT):])
			id, size = string(tk[len(prefBodyT)+8:]), len(it.Value())
		} else {
			t, id, size = fresh[0].Time, fresh[0].ID, len(fresh[0].Data)
			tk = bodyTKey(t, id)
		}
		if !over(t) {
			break
		}
		b.Delete(tk, nil)
		b.Delete(append(bytes.Clone(prefBodyI), id...), nil)
		total -= uint64(size)
		deleted, last = true, t
		if stored {
			valid = it.Next()
		} else {
			fresh = fresh[1:]
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	if deleted {
		b.Set(keyCutoff, encodeTime(last), nil)
	}
	b.Set(keyBytes, binary.BigEndian.AppendUint64(nil, total), nil)
	return nil
}

// encodeTime orders signed times as unsigned big-endian bytes.
func encodeTime(t int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(t)^(1<<63)) }

func decodeTime(b []byte) int64 { return int64(binary.BigEndian.Uint64(b) ^ (1 << 63)) }

func (s *Store) hasBody(id string) (bool, error) {
	_, ok, err := s.get(append(bytes.Clone(prefBodyI), id...))
	return ok, err
}

func (s *Store) u64(k []byte) (uint64, error) {
	v, ok, err := s.get(k)
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("%w: %s of %d bytes", ErrFormat, k, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Body returns an evicted transaction's body, or *ErrBodyGone.
func (s *Store) Body(id string) (_ []byte, err error) {
	defer s.guard("reading an evicted body", &err)
	tv, ok, err := s.get(append(bytes.Clone(prefBodyI), id...))
	if err != nil {
		return nil, err
	}
	if ok && len(tv) == 8 {
		v, ok, err := s.get(bodyTKey(decodeTime(tv), id))
		if err != nil {
			return nil, err
		}
		if ok {
			return v, nil
		}
	}
	c := int64(-1 << 63)
	if v, ok, err := s.get(keyCutoff); err != nil {
		return nil, err
	} else if ok && len(v) == 8 {
		c = decodeTime(v)
	}
	return nil, &ErrBodyGone{ID: id, Cutoff: c}
}

// BodyBytes is the total size of the stored bodies.
func (s *Store) BodyBytes() (int64, error) {
	n, err := s.u64(keyBytes)
	return int64(n), err
}

// SetFormatForTest overwrites the format version key, so tests can make a
// directory of a newer format.
func (s *Store) SetFormatForTest(v uint32) error {
	return s.db.Set(keyFormat, binary.BigEndian.AppendUint32(nil, v), pebble.Sync)
}

// Size is the on-disk size of the directory's files, for checkpoint size
// figures. The files are summed rather than taken from Pebble's metrics,
// which leave out the blob files of a reopened database (a restarted run
// reported 230 KB for a 190 MB directory).
// The body file counts by the blocks it holds: retention frees its old
// records by punching holes, which leave its length as it was.
func (s *Store) Size() int64 {
	fs := s.opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	names, err := fs.List(s.dir)
	if err != nil {
		return 0
	}
	var size int64
	for _, name := range names {
		if fi, err := fs.Stat(fs.PathJoin(s.dir, name)); err == nil && !fi.IsDir() {
			size += diskBytes(fi)
		}
	}
	return size
}

// stampLogName is the stamps' engine's call log in the directory
// (FORMAT.md).
const stampLogName = "streamcheck-stamps-log"

// StampLogFile is the path of the call log of `run --stamps`
// (stamponline): like the body file, synced before the Save whose
// snapshot counts its length and cut back to it on restore (S6).
func (s *Store) StampLogFile() string { return filepath.Join(s.dir, stampLogName) }
