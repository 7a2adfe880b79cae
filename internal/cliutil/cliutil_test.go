package cliutil

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func parseFlags(args []string, stderr io.Writer) (*bool, error) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fail := fs.Bool("fail", false, "make the run step fail")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return fail, nil
}

func TestMain_ExitCodesAndErrorLines(t *testing.T) {
	run := func(_ context.Context, fail *bool, stdout, _ io.Writer) (int, error) {
		if *fail {
			return 1, errors.New("boom")
		}
		io.WriteString(stdout, "ran\n")
		return 1, nil
	}
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantErr  string // a line stderr must hold; "" for none from Main
	}{
		{args: nil, wantCode: 1},
		{args: []string{"-h"}, wantCode: ExitOK},
		{args: []string{"-nosuch"}, wantCode: ExitError, wantErr: "streamcheck x: flag provided but not defined: -nosuch\n"},
		{args: []string{"-fail"}, wantCode: ExitError, wantErr: "streamcheck x: boom\n"},
	} {
		var outb, errb strings.Builder
		code := Main(context.Background(), "streamcheck x", tc.args, &outb, &errb, parseFlags, run)
		if code != tc.wantCode {
			t.Errorf("%q: exit %d, want %d", tc.args, code, tc.wantCode)
		}
		if ran := outb.String() == "ran\n"; ran != (tc.wantCode == 1) {
			t.Errorf("%q: stdout %q; the run step ran: %v, want %v", tc.args, outb.String(), ran, tc.wantCode == 1)
		}
		if tc.wantErr != "" && !strings.HasSuffix(errb.String(), tc.wantErr) {
			t.Errorf("%q: stderr %q, want it to end with %q", tc.args, errb.String(), tc.wantErr)
		}
		if tc.wantErr == "" && strings.Contains(errb.String(), "streamcheck x:") {
			t.Errorf("%q: stderr %q holds an error line", tc.args, errb.String())
		}
	}
}

// The run step's stderr must take writes from several goroutines: run
// with -race, an unlocked strings.Builder here is a reported race.
func TestMain_StderrIsSharedSafely(t *testing.T) {
	var errb strings.Builder
	const writers, lines = 4, 100
	code := Main(context.Background(), "streamcheck x", nil, io.Discard, &errb, parseFlags,
		func(_ context.Context, _ *bool, _, stderr io.Writer) (int, error) {
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for range lines {
						io.WriteString(stderr, "line\n")
					}
				})
			}
			wg.Wait()
			return ExitOK, nil
		})
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if got := strings.Count(errb.String(), "line\n"); got != writers*lines {
		t.Errorf("%d whole lines, want %d", got, writers*lines)
	}
}

func TestParseFlagsOnly_RefusesPositionalArguments(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	n := fs.Int("n", 0, "")
	if err := ParseFlagsOnly(fs, []string{"-n", "3"}); err != nil || *n != 3 {
		t.Errorf("-n 3: n %d, err %v", *n, err)
	}
	err := ParseFlagsOnly(fs, []string{"-n", "3", "stray"})
	if err == nil || err.Error() != `unexpected argument "stray"` {
		t.Errorf("-n 3 stray: err %v, want unexpected argument", err)
	}
	if err := ParseFlagsOnly(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: err %v, want flag.ErrHelp", err)
	}
}

func TestStatusLines_WritesUntilStopped(t *testing.T) {
	var out strings.Builder
	var calls atomic.Int32
	twice := make(chan struct{})
	stop := StatusLines(&LockedWriter{W: &out}, "streamcheck x", time.Millisecond, func() string {
		if calls.Add(1) == 2 {
			close(twice)
		}
		return "ok"
	})
	select {
	case <-twice:
	case <-time.After(10 * time.Second):
		t.Fatal("no second status line within 10s")
	}
	stop()
	after := calls.Load()
	time.Sleep(20 * time.Millisecond)
	if calls.Load() != after {
		t.Errorf("status lines after stop returned: %d, then %d", after, calls.Load())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != int(after) {
		t.Errorf("%d lines written, %d asked for", len(lines), after)
	}
	for _, l := range lines {
		if l != "streamcheck x: ok" {
			t.Errorf("line %q, want %q", l, "streamcheck x: ok")
		}
	}
}

func TestStatusLines_ZeroIntervalIsOff(t *testing.T) {
	var out strings.Builder
	stop := StatusLines(&out, "streamcheck x", 0, func() string { return "ok" })
	time.Sleep(5 * time.Millisecond)
	stop()
	if out.Len() != 0 {
		t.Errorf("wrote %q with interval 0", out.String())
	}
}

// -h prints the flag set's usage on stdout (help asked for); a bad flag
// prints it on stderr with the error. What parse's stderr receives after
// parse returns (a logger it kept) is not held back.
func TestMain_HelpOnStdout(t *testing.T) {
	var kept io.Writer
	parse := func(args []string, stderr io.Writer) (*bool, error) {
		kept = stderr
		return parseFlags(args, stderr)
	}
	run := func(_ context.Context, _ *bool, _, _ io.Writer) (int, error) {
		io.WriteString(kept, "logged\n")
		return ExitOK, nil
	}
	var outb, errb strings.Builder
	if code := Main(context.Background(), "streamcheck x", []string{"-h"}, &outb, &errb, parse, run); code != ExitOK {
		t.Fatalf("-h: exit %d", code)
	}
	if !strings.Contains(outb.String(), "-fail") || errb.Len() != 0 {
		t.Errorf("-h: stdout %q, stderr %q; want the usage on stdout only", outb.String(), errb.String())
	}
	outb.Reset()
	errb.Reset()
	if code := Main(context.Background(), "streamcheck x", []string{"-nosuch"}, &outb, &errb, parse, run); code != ExitError {
		t.Fatalf("-nosuch: exit %d", code)
	}
	if !strings.Contains(errb.String(), "-fail") || outb.Len() != 0 {
		t.Errorf("-nosuch: stdout %q, stderr %q; want the usage on stderr only", outb.String(), errb.String())
	}
	errb.Reset()
	if code := Main(context.Background(), "streamcheck x", nil, &outb, &errb, parse, run); code != ExitOK {
		t.Fatalf("no args: exit %d", code)
	}
	if errb.String() != "logged\n" {
		t.Errorf("a write to parse's stderr during run: stderr %q, want %q", errb.String(), "logged\n")
	}
}
