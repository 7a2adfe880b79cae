//go:build !linux

package state

import (
	"errors"
	"os"
)

// punchHole is Linux's fallocate; elsewhere retention marks bodies gone
// but the file keeps their bytes.
func punchHole(*os.File, int64) error {
	return errors.ErrUnsupported
}
