package runcmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestQuietFileReleased: a followed file whose last events hold an
// anomaly (a stale read: R reads the initial x after W wrote it), and no
// more writes. Its last transactions start within the lateness of the
// newest start, so the watermark never passed them and they were never
// checked while the file stayed quiet; after idle_release of quiet they
// are, and the alert comes without another event or a stop. An event
// that arrives afterwards and starts before the released watermark is
// dead-lettered as late; one after it is checked.
func TestQuietFileReleased(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "events.jsonl")
	dl := filepath.Join(dir, "dead.jsonl")
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, `{"id":"a%d","start":%d,"end":%d,"status":"committed","ops":[["w","k%d",1]]}`+"\n", i, i*1000, i*1000+10, i)
	}
	b.WriteString(`{"id":"W","start":100000,"end":100010,"status":"committed","ops":[["w","x",1]]}` + "\n")
	b.WriteString(`{"id":"R","start":100020,"end":100030,"status":"committed","ops":[["r","x",null]]}` + "\n")
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, logs := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"--http=", "--source", src, "--lateness", "50000", "--tick", "1000", "--initial-state", "empty",
			"--poll", "5ms", "--status", "20ms", "--idle-release", "300ms", "--dead-letter", dl}, nil, out, logs)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"R"`) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), `"core":["R","W"]`) && !strings.Contains(out.String(), `"core":["W","R"]`) {
		cancel()
		<-done
		t.Fatalf("no alert for the stale read at the quiet file's end:\nalerts: %s\nlog: %s", out.String(), logs.String())
	}
	f, err := os.OpenFile(src, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// L starts before the released watermark: late. N after it: checked.
	f.WriteString(`{"id":"L","start":100025,"end":100040,"status":"committed","ops":[["w","y",1]]}` + "\n")
	f.WriteString(`{"id":"N","start":200000,"end":200010,"status":"committed","ops":[["w","y",2]]}` + "\n")
	f.Close()
	for !strings.Contains(logs.String(), "run: 24 messages;") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitAnomaly {
		t.Errorf("exit %d after the alert, want %d:\n%s", code, ExitAnomaly, logs.String())
	}
	d, _ := os.ReadFile(dl)
	if !strings.Contains(string(d), `"reason":"late"`) || !strings.Contains(string(d), `"id":"L"`) || strings.Contains(string(d), `"id":"N"`) {
		t.Errorf("dead letters after the release: %s", d)
	}
}
