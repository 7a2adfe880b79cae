package state

import (
	"os"

	"golang.org/x/sys/unix"
)

// punchHole frees the blocks of f before off, keeping its size, so that
// every offset after it stays where it was.
func punchHole(f *os.File, off int64) error {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, off)
}
