package ingest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// A generated Jepsen history with its ground truth: the transactions the
// decoders must produce, computed from the generator's own state rather
// than by pairing, so the pairing code is checked against an independent
// account.

type genOp struct {
	typ     string // invoke ok fail info
	process string // decimal, or "nemesis"
	f       string // txn or another
	time    int64
	index   int
	mops    []genMop // nil with hasNil: :value nil
}

type genMop struct {
	f     string // r w append
	key   history.Value
	value history.Value   // Null for an unread read
	list  []history.Value // list read result
	isLst bool
}

type elleCase struct {
	ops             []genOp
	want            []history.Txn // invoke/completion pairing
	completionsOnly []genOp
	wantCompletions []history.Txn
}

func genValue(rng *rand.Rand) history.Value {
	switch rng.IntN(6) {
	case 0:
		return history.StringValue(randString(rng))
	case 1:
		return history.StringValue(":kw-" + strconv.Itoa(rng.IntN(3)))
	case 2:
		return [...]history.Value{"1.0", "2.5", "-0.125", "1e3"}[rng.IntN(4)]
	case 3:
		return history.IntValue(rng.Int64() - 1<<62)
	}
	return history.IntValue(int64(rng.IntN(10)))
}

// genElle builds a random history over register keys 0-2 and "s", and list
// keys 10-12, so that History.Validate accepts it.
func genElle(rng *rand.Rand) elleCase {
	var c elleCase
	nproc := 1 + rng.IntN(4)
	type openTxn struct {
		inv  genOp
		txn  int // index in c.want
		body []genMop
	}
	open := map[int]*openTxn{}
	time := int64(rng.IntN(1000))
	index := 0
	emit := func(op genOp) {
		time += 1 + rng.Int64N(1e9)
		op.time, op.index = time, index
		index++
		c.ops = append(c.ops, op)
	}
	regKeys := []history.Value{"0", "1", "2", history.StringValue("s")}
	listKeys := []history.Value{"10", "11", "12"}
	for range rng.IntN(25) {
		switch rng.IntN(10) {
		case 0:
			emit(genOp{typ: "info", process: "nemesis", f: "start-partition"})
			continue
		case 1:
			emit(genOp{typ: [...]string{"invoke", "ok"}[rng.IntN(2)], process: strconv.Itoa(rng.IntN(nproc)), f: "read-config"})
			continue
		}
		p := rng.IntN(nproc)
		ps := strconv.Itoa(p)
		if o := open[p]; o == nil {
			var body []genMop
			for range rng.IntN(4) {
				switch rng.IntN(4) {
				case 0:
					body = append(body, genMop{f: "r", key: regKeys[rng.IntN(len(regKeys))], value: history.Null})
				case 1:
					body = append(body, genMop{f: "r", key: listKeys[rng.IntN(len(listKeys))], value: history.Null})
				case 2:
					body = append(body, genMop{f: "w", key: regKeys[rng.IntN(len(regKeys))], value: genValue(rng)})
				default:
					body = append(body, genMop{f: "append", key: listKeys[rng.IntN(len(listKeys))], value: genValue(rng)})
				}
			}
			emit(genOp{typ: "invoke", process: ps, f: "txn", mops: body})
			inv := c.ops[len(c.ops)-1]
			c.want = append(c.want, history.Txn{ID: strconv.Itoa(inv.index), Session: ps, HasSession: true, Start: inv.time, HasTime: true, Status: history.Unknown})
			open[p] = &openTxn{inv: inv, txn: len(c.want) - 1, body: body}
			continue
		} else {
			typ := [...]string{"ok", "ok", "fail", "info"}[rng.IntN(4)]
			done := make([]genMop, len(o.body))
			copy(done, o.body)
			for i := range done {
				m := &done[i]
				if m.f != "r" {
					continue
				}
				if typ == "fail" || typ == "info" && rng.IntN(2) == 0 {
					continue // not read: nil stays
				}
				isList := m.key == "10" || m.key == "11" || m.key == "12"
				switch {
				case isList && rng.IntN(4) > 0:
					m.isLst = true
					m.list = nil
					for range rng.IntN(3) {
						m.list = append(m.list, genValue(rng))
					}
				case !isList && rng.IntN(4) > 0:
					m.value = genValue(rng)
				}
			}
			emit(genOp{typ: typ, process: ps, f: "txn", mops: done})
			comp := c.ops[len(c.ops)-1]
			t := &c.want[o.txn]
			t.End = comp.time
			t.Status = map[string]history.Status{"ok": history.Committed, "fail": history.Aborted, "info": history.Unknown}[typ]
			t.Ops = expectOps(done, t.Status)
			delete(open, p)
		}
	}
	for _, o := range open {
		t := &c.want[o.txn]
		t.End = time // the last instant of the history
		t.Ops = expectOps(o.body, history.Unknown)
	}
	// The same completions without invocations, and with no :index (ids
	// are then positions).
	for _, op := range c.ops {
		if op.typ == "invoke" {
			continue
		}
		op.index = -1
		c.completionsOnly = append(c.completionsOnly, op)
		if op.process == "nemesis" || op.f != "txn" {
			continue
		}
		st := map[string]history.Status{"ok": history.Committed, "fail": history.Aborted, "info": history.Unknown}[op.typ]
		c.wantCompletions = append(c.wantCompletions, history.Txn{
			ID: strconv.Itoa(len(c.completionsOnly)), Session: op.process, HasSession: true,
			Status: st, Ops: expectOps(op.mops, st),
		})
	}
	return c
}

