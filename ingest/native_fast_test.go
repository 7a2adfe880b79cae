package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// The fast path's oracle is the general decoder it falls back to
// (docs/SEMANTICS.md §10 "The native decoder's fast path"): decodeSlow,
// the decoder as it was before the fast path, kept whole and reachable
// with NativeDecoder.slow. fastAgainstSlow decodes a sequence of lines
// with both, in each of the three modes (Decode's, the batch reader's,
// ScanNative's scratch), and requires the same Txn (reflect.DeepEqual:
// nil and empty slices apart), the same facts, the same error text and
// position, and in scratch mode the same key, value and list ids, list
// reads and text table after every line. It returns how many lines the
// fast path read itself, so that a test can tell that it ran.
func fastAgainstSlow(lines [][]byte) (fast int, err error) {
	for _, mode := range []string{"plain", "batch", "scratch"} {
		f := NativeDecoder{batch: mode == "batch", scratch: mode == "scratch"}
		s := NativeDecoder{batch: mode == "batch", scratch: mode == "scratch", slow: true}
		// The transactions of Decode's and the batch mode are the
		// caller's: compared again at the end, so that one that shares
		// storage with a later line's shows.
		var fts, sts []history.Txn
		for n, line := range lines {
			pos := history.Pos{Source: "t", Line: n + 1, Offset: int64(100 * n)}
			slab, slabLen := unsafe.SliceData(f.slab), len(f.slab)
			ft, fok := f.decodeFast(line, pos)
			var fde *decodeError
			if !fok {
				ft, fde = f.decodeSlow(line, pos)
			} else if mode == "plain" {
				fast++
			}
			st, sde := s.decode(line, pos)
			if (fde == nil) != (sde == nil) {
				return fast, fmt.Errorf("%s line %d %q: fast path error %v, general %v", mode, n+1, line, fde, sde)
			}
			if fde != nil {
				fe, se := nativeError(pos, ft.ID, fde), nativeError(pos, st.ID, sde)
				if !reflect.DeepEqual(fe, se) || fe.Error() != se.Error() {
					return fast, fmt.Errorf("%s line %d %q: error %v, general %v", mode, n+1, line, fe, se)
				}
				continue
			}
			if !reflect.DeepEqual(ft, st) {
				return fast, fmt.Errorf("%s line %d %q:\n fast    %#v\n general %#v", mode, n+1, line, ft, st)
			}
			if !reflect.DeepEqual(f.facts, s.facts) {
				return fast, fmt.Errorf("%s line %d %q: facts %+v, general %+v", mode, n+1, line, f.facts, s.facts)
			}
			if k := len(ft.Ops); mode == "batch" && k > 0 {
				// The ops are the slab's last k, right after what it
				// held before the line (or alone in a new slab): a line
				// the fast path declined gave back what it carved.
				want := k
				if unsafe.SliceData(f.slab) == slab {
					want += slabLen
				}
				if len(f.slab) != want {
					return fast, fmt.Errorf("%s line %d %q: slab length %d after %d ops, want %d", mode, n+1, line, len(f.slab), k, want)
				}
			}
			if mode != "scratch" {
				fts, sts = append(fts, ft), append(sts, st)
				continue
			}
			for _, c := range []struct {
				name string
				a, b any
			}{
				{"key ids", f.keyIDs, s.keyIDs}, {"value ids", f.valIDs, s.valIDs}, {"list ids", f.listIDs, s.listIDs},
				{"lists", f.lists, s.lists}, {"texts", f.ids.text, s.ids.text},
			} {
				if !reflect.DeepEqual(c.a, c.b) {
					return fast, fmt.Errorf("%s line %d %q: %s %v, general %v", mode, n+1, line, c.name, c.a, c.b)
				}
			}
		}
		for k := range fts {
			if !reflect.DeepEqual(fts[k], sts[k]) {
				return fast, fmt.Errorf("%s: after the last line, the %d-th accepted transaction is\n fast    %#v\n general %#v", mode, k+1, fts[k], sts[k])
			}
		}
	}
	return fast, nil
}

