// Package cliutil owns the shell that the long-running subcommands
// (run, canary, demo) share around their own parse and run steps: a
// stderr that their goroutines may write to at once, the exit codes for
// help and for errors, the "streamcheck NAME: error" line, flags-only
// command lines and the periodic status line. Each command keeps its
// flags, its signal handling and the text of its status line.
//
// It also owns the exit status rule that check and run (at the end of its
// input) share, Outcome.ExitCode (exitcode.go): 2 input error or no
// transactions > 1 anomaly > 3 unknown or partial > 0. One function, so
// that the README's promise that run exits as check does on the same
// bytes cannot drift.
package cliutil

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sync"
	"time"
)

// Exit codes that every command gives alike; an anomaly's code (1) is the
// command's own to return from its run step.
const (
	ExitOK    = 0
	ExitError = 2
)

// Main parses args and runs the command, with stderr wrapped so that the
// command's goroutines (and a checker it embeds) may share it. --help is
// ExitOK; a parse or run error is printed as "NAME: error" and is
// ExitError; otherwise the run step's code stands.
func Main[C any](ctx context.Context, name string, args []string, stdout, stderr io.Writer,
	parse func(args []string, stderr io.Writer) (C, error),
	run func(ctx context.Context, cfg C, stdout, stderr io.Writer) (int, error),
) int {
	stderr = &LockedWriter{W: stderr}
	cfg, err := parse(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintln(stderr, name+":", err)
		return ExitError
	}
	code, err := run(ctx, cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return ExitError
	}
	return code
}

// LockedWriter serializes writes from several goroutines, so that lines
// written whole are never interleaved.
type LockedWriter struct {
	mu sync.Mutex
	W  io.Writer
}

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}

// ParseFlagsOnly parses args with fs and refuses positional arguments,
// which these commands do not take: a stray word is more likely a
// mistyped flag than something to ignore.
func ParseFlagsOnly(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// StatusLines writes "NAME: " and line() to w every interval, from its own
// goroutine, until stop is called; stop returns once no line is being
// written, so that the summary that follows is the last thing on w. An
// interval <= 0 writes nothing.
func StatusLines(w io.Writer, name string, interval time.Duration, line func() string) (stop func()) {
	if interval <= 0 {
		return func() {}
	}
	t := time.NewTicker(interval)
	done := make(chan struct{})
	var writer sync.WaitGroup
	writer.Go(func() {
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintln(w, name+":", line())
			}
		}
	})
	return func() {
		t.Stop()
		close(done)
		writer.Wait()
	}
}
