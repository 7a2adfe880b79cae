package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// Fuzz targets. Each checks: no panic; every error is a *history.Error
// that names a line; every accepted input round-trips (written natively
// and read back, it gives the same transactions). FuzzNativeDecode also
// requires the encoding/json oracle to agree. Seeds: the sample files, the
// code below, and testdata/fuzz/<name>/.

func addSamples(f *testing.F, exts ...string) {
	for _, ext := range exts {
		names, _ := filepath.Glob(filepath.Join("testdata", "*"+ext))
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

func checkError(t *testing.T, err error, line int) {
	t.Helper()
	var he *history.Error
	if !errors.As(err, &he) {
		t.Fatalf("error %T %v is not a *history.Error", err, err)
	}
	if line > 0 && he.Pos.Line != line || line == 0 && he.Pos.Line < 1 {
		t.Fatalf("error %v names line %d, want %d", err, he.Pos.Line, line)
	}
}

// checkRoundTrip writes h natively and reads it back.
func checkRoundTrip(t *testing.T, h *history.History) {
	t.Helper()
	if len(h.Txns) == 0 {
		return
	}
	back, f, err := ReadHistory(bytes.NewReader(writeNative(h.Txns)), "rt")
	if err != nil || f != FormatNative {
		t.Fatalf("native round trip: %v %v", f, err)
	}
	if len(back.Txns) != len(h.Txns) {
		t.Fatalf("round trip: %d txns, want %d", len(back.Txns), len(h.Txns))
	}
	for i := range h.Txns {
		if !sameTxn(&back.Txns[i], &h.Txns[i]) {
			t.Fatalf("round trip of txn %d:\n got  %s\n want %s", i, txnString(&back.Txns[i]), txnString(&h.Txns[i]))
		}
	}
}

func FuzzNativeDecode(f *testing.F) {
	f.Add([]byte(`{"session":"c7","id":"c7-42","start":1763719200123456789,"end":1763719200125000000,"status":"committed","ops":[["r","x",3],["w","x",4],["append","l",17],["r","l",[3,17]]]}`))
	f.Add([]byte(`{"status":"unknown","ops":[["w","\u00e9\ud83d\ude00",1.0],["r",-0,null],["r",1,[true,"1",1]]],"extra":{"a":[{}]}}`))
	f.Add([]byte(`{"session":1,"id":9223372036854775807,"status":"aborted","ops":[["w",1,9223372036854775808]]}`))
	addSamples(f, ".jsonl")
	var d NativeDecoder
	f.Fuzz(func(t *testing.T, line []byte) {
		pos := history.Pos{Source: "fuzz", Line: 3, Offset: 10}
		got, err := d.Decode(line, pos)
		ref, refErr := oracleDecode(line, pos)
		// The fast path against the general decoder, in every mode
		// (native_fast_test.go).
		if _, ferr := fastAgainstSlow([][]byte{line}); ferr != nil {
			t.Fatal(ferr)
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("decoder error %v, oracle error %v", err, refErr)
		}
		rec := RecoverNative(line, pos) // never panics, on any line
		if err != nil {
			checkError(t, err, 3)
			return
		}
		// On an accepted line the lenient reading loses nothing.
		if rec.WildAll || len(rec.Wild) > 0 || len(rec.Txn.Ops) != len(got.Ops) || rec.Txn.HasTime != got.HasTime || rec.Txn.Start != got.Start {
			t.Fatalf("RecoverNative of an accepted line: %+v", rec)
		}
		if r := (history.Txn{ID: got.ID, Session: got.Session, HasSession: got.HasSession, HasTime: got.HasTime, Start: got.Start, End: got.End, Status: got.Status, Ops: rec.Txn.Ops}); !sameTxn(&r, &got) {
			t.Fatalf("RecoverNative ops %v, Decode %v", rec.Txn.Ops, got.Ops)
		}
		if !sameTxn(&got, &ref) {
			t.Fatalf("oracle disagrees:\n got    %s\n oracle %s", txnString(&got), txnString(&ref))
		}
		enc := AppendNative(nil, &got)
		back, err := d.Decode(enc, pos)
		if err != nil || !sameTxn(&back, &got) {
			t.Fatalf("round trip via %s: %v %s", enc, err, txnString(&back))
		}
	})
}

func fuzzElle(t *testing.T, data []byte, read func([]byte, string, *Stats) (*history.History, error)) {
	var st Stats
	h, err := read(data, "fuzz", &st)
	if err == nil {
		err = h.Validate()
	}
	if err != nil {
		checkError(t, err, 0)
		return
	}
	if st.Txns != len(h.Txns) {
		t.Fatalf("stats count %d txns, history has %d", st.Txns, len(h.Txns))
	}
	checkRoundTrip(t, h)
}

func FuzzElleEDN(f *testing.F) {
	f.Add([]byte(`[{:type :invoke, :process 0, :time 1, :f :txn, :value [[:r 1 nil] [:append 2 3]]} {:type :ok, :process 0, :time 2, :f :txn, :value [[:r 1 [1 2N]] [:append 2 3]]}]`))
	f.Add([]byte("{:type :info, :process :nemesis}\n{:type :ok, :f :txn, :value [[:w :k \"s\"] [:r \"x\" 1.5]], :process 1}\n#_{:x 1} ; c\n"))
	addSamples(f, ".edn")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzElle(t, data, readElleEDN) })
}

