package runcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBatchesKeepDeadLetters: the line source sends events in batches
// whose values share one array, and the arrays are filled again once the
// loop handled a batch (source.go). Over thousands of lines (many
// batches, recycled arrays) with bad lines among them, every dead letter
// must carry its own line's text and number, byte for byte, and the
// summary its count, whether the input comes at once or trickles through
// a pipe in small pieces (batches then go out whenever the reader would
// wait). A value kept past its batch, or an array refilled too early,
// shows as a dead letter with another line's text.
func TestBatchesKeepDeadLetters(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var in bytes.Buffer
	want := map[int]string{} // line -> text of a bad line
	start := int64(1_700_000_000_000_000_000)
	lines := 3000
	for i := range lines {
		line := i + 1
		st := start + int64(i)*1000
		switch rng.IntN(40) {
		case 0:
			// Not JSON: undecodable, its text padded to a random length.
			text := fmt.Sprintf("bad line %d %s", line, strings.Repeat("#", rng.IntN(600)))
			want[line] = text
			in.WriteString(text + "\n")
			continue
		case 1:
			// JSON but invalid (end before start).
			text := fmt.Sprintf(`{"session":"s%d","id":"bad-%d","start":%d,"end":%d,"status":"committed","ops":[["w","k%d",%d]]}`, i%7, line, st, st-1, i%50, line)
			want[line] = text
			in.WriteString(text + "\n")
			continue
		}
		fmt.Fprintf(&in, `{"session":"s%d","id":"t%d","start":%d,"end":%d,"status":"committed","ops":[["w","k%d",%d]]}`+"\n", i%7, line, st, st+500, i, line)
	}
	for _, mode := range []string{"buffered", "pipe"} {
		t.Run(mode, func(t *testing.T) {
			dl := filepath.Join(t.TempDir(), "dead.jsonl")
			var r io.Reader = bytes.NewReader(in.Bytes())
			if mode == "pipe" {
				pr, pw := io.Pipe()
				go func() {
					b := in.Bytes()
					for len(b) > 0 {
						n := min(len(b), 1+rng.IntN(5000))
						pw.Write(b[:n])
						b = b[n:]
						if rng.IntN(50) == 0 {
							time.Sleep(time.Millisecond)
						}
					}
					pw.Close()
				}()
				r = pr
			}
			var out, errb bytes.Buffer
			Main(context.Background(), []string{"--http=", "--status=0", "--dead-letter", dl}, r, &out, &errb)
			b, err := os.ReadFile(dl)
			if err != nil {
				t.Fatal(err)
			}
			got := map[int]string{}
			for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
				var d struct {
					Line  int
					Event string
				}
				if err := json.Unmarshal(l, &d); err != nil {
					t.Fatalf("dead letter %q: %v", l, err)
				}
				got[d.Line] = d.Event
			}
			if len(got) != len(want) {
				t.Errorf("%d dead letters, want %d\nstderr: %s", len(got), len(want), errb.String())
			}
			for line, text := range want {
				if got[line] != text {
					t.Errorf("line %d: dead letter %q, want %q", line, got[line], text)
				}
			}
			if !strings.Contains(errb.String(), fmt.Sprintf("%d transactions checked", lines-len(want))) {
				t.Errorf("summary: %s", errb.String())
			}
		})
	}
}
