package runcmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fillReader yields n bytes of filler: a line longer than memory should
// ever hold, produced without holding it.
type fillReader struct{ n int64 }

func (f *fillReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), f.n))
	for i := range p[:k] {
		p[i] = '7'
	}
	f.n -= int64(k)
	return k, nil
}

// TestMaxEventBytesOnStdin: --max-event-bytes holds for stdin (and
// followed files, the same reader) as for Kafka: a longer line is
// dead-lettered as oversized with its line number and length, never
// decoded, and the lines around it are checked. A 256 MiB line is read
// in bounded memory: it was accumulated whole before.
func TestMaxEventBytesOnStdin(t *testing.T) {
	dir := t.TempDir()
	dl := filepath.Join(dir, "dead.jsonl")
	w := `{"id":"W","start":0,"end":10,"status":"committed","ops":[["w","x",1]]}` + "\n"
	// A valid event of 2,000 bytes: over a limit of 1,000, it must not
	// be checked (it was).
	big := fmt.Sprintf(`{"id":"B","start":20,"end":30,"status":"committed","ops":[["w","y","%s"]]}`, strings.Repeat("v", 2000)) + "\n"
	r := `{"id":"R","start":40,"end":50,"status":"committed","ops":[["r","x",null]]}` + "\n"
	const huge = 256 << 20
	in := io.MultiReader(strings.NewReader(w+big), strings.NewReader(`{"id":"H","ops":"`), &fillReader{huge}, strings.NewReader("\"}\n"+r))
	var out, errb bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code := Main(context.Background(), []string{"--http=", "--max-event-bytes", "1000", "--lateness", "5", "--tick", "1",
		"--initial-state", "empty", "--status", "0", "--dead-letter", dl}, in, &out, &errb)
	runtime.ReadMemStats(&after)
	// R reads x's initial value after W wrote it: a stale read, alerted.
	if code != ExitAnomaly || !strings.Contains(out.String(), `"R"`) {
		t.Errorf("exit %d, alerts %s\n%s", code, out.String(), errb.String())
	}
	b, _ := os.ReadFile(dl)
	got := string(b)
	for _, want := range []string{
		`"reason":"oversized","detail":"` + fmt.Sprint(len(big)-1) + ` bytes \u003e max_event_bytes 1000","source":"-","line":2`,
		`"reason":"oversized","detail":"` + fmt.Sprint(huge+len(`{"id":"H","ops":"`)+2) + ` bytes \u003e max_event_bytes 1000","source":"-","line":3`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dead letters lack %s:\n%.600s", want, got)
		}
	}
	if !strings.Contains(got, `"truncated":true`) {
		t.Errorf("the 256 MiB line's dead letter does not say it is truncated:\n%.600s", got)
	}
	if !strings.Contains(errb.String(), "2 transactions checked") {
		t.Errorf("want W and R checked, B and H set aside:\n%s", errb.String())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > huge/4 {
		t.Errorf("reading a %d-byte line allocated %d bytes: not bounded by --max-event-bytes", huge, alloc)
	}
}