func FuzzElleJSON(f *testing.F) {
	f.Add([]byte(`[{"type":"invoke","process":0,"time":1,"f":"txn","value":[["r",1,null]]},{"type":"ok","process":0,"time":2,"f":"txn","value":[["r",1,[1]]]}]`))
	f.Add([]byte("{\"type\":\"ok\",\"process\":\"nemesis\"}\n{\"type\":\"fail\",\"f\":\"txn\",\"value\":[[\"w\",\"k\",\"v\"]],\"process\":2}"))
	addSamples(f, ".json")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzElle(t, data, readElleJSON) })
}

func FuzzReadHistory(f *testing.F) {
	addSamples(f, ".jsonl", ".edn", ".json")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(`{"status":"committed","ops":[["w",1,2]]}` + "\n"))
	zw.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		h, format, st, err := ReadHistoryStats(bytes.NewReader(data), "fuzz")
		if err != nil {
			if h != nil {
				t.Fatal("history returned with an error")
			}
			checkError(t, err, 0)
			return
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("returned history does not validate: %v", err)
		}
		if st.Txns != len(h.Txns) || format > FormatElleJSON {
			t.Fatalf("stats %+v, format %v, %d txns", st, format, len(h.Txns))
		}
		checkRoundTrip(t, h)
	})
}

// FuzzNativeDistinctStrings: two keys or values whose JSON texts differ as
// strings never decode to one key or value (issue 20 item 5). encoding/json
// replaces bytes that are not UTF-8 and unpaired surrogate escapes by
// U+FFFD, so "\xff", "\xfe", "\ud800" and "\ufffd" used to be one value and
// a garbage read of one passed as a read of another; now only the last is
// accepted. a and b are the raw contents of a string, placed both as a key
// and as a value.
func FuzzNativeDistinctStrings(f *testing.F) {
	for _, p := range [][2]string{
		{"\xff", "\xfe"}, {"\xff", `\ufffd`}, {`\ud800`, `\udbff`}, {`\ud800`, "\uFFFD"},
		{`\udc00x`, "\uFFFDx"}, {"a\xc3", "a\uFFFD"}, {`\ud83d\ude00`, "\U0001F600"}, {"é", `\u00e9`},
	} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	var d NativeDecoder
	decode := func(t *testing.T, raw []byte) (history.Txn, bool) {
		line := []byte(`{"status":"committed","ops":[["w","` + string(raw) + `","` + string(raw) + `"]]}`)
		got, err := d.Decode(line, history.Pos{Source: "fuzz", Line: 1})
		if err != nil {
			checkError(t, err, 1)
			return got, false
		}
		if oerr := oracleUTF8(line); oerr != nil {
			t.Fatalf("%q accepted: %v", line, oerr)
		}
		return got, true
	}
	// exact is the string the JSON text spells, by encoding/json, which
	// is exact once oracleUTF8 has passed.
	exact := func(t *testing.T, raw []byte) string {
		var s string
		if err := json.Unmarshal([]byte(`"`+string(raw)+`"`), &s); err != nil {
			t.Fatalf("decoder accepted %q, encoding/json did not: %v", raw, err)
		}
		return s
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ta, oka := decode(t, a)
		tb, okb := decode(t, b)
		if !oka || !okb {
			return
		}
		sameKey := ta.Ops[0].Key == tb.Ops[0].Key
		sameVal := ta.Ops[0].Value == tb.Ops[0].Value
		if same := exact(t, a) == exact(t, b); sameKey != same || sameVal != same {
			t.Fatalf("%q and %q: strings equal %v, keys equal %v, values equal %v", a, b, same, sameKey, sameVal)
		}
	})
}
