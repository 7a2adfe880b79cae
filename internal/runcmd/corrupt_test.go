package runcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/state"
)

// corruptDir runs a followed file of n events with a state directory
// until it has read them all, then stops it (a checkpoint); it returns
// the run's arguments.
func corruptDir(t *testing.T, dir string, n int) []string {
	t.Helper()
	src := filepath.Join(dir, "events.jsonl")
	var b strings.Builder
	for i := range n {
		s := int64(i) * 100
		fmt.Fprintf(&b, `{"id":"t%03d","start":%d,"end":%d,"status":"committed","ops":[["w","key-%03d",%d],["r","key-%03d",null]]}`+"\n",
			i, s, s+50, i, i, (i+1)%n)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--http=", "--source", src, "--state-dir", filepath.Join(dir, "st"), "--lateness", "5",
		"--tick", "1", "--poll", "5ms", "--status", "10ms", "--initial-state", "empty"}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int)
	go func() { done <- Main(ctx, args, nil, io.Discard, logs) }()
	want := fmt.Sprintf("run: %d messages;", n)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), want) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("first run: exit %d: %s", code, logs.String())
	}
	return args
}

// restartCorrupt runs args again on the damaged directory: it must stop
// with exit 2 and the one message that names the damage and the way out.
func restartCorrupt(t *testing.T, args []string, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	logs := &syncBuffer{}
	done := make(chan int)
	go func() { done <- Main(ctx, args, nil, io.Discard, logs) }()
	var code int
	select {
	case code = <-done:
	case <-time.After(2 * time.Second):
		// Still running: it took the damaged directory for a good one.
		cancel()
		code = <-done
		t.Fatalf("restart on a damaged state directory ran on (exit %d after a stop): %s", code, logs.String())
	}
	l := logs.String()
	if code != ExitError || !strings.Contains(l, "state directory corrupt: ") || !strings.Contains(l, "to recover: move ") ||
		strings.Contains(l, "goroutine ") || strings.Contains(l, "panic") {
		t.Fatalf("restart on a damaged state directory: exit %d, want %d with a clear message:\n%s", code, ExitError, l)
	}
	for _, n := range names {
		if !strings.Contains(l, n) {
			t.Errorf("the message does not name %q:\n%s", n, l)
		}
	}
	t.Log(l[strings.LastIndex(l, "streamcheck run: state directory corrupt"):])
}

// TestCorruptBodyFile: one bit flipped in a body of the state
// directory's body file (a key read back at restart) stops the restart
// with "state directory corrupt", the file and the record's offset, exit
// 2. Before, the restart read the other key and ran on with it.
func TestCorruptBodyFile(t *testing.T) {
	dir := t.TempDir()
	args := corruptDir(t, dir, 200)
	path := filepath.Join(dir, "st", "streamcheck-bodies")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(b, []byte("key-150"))
	if i < 0 {
		t.Fatalf("key-150 not in the body file (%d bytes)", len(b))
	}
	b[i+2] ^= 0x01 // key-150 -> kex-150
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	restartCorrupt(t, args, path, "byte offset ")
}

// TestCorruptPebbleTable: garbled Pebble tables in the state directory
// stop the restart with "state directory corrupt" naming the table,
// exit 2, and no panic. Before, Pebble's corruption report panicked on
// a background goroutine: a goroutine dump and exit 2 from the runtime,
// which took this test's process down with it.
func TestCorruptPebbleTable(t *testing.T) {
	dir := t.TempDir()
	args := corruptDir(t, dir, 200)
	// The run's checkpoints are in Pebble's log; a flush makes tables.
	st, err := state.Open(filepath.Join(dir, "st"), state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DB().Flush(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, _ := filepath.Glob(filepath.Join(dir, "st", "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("no table after a flush")
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
	restartCorrupt(t, args, filepath.Base(ssts[0]))
}
