package driver

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/streamcheck/streamcheck/history"
)

// refNoteKinds is noteKinds as it was before its cache: State.Kinds
// alone, the reference the cache must agree with.
func refNoteKinds(kinds map[history.Key]bool, t *history.Txn) error {
	var added []history.Key
	for _, op := range t.Ops {
		list, decided := op.KeyKind()
		if !decided {
			continue
		}
		if prev, ok := kinds[op.Key]; ok {
			if prev != list {
				for _, k := range added {
					delete(kinds, k)
				}
				return history.KindClash(t, op.Key, "")
			}
			continue
		}
		kinds[op.Key] = list
		added = append(added, op.Key)
	}
	return nil
}

// TestKindsCacheMatchesMap drives noteKinds (with its cache) and the
// map-only reference through the same random events and compares, after
// every event, the error (its text names the line, the field and the
// key) and the whole record. The keys are drawn so that the cache meets
// what could fool it: one text in many copies at different addresses and
// one copy shared by many ops (as the decoder's intern table gives),
// texts that are prefixes of one another at the same address (substrings
// of one string), long keys, escapes and bytes that are not UTF-8, the
// empty key, and keys used both as a list and as a register (clashes,
// within an event and across events, whose first uses are undone). A
// small pool of keys keeps clashes frequent; a large one fills the cache
// past its slots so that slots are taken over.
func TestKindsCacheMatchesMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pool  int
		ops   int
		clash float64
	}{
		{"small pool, many clashes", 12, 6, 0.3},
		{"medium pool", 400, 8, 0.05},
		{"large pool, slots taken over", 100000, 10, 0.01},
		{"prefixes of one string", 40, 8, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seeds := uint64(6)
			if tc.pool > 1000 {
				seeds = 2 // each event compares a large record
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				testKindsCache(t, seed, tc.pool, tc.ops, tc.clash)
			}
		})
	}
}

func testKindsCache(t *testing.T, seed uint64, pool, nops int, clashRate float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	// Texts: short, long, escaped, not UTF-8, empty, prefixes.
	big := strings.Repeat("k", 300) + "\x00\xff\"\\\u00e9" + strings.Repeat("z", 300)
	texts := make([]string, pool)
	for i := range texts {
		switch rng.IntN(7) {
		case 0:
			texts[i] = fmt.Sprintf("x%d", i)
		case 1:
			texts[i] = fmt.Sprintf("%s-%d", strings.Repeat("long", 20), i)
		case 2:
			texts[i] = fmt.Sprintf("e\\\"%d\n\t", i)
		case 3:
			texts[i] = string([]byte{0xff, byte(i), byte(i >> 8), 0xc3})
		case 4:
			texts[i] = ""
		case 5:
			// A prefix of big: shares big's address with every other
			// prefix, texts told apart by their length alone.
			texts[i] = big[:rng.IntN(len(big)+1)]
		default:
			texts[i] = fmt.Sprintf("%d", i%50) // repeats: one text, several entries
		}
	}
	// Interned copies (one string per text) and fresh copies.
	interned := make([]string, pool)
	for i, s := range texts {
		interned[i] = strings.Clone(s)
		if len(s) > 0 && unsafe.StringData(s) == unsafe.StringData(big) {
			interned[i] = s // the prefixes keep sharing big's address
		}
	}
	kindOf := make([]bool, pool) // the kind a text is mostly used as
	for i := range kindOf {
		kindOf[i] = rng.IntN(2) == 0
	}
	d := &Driver{}
	ref := map[history.Key]bool{}
	for ev := range 3000 {
		txn := history.Txn{ID: fmt.Sprintf("t%d", ev), Pos: history.Pos{Source: "-", Line: ev + 1}}
		for range 1 + rng.IntN(nops) {
			i := rng.IntN(pool)
			key := interned[i]
			if rng.IntN(4) == 0 {
				key = strings.Clone(texts[i]) // same text, another address
			}
			list := kindOf[i]
			if rng.Float64() < clashRate {
				list = !list
			}
			op := history.Op{Key: history.Key(key)}
			switch r := rng.IntN(5); {
			case r == 0:
				op.Kind = history.Read // undecided: a register read
				op.Value = history.Null
			case list && r == 1:
				op.Kind, op.IsList = history.Read, true
			case list:
				op.Kind, op.Value = history.Append, "1"
			default:
				op.Kind, op.Value = history.Write, "1"
			}
			txn.Ops = append(txn.Ops, op)
		}
		got, want := d.noteKinds(&txn), refNoteKinds(ref, &txn)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d event %d: noteKinds = %v, reference %v", seed, ev, got, want)
		}
		if (ev%64 == 0 || ev == 2999 || want != nil) && !maps.Equal(d.st.Kinds, ref) {
			t.Fatalf("seed %d event %d: kinds differ from the reference (%d vs %d keys)", seed, ev, len(d.st.Kinds), len(ref))
		}
	}
}
