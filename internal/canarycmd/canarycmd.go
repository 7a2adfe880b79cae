// Package canarycmd is `streamcheck canary`: it drives the canary
// workloads (package canary) against a real PostgreSQL or MySQL/MariaDB,
// records every transaction (package record) and checks the stream in
// process with `streamcheck run`, or writes it to a file for a separate
// run or check.
package canarycmd

import (
	"context"
	"fmt"
	"io"
)

// Exit codes, as check's and run's.
const (
	ExitOK      = 0
	ExitAnomaly = 1
	ExitError   = 2
)

// Main runs the command.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "streamcheck canary: not built yet")
	return ExitError
}
