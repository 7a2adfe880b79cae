package ingest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestScanNativeIDs holds ScanNative to ReadHistory on random native
// lines whose keys and values are texts of 0 to 40 bytes over a small
// alphabet (so texts that differ in one byte, at any position, are
// common), small and large integers, floats, booleans, null, escaped
// strings and list reads: each transaction reads alike on both paths
// (ops, id, session, facts), every id names its text (Texts[id] is the
// op's key or value), and no two ids name one text. So equal ids are
// exactly equal texts, which is what the compact check compares.
func TestScanNativeIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	compared := 0
	for round := range 40 {
		var text []byte
		for i := range 50 {
			fmt.Fprintf((*buf)(&text), `{"id":"t%d","session":"s%d","status":"committed","commit_ts":%d,"ops":[`, i, rng.IntN(3), i)
			for n := range 1 + rng.IntN(6) {
				if n > 0 {
					text = append(text, ',')
				}
				switch rng.IntN(3) {
				case 0:
					fmt.Fprintf((*buf)(&text), `["w",%s,%s]`, randKey(rng), randValue(rng))
				case 1:
					v := randValue(rng)
					if rng.IntN(4) == 0 {
						v = "null"
					}
					fmt.Fprintf((*buf)(&text), `["r",%s,%s]`, randKey(rng), v)
				default:
					// List keys apart ("L..."): a key used both ways is
					// an input error, and the comparison needs a read.
					fmt.Fprintf((*buf)(&text), `["r","L%s",[%s,%s]]`, randText(rng), randValue(rng), randValue(rng))
				}
			}
			text = append(text, "]}\n"...)
		}
		h, _, err := ReadHistory(bytes.NewReader(text), "t")
		if err != nil {
			// A key used as a list and as a register: the scan still
			// decodes it (Validate is the caller's), so compare anyway.
			h = nil
		} else {
			compared++
		}
		if err := scanAgainst(text, h); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, text)
		}
	}
	if compared < 10 {
		t.Fatalf("only %d of 40 rounds read without error: the comparison with ReadHistory is too rare", compared)
	}
}

// scanAgainst scans text and holds each event to h's transaction (nil:
// not compared) and the numbering to its rules: an id names the text of
// its op, each value text has one id, the texts are distinct, null is
// NullID's.
func scanAgainst(text []byte, h *history.History) error {
	i := 0
	var texts []history.Value
	// Every value text has one id (IntID's or a text's): equal values
	// compare equal by id.
	valueID := map[history.Value]int32{}
	sameID := func(v history.Value, id int32) error {
		if j, ok := valueID[v]; ok && j != id {
			return fmt.Errorf("value %s has ids %d and %d", v, j, id)
		}
		valueID[v] = id
		return nil
	}
	err := ScanNative(bytes.NewReader(text), "t", func(e *Event) error {
		texts = e.Texts
		tx := e.Txn
		if h != nil {
			if i >= len(h.Txns) {
				return fmt.Errorf("txn %d: the scan has more transactions than ReadHistory's %d", i, len(h.Txns))
			}
			want := h.Txns[i]
			got := *tx
			got.Pos, want.Pos = history.Pos{}, history.Pos{}
			if !reflect.DeepEqual(got, want) || e.Facts != h.FactsOf(i) {
				return fmt.Errorf("txn %d: scan %+v %+v, read %+v %+v", i, got, e.Facts, want, h.FactsOf(i))
			}
		}
		for n, op := range tx.Ops {
			if k := textOf(e, e.KeyIDs[n]); k != op.Key {
				return fmt.Errorf("txn %d op %d: key %s has id %d, the id of %s", i, n, op.Key, e.KeyIDs[n], k)
			}
			if op.IsList {
				for j, v := range op.List {
					id := e.ListIDs[int(e.ValIDs[n])+j]
					if w := textOf(e, id); w != v {
						return fmt.Errorf("txn %d op %d: list element %s has the id of %s", i, n, v, w)
					}
					if err := sameID(v, id); err != nil {
						return err
					}
				}
			} else if w := textOf(e, e.ValIDs[n]); w != op.Value {
				return fmt.Errorf("txn %d op %d: value %s has the id of %s", i, n, op.Value, w)
			} else if err := sameID(op.Value, e.ValIDs[n]); err != nil {
				return err
			}
		}
		i++
		return nil
	})
	if err != nil {
		return err
	}
	if h != nil && i != len(h.Txns) {
		return fmt.Errorf("the scan has %d transactions, ReadHistory %d", i, len(h.Txns))
	}
	seen := map[history.Value]int{}
	for id, v := range texts {
		if j, dup := seen[v]; dup {
			return fmt.Errorf("ids %d and %d both name %s", j, id, v)
		}
		seen[v] = id
	}
	if len(texts) > 0 && texts[NullID] != history.Null {
		return fmt.Errorf("id %d is %s, not null", NullID, texts[NullID])
	}
	return nil
}

// textOf is the text of a scan's id: Texts[id], or an integer's own
// (IntID).
func textOf(e *Event, id int32) history.Value {
	if id < -1 {
		n := id - IntID(0)
		if n < 1024 {
			return "(an IntID below 1024)"
		}
		return history.Value(strconv.Itoa(int(n)))
	}
	return e.Texts[id]
}

type buf []byte

func (b *buf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// randText is 0 to 40 bytes over "ab": texts of equal length differ in
// few bytes, anywhere.
func randText(rng *rand.Rand) string {
	n := rng.IntN(41)
	if rng.IntN(2) == 0 {
		n = rng.IntN(18) // around the short table's 16 bytes
	}
	var s strings.Builder
	for range n {
		s.WriteByte("ab"[rng.IntN(2)])
	}
	return s.String()
}

func randKey(rng *rand.Rand) string {
	if rng.IntN(4) == 0 {
		return fmt.Sprint(rng.IntN(2000) - 5)
	}
	return `"` + randText(rng) + `"`
}

func randValue(rng *rand.Rand) string {
	switch rng.IntN(8) {
	case 0:
		if rng.IntN(2) == 0 {
			// Across IntID's ends: 9 digits and 10.
			return fmt.Sprint(999_999_990 + rng.IntN(20))
		}
		return fmt.Sprint(rng.IntN(2000))
	case 1:
		return fmt.Sprint(rng.Int64())
	case 2:
		return "1.5"
	case 3:
		return "true"
	case 4:
		return `"\u0061` + randText(rng) + `"` // escaped: the unescaped text's id
	}
	return `"` + randText(rng) + `"`
}

// TestTextIDs numbers 30,000 draws of texts of 1 to 20 bytes over "ab"
// (a few thousand distinct, differing in any byte, across the short
// table's growths and its 16-byte limit) twice: an id names one text,
// and a text keeps its id.
func TestTextIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var x textIDs
	byID := map[int32]string{}
	byText := map[string]int32{}
	for range 30000 {
		n := 1 + rng.IntN(20)
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab"[rng.IntN(2)]
		}
		id := x.of(b)
		if s, ok := byID[id]; ok && s != string(b) {
			t.Fatalf("id %d names %q and %q", id, s, b)
		}
		if j, ok := byText[string(b)]; ok && j != id {
			t.Fatalf("%q had id %d, now %d", b, j, id)
		}
		byID[id], byText[string(b)] = string(b), id
	}
	if len(byText) < 5000 {
		t.Fatalf("only %d distinct texts", len(byText))
	}
}
