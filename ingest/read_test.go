package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// sameTxn compares two transactions, ignoring Pos and the nil/empty
// distinction of slices (both mean "none").
func sameTxn(a, b *history.Txn) bool {
	if a.ID != b.ID || a.Session != b.Session || a.HasSession != b.HasSession ||
		a.HasTime != b.HasTime || a.Status != b.Status || len(a.Ops) != len(b.Ops) {
		return false
	}
	if a.HasTime && (a.Start != b.Start || a.End != b.End) {
		return false
	}
	for i := range a.Ops {
		x, y := &a.Ops[i], &b.Ops[i]
		if x.Kind != y.Kind || x.Key != y.Key || x.IsList != y.IsList || len(x.List) != len(y.List) {
			return false
		}
		if !x.IsList && x.Value != y.Value {
			return false
		}
		for j := range x.List {
			if x.List[j] != y.List[j] {
				return false
			}
		}
	}
	return true
}

func txnString(t *history.Txn) string {
	return fmt.Sprintf("%s sess=%q/%v time=%v[%d,%d] %s", render(t), t.Session, t.HasSession, t.HasTime, t.Start, t.End, t.Status)
}

// render is Txn.Compact with values in canonical text, so that 1 and "1"
// stay apart.
func render(t *history.Txn) string {
	var b strings.Builder
	b.WriteString(t.ID)
	if t.HasTime {
		fmt.Fprintf(&b, "[%d,%d]", t.Start, t.End)
	}
	for i, op := range t.Ops {
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(", ")
		}
		if op.IsList {
			fmt.Fprintf(&b, "%s %s %v", op.Kind, op.Key, op.List)
		} else {
			fmt.Fprintf(&b, "%s %s %s", op.Kind, op.Key, op.Value)
		}
	}
	var ann []string
	if t.Status != history.Committed {
		ann = append(ann, t.Status.String())
	}
	if t.HasSession {
		ann = append(ann, "session "+t.Session)
	}
	if len(ann) > 0 {
		b.WriteString(" (" + strings.Join(ann, ", ") + ")")
	}
	return b.String()
}

func diffHistories(t *testing.T, what string, got, want *history.History) {
	t.Helper()
	if len(got.Txns) != len(want.Txns) {
		t.Errorf("%s: %d txns, want %d", what, len(got.Txns), len(want.Txns))
	}
	for i := range min(len(got.Txns), len(want.Txns)) {
		if !sameTxn(&got.Txns[i], &want.Txns[i]) {
			t.Errorf("%s: txn %d:\n got  %s\n want %s", what, i, txnString(&got.Txns[i]), txnString(&want.Txns[i]))
		}
	}
}

func readString(t *testing.T, text string) (*history.History, Format, Stats, error) {
	t.Helper()
	return ReadHistoryStats(strings.NewReader(text), "test")
}

// The sample files describe the same histories in the three formats; they
// must decode to the same transactions.
func TestSamplesAgree(t *testing.T) {
	for _, base := range []string{"list-append", "rw-register", "lost-update"} {
		want, f, err := ReadFile(filepath.Join("testdata", base+".jsonl"))
		if err != nil || f != FormatNative {
			t.Fatalf("%s.jsonl: %v %v", base, f, err)
		}
		for ext, wantFormat := range map[string]Format{".edn": FormatElleEDN, ".json": FormatElleJSON} {
			got, f, err := ReadFile(filepath.Join("testdata", base+ext))
			if err != nil {
				t.Fatalf("%s%s: %v", base, ext, err)
			}
			if f != wantFormat {
				t.Errorf("%s%s: format %v, want %v", base, ext, f, wantFormat)
			}
			diffHistories(t, base+ext, got, want)
		}
	}
}

func TestSampleStats(t *testing.T) {
	_, _, st, err := ReadFileStats("testdata/list-append.edn")
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Records: 14, Txns: 6, IgnoredNemesis: 1, IgnoredNonTxn: 2, Unfinished: 1}
	if st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