// expectOps is the specification of completedOps, written out: unread
// (nil) reads of transactions that did not surely commit are dropped.
func expectOps(body []genMop, st history.Status) []history.Op {
	var ops []history.Op
	for _, m := range body {
		op := history.Op{Key: m.key, Value: m.value}
		switch m.f {
		case "r":
			op.Kind = history.Read
			if m.isLst {
				op.IsList, op.List, op.Value = true, m.list, ""
			} else if m.value == history.Null && st != history.Committed {
				continue
			}
		case "w":
			op.Kind = history.Write
		default:
			op.Kind = history.Append
		}
		ops = append(ops, op)
	}
	return ops
}

// ednValue spells a canonical value in EDN: strings that look like
// keywords as keywords, other strings with EDN escapes.
func ednValue(v history.Value) string {
	switch {
	case v == history.Null:
		return "nil"
	case v[0] != '"':
		return string(v)
	}
	s, _ := strUnquote(v)
	if strings.HasPrefix(s, ":kw-") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func writeEDN(ops []genOp, vector bool) []byte {
	var b bytes.Buffer
	if vector {
		b.WriteString("[")
	}
	for i, op := range ops {
		if i > 0 {
			b.WriteString("\n ")
		}
		proc := op.process
		if proc == "nemesis" {
			proc = ":nemesis"
		}
		fmt.Fprintf(&b, "{:type :%s, :f :%s, :process %s, :time %d", op.typ, op.f, proc, op.time)
		if op.index >= 0 {
			fmt.Fprintf(&b, ", :index %d", op.index)
		}
		if op.f != "txn" {
			b.WriteString(", :value nil}")
			continue
		}
		b.WriteString(", :value [")
		for j, m := range op.mops {
			if j > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "[:%s %s ", m.f, ednValue(m.key))
			if m.isLst {
				b.WriteString("[")
				for k, e := range m.list {
					if k > 0 {
						b.WriteString(" ")
					}
					b.WriteString(ednValue(e))
				}
				b.WriteString("]")
			} else {
				b.WriteString(ednValue(m.value))
			}
			b.WriteString("]")
		}
		b.WriteString("]}")
	}
	if vector {
		b.WriteString("]")
	}
	b.WriteString("\n")
	return b.Bytes()
}

