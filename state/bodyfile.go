package state

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// FileBodies is the engine's body file on disk (online.BodyFile; the
// records' format is the engine's, online/spill.go). With a path it is
// the durable body file of a checkpointed run (Store.BodyFile names it):
// Start truncates it, Resume cuts it back to a checkpoint's length.
// Without one it is a temporary file, unlinked as soon as it is created:
// it lives exactly as long as the engine, and a crash leaves nothing
// behind.
//
// The engine's goroutine starts, resumes, writes and reads it; Sync and
// Punch may run on another goroutine meanwhile (both act on the open
// descriptor, which the mutex hands over).
type FileBodies struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// NewFileBodies returns the body file at path ("" for a temporary one),
// opened by the engine's first Start or Resume.
func NewFileBodies(path string) *FileBodies { return &FileBodies{path: path} }

// Start opens the file empty: at the path, truncated (whatever an earlier
// run left there is not this engine's), or a new unlinked temporary file.
func (b *FileBodies) Start() error {
	var f *os.File
	var err error
	if b.path != "" {
		f, err = os.OpenFile(b.path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	} else {
		f, err = os.CreateTemp("", "streamcheck-bodies-*")
		if err == nil {
			// Unlinked now: the open descriptor keeps the data (POSIX).
			_ = os.Remove(f.Name())
		}
	}
	if err != nil {
		return err
	}
	b.set(f)
	return nil
}

// Resume opens the durable file as a checkpoint left it: end bytes, the
// rest (written after that checkpoint) cut off, appends after them.
func (b *FileBodies) Resume(end int64) error {
	if b.path == "" {
		return fmt.Errorf("a temporary body file cannot be resumed")
	}
	f, err := os.OpenFile(b.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() < end {
		err = fmt.Errorf("%d bytes, the checkpoint counts %d (the file was cut short after it was synced)", fi.Size(), end)
	}
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", b.path, err)
	}
	b.set(f)
	return nil
}

// set makes f the open file, closing the one before.
func (b *FileBodies) set(f *os.File) {
	b.mu.Lock()
	old := b.f
	b.f = f
	b.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
}

// file is the open file.
func (b *FileBodies) file() (*os.File, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f == nil {
		return nil, fmt.Errorf("body file %s: not opened", b.Name())
	}
	return b.f, nil
}

// ReadAt reads at off.
func (b *FileBodies) ReadAt(p []byte, off int64) (int, error) {
	f, err := b.file()
	if err != nil {
		return 0, err
	}
	return f.ReadAt(p, off)
}

// Write appends p.
func (b *FileBodies) Write(p []byte) (int, error) {
	f, err := b.file()
	if err != nil {
		return 0, err
	}
	return f.Write(p)
}

// Sync makes what was written durable.
func (b *FileBodies) Sync() error {
	f, err := b.file()
	if err != nil {
		return err
	}
	return f.Sync()
}

// Punch frees the file's blocks before off, keeping its size
// (errors.ErrUnsupported where the system cannot).
func (b *FileBodies) Punch(off int64) error {
	f, err := b.file()
	if err != nil {
		return err
	}
	return punchHole(f, off)
}

// Durable says whether the file has a path.
func (b *FileBodies) Durable() bool { return b.path != "" }

// Name is the path, or says the file is temporary.
func (b *FileBodies) Name() string {
	if b.path != "" {
		return b.path
	}
	return "the temporary spill file"
}