func TestCompletionsOnly(t *testing.T) {
	h, f, err := ReadFile("testdata/completions-only.edn")
	if err != nil {
		t.Fatal(err)
	}
	if f != FormatElleEDN {
		t.Errorf("format %v", f)
	}
	want, err := history.ParseCompact(`
		1 append 5 1, r 5 [1] (session 0)
		3 append 5 2, r 6 null (session 1)
		5 append 6 1 (unknown, session 2)
		7 append 6 9 (aborted, session 0)
		9 r 5 [1 2], r 6 null (session 0)`)
	if err != nil {
		t.Fatal(err)
	}
	diffHistories(t, "completions-only", h, want)
}

func TestGzipAndStdin(t *testing.T) {
	plain, err := os.ReadFile("testdata/list-append.edn")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := ReadFile("testdata/list-append.edn")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	dir := t.TempDir()
	gzPath := filepath.Join(dir, "h.edn.gz")
	if err := os.WriteFile(gzPath, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, f, err := ReadFile(gzPath)
	if err != nil || f != FormatElleEDN {
		t.Fatalf("gzip: %v %v", f, err)
	}
	diffHistories(t, "gzip", got, want)

	// "-" is standard input.
	old := os.Stdin
	defer func() { os.Stdin = old }()
	in, err := os.Open(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	os.Stdin = in
	got, _, err = ReadFile("-")
	if err != nil {
		t.Fatal(err)
	}
	diffHistories(t, "stdin", got, want)
	if got.Txns[0].Pos.Source != "-" {
		t.Errorf("stdin source %q", got.Txns[0].Pos.Source)
	}

	// A corrupt gzip stream is an error, not a short history.
	bad := z.Bytes()[:z.Len()/2]
	if _, _, err := ReadHistory(bytes.NewReader(bad), "cut.gz"); err == nil {
		t.Error("truncated gzip accepted")
	}
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
		err  string
	}{
		{"", FormatNative, ""},
		{"  \n", FormatNative, ""},
		{`{"status":"committed","ops":[]}`, FormatNative, ""},
		{`{"type":"x","ops":[]}`, FormatNative, ""},
		{`{"type":"invoke","f":"txn"}`, FormatElleJSON, ""},
		{`[{"type":"invoke"}]`, FormatElleJSON, ""},
		{`{":type":":invoke"}`, FormatElleJSON, ""},
		{`[]`, FormatElleJSON, ""},
		{`[ ]`, FormatElleJSON, ""},
		{`{:type :invoke}`, FormatElleEDN, ""},
		{`[{:type :invoke}]`, FormatElleEDN, ""},
		{`; comment`, FormatElleEDN, ""},
		{`({:type :ok})`, FormatElleEDN, ""},
		{`{"a":1}`, 0, "neither"},
		{`x`, 0, "cannot tell"},
	} {
		f, err := detect([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("detect(%q) = %v, %v; want error %q", tc.in, f, err, tc.err)
			}
			continue
		}
		if err != nil || f != tc.want {
			t.Errorf("detect(%q) = %v, %v; want %v", tc.in, f, err, tc.want)
		}
	}
}

// TestReadHistoryErrors: whole-history errors, each a *history.Error that
// names a line and, where there is one, the field.
func TestReadHistoryErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		field    string
		msg      string
	}{
		{"duplicate id", `{"id":"a","status":"committed","ops":[]}
{"id":"a","status":"committed","ops":[]}`, 2, "id", "duplicate id"},
		{"end before start", `{"id":"a","start":5,"end":4,"status":"committed","ops":[]}`, 1, "end", "before start"},
		{"list and register", `{"id":"a","status":"committed","ops":[["append","k",1]]}

{"id":"b","status":"committed","ops":[["w","k",1]]}`, 3, "ops", "list and as a register"},
		{"bad line 2", `{"id":"a","status":"committed","ops":[]}
{"id":"b","status":"committed","ops":[["w","k",9223372036854775808]]}`, 2, "ops[0]", "out of int64 range"},
		{"elle double invoke", `{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}
{:type :invoke, :process 0, :f :txn, :value [[:r 1 nil]]}`, 2, "process", "invokes again"},
		{"elle orphan completion", `{:type :invoke, :process 1, :f :txn, :value [[:r 1 nil]]}
{:type :ok, :process 0, :f :txn, :value [[:r 1 nil]]}`, 2, "type", "no invocation"},
		{"elle bad type", `{:type :invoke, :process 1, :f :txn, :value [[:r 1 nil]]}
{:type :okay, :process 1, :f :txn, :value [[:r 1 nil]]}`, 2, "type", "unknown type"},
		{"elle mismatched completion", `[{:type :invoke, :process 1, :f :txn, :value [[:w 1 2]]}
 {:type :ok, :process 1, :f :txn, :value [[:w 1 3]]}]`, 2, "value", "does not match"},
		{"elle json big int", `[{"type":"invoke","process":1,"f":"txn","value":[["w",1,2]]},
{"type":"ok","process":1,"f":"txn","value":[["w",1,9223372036854775808]]}]`, 2, "value[0]", "out of int64 range"},
		{"elle edn big int", "{:type :ok, :process 1, :f :txn, :value [[:w 1 2]]}\n\n{:type :ok, :process 1, :f :txn, :value [[:w 1 9223372036854775808N]]}", 3, ":value[0]", "out of int64 range"},
		{"elle edn duplicate key", `{:type :ok, :type :ok, :f :txn, :value []}`, 1, ":type", "given twice"},
		{"elle edn float key", `{:type :ok, :f :txn, :value [[:r 1.5 nil]]}`, 1, ":value[0]", "key"},
		{"elle edn unclosed", `[{:type :ok, :f :txn, :value []}`, 1, "", "not closed"},
		{"elle completion before invocation time", `{:type :invoke, :time 10, :process 1, :f :txn, :value [[:r 1 nil]]}
{:type :ok, :time 5, :process 1, :f :txn, :value [[:r 1 nil]]}`, 2, "time", "before invocation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, _, err := readString(t, tc.in)
			if err == nil {
				t.Fatalf("accepted: %d txns", len(h.Txns))
			}
			if h != nil {
				t.Errorf("history returned with error")
			}
			var he *history.Error
			if !errors.As(err, &he) {
				t.Fatalf("error %T %v is not a *history.Error", err, err)
			}
			if he.Pos.Line != tc.line || he.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q (line %d, field %q); want line %d, field %q, containing %q", err, he.Pos.Line, he.Field, tc.line, tc.field, tc.msg)
			}
		})
	}
}

