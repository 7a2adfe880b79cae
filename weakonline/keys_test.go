package weakonline

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestKeyTableNumbersLikeAMap numbers random keys (short ones of every
// length to 16 bytes, with zero bytes, prefixes of each other and
// longer ones) against a map: the same key always gets the same number,
// distinct keys distinct ones, in first-sight order, and idOf answers
// only for keys seen.
func TestKeyTableNumbersLikeAMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	kt := newKeyTable()
	ref := map[history.Key]int32{}
	key := func() history.Key {
		switch rng.Intn(4) {
		case 0:
			return history.Key("x" + strconv.Itoa(rng.Intn(3000)))
		case 1:
			b := make([]byte, rng.Intn(17))
			for i := range b {
				b[i] = byte(rng.Intn(3)) // zero bytes: padding must not alias
			}
			return history.Key(b)
		case 2:
			return history.Key("a-key-longer-than-sixteen-" + strconv.Itoa(rng.Intn(500)))
		}
		return history.Key("abcdefghijklmnopq"[:rng.Intn(18)])
	}
	for range 200000 {
		k := key()
		if rng.Intn(3) == 0 {
			got, ok := kt.idOf(k)
			want, seen := ref[k]
			if ok != seen || ok && got != want {
				t.Fatalf("idOf(%q) = %d, %v; want %d, %v", k, got, ok, want, seen)
			}
			continue
		}
		want, seen := ref[k]
		if !seen {
			want = int32(len(ref))
			ref[k] = want
		}
		if got := kt.id(k); got != want {
			t.Fatalf("id(%q) = %d, want %d", k, got, want)
		}
		if kt.names[want] != k {
			t.Fatalf("names[%d] = %q, want %q", want, kt.names[want], k)
		}
	}
	if len(kt.names) != len(ref) {
		t.Fatalf("%d names, want %d", len(kt.names), len(ref))
	}
}

// TestShortKeysLengthCounts: keys whose bytes pad to the same words
// ("", "\x00", "\x00\x00", ...) are told apart by their length even when
// one's probe meets the other's slot first (a two-slot table holding
// one of them: every pair is tried, so about half the probes meet it).
func TestShortKeysLengthCounts(t *testing.T) {
	zeros := make([]byte, shortKeyLen)
	for i := 0; i <= shortKeyLen; i++ {
		for j := 0; j <= shortKeyLen; j++ {
			if i == j {
				continue
			}
			tab := shortKeys{slots: make([]shortKey, 2), shift: 63}
			ki, kj := history.Key(zeros[:i]), history.Key(zeros[:j])
			e := tab.find(ki)
			*e = shortKey{n: uint32(i) + 1, id: 7}
			e.a, e.b = keyWords(ki)
			if got := tab.find(kj); got.n != 0 {
				t.Fatalf("%q found %q's slot (id %d)", kj, ki, got.id)
			}
		}
	}
}
