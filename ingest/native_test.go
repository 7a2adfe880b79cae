package ingest

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

func TestNativeDecodeExample(t *testing.T) {
	// The example event of the input spec.
	line := `{"session":"c7","id":"c7-42","start":1763719200123456789,"end":1763719200125000000,"status":"committed","ops":[["r","x",3],["w","x",4],["append","l",17],["r","l",[3,17]]]}`
	var d NativeDecoder
	got, err := d.Decode([]byte(line), history.Pos{Source: "s", Line: 7})
	if err != nil {
		t.Fatal(err)
	}
	want := history.Txn{
		ID: "c7-42", Session: "c7", HasSession: true,
		Start: 1763719200123456789, End: 1763719200125000000, HasTime: true,
		Status: history.Committed,
		Ops: []history.Op{
			{Kind: history.Read, Key: `"x"`, Value: "3"},
			{Kind: history.Write, Key: `"x"`, Value: "4"},
			{Kind: history.Append, Key: `"l"`, Value: "17"},
			{Kind: history.Read, Key: `"l"`, IsList: true, List: []history.Value{"3", "17"}},
		},
	}
	if !sameTxn(&got, &want) {
		t.Errorf("got  %s\nwant %s", txnString(&got), txnString(&want))
	}
	// Exact: 1763719200123456789 is not a float64 (it would round to
	// ...456768).
	if got.Start != 1763719200123456789 {
		t.Errorf("start %d", got.Start)
	}
	if got.Pos != (history.Pos{Source: "s", Line: 7}) {
		t.Errorf("pos %v", got.Pos)
	}
}

