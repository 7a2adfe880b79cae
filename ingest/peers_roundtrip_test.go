package ingest_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
	"github.com/streamcheck/streamcheck/ingest"
	"github.com/streamcheck/streamcheck/internal/gen"
)

// Round trips through the formats convert does not write (Cobra, AWDIT,
// Viper): an encoder written here from each format's documented layout
// (ingest/doc.go, "Peer formats", and each decoder's comment) writes a
// generated history, and the decoder must give back the history as the
// format can say it. The encoders are independent of the decoders: they
// share no code with them.

// committedRegs generates a register history with integer keys and
// committed transactions only (Cobra and AWDIT log nothing else).
func committedRegs(t *testing.T, seed uint64) *history.History {
	t.Helper()
	cfg, err := gen.Preset("mixed")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Txns, cfg.Sessions, cfg.Keys, cfg.Concurrency, cfg.Seed = 300, 6, 20, 4, seed
	cfg.ListRatio, cfg.UnknownRatio, cfg.AbortRatio, cfg.DupValueRatio = 0, 0, 0, 0
	h, _, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	peerProject(h)
	return h
}

// bySession lists the transactions of each session in order, sessions in
// order of first appearance.
func bySession(h *history.History) (names []string, txns map[string][]*history.Txn) {
	txns = make(map[string][]*history.Txn)
	for i := range h.Txns {
		s := h.Txns[i].Session
		if _, ok := txns[s]; !ok {
			names = append(names, s)
		}
		txns[s] = append(txns[s], &h.Txns[i])
	}
	return names, txns
}

// opsBySession is what every one of these formats keeps: per session (in
// order of the session's name in the output), the operations of each
// transaction in order.
func opsBySession(h *history.History, rename map[string]string) map[string][][]history.Op {
	out := make(map[string][][]history.Op)
	for i := range h.Txns {
		t := &h.Txns[i]
		s := t.Session
		if rename != nil {
			s = rename[s]
		}
		out[s] = append(out[s], t.Ops)
	}
	return out
}

func TestCobraRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h := committedRegs(t, seed)
		// Cobra's values are write ids, unique over the history: write
		// (key, value) becomes the id key<<20 | value, and a read names
		// the writer's transaction id (1-based position).
		wid := func(k, v history.Value) int64 {
			kn, _ := strconv.ParseInt(string(k), 10, 64)
			vn, _ := strconv.ParseInt(string(v), 10, 64)
			return kn<<20 | vn
		}
		writer := make(map[int64]int64)
		for i := range h.Txns {
			for _, op := range h.Txns[i].Ops {
				if op.Kind == history.Write {
					writer[wid(op.Key, op.Value)] = int64(i + 1)
				}
			}
		}
		dir := t.TempDir()
		names, txns := bySession(h)
		rename := make(map[string]string)
		want := &history.History{}
		for si, s := range names {
			file := "T" + strconv.Itoa(si)
			rename[s] = file
			var b []byte
			u64 := func(v int64) { b = binary.BigEndian.AppendUint64(b, uint64(v)) }
			for _, tx := range txns[s] {
				id := int64(indexOf(h, tx) + 1)
				b = append(b, 'S')
				u64(id)
				w := history.Txn{ID: strconv.FormatInt(id, 10), Session: file, HasSession: true}
				for _, op := range tx.Ops {
					k, _ := strconv.ParseInt(string(op.Key), 10, 64)
					switch {
					case op.Kind == history.Write:
						b = append(b, 'W')
						u64(wid(op.Key, op.Value))
						u64(k)
						u64(12345) // the value's hash: not used
						w.Ops = append(w.Ops, history.Op{Kind: history.Write, Key: op.Key, Value: history.IntValue(wid(op.Key, op.Value))})
					case op.Value == history.Null:
						b = append(b, 'R')
						u64(0xbebeebee)
						u64(0xbebeebee)
						u64(k)
						u64(0)
						w.Ops = append(w.Ops, history.Op{Kind: history.Read, Key: op.Key, Value: history.Null})
					default:
						id := wid(op.Key, op.Value)
						b = append(b, 'R')
						u64(writer[id])
						u64(id)
						u64(k)
						u64(0)
						w.Ops = append(w.Ops, history.Op{Kind: history.Read, Key: op.Key, Value: history.IntValue(id)})
					}
				}
				b = append(b, 'C')
				u64(id)
				want.Txns = append(want.Txns, w)
			}
			if err := os.WriteFile(filepath.Join(dir, file+".log"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		back := readPeer(t, dir, ingest.FormatCobra)
		if g, w := opsBySession(back, nil), opsBySession(want, nil); !reflect.DeepEqual(g, w) {
			t.Fatalf("seed %d: sessions differ", seed)
		}
		if g, w := verdict(t, back, history.StrongSessionSerializable), verdict(t, h, history.StrongSessionSerializable); g != w {
			t.Fatalf("seed %d: verdict %s, want %s", seed, g, w)
		}
	}
}

func indexOf(h *history.History, t *history.Txn) int {
	for i := range h.Txns {
		if &h.Txns[i] == t {
			return i
		}
	}
	return -1
}

func TestAWDITRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h := committedRegs(t, seed)
		// AWDIT has no null: its tests write the initial value 0 of every
		// key in a session of their own, and a read of null reads it.
		var b []byte
		keys := make(map[history.Key]bool)
		var order []history.Key
		for i := range h.Txns {
			for _, op := range h.Txns[i].Ops {
				if !keys[op.Key] {
					keys[op.Key] = true
					order = append(order, op.Key)
				}
			}
		}
		init := history.Txn{}
		for _, k := range order {
			b = fmt.Appendf(b, "w %s 0\n", k)
			init.Ops = append(init.Ops, history.Op{Kind: history.Write, Key: k, Value: "0"})
		}
		want := map[string][][]history.Op{"0": {init.Ops}}
		names, txns := bySession(h)
		for si, s := range names {
			b = append(b, "=====\n"...)
			for ti, tx := range txns[s] {
				if ti > 0 {
					b = append(b, "-----\n"...)
				}
				var ops []history.Op
				for _, op := range tx.Ops {
					v := op.Value
					if v == history.Null {
						v = "0"
					}
					b = fmt.Appendf(b, "%s %s %s\n", op.Kind, op.Key, v)
					ops = append(ops, history.Op{Kind: op.Kind, Key: op.Key, Value: v})
				}
				if len(ops) == 0 {
					t.Fatal("empty transaction: AWDIT cannot say it")
				}
				want[strconv.Itoa(si+1)] = append(want[strconv.Itoa(si+1)], ops)
			}
		}
		back, f, err := ingest.ReadHistory(bytesReader(b), "awdit")
		if err != nil || f != ingest.FormatAWDIT {
			t.Fatalf("seed %d: %v (%s)", seed, err, f)
		}
		if g := opsBySession(back, nil); !reflect.DeepEqual(g, want) {
			t.Fatalf("seed %d: sessions differ", seed)
		}
		if g, w := verdict(t, back, history.Serializable), verdict(t, h, history.Serializable); g != w {
			t.Fatalf("seed %d: verdict %s, want %s", seed, g, w)
		}
	}
}

func TestViperRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		h := committedRegs(t, seed)
		dir := t.TempDir()
		names, txns := bySession(h)
		rename := make(map[string]string)
		for si, s := range names {
			file := "J" + strconv.Itoa(si+24) // IsoVista's numbering
			rename[s] = file
			var b []byte
			for _, tx := range txns[s] {
				var mops [][]any
				for _, op := range tx.Ops {
					k, _ := strconv.ParseInt(string(op.Key), 10, 64)
					var v any = "nil"
					if op.Value != history.Null {
						v, _ = strconv.ParseInt(string(op.Value), 10, 64)
					}
					mops = append(mops, []any{op.Kind.String(), k, v, true})
				}
				line, err := json.Marshal(map[string]any{"value": mops})
				if err != nil {
					t.Fatal(err)
				}
				b = append(append(b, line...), '\n')
			}
			if err := os.WriteFile(filepath.Join(dir, file+".log"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		back := readPeer(t, dir, ingest.FormatViper)
		if g, w := opsBySession(back, nil), opsBySession(h, rename); !reflect.DeepEqual(g, w) {
			t.Fatalf("seed %d: sessions differ", seed)
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
