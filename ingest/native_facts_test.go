package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// oracleFacts reads the database facts of a native event the slow way
// (encoding/json's tree), for the fuzz target's differential check: it
// must accept and reject exactly what NativeDecoder does.
func oracleFacts(obj map[string]any, t *history.Txn) (history.Facts, error) {
	var f history.Facts
	stamp := func(name string, b history.FactBits) (int64, error) {
		v, ok := obj[name]
		if !ok || v == nil {
			return 0, nil
		}
		n, isNum := v.(json.Number)
		if !isNum || strings.ContainsAny(string(n), ".eE") {
			return 0, errors.New(name + ": not an integer")
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || i < 0 {
			return 0, errors.New(name + ": out of range")
		}
		f.Has |= b
		return i, nil
	}
	var err error
	if f.CommitTS, err = stamp("commit_ts", history.HasCommitTS); err != nil {
		return f, err
	}
	if f.StartTS, err = stamp("start_ts", history.HasStartTS); err != nil {
		return f, err
	}
	x, err := stamp("xid", history.HasXid)
	if err != nil {
		return f, err
	}
	f.Xid = uint64(x)
	if v, ok := obj["snapshot"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return f, errors.New("snapshot: not a string")
		}
		if f.Snap, err = history.ParseSnapshot(s); err != nil {
			return f, err
		}
		f.Has |= history.HasSnapshot
	}
	if f.Has != 0 {
		if err := f.Validate(t); err != nil {
			return f, err
		}
	}
	return f, nil
}

func sameFacts(a, b history.Facts) bool {
	if a.Has != b.Has || a.CommitTS != b.CommitTS || a.StartTS != b.StartTS || a.Xid != b.Xid {
		return false
	}
	if (a.Snap == nil) != (b.Snap == nil) {
		return false
	}
	return a.Snap == nil || a.Snap.String() == b.Snap.String()
}

// FuzzNativeFacts: the stamp fields decode as the encoding/json oracle
// reads them, every rejection is a *history.Error naming the line and the
// field, and what is accepted round-trips through AppendNativeFacts.
func FuzzNativeFacts(f *testing.F) {
	f.Add([]byte(`{"id":"a","status":"committed","commit_ts":7,"start_ts":3,"ops":[["r","x",1]]}`))
	f.Add([]byte(`{"id":"a","status":"committed","xid":750,"snapshot":"748:751:749","ops":[["w","x",1]]}`))
	f.Add([]byte(`{"id":"a","status":"aborted","commit_ts":7,"ops":[]}`))
	f.Add([]byte(`{"id":"a","status":"unknown","start_ts":9,"ops":[["w","x",1]]}`))
	f.Add([]byte(`{"id":"a","status":"committed","commit_ts":3,"start_ts":7,"ops":[]}`))
	f.Add([]byte(`{"id":"a","status":"committed","commit_ts":-1,"ops":[]}`))
	f.Add([]byte(`{"id":"a","status":"committed","commit_ts":1.5,"ops":[]}`))
	f.Add([]byte(`{"id":"a","status":"committed","snapshot":"9:3:","ops":[]}`))
	f.Add([]byte(`{"id":"a","status":"committed","xid":5,"snapshot":"1:9:12","ops":[]}`))
	var d NativeDecoder
	f.Fuzz(func(t *testing.T, line []byte) {
		pos := history.Pos{Source: "fuzz", Line: 3, Offset: 10}
		got, err := d.Decode(line, pos)
		ref, refErr := oracleDecode(line, pos)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("decoder error %v, oracle error %v", err, refErr)
		}
		if err != nil {
			checkError(t, err, 3)
			return
		}
		gf := d.Facts()
		var top map[string]any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		_ = dec.Decode(&top)
		rf, _ := oracleFacts(top, &ref)
		if !sameFacts(gf, rf) {
			t.Fatalf("facts %+v, oracle %+v", gf, rf)
		}
		enc := AppendNativeFacts(nil, &got, &gf)
		back, err := d.Decode(enc, pos)
		if err != nil || !sameTxn(&back, &got) || !sameFacts(d.Facts(), gf) {
			t.Fatalf("round trip via %s: %v", enc, err)
		}
	})
}