func TestNativeDecodeTable(t *testing.T) {
	const pre = `{"status":"committed","ops":[`
	for _, tc := range []struct {
		name, in string
		want     string // compact rendering of the Txn, when accepted
		field    string // error field, when rejected
		msg      string // error substring, when rejected
	}{
		{name: "1, 1.0 and \"1\" are distinct", in: pre + `["w","a",1],["w","b",1.0],["w","c","1"],["w","d",1e0],["w","e",-0]]}`,
			want: `5 w "a" 1, w "b" 1.0, w "c" "1", w "d" 1e0, w "e" 0`},
		{name: "int64 bounds", in: pre + `["w",1,9223372036854775807],["w",2,-9223372036854775808]]}`,
			want: `5 w 1 9223372036854775807, w 2 -9223372036854775808`},
		{name: "above int64", in: pre + `["w",1,9223372036854775808]]}`, field: "ops[0]", msg: "integer 9223372036854775808 is out of int64 range"},
		{name: "below int64", in: pre + `["r",1,[1,-9223372036854775809]]]}`, field: "ops[0]", msg: "out of int64 range"},
		{name: "key above int64", in: pre + `["r",99999999999999999999,1]]}`, field: "ops[0]", msg: "out of int64 range"},
		{name: "big float literal kept", in: pre + `["w",1,1e400],["w",2,0.10000000000000000000001]]}`, want: `5 w 1 1e400, w 2 0.10000000000000000000001`},
		{name: "bool values", in: pre + `["w",1,true],["r",2,false]]}`, want: `5 w 1 true, r 2 false`},
		{name: "null read", in: pre + `["r","k",null]]}`, want: `5 r "k" null`},
		{name: "list reads", in: pre + `["r","k",[]],["r","l",[1,"a",2.5]]]}`, want: `5 r "k" [], r "l" [1 "a" 2.5]`},
		{name: "string escapes normalised", in: pre + `["w","\u0041","a\/b"],["w","B","\ud83d\ude00"],["w","D","\u00e9"]]}`,
			want: "5 w \"A\" \"a/b\", w \"B\" \"\U0001F600\", w \"D\" \"\u00e9\""},
		{name: "session integer and string agree", in: `{"session":1,"id":"a","status":"aborted","ops":[]}`, want: `a (aborted, session 1)`},
		{name: "session string", in: `{"session":"1","id":"a","status":"unknown","ops":[]}`, want: `a (unknown, session 1)`},
		{name: "integer id", in: `{"id":42,"status":"committed","ops":[]}`, want: `42`},
		{name: "default id with session", in: `{"session":"c7","status":"committed","ops":[]}`, want: `c7-5 (session c7)`},
		{name: "default id without session", in: `{"status":"committed","ops":[]}`, want: `5`},
		{name: "null optional fields", in: `{"session":null,"id":null,"start":null,"end":null,"status":"committed","ops":[]}`, want: `5`},
		{name: "unknown fields skipped", in: `{"v":2,"meta":{"a":[1,{"b":null}],"c":"\u0000"},"status":"committed","ops":[],"z":[true,false]}`, want: `5`},
		{name: "whitespace", in: " \t{ \"status\" : \"committed\" ,\r\n \"ops\" : [ [ \"r\" , 1 , [ 2 , 3 ] ] ] } \r\n", want: `5 r 1 [2 3]`},
		{name: "negative zero key", in: pre + `["w",-0,1]]}`, want: `5 w 0 1`},
		{name: "times", in: `{"start":0,"end":0,"status":"committed","ops":[]}`, want: `5[0,0]`},

		{name: "missing status", in: `{"ops":[]}`, field: "status", msg: "missing"},
		{name: "bad status", in: `{"status":"Committed","ops":[]}`, field: "status", msg: "unknown status"},
		{name: "status not a string", in: `{"status":1,"ops":[]}`, field: "status", msg: "want a string"},
		{name: "missing ops", in: `{"status":"committed"}`, field: "ops", msg: "missing"},
		{name: "ops not an array", in: `{"status":"committed","ops":{}}`, field: "ops", msg: "want an array"},
		{name: "duplicate field", in: `{"status":"committed","status":"aborted","ops":[]}`, field: "status", msg: "given twice"},
		{name: "start only", in: `{"start":1,"status":"committed","ops":[]}`, field: "end", msg: "missing"},
		{name: "end only", in: `{"end":1,"status":"committed","ops":[]}`, field: "start", msg: "missing"},
		{name: "end before start", in: `{"start":2,"end":1,"status":"committed","ops":[]}`, field: "end", msg: "before start"},
		{name: "float start", in: `{"start":1.7e18,"end":1,"status":"committed","ops":[]}`, field: "start", msg: "not an integer"},
		{name: "start above int64", in: `{"start":9223372036854775808,"end":1,"status":"committed","ops":[]}`, field: "start", msg: "out of int64 range"},
		{name: "empty id", in: `{"id":"","status":"committed","ops":[]}`, field: "id", msg: "empty string"},
		{name: "float session", in: `{"session":1.5,"status":"committed","ops":[]}`, field: "session", msg: "not an integer"},
		{name: "bool id", in: `{"id":true,"status":"committed","ops":[]}`, field: "id", msg: "want a string or an integer"},
		{name: "write null", in: pre + `["w",1,null]]}`, field: "ops[0]", msg: "w value is null"},
		{name: "append list", in: pre + `["r",1,2],["append",1,[1]]]}`, field: "ops[1]", msg: "append value is an array"},
		{name: "read object", in: pre + `["r",1,{}]]}`, field: "ops[0]", msg: "read value is an object"},
		{name: "float key", in: pre + `["r",1.5,1]]}`, field: "ops[0]", msg: "key 1.5 is not an integer or a string"},
		{name: "bool key", in: pre + `["r",true,1]]}`, field: "ops[0]", msg: "key is true"},
		{name: "null key", in: pre + `["r",null,1]]}`, field: "ops[0]", msg: "key is null"},
		{name: "array key", in: pre + `["r",[1],1]]}`, field: "ops[0]", msg: "key is an array"},
		{name: "null list element", in: pre + `["r",1,[null]]]}`, field: "ops[0]", msg: "list element is null"},
		{name: "nested list", in: pre + `["r",1,[[1]]]]}`, field: "ops[0]", msg: "list element is an array"},
		{name: "two elements", in: pre + `["r",1]]}`, field: "ops[0]", msg: "want ','"},
		{name: "four elements", in: pre + `["r",1,2,3]]}`, field: "ops[0]", msg: "more than 3 elements"},
		{name: "unknown function", in: pre + `["cas",1,2]]}`, field: "ops[0]", msg: `unknown micro-op function "cas"`},
		{name: "function not a string", in: pre + `[1,1,2]]}`, field: "ops[0]", msg: "must be a string"},
		{name: "trailing data", in: `{"status":"committed","ops":[]} {}`, msg: "data after the event object"},
		{name: "not an object", in: `[1]`, msg: "want '{'"},
		{name: "truncated", in: `{"status":"committed","ops":[["r",1,`, field: "ops[0]", msg: "unexpected end of input"},
		{name: "raw control character", in: "{\"status\":\"committed\",\"ops\":[[\"w\",1,\"a\tb\"]]}", field: "ops[0]", msg: "control character"},
		{name: "bad escape", in: `{"status":"committed","ops":[["w",1,"\x"]]}`, field: "ops[0]", msg: "invalid escape"},
		{name: "leading zero", in: pre + `["w",1,01]]}`, field: "ops[0]", msg: "want ']'"},
		{name: "bad literal", in: `{"status":"committed","ops":[],"x":nul}`, field: "x", msg: "want a JSON value"},
		// Issue 20 item 5: JSON text must be UTF-8; encoding/json's U+FFFD
		// would make each of these equal to another string.
		{name: "invalid UTF-8 in key", in: pre + "[\"w\",\"k\xff\",1]]}", field: "ops[0]", msg: "invalid UTF-8 byte 0xff"},
		{name: "invalid UTF-8 in value", in: pre + "[\"r\",\"k\",\"v\xc3\"]]}", field: "ops[0]", msg: "invalid UTF-8 byte 0xc3"},
		{name: "invalid UTF-8 in list element", in: pre + "[\"r\",\"k\",[\"\xfe\"]]]}", field: "ops[0]", msg: "invalid UTF-8 byte 0xfe"},
		{name: "invalid UTF-8 in id", in: "{\"id\":\"a\x80\",\"status\":\"committed\",\"ops\":[]}", field: "id", msg: "invalid UTF-8 byte 0x80"},
		{name: "invalid UTF-8 in session", in: "{\"session\":\"\xed\xa0\x80\",\"status\":\"committed\",\"ops\":[]}", field: "session", msg: "invalid UTF-8 byte 0xed"},
		{name: "invalid UTF-8 in unknown field", in: "{\"status\":\"committed\",\"ops\":[],\"note\":\"\xff\"}", field: "note", msg: "invalid UTF-8"},
		{name: "lone high surrogate", in: pre + `["w","k","\ud800x"]]}`, field: "ops[0]", msg: `unpaired surrogate \ud800`},
		{name: "lone low surrogate in key", in: pre + `["w","\udc00",1]]}`, field: "ops[0]", msg: `unpaired surrogate \udc00`},
		{name: "high surrogate then a non-surrogate escape", in: pre + `["w","k","\ud800\u0041"]]}`, field: "ops[0]", msg: "unpaired surrogate"},
		{name: "two high surrogates", in: pre + `["w","k","\ud800\ud800"]]}`, field: "ops[0]", msg: "unpaired surrogate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d NativeDecoder
			pos := history.Pos{Source: "f", Line: 5, Offset: 100}
			got, err := d.Decode([]byte(tc.in), pos)
			ref, refErr := oracleDecode([]byte(tc.in), pos)
			if (err == nil) != (refErr == nil) {
				t.Errorf("decoder error %v, oracle error %v", err, refErr)
			}
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				if c := render(&got); c != tc.want {
					t.Errorf("got  %s\nwant %s", c, tc.want)
				}
				if !sameTxn(&got, &ref) {
					t.Errorf("oracle disagrees:\n got    %s\n oracle %s", txnString(&got), txnString(&ref))
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted: %s", render(&got))
			}
			var he *history.Error
			if !errors.As(err, &he) {
				t.Fatalf("%T is not a *history.Error", err)
			}
			if he.Pos.Line != 5 || he.Pos.Source != "f" || he.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q (line %d, field %q), want field %q containing %q", err, he.Pos.Line, he.Field, tc.field, tc.msg)
			}
		})
	}
}