func writeJSON(ops []genOp, array bool) []byte {
	var b bytes.Buffer
	if array {
		b.WriteString("[")
	}
	for i, op := range ops {
		if i > 0 {
			if array {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		proc := op.process
		if proc == "nemesis" {
			proc = `"nemesis"`
		}
		fmt.Fprintf(&b, `{"type":"%s","f":"%s","process":%s,"time":%d`, op.typ, op.f, proc, op.time)
		if op.index >= 0 {
			fmt.Fprintf(&b, `,"index":%d`, op.index)
		}
		if op.f != "txn" {
			b.WriteString(`,"value":{"k":[1,2]}}`)
			continue
		}
		b.WriteString(`,"value":[`)
		for j, m := range op.mops {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `["%s",%s,`, m.f, m.key)
			if m.isLst {
				b.WriteString("[")
				for k, e := range m.list {
					if k > 0 {
						b.WriteString(",")
					}
					b.WriteString(string(e))
				}
				b.WriteString("]")
			} else {
				b.WriteString(string(m.value))
			}
			b.WriteString("]")
		}
		b.WriteString("]}")
	}
	if array {
		b.WriteString("]")
	}
	b.WriteString("\n")
	return b.Bytes()
}

func writeNative(txns []history.Txn) []byte {
	var b []byte
	for i := range txns {
		b = AppendNative(b, &txns[i])
		b = append(b, '\n')
	}
	return b
}

// TestElleDifferential: random Jepsen histories written as EDN (lines and
// vector) and JSON (array and lines) decode to the generator's ground
// truth, and so does the same truth written natively; likewise their
// completions-only versions.
func TestElleDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := scaled(600)
	for i := range n {
		c := genElle(rng)
		for _, v := range []struct {
			name   string
			ops    []genOp
			want   []history.Txn
			unfin  bool
			format Format
			write  func([]genOp) []byte
		}{
			{"edn-lines", c.ops, c.want, true, FormatElleEDN, func(o []genOp) []byte { return writeEDN(o, false) }},
			{"edn-vector", c.ops, c.want, true, FormatElleEDN, func(o []genOp) []byte { return writeEDN(o, true) }},
			{"json-array", c.ops, c.want, true, FormatElleJSON, func(o []genOp) []byte { return writeJSON(o, true) }},
			{"json-lines", c.ops, c.want, true, FormatElleJSON, func(o []genOp) []byte { return writeJSON(o, false) }},
			{"edn-completions", c.completionsOnly, c.wantCompletions, false, FormatElleEDN, func(o []genOp) []byte { return writeEDN(o, false) }},
			{"json-completions", c.completionsOnly, c.wantCompletions, false, FormatElleJSON, func(o []genOp) []byte { return writeJSON(o, true) }},
		} {
			text := v.write(v.ops)
			h, f, err := ReadHistory(bytes.NewReader(text), v.name)
			if err != nil {
				t.Fatalf("case %d %s: %v\n%s", i, v.name, err, text)
			}
			if len(v.ops) > 0 && f != v.format {
				t.Errorf("case %d %s: format %v", i, v.name, f)
			}
			want := &history.History{Txns: v.want}
			if len(h.Txns) != len(want.Txns) {
				t.Fatalf("case %d %s: %d txns, want %d\n%s", i, v.name, len(h.Txns), len(want.Txns), text)
			}
			diffHistories(t, fmt.Sprintf("case %d %s", i, v.name), h, want)
			if t.Failed() {
				t.Fatalf("input:\n%s", text)
			}
		}
		// The ground truth written natively reads back the same.
		if len(c.want) > 0 {
			h, _, err := ReadHistory(bytes.NewReader(writeNative(c.want)), "native")
			if err != nil {
				t.Fatalf("case %d native: %v", i, err)
			}
			diffHistories(t, fmt.Sprintf("case %d native", i), h, &history.History{Txns: c.want})
		}
	}
}