// Lines longer than the read buffer, CRLF endings and a last line with no
// newline are read whole.
func TestNativeLongLines(t *testing.T) {
	var want []history.Txn
	var b []byte
	for i := range 3 {
		tx := history.Txn{ID: fmt.Sprint(i), Status: history.Committed}
		for j := range 8000 * (i + 1) {
			tx.Ops = append(tx.Ops, history.Op{Kind: history.Append, Key: history.IntValue(int64(j % 7)), Value: history.IntValue(int64(j))})
		}
		want = append(want, tx)
		b = AppendNative(b, &tx)
		if i < 2 {
			b = append(b, "\r\n"...)
		}
	}
	if len(b) < 3*peekSize {
		t.Fatalf("test lines too short: %d bytes", len(b))
	}
	h, _, err := ReadHistory(bytes.NewReader(b), "long")
	if err != nil {
		t.Fatal(err)
	}
	diffHistories(t, "long", h, &history.History{Txns: want})
	for i, tx := range h.Txns {
		if tx.Pos.Line != i+1 {
			t.Errorf("txn %d at line %d", i, tx.Pos.Line)
		}
	}
	// Offsets point at line starts.
	if h.Txns[1].Pos.Offset != int64(bytes.Index(b, []byte("\r\n"))+2) {
		t.Errorf("offset %d", h.Txns[1].Pos.Offset)
	}
}

// Some converters keep Clojure's keyword spelling in JSON.
func TestElleJSONKeywordSpelling(t *testing.T) {
	h, f, err := ReadHistory(strings.NewReader(`{":type":":invoke",":process":0,":f":":txn",":value":[[":append",":k",1],[":r",":k",null]]}
{":type":":ok",":process":0,":f":":txn",":value":[[":append",":k",1],[":r",":k",[1]]]}
{":type":":info",":process":":nemesis",":f":":kill"}`), "t")
	if err != nil || f != FormatElleJSON {
		t.Fatal(f, err)
	}
	want, _, _, _ := readString(t, "{:type :ok, :process 0, :f :txn, :value [[:append :k 1] [:r :k [1]]]}")
	want.Txns[0].ID = "1"
	diffHistories(t, "keywords", h, want)
}
