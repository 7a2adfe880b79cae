//go:build !unix

package state

import "os"

// diskBytes is a file's length where its blocks are not known.
func diskBytes(fi os.FileInfo) int64 { return fi.Size() }
