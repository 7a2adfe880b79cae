package ingest

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// bigNative is a native history large enough to be decoded in parallel,
// with blank lines and a last line without a newline.
func bigNative(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"session":"s%d","id":"t%d","start":%d,"end":%d,"status":"committed","ops":[["r","k%d",null],["w","k%d",%d],["append","l",%d]]}`, i%7, i, 10*i, 10*i+5, i%13, i%11, i, i)
		b.WriteByte('\n')
		if i%1000 == 999 {
			b.WriteString("  \n")
		}
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestParallelDecodeEqualsSequential: chunking is invisible: the same
// transactions, ops and positions as decoding line by line.
func TestParallelDecodeEqualsSequential(t *testing.T) {
	all := bigNative(20000)
	if len(all) < 2*parallelMin {
		t.Fatalf("input of %d bytes is too small to be split", len(all))
	}
	var st Stats
	h, err := readNativeAll(all, "big", &st)
	if err != nil {
		t.Fatal(err)
	}
	var d NativeDecoder
	var want []history.Txn
	off := int64(0)
	for i, line := range strings.SplitAfter(string(all), "\n") {
		if strings.TrimSpace(line) != "" {
			tx, err := d.Decode([]byte(line), history.Pos{Source: "big", Line: i + 1, Offset: off})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, tx)
		}
		off += int64(len(line))
	}
	if !reflect.DeepEqual(h.Txns, want) {
		t.Fatalf("parallel decode differs: %d vs %d transactions", len(h.Txns), len(want))
	}
	if st.Txns != len(want) || st.Records != len(want) {
		t.Fatalf("stats %+v for %d transactions", st, len(want))
	}
}

// TestParallelDecodeFirstErrorWins: with bad lines in two chunks, the error
// names the earlier line, as a sequential read would.
func TestParallelDecodeFirstErrorWins(t *testing.T) {
	lines := strings.Split(string(bigNative(20000)), "\n")
	lines[15000] = `{"id":"bad-late","ops":[["x","k",1]]}`
	lines[9000] = `{"id":"bad-early","ops":[["r","k"]]}`
	_, _, err := ReadHistory(strings.NewReader(strings.Join(lines, "\n")), "big")
	if err == nil || !strings.Contains(err.Error(), "big:9001") {
		t.Fatalf("error %v, want one naming big:9001", err)
	}
}
