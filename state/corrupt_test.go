package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

// flipTables garbles every Pebble table in dir: a byte in every 64
// past the first and before the footer.
func flipTables(t *testing.T, dir string) []string {
	t.Helper()
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(ssts) == 0 {
		t.Fatalf("no table in %s (%v)", dir, err)
	}
	for _, f := range ssts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := 64; i < len(b)-128; i += 64 {
			b[i] ^= 0x5a
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ssts
}

// TestCorruptTable: a state directory whose Pebble tables are garbled
// (a disk that returns other bytes) is reported by Open or by the first
// read as a *CorruptError naming the table, ErrCorrupt and Pebble's
// ErrCorruption (pebble.IsCorruptionError) both, with no panic. Before, Pebble's corruption report
// went to the logger's Fatalf, which panicked on a background goroutine
// and took the process down with a goroutine dump.
func TestCorruptTable(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for n := uint64(1); n <= 5; n++ {
		if err := s.Save(ckpt(n), []string{"alert-1"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DB().Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ssts := flipTables(t, dir)
	s, err = Open(dir, Options{})
	if err == nil {
		_, _, err = s.Load()
		if err == nil {
			_, err = s.AlertIDs()
		}
		s.Close()
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || !pebble.IsCorruptionError(err) {
		t.Fatalf("garbled tables: %v, want a *CorruptError", err)
	}
	if !strings.Contains(err.Error(), filepath.Base(ssts[0])) {
		t.Errorf("the error does not name the damaged table %s: %v", ssts[0], err)
	}
	t.Log(err)
}

// TestFormat3MarkedNewer: a version 3 directory (a body file without
// checksums) is opened and marked version 4, so that a version 3 binary,
// which would misread the checksummed records appended since, refuses it.
func TestFormat3MarkedNewer(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetFormatForTest(formatBodiesNoCRC); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(dir, Options{}); err != nil {
		t.Fatalf("a version 3 directory: %v", err)
	}
	defer s.Close()
	v, ok, err := s.get(keyFormat)
	if err != nil || !ok || len(v) != 4 || v[3] != byte(FormatVersion) || FormatVersion != 4 {
		t.Fatalf("format key after opening a version 3 directory: %x %v %v", v, ok, err)
	}
}