// TestNativeFactsErrors: each bad stamp is an input error naming the line
// and the field (docs/SEMANTICS.md §10, "Input rules").
func TestNativeFactsErrors(t *testing.T) {
	for _, c := range []struct{ line, field, want string }{
		{`{"id":"a","status":"committed","commit_ts":"7","ops":[]}`, "commit_ts", "integer"},
		{`{"id":"a","status":"committed","commit_ts":1.5,"ops":[]}`, "commit_ts", "not an integer"},
		{`{"id":"a","status":"committed","start_ts":-4,"ops":[]}`, "start_ts", "negative"},
		{`{"id":"a","status":"committed","commit_ts":3,"start_ts":7,"ops":[]}`, "start_ts", "after commit_ts"},
		{`{"id":"a","status":"aborted","start_ts":7,"ops":[]}`, "start_ts", "aborted"},
		{`{"id":"a","status":"unknown","commit_ts":7,"ops":[]}`, "commit_ts", "unknown"},
		{`{"id":"a","status":"committed","commit_ts":7,"commit_ts":8,"ops":[]}`, "commit_ts", "twice"},
		{`{"id":"a","status":"committed","snapshot":"1:9:","ops":[]}`, "snapshot", "xid"},
		{`{"id":"a","status":"committed","xid":3,"snapshot":"9:3:","ops":[]}`, "snapshot", "above xmax"},
		{`{"id":"a","status":"committed","xid":3,"snapshot":"1:9:12","ops":[]}`, "snapshot", "outside"},
		{`{"id":"a","status":"committed","xid":3,"snapshot":5,"ops":[]}`, "snapshot", "string"},
	} {
		var d NativeDecoder
		_, err := d.Decode([]byte(c.line), history.Pos{Source: "in", Line: 4})
		var he *history.Error
		if !errors.As(err, &he) || he.Field != c.field || he.Pos.Line != 4 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want field %s line 4 saying %q", c.line, err, c.field, c.want)
		}
	}
}

// TestReadNativeFacts: the whole-history reader keeps the side table
// parallel to the transactions across its parallel chunks, and a history
// without facts has none; a duplicate xid is an input error.
func TestReadNativeFacts(t *testing.T) {
	var b bytes.Buffer
	const n = 40000 // over parallelMin, so that several chunks decode
	for i := 0; i < n; i++ {
		line := `{"id":"t` + strconv.Itoa(i) + `","status":"committed","ops":[["w","k` + strconv.Itoa(i%50) + `",` + strconv.Itoa(i) + `]]`
		if i%3 == 1 {
			line += `,"commit_ts":` + strconv.Itoa(2*i)
		}
		b.WriteString(line + "}\n")
	}
	h, _, err := ReadHistory(bytes.NewReader(b.Bytes()), "in")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Facts) != n {
		t.Fatalf("%d facts for %d txns", len(h.Facts), n)
	}
	for i := range h.Facts {
		f := h.FactsOf(i)
		if (i%3 == 1) != (f.Has == history.HasCommitTS) || f.Has != 0 && f.CommitTS != int64(2*i) {
			t.Fatalf("txn %d: facts %+v", i, f)
		}
	}
	back, _, err := ReadHistory(bytes.NewReader(AppendNativeHistory(nil, h)), "back")
	if err != nil || len(back.Facts) != n || back.Facts[4].CommitTS != 8 {
		t.Fatalf("round trip: %v", err)
	}
	plain, _, err := ReadHistory(strings.NewReader(`{"status":"committed","ops":[]}`+"\n"), "in")
	if err != nil || plain.Facts != nil {
		t.Fatalf("no facts: %v %v", err, plain.Facts)
	}
	_, _, err = ReadHistory(strings.NewReader(`{"id":"a","status":"committed","xid":5,"ops":[]}`+"\n"+`{"id":"b","status":"committed","xid":5,"ops":[]}`+"\n"), "in")
	var he *history.Error
	if !errors.As(err, &he) || he.Field != "xid" || he.Pos.Line != 2 {
		t.Fatalf("duplicate xid: %v", err)
	}
}
