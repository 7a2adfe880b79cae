package state_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/online"
	"github.com/streamcheck/streamcheck/state"
)

// TestFileBodiesAgreeWithMemory holds the body file on disk to the one in
// memory (online.MemBodyFile, the naive model): random appends, reads at
// random offsets (past the end included), resumes at a random length and
// restarts leave the same bytes and give the same reads.
func TestFileBodiesAgreeWithMemory(t *testing.T) {
	dir := t.TempDir()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		disk := state.NewFileBodies(filepath.Join(dir, "bodies"))
		mem := online.NewMemBodyFile(true)
		files := []online.BodyFile{disk, mem}
		for _, f := range files {
			if err := f.Start(); err != nil {
				t.Fatal(err)
			}
		}
		size := int64(0)
		for step := range 200 {
			switch op := rng.IntN(10); {
			case op < 6:
				b := make([]byte, rng.IntN(300))
				for i := range b {
					b[i] = byte(rng.IntN(256))
				}
				for _, f := range files {
					if n, err := f.Write(b); err != nil || n != len(b) {
						t.Fatalf("seed %d step %d: write %d: %d, %v", seed, step, len(b), n, err)
					}
				}
				size += int64(len(b))
			case op < 9:
				off := rng.Int64N(size + 50)
				n := rng.IntN(200)
				var got [2][]byte
				var errs [2]error
				for k, f := range files {
					got[k] = make([]byte, n)
					var m int
					m, errs[k] = f.ReadAt(got[k], off)
					got[k] = got[k][:m]
				}
				if !bytes.Equal(got[0], got[1]) || (errs[0] == io.EOF) != (errs[1] == io.EOF) {
					t.Fatalf("seed %d step %d: read %d at %d: disk %d bytes (%v), memory %d bytes (%v)", seed, step, n, off, len(got[0]), errs[0], len(got[1]), errs[1])
				}
			default:
				// A restart at a checkpoint's length: a fresh handle on
				// disk, the same one in memory.
				end := rng.Int64N(size + 1)
				disk = state.NewFileBodies(filepath.Join(dir, "bodies"))
				files[0] = disk
				for _, f := range files {
					if err := f.Resume(end); err != nil {
						t.Fatalf("seed %d step %d: resume at %d of %d: %v", seed, step, end, size, err)
					}
				}
				size = end
			}
		}
		// A file shorter than the checkpoint says is an error for both.
		for _, f := range []online.BodyFile{state.NewFileBodies(filepath.Join(dir, "bodies")), mem} {
			if err := f.Resume(size + 1); err == nil {
				t.Fatalf("seed %d: %s resumed past its end", seed, f.Name())
			}
		}
	}
}