// TestNativeRoundTrip: AppendNative then Decode gives the same Txn, over
// random Txns; the oracle decodes the line the same way.
func TestNativeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var d NativeDecoder
	var buf []byte
	for i := range scaled(20000) {
		want := randTxn(rng, i)
		buf = AppendNative(buf[:0], &want)
		pos := history.Pos{Line: i + 1}
		got, err := d.Decode(buf, pos)
		if err != nil {
			t.Fatalf("%s: %v", buf, err)
		}
		if !sameTxn(&got, &want) {
			t.Fatalf("round trip of %s:\n got  %s\n want %s", buf, txnString(&got), txnString(&want))
		}
		ref, err := oracleDecode(buf, pos)
		if err != nil || !sameTxn(&ref, &want) {
			t.Fatalf("oracle on %s: %v %s", buf, err, txnString(&ref))
		}
	}
}

// TestNativeMutations: random edits of valid events, decoded by the
// scanner and by the encoding/json oracle, must be accepted or rejected
// alike and decode alike (a cheap, always-on stand-in for the fuzzer).
func TestNativeMutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var d NativeDecoder
	n := scaled(30000)
	pieces := []string{"{", "}", "[", "]", ",", ":", `"`, `\`, "0", "-", "1.5", "e", "null", "true", " ", "\n", `"r"`, `"w"`, `"append"`, `"ops"`, `"status"`, `"id"`, `"session"`, `"start"`, `"end"`, `"committed"`, "\xff", "é", `\u0041`, `\ud800`, "9223372036854775808"}
	accepted := 0
	for i := range n {
		tx := randTxn(rng, i)
		line := AppendNative(nil, &tx)
		for range 1 + rng.IntN(3) {
			p := rng.IntN(len(line) + 1)
			switch rng.IntN(3) {
			case 0: // insert
				line = append(line[:p:p], append([]byte(pieces[rng.IntN(len(pieces))]), line[p:]...)...)
			case 1: // delete
				if p < len(line) {
					line = append(line[:p:p], line[p+1+rng.IntN(min(4, len(line)-p)):]...)
				}
			default: // replace one byte
				if p < len(line) {
					line[p] = pieces[rng.IntN(len(pieces))][0]
				}
			}
		}
		pos := history.Pos{Source: "m", Line: i + 1}
		got, err := d.Decode(line, pos)
		ref, refErr := oracleDecode(line, pos)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%q: decoder error %v, oracle error %v", line, err, refErr)
		}
		if err != nil {
			var he *history.Error
			if !errors.As(err, &he) || he.Pos.Line != i+1 {
				t.Fatalf("%q: error %v does not name line %d", line, err, i+1)
			}
			continue
		}
		accepted++
		if !sameTxn(&got, &ref) {
			t.Fatalf("%q:\n got    %s\n oracle %s", line, txnString(&got), txnString(&ref))
		}
	}
	t.Logf("%d of %d mutated events accepted", accepted, n)
}

// scaled sizes a randomized test: n by default, n/10 under -short, 20n
// with INGEST_LONG=1 set (a longer soak, minutes).
func scaled(n int) int {
	switch {
	case os.Getenv("INGEST_LONG") != "":
		return 20 * n
	case testing.Short():
		return max(1, n/10)
	}
	return n
}

// The error names the byte column, in the message and in Pos.Offset.
func TestNativeErrorColumn(t *testing.T) {
	line := `{"id":"x","status":"committed","ops":[["w","k",9223372036854775808]]}`
	col := strings.Index(line, "922") + 1
	var d NativeDecoder
	_, err := d.Decode([]byte(line), history.Pos{Source: "f", Line: 2, Offset: 1000})
	var he *history.Error
	if !errors.As(err, &he) {
		t.Fatalf("%v", err)
	}
	if he.Pos.Offset != int64(1000+col-1) || he.ID != "x" || !strings.Contains(err.Error(), "f:2 (txn x): field ops[0]: column 48:") || col != 48 {
		t.Errorf("error %q at offset %d (column %d)", err, he.Pos.Offset, col)
	}
}

// Without a line (a Kafka message) the offset is the message's and stays.
func TestNativeErrorKafkaOffset(t *testing.T) {
	var d NativeDecoder
	_, err := d.Decode([]byte(`{"status":"x","ops":[]}`), history.Pos{Source: "topic/3", Offset: 77})
	var he *history.Error
	if !errors.As(err, &he) || he.Pos.Offset != 77 || he.Field != "status" || !strings.HasPrefix(err.Error(), "topic/3@77: field status:") {
		t.Errorf("%v", err)
	}
	tx, err := d.Decode([]byte(`{"session":"s","status":"committed","ops":[]}`), history.Pos{Source: "topic/3", Offset: 78})
	if err != nil || tx.ID != "s-78" {
		t.Errorf("default id %q, %v", tx.ID, err)
	}
}

// Deep nesting in an unknown field is skipped without exhausting the
// stack; beyond the limit it is an error, not a crash.
func TestNativeDeepNesting(t *testing.T) {
	var d NativeDecoder
	for _, depth := range []int{5000, 200000} {
		line := `{"status":"committed","ops":[],"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "}"
		_, err := d.Decode([]byte(line), history.Pos{Line: 1})
		if (err == nil) != (depth <= maxDepth) {
			t.Errorf("depth %d: %v", depth, err)
		}
	}
}

