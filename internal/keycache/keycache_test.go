package keycache

import (
	"strings"
	"testing"

	"github.com/streamcheck/streamcheck/history"
)

// TestAddressAndLength: two texts at one address (a string and
// its prefix) are two keys to the cache, and a copy of a text at another
// address is a miss, never a wrong answer.
func TestAddressAndLength(t *testing.T) {
	big := strings.Repeat("ab", 1000)
	var c Cache[bool]
	for n := 1; n <= len(big); n++ {
		c.Put(history.Key(big[:n]), n%2 == 0, len(big)) // sized once: no resize empties it
	}
	for n := 1; n <= len(big); n++ {
		if list, ok := c.Get(history.Key(big[:n])); ok && list != (n%2 == 0) {
			t.Fatalf("prefix of %d bytes: cached value %v, put %v", n, list, n%2 == 0)
		}
		if _, ok := c.Get(history.Key(strings.Clone(big[:n]))); ok {
			t.Fatalf("a copy of the prefix of %d bytes hit the cache", n)
		}
	}
	// Every prefix is alone in its slot here, the cache having grown to
	// four slots a key: most are hits.
	hits := 0
	for n := 1; n <= len(big); n++ {
		if _, ok := c.Get(history.Key(big[:n])); ok {
			hits++
		}
	}
	if hits < len(big)/2 {
		t.Fatalf("%d hits of %d: the cache does not keep what it is given", hits, len(big))
	}
}
