//go:build unix

package state

import (
	"os"
	"syscall"
)

// diskBytes is what a file takes on disk: a file with holes takes less
// than its length.
func diskBytes(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return min(fi.Size(), int64(st.Blocks)*512)
	}
	return fi.Size()
}