func TestElleInfoThenReinvoke(t *testing.T) {
	// An :info completion ends the transaction (unknown); the process may
	// invoke again, which is a new transaction.
	h, _, err := ReadHistory(strings.NewReader(`
{:type :invoke, :process 0, :time 1, :index 0, :f :txn, :value [[:w 1 1] [:r 2 nil]]}
{:type :info,   :process 0, :time 2, :index 1, :f :txn, :value [[:w 1 1] [:r 2 nil]]}
{:type :invoke, :process 0, :time 3, :index 2, :f :txn, :value [[:r 1 nil]]}
{:type :ok,     :process 0, :time 4, :index 3, :f :txn, :value [[:r 1 nil]]}
`), "t")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := history.ParseCompact("0[1,2] w 1 1 (unknown, session 0)\n2[3,4] r 1 null (session 0)")
	diffHistories(t, "info", h, want)
}

func TestElleNoProcessNoF(t *testing.T) {
	// Elle's own example histories leave out :process and :f; pairing is
	// then in order, with no sessions.
	h, _, err := ReadHistory(strings.NewReader(`{:index 0 :type :invoke  :value [[:append 253 1] [:r 253 nil]]}
{:index 1 :type :ok      :value [[:append 253 1] [:r 253 [1]]]}
{:index 2 :type :invoke, :value [[:r 253 nil]]}
{:index 3 :type :ok,     :value [[:r 253 [1]]]}`), "t")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := history.ParseCompact("0 append 253 1, r 253 [1]\n2 r 253 [1]")
	diffHistories(t, "paper", h, want)
}

func TestEDNScalars(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "1", want: "1"},
		{in: "+1", want: "1"},
		{in: "-0", want: "0"},
		{in: "7N", want: "7"},
		{in: "9223372036854775808N", err: "out of int64 range"},
		{in: "9223372036854775808", err: "out of int64 range"},
		{in: "1.0", want: "1.0"},
		{in: "+1.5", want: "1.5"},
		{in: "1e5", want: "1e5"},
		{in: "1.5M", err: "M suffix"},
		{in: `"a\"b"`, want: `"a\"b"`},
		{in: `"\u00e9"`, want: "\"\u00e9\""},
		{in: ":kw", want: `":kw"`},
		{in: ":ns/kw", want: `":ns/kw"`},
		{in: "nil", want: "null"},
		{in: "true", want: "true"},
		{in: `\c`, err: "character"},
		{in: "sym", err: "symbol"},
		{in: "[1]", err: "not a scalar"},
	} {
		v, _, err := ednScalar([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ednScalar(%s) = %s, %v; want error %q", tc.in, v, err, tc.err)
			}
			continue
		}
		if err != nil || string(v) != tc.want {
			t.Errorf("ednScalar(%s) = %s, %v; want %s", tc.in, v, err, tc.want)
		}
	}
}

func TestEDNFormsAndTags(t *testing.T) {
	// Comments, commas, discards, a record tag, characters and strings
	// with brackets must not confuse the form splitter.
	in := `; history
[#_{:type :ok :f :txn :value [[:r 1 nil]]}
 #jepsen.history.Op{:type :invoke, :process 0, :f :txn, :value [[:w 1 "]"]], :error \]} ,
 {:type :ok, :process 0, :f :txn, :value [[:w 1 "]"]] :note ["(" \( #inst "2020-01-01"]} ; done
]`
	h, f, err := ReadHistory(strings.NewReader(in), "t")
	if err != nil {
		t.Fatal(err)
	}
	if f != FormatElleEDN || len(h.Txns) != 1 || render(&h.Txns[0]) != `1 w 1 "]" (session 0)` {
		t.Errorf("got %v %d %v", f, len(h.Txns), h.Txns)
	}
}

