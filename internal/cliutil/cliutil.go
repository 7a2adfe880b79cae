// Package cliutil owns the shell that the long-running subcommands
// (run, canary, demo) share around their own parse and run steps: a
// stderr that their goroutines may write to at once, the exit codes for
// help and for errors, help on stdout (a mistake's usage on stderr), the
// "streamcheck NAME: error" line, flags-only command lines and the
// periodic status line. Each command keeps its flags, its signal handling
// and the text of its status line.
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
// ExitOK and its text goes to stdout, as every command's help does (a user
// pipes it into less); a parse or run error is printed as "NAME: error"
// and is ExitError; otherwise the run step's code stands.
func Main[C any](ctx context.Context, name string, args []string, stdout, stderr io.Writer,
	parse func(args []string, stderr io.Writer) (C, error),
	run func(ctx context.Context, cfg C, stdout, stderr io.Writer) (int, error),
) int {
	locked := &LockedWriter{W: stderr}
	// The flag package prints the usage to the flag set's output before
	// Parse returns flag.ErrHelp, so what parse writes is held until its
	// result says where it belongs: stdout for help, stderr otherwise.
	held := &heldWriter{w: locked}
	stderr = held
	cfg, err := parse(args, held)
	if errors.Is(err, flag.ErrHelp) {
		held.release(stdout)
		return ExitOK
	}
	held.release(locked)
	if err != nil {
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

// heldWriter keeps what is written to it until release, then passes
// writes through to w: parse may keep its stderr (run's logger does), and
// those later writes must not be held.
type heldWriter struct {
	mu       sync.Mutex
	buf      []byte
	released bool
	w        io.Writer
}

func (h *heldWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	if !h.released {
		h.buf = append(h.buf, p...)
		h.mu.Unlock()
		return len(p), nil
	}
	h.mu.Unlock()
	return h.w.Write(p)
}

// release writes what was held to to, and lets later writes through.
func (h *heldWriter) release(to io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.buf) > 0 {
		to.Write(h.buf)
	}
	h.buf, h.released = nil, true
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