// TestRecoverNative: the lenient second reading of rejected events keeps
// every write it can read exactly, names the keys of ops it cannot, and
// says when ops were lost altogether (issue 20 item 1).
func TestRecoverNative(t *testing.T) {
	const ts = `"id":"t0","start":100,"end":200,`
	for _, tc := range []struct {
		name, in string
		ops      string // render of the ops kept
		wild     string
		all      bool
		timed    bool
	}{
		{name: "value beyond int64", in: `{` + ts + `"status":"committed","ops":[["w","x",1],["w","y",9223372036854775808]]}`,
			ops: `w "x" 1, w "y" 9223372036854775808`, timed: true},
		{name: "unknown micro-op", in: `{` + ts + `"status":"committed","ops":[["w","x",1],["cas","y",[1,2]],["incr","z"]]}`,
			ops: `w "x" 1, w "y" null, w "z" null`, wild: `"y" "z"`, timed: true},
		{name: "end before start", in: `{"id":"t0","start":300,"end":200,"status":"committed","ops":[["w","x",1]]}`, ops: `w "x" 1`},
		{name: "write of null", in: `{` + ts + `"status":"committed","ops":[["w","x",null],["append","l",[1]]]}`, ops: `w "x" null`, wild: `"l"`, timed: true},
		{name: "invalid UTF-8 kept exactly", in: "{" + ts + "\"status\":\"committed\",\"ops\":[[\"w\",\"k\xff\",\"v\xfe\"],[\"w\",\"k\",\"\\ud800\"]]}",
			ops: "w \"k\xff\" \"v\xfe\", w \"k\" \"\\ud800\"", timed: true},
		{name: "unreadable key taints nothing", in: `{` + ts + `"status":"committed","ops":[["w",1.5,1],["w",true,2],["w",99999999999999999999,3]]}`, timed: true},
		{name: "bad status", in: `{` + ts + `"status":"done","ops":[["w","x",1]]}`, ops: `w "x" 1`, timed: true},
		{name: "missing ops", in: `{` + ts + `"status":"committed"}`, all: true, timed: true},
		{name: "truncated in ops", in: `{` + ts + `"status":"committed","ops":[["w","x",1],["w","y",`, ops: `w "x" 1`, all: true},
		{name: "truncated after ops", in: `{"id":"t0","ops":[["w","x",1]],"status":"comm`, ops: `w "x" 1`},
		{name: "not json", in: `garbage`, all: true},
		{name: "ops not an array", in: `{` + ts + `"status":"committed","ops":{"w":"x"}}`, all: true, timed: true},
		{name: "op not an array", in: `{` + ts + `"status":"committed","ops":[{"f":"w"}]}`, all: true, timed: true},
		{name: "start beyond int64", in: `{"id":"t0","start":99999999999999999999,"end":200,"status":"committed","ops":[["w","x",1]]}`, ops: `w "x" 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := RecoverNative([]byte(tc.in), history.Pos{Line: 3})
			var ops []string
			for _, op := range rec.Txn.Ops {
				ops = append(ops, op.String())
			}
			var wild []string
			for _, k := range rec.Wild {
				wild = append(wild, string(k))
			}
			if g := strings.Join(ops, ", "); g != tc.ops {
				t.Errorf("ops %s, want %s", g, tc.ops)
			}
			if g := strings.Join(wild, " "); g != tc.wild {
				t.Errorf("wild %s, want %s", g, tc.wild)
			}
			if rec.WildAll != tc.all || rec.TimeTrusted != tc.timed || rec.Txn.HasTime != tc.timed {
				t.Errorf("WildAll %v TimeTrusted %v HasTime %v, want %v %v", rec.WildAll, rec.TimeTrusted, rec.Txn.HasTime, tc.all, tc.timed)
			}
		})
	}
}
