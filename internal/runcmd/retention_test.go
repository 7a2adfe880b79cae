package runcmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamcheck/streamcheck/internal/gen"
)

// TestRetentionBoundsBodyFile: `run` with a state directory and a small
// state.retention.max_bytes, checkpointing often, raises the alerts (ids
// included) of a run that keeps every body, and its body file holds on
// disk a fraction of its length: retention punched out what it deleted.
func TestRetentionBoundsBodyFile(t *testing.T) {
	cfg, _ := gen.Preset("blindw-rw")
	cfg.Txns, cfg.Seed = 40000, 3
	cfg.Inject = []string{"lost-update", "write-skew", "lost-update", "write-skew"}
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := native(t, h)
	run := func(maxBytes string) (ids []string, stderr, dir string) {
		t.Helper()
		dir = t.TempDir()
		conf := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(conf, []byte("state:\n  retention:\n    max_bytes: "+maxBytes+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(dir, "events.jsonl")
		if err := os.WriteFile(src, []byte(in), 0o600); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		errb := &syncBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int)
		go func() {
			done <- Main(ctx, []string{"--config", conf, "--http=", "--source", src, "--state-dir", filepath.Join(dir, "st"), "--checkpoint-every", "2000",
				"--lateness", "5ms", "--indoubt", "1ms", "--initial-state", "empty", "--tick", "20ms", "--poll", "5ms", "--status", "20ms"}, nil, &out, errb)
		}()
		want := fmt.Sprintf("run: %d messages;", len(h.Txns))
		deadline := time.Now().Add(2 * time.Minute)
		for !strings.Contains(errb.String(), want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		if code := <-done; code != ExitOK {
			t.Fatalf("exit %d\n%s", code, errb.String())
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if i := strings.Index(l, `"id":"`); i >= 0 {
				ids = append(ids, l[i+6:i+6+19])
			}
			if strings.Contains(l, "past_retention") {
				t.Errorf("alert with a proof past retention: %s", l)
			}
		}
		return ids, errb.String(), filepath.Join(dir, "st")
	}
	all, _, _ := run("0")
	bounded, stderr, dir := run("200000")
	if len(all) < 4 || !slices.Equal(all, bounded) {
		t.Fatalf("alerts %v with retention, %v keeping every body", bounded, all)
	}
	if !strings.Contains(stderr, "evicted bodies past retention") {
		t.Fatalf("nothing past retention:\n%s", stderr)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "streamcheck-bodies"), &st); err != nil {
		t.Fatal(err)
	}
	if used := st.Blocks * 512; used > st.Size/2 {
		t.Fatalf("body file: %d bytes long, %d on disk", st.Size, used)
	}
	t.Logf("body file: %d bytes long, %d on disk", st.Size, st.Blocks*512)
}