// TestEDNFastSlowAgree: the one-call reading of :value and the raw-token
// reading accept the same micro-op vectors and read them alike, on random
// vectors and on random edits of them; the library-free splitter reading
// (shape checks) reads every accepted vector alike too.
func TestEDNFastSlowAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	edits := []string{"[", "]", "(", ")", " ", "nil", "1N", "9223372036854775808", "-", "1.0", ":r", ":w", ":x", `"`, `\`, "#_", "\\c", "{", "}", "sym", "#inst", "'", "^", "@", ":\xff", "\"\xff\"", "\\u00e9"}
	accepted := 0
	for i := range scaled(6000) {
		var b strings.Builder
		b.WriteString("[")
		for range rng.IntN(4) {
			f := [...]string{"r", "w", "append"}[rng.IntN(3)]
			key := history.IntValue(int64(rng.IntN(5)))
			if rng.IntN(3) == 0 {
				key = history.StringValue([...]string{"k", ":kw-1", "é"}[rng.IntN(3)])
			}
			fmt.Fprintf(&b, "[:%s %s ", f, ednValue(key))
			switch {
			case f == "r" && rng.IntN(2) == 0:
				b.WriteString("[")
				for range rng.IntN(3) {
					b.WriteString(ednValue(genValue(rng)) + " ")
				}
				b.WriteString("]")
			case f == "r" && rng.IntN(2) == 0:
				b.WriteString("nil")
			default:
				b.WriteString(ednValue(genValue(rng)))
			}
			b.WriteString("] ")
		}
		b.WriteString("]")
		text := []byte(b.String())
		if i%2 == 1 {
			for range 1 + rng.IntN(2) {
				p := rng.IntN(len(text) + 1)
				text = append(text[:p:p], append([]byte(edits[rng.IntN(len(edits))]), text[p:]...)...)
			}
		}
		fast, _, errFast := ednMicroOpsFast(text)
		slow, _, errSlow := ednMicroOps(text)
		if (errFast == nil) != (errSlow == nil) {
			t.Fatalf("%s: fast error %v, slow error %v", text, errFast, errSlow)
		}
		if errFast != nil {
			continue
		}
		accepted++
		a, b2 := history.Txn{Ops: fast}, history.Txn{Ops: slow}
		if !sameTxn(&a, &b2) {
			t.Fatalf("%s:\n fast %s\n slow %s", text, render(&a), render(&b2))
		}
		// The splitter reads (at least) what the library reads, the same,
		// when given one form (as parseEDNOp does; the library ignores
		// what follows the first form).
		if f := (&ednForms{b: text}); true {
			s, e, err := f.next()
			if err != nil || s != 0 || e != len(text) {
				continue
			}
		}
		split, _, err := ednMicroOpsSplit(text)
		c := history.Txn{Ops: split}
		if err != nil || !sameTxn(&a, &c) {
			t.Fatalf("%s:\n fast  %s\n split %s %v", text, render(&a), render(&c), err)
		}
	}
	t.Logf("%d accepted", accepted)
}

// TestEllePairingRules spells out the pairing rules of doc.go one by one
// (in EDN; TestElleDifferential checks that JSON pairs the same way).
func TestEllePairingRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		edn  string
		want []string // render() of each transaction, with session and status
	}{
		{"ok: interval from invoke to completion, reads from the completion",
			`{:type :invoke, :process 3, :time 10, :index 0, :f :txn, :value [[:r 1 nil] [:w 2 5]]}
			 {:type :ok,     :process 3, :time 20, :index 1, :f :txn, :value [[:r 1 7] [:w 2 5]]}`,
			[]string{`0[10,20] r 1 7, w 2 5 (session 3)`}},
		{"ok: nil read is a read of absent; nil on a list key too, [] is the empty list",
			`{:type :ok, :process 0, :f :txn, :value [[:r 1 nil] [:r 10 nil] [:r 11 []] [:append 10 1] [:append 11 2]]}`,
			[]string{`1 r 1 null, r 10 null, r 11 [], append 10 1, append 11 2 (session 0)`}},
		{"fail: aborted, unread reads dropped, observed reads kept",
			`{:type :invoke, :process 0, :time 1, :f :txn, :value [[:r 1 nil] [:r 2 nil] [:w 3 1]]}
			 {:type :fail,   :process 0, :time 2, :f :txn, :value [[:r 1 nil] [:r 2 4] [:w 3 1]]}`,
			[]string{`1[1,2] r 2 4, w 3 1 (aborted, session 0)`}},
		{"info: unknown; the process may invoke again",
			`{:type :invoke, :process 0, :time 1, :f :txn, :value [[:w 3 1]]}
			 {:type :info,   :process 0, :time 2, :f :txn, :value [[:w 3 1]]}
			 {:type :invoke, :process 0, :time 3, :f :txn, :value [[:w 3 2]]}
			 {:type :ok,     :process 0, :time 4, :f :txn, :value [[:w 3 2]]}`,
			[]string{`1[1,2] w 3 1 (unknown, session 0)`, `3[3,4] w 3 2 (session 0)`}},
		{"never completed: unknown, ending at the history's last time",
			`{:type :invoke, :process 0, :time 1, :f :txn, :value [[:w 3 1] [:r 4 nil]]}
			 {:type :info, :process :nemesis, :time 9, :f :kill}`,
			[]string{`1[1,9] w 3 1 (unknown, session 0)`}},
		{"interleaved processes: transactions in invocation order",
			`{:type :invoke, :process 0, :time 1, :f :txn, :value [[:w 1 1]]}
			 {:type :invoke, :process 1, :time 2, :f :txn, :value [[:w 2 1]]}
			 {:type :ok,     :process 1, :time 3, :f :txn, :value [[:w 2 1]]}
			 {:type :ok,     :process 0, :time 4, :f :txn, :value [[:w 1 1]]}`,
			[]string{`1[1,4] w 1 1 (session 0)`, `2[2,3] w 2 1 (session 1)`}},
		{"completion without :value: the invocation's",
			`{:type :invoke, :process 0, :time 1, :f :txn, :value [[:w 1 1]]}
			 {:type :info,   :process 0, :time 2, :f :txn}`,
			[]string{`1[1,2] w 1 1 (unknown, session 0)`}},
		{"completions only: no timestamps",
			`{:type :ok, :process 0, :time 5, :f :txn, :value [[:w 1 1]]}
			 {:type :fail, :process 1, :time 6, :f :txn, :value [[:w 1 2]]}`,
			[]string{`1 w 1 1 (session 0)`, `2 w 1 2 (aborted, session 1)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _, err := ReadHistory(strings.NewReader(tc.edn), "t")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range h.Txns {
				got = append(got, render(&h.Txns[i]))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(tc.want, "\n "))
			}
		})
	}
}

func TestEDNDeepNesting(t *testing.T) {
	deep := strings.Repeat("[", 300000) + strings.Repeat("]", 300000)
	for _, in := range []string{
		"{:type :ok, :f :txn, :process 0, :value " + deep + "}",
		"{:type :ok, :f :txn, :process 0, :value [], :x " + deep + "}",
		"[" + deep + "]",
	} {
		if _, _, err := ReadHistory(strings.NewReader(in), "t"); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
			t.Errorf("%.40s...: %v", in, err)
		}
	}
}

func TestEDNDiscardRuns(t *testing.T) {
	in := strings.Repeat("#_ ", 200000) + strings.Repeat("1 ", 200000) + "{:type :ok, :f :txn, :process 0, :value [[:w 1 2]]}"
	h, _, err := ReadHistory(strings.NewReader(in), "t")
	if err != nil || len(h.Txns) != 1 {
		t.Fatalf("%v", err)
	}
	if _, _, err := ReadHistory(strings.NewReader("{:type :ok, :f :txn, :process 0, :value []} #_"), "t"); err == nil {
		t.Error("dangling #_ accepted")
	}
}
