package weakonline

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestKeyCacheMatchesMap numbers random and adversarial keys through
// keyTable (its address cache first) and through a plain map, and
// requires the same number for every lookup and the same table: copies
// of one text at other addresses, prefixes and substrings sharing an
// address with a longer key, the empty key, keys past the cache's
// growth, and enough distinct keys that slots are taken over by others.
func TestKeyCacheMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(34))
	kt := newKeyTable()
	ref := map[history.Key]int32{}
	var seen []history.Key
	long := strings.Repeat("k", 64) + "0123456789"
	check := func(k history.Key) {
		t.Helper()
		want, ok := ref[k]
		if !ok {
			want = int32(len(ref))
			ref[k] = want
		}
		if got := kt.id(k); got != want {
			t.Fatalf("id(%q) = %d, want %d", k, got, want)
		}
		if r, ok := kt.lookup(k, "7"); !ok || r.k != want {
			t.Fatalf("lookup(%q) = %v %v, want key %d", k, r, ok, want)
		}
		seen = append(seen, k)
	}
	for i := 0; i < 60000; i++ {
		var k history.Key
		switch rng.Intn(7) {
		case 0: // a new copy of a text seen before
			if len(seen) > 0 {
				k = history.Key(strings.Clone(string(seen[rng.Intn(len(seen))])))
			}
		case 1: // the very string seen before
			if len(seen) > 0 {
				k = seen[rng.Intn(len(seen))]
			}
		case 2: // a prefix sharing the address of a longer key
			if n := rng.Intn(len(long) + 1); true {
				k = history.Key(long[:n])
			}
		case 3: // a substring inside a longer key
			a := rng.Intn(len(long))
			k = history.Key(long[a : a+rng.Intn(len(long)-a+1)])
		case 4:
			k = ""
		default:
			k = history.Key("x" + strconv.Itoa(rng.Intn(30000)))
		}
		check(k)
	}
	if len(kt.names) != len(ref) {
		t.Fatalf("table holds %d keys, want %d", len(kt.names), len(ref))
	}
	for k, i := range ref {
		if kt.names[i] != k {
			t.Fatalf("names[%d] = %q, want %q", i, kt.names[i], k)
		}
	}
	// A key never numbered is not found by lookup.
	if _, ok := kt.lookup("never-seen", "1"); ok {
		t.Fatal("lookup found a key never numbered")
	}
}

// BenchmarkKeyID numbers keys as a release's parse does: 5,000 keys,
// each one interned string, looked up in a random order, through the
// address cache and through the map alone (naiveKeyCache).
func BenchmarkKeyID(b *testing.B) {
	keys := make([]history.Key, 5000)
	for i := range keys {
		keys[i] = history.Key("x" + strconv.Itoa(i))
	}
	rng := rand.New(rand.NewSource(1))
	seq := make([]history.Key, 1<<16)
	for i := range seq {
		seq[i] = keys[rng.Intn(len(keys))]
	}
	for _, naive := range []bool{false, true} {
		b.Run(map[bool]string{false: "cache", true: "map"}[naive], func(b *testing.B) {
			naiveKeyCache = naive
			defer func() { naiveKeyCache = false }()
			kt := newKeyTable()
			for _, k := range keys {
				kt.id(k)
			}
			i := 0
			for b.Loop() {
				kt.id(seq[i&(len(seq)-1)])
				i++
			}
		})
	}
}
