package online

import (
	"fmt"
	"io"
	"sync"
)

// BodyFile is the file that holds the bodies of evicted transactions
// (spill.go has its format), as the engine uses it: emptied for a new
// engine or cut back to a checkpoint's length, appended to, read at
// offsets, synced before a checkpoint counts on it, and freed below a
// cut. The engine does no IO itself: state.FileBodies is the file on
// disk, MemBodyFile one in memory (tests, and callers without a disk).
//
// Write, ReadAt, Start and Resume are called by the engine's goroutine
// only; Sync and Punch may run on another one while it writes (a
// checkpoint's sync, retention's punch).
type BodyFile interface {
	// Start empties the file for a new engine (whatever an earlier run
	// left there is not its), creating it if need be.
	Start() error
	// Resume opens the file as a checkpoint left it: end bytes, the
	// rest (written after that checkpoint) cut off; appends go after
	// them. An error says the file is shorter than end or cannot be
	// opened.
	Resume(end int64) error
	io.ReaderAt
	// Write appends to the file's end.
	io.Writer
	// Sync makes what was written durable.
	Sync() error
	// Punch frees the bytes before off, keeping every offset after it
	// where it was (errors.ErrUnsupported where the system cannot).
	Punch(off int64) error
	// Durable says whether the file outlives the engine (a checkpointed
	// run's state directory): SnapshotDurable and RestoreOnlineAt keep
	// every body there. A file that is not durable lives exactly as long
	// as the engine.
	Durable() bool
	// Name names the file in errors.
	Name() string
}

// MemBodyFile is a BodyFile in memory. A durable one stands for a file
// that outlives an engine: a second engine may Resume it (restart tests).
type MemBodyFile struct {
	mu      sync.Mutex
	b       []byte
	punched int64
	durable bool
	name    string
}

// NewMemBodyFile returns an empty body file in memory; durable says
// whether it stands for a checkpointed run's file.
func NewMemBodyFile(durable bool) *MemBodyFile {
	name := "the in-memory body file"
	if durable {
		name = "the durable in-memory body file"
	}
	return &MemBodyFile{durable: durable, name: name}
}

// Start empties the file.
func (m *MemBodyFile) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b, m.punched = m.b[:0], 0
	return nil
}

// Resume cuts the file back to end bytes.
func (m *MemBodyFile) Resume(end int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if int64(len(m.b)) < end {
		return fmt.Errorf("engine: body file %s: %d bytes, the checkpoint counts %d (the file was cut short after it was synced)", m.name, len(m.b), end)
	}
	m.b = m.b[:end]
	m.punched = min(m.punched, end)
	return nil
}

// ReadAt reads the file's bytes at off.
func (m *MemBodyFile) ReadAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off < 0 {
		return 0, fmt.Errorf("engine: body file %s: read at %d", m.name, off)
	}
	if off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Write appends p.
func (m *MemBodyFile) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b = append(m.b, p...)
	return len(p), nil
}

// Sync does nothing: memory is as durable as it gets.
func (m *MemBodyFile) Sync() error { return nil }

// Punch notes that the bytes before off are free (they stay readable:
// the engine must not read them, which Punched lets a test check).
func (m *MemBodyFile) Punch(off int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.punched = max(m.punched, off)
	return nil
}

// Punched is how much of the file Punch freed.
func (m *MemBodyFile) Punched() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.punched
}

// Durable says whether the file stands for a durable one.
func (m *MemBodyFile) Durable() bool { return m.durable }

// Name names the file.
func (m *MemBodyFile) Name() string { return m.name }

// Bytes is a copy of the file's bytes (tests).
func (m *MemBodyFile) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.b...)
}

// bodiesOrMem is f, or a body file in memory when f is nil.
func bodiesOrMem(f BodyFile) BodyFile {
	if f == nil {
		return NewMemBodyFile(false)
	}
	return f
}