// corpusLines is every native line the repository holds: the package's
// samples, the bad-input corpus (the dead letters and edge cases of
// testdata/badinput), the recorded histories of testdata/real and the
// seeds of FuzzNativeDecode.
func corpusLines(t *testing.T) [][]byte {
	t.Helper()
	var lines [][]byte
	var files []string
	for _, g := range []string{"testdata/*.jsonl", "../testdata/badinput/*.jsonl", "../testdata/real/*.jsonl", "../testdata/real/*.jsonl.gz"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d corpus files found", len(files))
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if b, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		lines = append(lines, bytes.SplitAfter(b, []byte("\n"))...)
	}
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzNativeDecode/*")
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, _ := strings.Cut(string(b), "[]byte(")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(lit), ")"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines = append(lines, []byte(s))
	}
	return lines
}

// generatedLines: the shapes recorders and `streamcheck gen` write, with
// and without database facts: gen's mixed and blind-write workloads
// (stamps added here as `gen --stamps` adds them), production-like lines
// (realisticLine), and randTxn's awkward ones (escapes, non-ASCII text,
// floats, booleans, negative and 19-digit integers, lists).
func generatedLines(t *testing.T, rng *rand.Rand) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, w := range []gen.Workload{gen.Mixed, gen.BlindW} {
		cfg := gen.Config{Workload: w, Txns: 400, Seed: 7}
		h, _, err := gen.Generate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range h.Txns {
			f := &history.Facts{CommitTS: int64(i + 1), StartTS: int64(i), Has: history.HasCommitTS | history.HasStartTS}
			if h.Txns[i].Status != history.Committed || i%5 == 0 {
				f = nil
			}
			lines = append(lines, append(AppendNativeFacts(nil, &h.Txns[i], f), '\n'))
		}
	}
	for i := range 400 {
		lines = append(lines, realisticLine(rng, i))
	}
	for i := range 1000 {
		tx := randTxn(rng, i)
		var f *history.Facts
		switch rng.IntN(4) {
		case 0:
			f = &history.Facts{CommitTS: rng.Int64N(1 << 62), StartTS: rng.Int64N(1 << 62), Has: history.HasCommitTS | history.HasStartTS}
		case 1:
			snap, err := history.ParseSnapshot("10:20:12,15")
			if err != nil {
				t.Fatal(err)
			}
			f = &history.Facts{Xid: uint64(rng.IntN(30)), Snap: snap, Has: history.HasXid | history.HasSnapshot}
		}
		lines = append(lines, AppendNativeFacts(nil, &tx, f))
	}
	return lines
}

// mutate returns line with one random edit of the kinds that take a
// line off the fast path or make it invalid: a byte deleted, duplicated
// or replaced by one of JSON's structural or awkward bytes, whitespace
// inserted, a field repeated or renamed, a number made negative, a
// fraction or a leading zero, a string given an escape.
func mutate(rng *rand.Rand, line []byte) []byte {
	if len(line) == 0 {
		return line
	}
	b := bytes.Clone(line)
	at := rng.IntN(len(b))
	awkward := []string{" ", "\t", "\n", "\r", ",", ":", "[", "]", "{", "}", `"`, `\`, "-", "0", "1", "9", ".", "e", "n", "t", "f", "\x00", "\x7f", "\xc3\xa9", "\xff", `\u0041`, `\ud800`, "null", "-0", "01", "1.0", "1e5", "99999999999999999999"}
	switch rng.IntN(6) {
	case 0:
		return append(b[:at], b[at+1:]...)
	case 1:
		return append(b[:at+1], b[at:]...)
	case 2:
		w := awkward[rng.IntN(len(awkward))]
		return append(b[:at:at], append([]byte(w), b[at+1:]...)...)
	case 3:
		w := awkward[rng.IntN(len(awkward))]
		return append(b[:at:at], append([]byte(w), b[at:]...)...)
	case 4:
		// A field or a value of a known field repeated, renamed or
		// nulled.
		for _, f := range []string{`"session":`, `"id":`, `"start":`, `"end":`, `"status":`, `"ops":`, `"commit_ts":`, `"start_ts":`, `"xid":`, `"snapshot":`} {
			if i := bytes.Index(b, []byte(f)); i >= 0 && rng.IntN(3) == 0 {
				switch rng.IntN(4) {
				case 0:
					return append(b[:1:1], append([]byte(f+`1,`), b[1:]...)...)
				case 1:
					return append(b[:i+len(f):i+len(f)], append([]byte("null,"+f), b[i+len(f):]...)...)
				case 2:
					return append(b[:i+1:i+1], append([]byte("X"), b[i+1:]...)...)
				default:
					return append(b[:i+len(f):i+len(f)], append([]byte("-"), b[i+len(f):]...)...)
				}
			}
		}
	}
	// A number's digits, altered, or the number replaced by one at the
	// edge of int64.
	for i := at; i < len(b); i++ {
		if b[i] >= '0' && b[i] <= '9' {
			if rng.IntN(3) == 0 {
				j := i
				for j < len(b) && b[j] >= '0' && b[j] <= '9' {
					j++
				}
				w := []string{"9223372036854775807", "9223372036854775808", "9999999999999999999", "10000000000000000000"}[rng.IntN(4)]
				return append(b[:i:i], append([]byte(w), b[j:]...)...)
			}
			w := []string{"-", "0", ".5", "e1", "9999999999999999999"}[rng.IntN(5)]
			return append(b[:i:i], append([]byte(w), b[i:]...)...)
		}
	}
	return b
}

// TestNativeFastAgainstSlow: on the corpus, on generated lines and on
// thousands of mutations of both, the fast path and the general decoder
// read alike, error for error; and the fast path reads nearly every
// generated line (it is the common spelling's).
func TestNativeFastAgainstSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 26))
	corpus := corpusLines(t)
	if _, err := fastAgainstSlow(corpus); err != nil {
		t.Fatal(err)
	}
	lines := generatedLines(t, rng)
	fast, err := fastAgainstSlow(lines)
	if err != nil {
		t.Fatal(err)
	}
	// gen's and realisticLine's lines (the first 1,200) are the common
	// spelling, every one; randTxn's are when their strings hold no
	// awkward byte and their numbers are non-negative integers.
	if common, err := fastAgainstSlow(lines[:1200]); err != nil || common != 1200 || fast < 1300 {
		t.Fatalf("the fast path read %d of the 1,200 common lines (%v), %d of all %d", common, err, fast, len(lines))
	}
	all := append(corpus, lines...)
	rounds := scaled(6)
	for r := range rounds {
		var mutated [][]byte
		for _, l := range all {
			m := mutate(rng, l)
			if rng.IntN(4) == 0 {
				m = mutate(rng, m)
			}
			mutated = append(mutated, m)
		}
		if _, err := fastAgainstSlow(mutated); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
}

// TestNativeFastDeclines names the spellings the fast path leaves to the
// general decoder and the errors it never reports itself: each line is
// declined by decodeFast (so decodeSlow decides it) and both decoders
// agree on it.
func TestNativeFastDeclines(t *testing.T) {
	const ok = `{"session":"c1","id":"c1-1","start":1,"end":2,"commit_ts":3,"start_ts":2,"status":"committed","ops":[["r","x",null],["w","x",1],["append","l",2],["r","l",[1,2]]]}`
	var d NativeDecoder
	if _, fast := d.decodeFast([]byte(ok), history.Pos{Line: 1}); !fast {
		t.Fatal("the common spelling is declined")
	}
	for _, line := range []string{
		` {"status":"committed","ops":[]}`,                             // leading whitespace
		`{"status": "committed","ops":[]}`,                             // whitespace
		`{"status":"committed","ops":[["r", "x",1]]}`,                  // whitespace in an op
		`{"status":"committed","ops":[],"extra":1}`,                    // unknown field
		`{"status":"committed","status":"aborted","ops":[]}`,           // given twice
		`{"st\u0061tus":"committed","ops":[]}`,                         // escaped name
		`{"status":"Committed","ops":[]}`,                              // unknown status
		`{"id":"","status":"committed","ops":[]}`,                      // empty id
		`{"id":null,"status":"committed","ops":[]}`,                    // null id
		`{"session":7,"status":"committed","ops":[]}`,                  // integer session
		`{"id":"\u00e9","status":"committed","ops":[]}`,                // escape
		`{"id":"é","status":"committed","ops":[]}`,                     // non-ASCII
		`{"start":-1,"end":2,"status":"committed","ops":[]}`,           // negative
		`{"start":01,"end":2,"status":"committed","ops":[]}`,           // leading zero
		`{"start":1.0,"end":2,"status":"committed","ops":[]}`,          // fraction
		`{"start":3,"end":2,"status":"committed","ops":[]}`,            // end before start
		`{"start":3,"status":"committed","ops":[]}`,                    // start alone
		`{"status":"committed"}`,                                       // no ops
		`{"ops":[]}`,                                                   // no status
		`{"commit_ts":null,"status":"committed","ops":[]}`,             // null stamp
		`{"commit_ts":-1,"status":"committed","ops":[]}`,               // negative stamp
		`{"commit_ts":1,"status":"aborted","ops":[]}`,                  // facts invalid
		`{"status":"committed","ops":[["w","x",null]]}`,                // write of null
		`{"status":"committed","ops":[["r","x",true]]}`,                // boolean
		`{"status":"committed","ops":[["r","x",-1]]}`,                  // negative value
		`{"status":"committed","ops":[["r","x",1.5]]}`,                 // float
		`{"status":"committed","ops":[["r",-0,1]]}`,                    // -0 key
		`{"status":"committed","ops":[["r",1.5,1]]}`,                   // float key
		`{"status":"committed","ops":[["r","x",[null]]]}`,              // null element
		`{"status":"committed","ops":[["w","x",[1]]]}`,                 // written list
		`{"status":"committed","ops":[["r","x",1,2]]}`,                 // four elements
		`{"status":"committed","ops":[["R","x",1]]}`,                   // unknown function
		`{"status":"committed","ops":[["r","x",9223372036854775808]]}`, // beyond int64
		`{"status":"committed","ops":[["r",9999999999999999999,1]]}`,   // key beyond int64
		`{"start":1,"end":9223372036854775808,"status":"committed","ops":[]}`,
		`{"commit_ts":9999999999999999999,"status":"committed","ops":[]}`,
		`{"status":"committed","ops":[]}x`,                         // data after
		`{"status":"committed","ops":[]`,                           // cut
		`{"status":"committed","ops":[["r","x\u0000",1]]}`,         // escape in a key
		"{\"status\":\"committed\",\"ops\":[[\"r\",\"x\x7f\",1]]}", // DEL
	} {
		var f NativeDecoder
		if _, fast := f.decodeFast([]byte(line), history.Pos{Line: 1}); fast {
			t.Errorf("decodeFast read %s", line)
		}
		if _, err := fastAgainstSlow([][]byte{[]byte(line)}); err != nil {
			t.Error(err)
		}
	}
}

// FuzzNativeFast: on any input, line by line, the fast path and the
// general decoder agree in every mode (fastAgainstSlow).
func FuzzNativeFast(f *testing.F) {
	f.Add([]byte(`{"session":"c1","id":"c1-1","start":1,"end":2,"commit_ts":3,"start_ts":2,"status":"committed","ops":[["r","x",null],["w","x",1],["append","l",2],["r","l",[1,2]]]}` + "\n" + `{"status":"committed","ops":[["r",12345,[1234,"abcdefghijklmnopq"]],["w","x",99999999999]]}`))
	f.Add([]byte(`{"xid":5,"snapshot":"3:9:4,6","status":"committed","ops":[]}` + "\n" + `{"xid":5,"snapshot":"3:9:4,6","status":"committed","ops":[]}`))
	// Texts numbered after the line is read (resolve): a small integer
	// first seen twice in one list and then as a value, a key that is a
	// value too, texts of 8, 9, 16 and 17 bytes, a long integer value,
	// and a line declined after its texts were read.
	f.Add([]byte(`{"status":"committed","ops":[["r","l",[5,5,7,"x"]],["w","x",5],["w","12345678","12345678"],["r","abcdefghijklmn",["abcdefghijklmno","abcdefghijklmnop"]],["w",7,123456789012]]}` + "\n" + `{"status":"committed","ops":[["w","q","new"],["w","q",1.5]]}` + "\n" + `{"status":"committed","ops":[["r","q",["new",1023,1024]]]}`))
	addSamples(f, ".jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := fastAgainstSlow(bytes.SplitAfter(data, []byte("\n"))); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWordsMasked: words reads a text of 1 to 16 bytes by two loads
// when the array has 16 bytes from its start, masking off what follows
// the text; the result is the byte loop's (the slice cut at its length,
// so that the loads cannot be used), whatever the bytes after it hold.
func TestWordsMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 29))
	buf := make([]byte, 64)
	for range 10000 {
		for i := range buf {
			buf[i] = byte(rng.IntN(256))
		}
		at, n := rng.IntN(32), 1+rng.IntN(16)
		b := buf[at : at+n]
		a1, c1 := words(b)
		a2, c2 := words(b[:n:n])
		if a1 != a2 || c1 != c2 {
			t.Fatalf("words(%q) = %x %x with the loads, %x %x with the loop", b, a1, c1, a2, c2)
		}
	}
}

// TestShortIntern: Decode's table for short texts gives back each text
// exactly (texts that differ in one byte or in length, padded with what
// a zero word holds, are common here), shares one string per text, and
// starts again empty at internLimit texts.
func TestShortIntern(t *testing.T) {
	// Texts that differ only in their length (zero bytes at the end pack
	// into the same words), in a table of two slots, where they collide
	// half the time: the length must tell them apart.
	for k := 1; k < 16; k++ {
		for _, c := range []byte{0, 'a'} {
			short := append([]byte{c}, make([]byte, k-1)...)
			long := append(bytes.Clone(short), 0)
			tab := shortIntern{slots: make([]internSlot, 2), shift: 63}
			if v := tab.get(short); string(v) != string(short) {
				t.Fatalf("get(%q) = %q", short, v)
			}
			if v := tab.get(long); string(v) != string(long) {
				t.Fatalf("get(%q) after %q = %q", long, short, v)
			}
		}
	}
	rng := rand.New(rand.NewPCG(26, 29))
	var tab shortIntern
	seen := map[string]history.Value{}
	for i := range 3 * internLimit {
		n := 1 + rng.IntN(16)
		b := make([]byte, n, 16+rng.IntN(16))
		for j := range b {
			b[j] = "\x00a1"[rng.IntN(3)]
		}
		if i%3 == 0 {
			b = append(b[:0], fmt.Sprintf("k%d", i)...) // ever-new texts, to reach the bound
		}
		v := tab.get(b)
		if string(v) != string(b) {
			t.Fatalf("get(%q) = %q", b, v)
		}
		if tab.used > internLimit {
			t.Fatalf("%d texts held, bound %d", tab.used, internLimit)
		}
		if w, ok := seen[string(b)]; ok && tab.used > 1 && unsafe.StringData(string(w)) != unsafe.StringData(string(v)) && len(seen) < internLimit/2 {
			t.Fatalf("get(%q) not shared", b)
		}
		seen[string(b)] = v
	}
}

// TestWordAtATime holds the eight-bytes-at-a-time scans of the fast path
// (plainEnd, uintLit) to their byte-at-a-time forms on random lines
// drawn from the bytes that matter (quotes, backslashes, control bytes,
// 0x7f, bytes above it, digits, plain letters) at every start, and
// eightDigits to strconv on every word of digits it accepts.
func TestWordAtATime(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 1))
	alphabet := []byte{'"', '\\', 0, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0xff, 0xfa, '/', ':', '0', '1', '5', '9', 'a', 'x', ',', ']'}
	for range 200000 {
		b := make([]byte, rng.IntN(30))
		for k := range b {
			if rng.IntN(3) == 0 {
				b[k] = alphabet[rng.IntN(len(alphabet))]
			} else if rng.IntN(2) == 0 {
				b[k] = byte('0' + rng.IntN(10))
			} else {
				b[k] = byte(rng.IntN(256))
			}
		}
		for i := 0; i <= len(b); i++ {
			if got, want := plainEnd(b, i), plainEndBytes(b, i); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
			gl, gv, gn, gok := uintLit(b, i)
			wl, wv, wn, wok := uintLitBytes(b, i)
			if !bytes.Equal(gl, wl) || gv != wv || gn != wn || gok != wok {
				t.Fatalf("uintLit(%q, %d) = %q %d %d %v, want %q %d %d %v", b, i, gl, gv, gn, gok, wl, wv, wn, wok)
			}
		}
	}
	// Long runs of digits: 19 digits fit or not, 20 never.
	for _, lit := range []string{"9223372036854775807", "9223372036854775808", "1700000000000032572", "12345678901234567890", "99999999", "100000000", "1234567812345678"} {
		for _, tail := range []string{"", ",", "]", "}\n"} {
			b := []byte(lit + tail)
			gl, gv, gn, gok := uintLit(b, 0)
			wl, wv, wn, wok := uintLitBytes(b, 0)
			if !bytes.Equal(gl, wl) || gv != wv || gn != wn || gok != wok {
				t.Fatalf("uintLit(%q) = %q %d %d %v, want %q %d %d %v", b, gl, gv, gn, gok, wl, wv, wn, wok)
			}
		}
	}
	for range 100000 {
		var w [8]byte
		for k := range w {
			w[k] = byte('0' + rng.IntN(10))
			if rng.IntN(40) == 0 {
				w[k] = byte(rng.IntN(256))
			}
		}
		v, all := eightDigits(binary.LittleEndian.Uint64(w[:]))
		n, err := strconv.ParseUint(string(w[:]), 10, 64)
		allDigits := err == nil && !bytes.ContainsAny(w[:], "+-_")
		if all != allDigits || all && v != n {
			t.Fatalf("eightDigits(%q) = %d %v, want %d %v", w, v, all, n, allDigits)
		}
	}
}
